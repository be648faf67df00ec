import type { ReactNode } from "react";
import "./Badge.css";

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

/** A status as a coloured pill; `kind` picks the colour when it is not the status itself. */
export function Badge(
  { status, kind, children }: {
    status: string;
    kind?: string;
    children?: ReactNode;
  },
) {
  return (
    <span className={`badge badge-${kind ?? status}`}>
      {children ?? statusWord(status)}
    </span>
  );
}
