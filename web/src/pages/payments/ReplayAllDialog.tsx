import { api, unwrap } from "../../api/client.ts";
import { statusWord } from "../../ui/Badge.tsx";
import { Dialog } from "../../ui/Dialog.tsx";

/** Replays every failed or unmatched notification; says what each became. */
export async function replayAllFailed(): Promise<string> {
  const r = await unwrap(api.POST("/webhooks/inbound-log/replay-failed"));
  if (r.data.length === 0) return "Nothing to replay: no failed notifications.";
  const counts = new Map<string, number>();
  for (const o of r.data) counts.set(o.status, (counts.get(o.status) ?? 0) + 1);
  return `Replayed ${r.data.length}: ` +
    [...counts].map(([s, n]) => `${n} ${statusWord(s).toLowerCase()}`).join(
      ", ",
    ) + ".";
}

export function ReplayAllDialog(
  { open, close, confirm, count }: { open: boolean; close(): void; confirm(): void; count: string | null },
) {
  return (
    <Dialog
      title={count
        ? `Replay ${count} failed notification${count === "1" ? "" : "s"}?`
        : "Replay all failed notifications?"}
      open={open}
      onClose={close}
    >
      <p>
        Every failed or unmatched notification of this organization is applied again, oldest first. Ones that
        were already applied change nothing.
      </p>
      <div className="actions">
        <button type="button" className="primary" onClick={confirm}>
          {count ? `Replay ${count}` : "Replay all failed"}
        </button>
        <button type="button" onClick={close} data-autofocus>Cancel</button>
      </div>
    </Dialog>
  );
}
