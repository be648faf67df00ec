// Suspend (a reason is required: the organization's admins read it) or resume (a note is optional).
import { useId, useRef, useState } from "react";
import { api, ApiError, type PlatformOrganization, unwrap } from "../../api/client.ts";
import { ActionResult } from "../../ui/ActionResult.tsx";
import { TextField } from "../../ui/TextField.tsx";
import { usePlatformAction } from "./usePlatformAction.ts";

export function SuspensionForm(
  { organization, resume, close }: {
    organization: PlatformOrganization;
    resume: boolean;
    close(): void;
  },
) {
  const id = useId();
  const [reason, setReason] = useState("");
  const [error, setError] = useState<string | undefined>();
  const input = useRef<HTMLInputElement>(null);
  const path = { params: { path: { id: organization.id } } };
  const act = usePlatformAction(async () => {
    try {
      if (resume) {
        await unwrap(api.POST("/webhooks/platform/organizations/{id}/resume", {
          ...path,
          body: reason.trim() ? { reason: reason.trim() } : {},
        }));
      } else {
        await unwrap(
          api.POST("/webhooks/platform/organizations/{id}/suspend", {
            ...path,
            body: { reason: reason.trim() },
          }),
        );
      }
    } catch (e) {
      const field = e instanceof ApiError ? e.fields.find((f) => f.field === "reason") : undefined;
      if (field) {
        setError(`The reason ${field.message}.`);
        input.current?.focus();
      }
      throw e;
    }
  });
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        if (!resume && !reason.trim()) {
          setError(
            "Say why: the organization's administrators read it in their audit log.",
          );
          input.current?.focus();
          return;
        }
        setError(undefined);
        act.mutate(undefined, { onSuccess: close });
      }}
    >
      <p>
        {resume
          ? `${organization.name} can be used again at once. Deliveries that waited go out, each with the time it spent suspended given back to its 24-hour window; providers' retries apply the payments and messages that were held.`
          : `Nobody can act for ${organization.name} until you resume it: its people and API keys are refused, payments and messages sent to it are kept and answered "try again later", and its webhooks wait. Nothing is lost.`}
      </p>
      <TextField
        id={`${id}-reason`}
        label={resume ? "Note (optional)" : "Reason"}
        help="One line. The organization's administrators see it in their audit log."
        error={error}
        inputRef={input}
        value={reason}
        maxLength={500}
        onChange={(e) => setReason(e.currentTarget.value)}
      />
      <ActionResult action={act} />
      <div className="actions">
        <button
          type="submit"
          className={resume ? "primary" : "danger"}
          aria-disabled={act.isPending || undefined}
        >
          {act.isPending
            ? (resume ? "Resuming…" : "Suspending…")
            : resume
            ? "Resume organization"
            : "Suspend organization"}
        </button>
        <button type="button" onClick={close} data-autofocus>Cancel</button>
      </div>
    </form>
  );
}
