// A question before an action that cannot be undone from here: what happens, the action's outcome, the
// action and Cancel (focus starts on Cancel, the safe choice).
import type { ReactNode } from "react";
import { ActionResult, type ActionState } from "../../ui/ActionResult.tsx";
import { Dialog } from "../../ui/Dialog.tsx";

export function ConfirmDialog(
  { title, open, close, action, confirm, danger = false, children }: {
    title: string;
    open: boolean;
    close(): void;
    action: ActionState & { mutate(): void };
    /** The action button's words. */
    confirm: string;
    danger?: boolean;
    children: ReactNode;
  },
) {
  return (
    <Dialog title={title} open={open} onClose={close}>
      {children}
      <ActionResult action={action} />
      <div className="actions">
        <button
          type="button"
          className={danger ? "danger" : "primary"}
          aria-disabled={action.isPending || undefined}
          onClick={() => action.mutate()}
        >
          {confirm}
        </button>
        <button type="button" data-autofocus onClick={close}>Cancel</button>
      </div>
    </Dialog>
  );
}
