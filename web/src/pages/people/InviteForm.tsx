// Invite someone by e-mail as staff or admin. The server decides what is wrong and says it at the field:
// a malformed address, one that already belongs to a member, one mailed too recently (with when the next
// mail can go). The invitation link is offered too, for when a mail does not arrive.
import { useId, useRef, useState } from "react";
import { api, ApiError, unwrap } from "../../api/client.ts";
import { useAction } from "../../api/queries.ts";
import { ACCEPT_INVITATION_PATH } from "../invitations/AcceptInvitationPage.tsx";
import { ActionResult } from "../../ui/ActionResult.tsx";
import { OnceSecret } from "../../ui/OnceSecret.tsx";
import { TextField } from "../../ui/TextField.tsx";
import { type Role, ROLE_WORDS } from "./types.ts";

export function InviteForm() {
  const id = useId();
  const emailInput = useRef<HTMLInputElement>(null);
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("staff");
  const [emailError, setEmailError] = useState<string | null>(null);
  const [link, setLink] = useState<string | null>(null);
  const invite = useAction(async () => {
    setLink(null);
    try {
      const created = await unwrap(
        api.POST("/webhooks/invitations", {
          body: { email: email.trim(), role },
        }),
      );
      setEmail("");
      setLink(
        `${location.origin}${ACCEPT_INVITATION_PATH}#token=${created.token}`,
      );
      return `Invitation sent to ${created.email} as ${ROLE_WORDS[created.role].toLowerCase()}.`;
    } catch (e) {
      const field = !(e instanceof ApiError)
        ? null
        : e.status === 400 && e.fields.some((f) => f.field === "email")
        ? "This is not an e-mail address."
        : e.code === "already_member"
        ? `${email.trim()} is already a member of this organization.`
        : e.fields.find((f) => f.field === "email")?.message ?? null;
      if (field) {
        setEmailError(field);
        emailInput.current?.focus();
        return;
      }
      throw e;
    }
  });
  return (
    <form
      className="panel"
      aria-labelledby={`${id}-t`}
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        if (!email.trim()) {
          setEmailError("Enter the e-mail address of the person to invite.");
          emailInput.current?.focus();
          return;
        }
        setEmailError(null);
        invite.mutate();
      }}
    >
      <h2 id={`${id}-t`}>Invite someone</h2>
      <TextField
        id={`${id}-email`}
        inputRef={emailInput}
        label="E-mail"
        type="email"
        autoComplete="off"
        maxLength={320}
        value={email}
        error={emailError ?? undefined}
        help="They get an e-mail with a link to join; it works for 7 days."
        onChange={(e) => setEmail(e.currentTarget.value)}
      />
      <label htmlFor={`${id}-role`}>Role</label>
      <select
        id={`${id}-role`}
        value={role}
        aria-describedby={`${id}-role-help`}
        onChange={(e) => setRole(e.currentTarget.value as Role)}
      >
        <option value="staff">Staff</option>
        <option value="admin">Admin</option>
      </select>
      <p id={`${id}-role-help`} className="help">
        Admins manage this organization's settings, webhooks, API keys and people. Staff use the church app.
      </p>
      <div className="actions">
        <button type="submit" className="primary" aria-disabled={invite.isPending || undefined}>
          {invite.isPending ? "Sending…" : "Send invitation"}
        </button>
      </div>
      <ActionResult action={invite} />
      {link && (
        <details>
          <summary>Or send the link yourself</summary>
          <OnceSecret label="Invitation link" value={link}>
            <p className="help">
              Whoever opens it can join, so send it only to the person you invited.
            </p>
          </OnceSecret>
        </details>
      )}
    </form>
  );
}
