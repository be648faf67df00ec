// Small pieces every page uses: times, status badges, result messages, confirmations, copy buttons.
import { type ReactNode, useEffect, useId, useRef, useState } from "react";
import { formatTime, relativeTime } from "../format.ts";
import type { Action } from "./hooks.ts";

export function Time(
  { iso, fallback = "—" }: {
    iso: string | null | undefined;
    fallback?: string;
  },
) {
  if (!iso) return <span className="muted">{fallback}</span>;
  return (
    <time dateTime={iso} title={new Date(iso).toString()}>
      {formatTime(iso)} <span className="muted">({relativeTime(iso)})</span>
    </time>
  );
}

const STATUS_WORDS: Record<string, string> = {
  pending: "Pending",
  retrying: "Retrying",
  delivered: "Delivered",
  permanently_failed: "Permanently failed",
  received: "Received",
  processed: "Processed",
  unmatched: "Unmatched",
  failed: "Failed",
  rejected: "Rejected",
  unverified: "Unverified",
  duplicate: "Duplicate",
  skipped: "Skipped",
};

export function statusWord(status: string): string {
  return STATUS_WORDS[status] ?? status;
}

export function Badge({ status }: { status: string }) {
  return <span className={`badge badge-${status}`}>{statusWord(status)}</span>;
}

/** The result of the last action: polite for success, an alert for errors. */
export function ActionResult({ action }: { action: Action }) {
  if (action.pending) return <p className="progress" role="status">Working…</p>;
  if (!action.message) return <p className="sr-only" role="status" />;
  return action.message.kind === "ok"
    ? <p className="ok" role="status">{action.message.text}</p>
    : <p className="error" role="alert">{action.message.text}</p>;
}

export function ErrorBox(
  { error, retry }: { error: string; retry?: () => void },
) {
  return (
    <div className="error-box" role="alert">
      <p>{error}</p>
      {retry && <button type="button" onClick={retry}>Try again</button>}
    </div>
  );
}

export function Empty(
  { title, children }: { title: string; children?: ReactNode },
) {
  return (
    <div className="empty">
      <h3>{title}</h3>
      {children}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return <p className="progress" role="status">Loading {what}…</p>;
}

/** A modal confirmation on the native <dialog>: focus moves in, Escape cancels, focus returns. */
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
    if (open && !d.open) d.showModal();
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

export function CopyButton(
  { text, label = "Copy" }: { text: string; label?: string },
) {
  const [copied, setCopied] = useState<null | "ok" | "failed">(null);
  return (
    <>
      <button
        type="button"
        onClick={async () => {
          try {
            await navigator.clipboard.writeText(text);
            setCopied("ok");
          } catch {
            setCopied("failed");
          }
        }}
      >
        {label}
      </button>
      <span role="status" className={copied === "failed" ? "error" : "ok"}>
        {copied === "ok" ? "Copied" : copied === "failed" ? "Copy failed: select the text and copy it" : ""}
      </span>
    </>
  );
}

/** A secret shown exactly once: a read-only field, a copy button, and nothing stored anywhere. */
export function OnceSecret(
  { label, value, children }: {
    label: string;
    value: string;
    children?: ReactNode;
  },
) {
  const id = useId();
  return (
    <div className="secret" role="group" aria-labelledby={`${id}-l`}>
      <label id={`${id}-l`} htmlFor={id}>{label}</label>
      <div className="row">
        <input
          id={id}
          readOnly
          value={value}
          spellCheck={false}
          onFocus={(e) => e.currentTarget.select()}
        />
        <CopyButton text={value} />
      </div>
      <p className="warn">
        Copy it now: it is shown only once and cannot be read again.
      </p>
      {children}
    </div>
  );
}
