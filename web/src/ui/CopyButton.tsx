import { useState } from "react";

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
