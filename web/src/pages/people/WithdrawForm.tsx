import { api, ApiError, unwrap } from "../../api/client.ts";
import { useAction } from "../../api/queries.ts";
import { ActionResult } from "../../ui/ActionResult.tsx";
import type { Invitation } from "./types.ts";

const GONE = "This invitation is no longer open: it was accepted, withdrawn or replaced meanwhile.";

export function WithdrawForm(
  { invitation, close, onDone }: {
    invitation: Invitation;
    close(): void;
    onDone(text: string): void;
  },
) {
  const withdraw = useAction(async () => {
    try {
      await unwrap(
        api.DELETE("/webhooks/invitations/{id}", {
          params: { path: { id: invitation.id } },
        }),
      );
    } catch (e) {
      throw e instanceof ApiError && e.status === 404 ? new Error(GONE) : e;
    }
  });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        withdraw.mutate(undefined, {
          onSuccess: () => {
            close();
            onDone(
              `The invitation to ${invitation.email} was withdrawn; its link no longer works.`,
            );
          },
        });
      }}
    >
      <p>
        The link sent to <strong>{invitation.email}</strong>{" "}
        stops working at once. You can invite them again later.
      </p>
      <ActionResult action={withdraw} />
      <div className="actions">
        <button type="submit" className="danger" aria-disabled={withdraw.isPending || undefined}>
          {withdraw.isPending ? "Withdrawing…" : "Withdraw invitation"}
        </button>
        <button type="button" onClick={close} data-autofocus>Cancel</button>
      </div>
    </form>
  );
}
