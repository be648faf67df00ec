import { Link } from "../../router.tsx";
import { statusWord } from "../../ui/Badge.tsx";
import { Time } from "../../ui/Time.tsx";
import type { Failures as FailureCounts } from "./types.ts";

/** What went wrong lately, in words, with the way to the log where it can be replayed. */
export function Failures(
  { failures: f, logHref }: { failures: FailureCounts; logHref: string },
) {
  if (f.to_replay === 0 && f.refused_7d === 0 && !f.last) {
    return <p className="ok">No failures in the last 7 days.</p>;
  }
  return (
    <div>
      <p className="warn">
        {f.to_replay > 0 && (
          <>
            {f.to_replay >= 1000 ? "1000 or more" : f.to_replay} waiting for a replay.{" "}
          </>
        )}
        {f.refused_7d > 0 && (
          <>
            {f.refused_7d}{" "}
            refused in the last 7 days (a wrong or missing signature usually means the secret here and the
            provider's differ).{" "}
          </>
        )}
        {f.last && (
          <>
            Last: {statusWord(f.last.status)}
            {f.last.error ? `, ${f.last.error}` : ""}, <Time iso={f.last.received_at} />.
          </>
        )}
      </p>
      <p>
        <Link href={logHref}>See them in Payment webhooks</Link>
      </p>
    </div>
  );
}
