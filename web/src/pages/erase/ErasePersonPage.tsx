// Settings > Privacy > Erase a person: find a member, confirm, follow the erasure; the records below.
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap } from "../../api/client.ts";
import { useOrgKey } from "../../session.tsx";
import { Dialog } from "../../ui/Dialog.tsx";
import { useTick } from "../../ui/useTick.ts";
import { ConfirmErase } from "./ConfirmErase.tsx";
import { ErasureRecords } from "./ErasureRecords.tsx";
import { ErasureStatus } from "./ErasureStatus.tsx";
import { MemberSearch } from "./MemberSearch.tsx";
import type { Candidate, Erasure } from "./types.ts";

export function ErasePersonPage() {
  useTick();
  const org = useOrgKey();
  const records = useQuery({
    queryKey: [org, "erasures"],
    queryFn: () => unwrap(api.GET("/webhooks/erasures")).then((r) => r.data),
  });
  const [picked, setPicked] = useState<Candidate | null>(null);
  const [started, setStarted] = useState<Erasure | null>(null);
  return (
    <>
      <h1>Erase a person</h1>
      <p className="lead">
        When someone asks to be forgotten, erase them here: their member record and every copy of their data
        in webhooks, payment and WhatsApp logs and e-mails are removed. Only administrators can do this, and
        it cannot be undone.
      </p>
      {
        /* A new search after each erasure: the erased member is no longer a result. The keys differ
          from the status's below: siblings with one key were a duplicate-key warning. */
      }
      <MemberSearch key={`search-${started?.id ?? "none"}`} onPick={setPicked} />
      {started && <ErasureStatus key={`status-${started.id}`} started={started} />}
      <ErasureRecords records={records} />
      <Dialog
        title="Erase this person?"
        open={!!picked}
        onClose={() => setPicked(null)}
      >
        {picked && (
          <ConfirmErase
            member={picked}
            close={() => setPicked(null)}
            onStarted={setStarted}
          />
        )}
      </Dialog>
    </>
  );
}
