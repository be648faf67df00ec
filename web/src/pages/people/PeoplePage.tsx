// Settings > People: who belongs to the organization, with their role, when they joined and when they
// last signed in; invite someone, resend or withdraw an invitation, change a role, remove someone. Every
// change applies at the affected person's next request; the last admin stays.
import { useQuery } from "@tanstack/react-query";
import { useRef, useState } from "react";
import { api, unwrap } from "../../api/client.ts";
import { errorText } from "../../api/queries.ts";
import { useOrgKey, useSession } from "../../session.tsx";
import { Dialog } from "../../ui/Dialog.tsx";
import { Empty } from "../../ui/Empty.tsx";
import { focusSoon } from "../../ui/focusSoon.ts";
import { ErrorBox } from "../../ui/ErrorBox.tsx";
import { Loading } from "../../ui/Loading.tsx";
import { useTick } from "../../ui/useTick.ts";
import { ConfirmMemberChange, confirmTitle } from "./ConfirmMemberChange.tsx";
import { InvitationTable } from "./InvitationTable.tsx";
import { InviteForm } from "./InviteForm.tsx";
import { type Confirm, MemberTable } from "./MemberTable.tsx";
import type { Invitation } from "./types.ts";
import { WithdrawForm } from "./WithdrawForm.tsx";
import "./PeoplePage.css";

export function PeoplePage() {
  useTick();
  const org = useOrgKey();
  const session = useSession();
  const people = useQuery({
    queryKey: [org, "people"],
    queryFn: () => unwrap(api.GET("/webhooks/people")),
  });
  const invitations = useQuery({
    queryKey: [org, "invitations"],
    queryFn: () => unwrap(api.GET("/webhooks/invitations")).then((r) => r.data),
  });
  const [confirm, setConfirm] = useState<Confirm | null>(null);
  const [withdrawing, setWithdrawing] = useState<Invitation | null>(null);
  const [said, setSaid] = useState("");
  const saidRef = useRef<HTMLParagraphElement>(null);
  // Said above the lists; when the row's button went with the row, focus goes to the words.
  const tell = (text: string, moved = true) => {
    setSaid(text);
    if (moved) focusSoon(() => saidRef.current);
  };
  const open = (invitations.data ?? []).filter((i) => i.status === "pending" || i.status === "expired");
  const members = people.data?.data ?? [];

  return (
    <>
      <h1>People</h1>
      <p className="lead">
        Who can sign in to{" "}
        {session.organization?.organization_name}. Admins manage its settings, webhooks, API keys and people;
        staff use the church app. Changes apply at once, also to someone already signed in.
      </p>
      <InviteForm />
      <p className="ok" role="status" tabIndex={-1} ref={saidRef}>{said}</p>

      <section className="people-section">
        <h2>
          Members{people.data ? ` (${members.length}${people.data.has_more ? "+" : ""})` : ""}
        </h2>
        {people.error && (
          <ErrorBox
            error={`Could not load the members: ${errorText(people.error)}`}
            retry={() => void people.refetch()}
          />
        )}
        {people.isPending && <Loading what="members" />}
        {members.length > 0 && <MemberTable people={members} onConfirm={setConfirm} />}
        {people.data?.has_more && (
          <p className="help">
            Only the first {members.length} members are shown.
          </p>
        )}
      </section>
      <section className="people-section">
        <h2>Invitations</h2>
        {invitations.error && (
          <ErrorBox
            error={`Could not load the invitations: ${errorText(invitations.error)}`}
            retry={() => void invitations.refetch()}
          />
        )}
        {invitations.isPending && <Loading what="invitations" />}
        {invitations.data && open.length === 0 && (
          <Empty title="No open invitations">
            <p>Invitations you send show here until they are accepted.</p>
          </Empty>
        )}
        {open.length > 0 && (
          <InvitationTable
            invitations={open}
            onWithdraw={setWithdrawing}
            onResent={setSaid}
          />
        )}
      </section>

      <Dialog
        title={confirm ? confirmTitle(confirm) : ""}
        open={!!confirm}
        onClose={() => setConfirm(null)}
      >
        {confirm && (
          <ConfirmMemberChange
            confirm={confirm}
            close={() => setConfirm(null)}
            onDone={tell}
          />
        )}
      </Dialog>
      <Dialog
        title="Withdraw this invitation?"
        open={!!withdrawing}
        onClose={() => setWithdrawing(null)}
      >
        {withdrawing && (
          <WithdrawForm
            invitation={withdrawing}
            close={() => setWithdrawing(null)}
            onDone={(text) => tell(text)}
          />
        )}
      </Dialog>
    </>
  );
}
