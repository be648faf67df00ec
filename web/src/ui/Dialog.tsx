// A modal confirmation on the native <dialog>: Escape cancels, focus returns to what opened it. Focus
// starts on the element marked data-autofocus (the safe choice: Cancel), never on the first button,
// which in a confirmation is the dangerous one: Enter twice must not delete.
import { type ReactNode, useEffect, useId, useRef } from "react";
import "./Dialog.css";

export function Dialog(
  { title, open, onClose, children }: {
    title: string;
    open: boolean;
    onClose(): void;
    children: ReactNode;
  },
) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) {
      d.showModal();
      d.querySelector<HTMLElement>("[data-autofocus]")?.focus();
    }
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      onClose={onClose}
      onCancel={onClose}
    >
      {open && (
        <>
          <h2 id={titleId}>{title}</h2>
          {children}
        </>
      )}
    </dialog>
  );
}
