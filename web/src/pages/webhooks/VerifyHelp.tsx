import { hexSnippet, standardSnippet } from "./snippets.ts";

export function VerifyHelp() {
  return (
    <details>
      <summary>How your receiver checks a delivery</summary>
      <p>
        Every delivery carries{" "}
        <code>x-webhook-signature</code>: the lowercase hex HMAC-SHA256 of the raw body with this secret.
        Compare it in constant time and answer 401 when it differs. The Standard Webhooks headers (<code>
          webhook-id
        </code>, <code>webhook-timestamp</code>,{" "}
        <code>webhook-signature</code>) are sent too, for the standard libraries. A test delivery carries{" "}
        <code>"test": true</code> in its body: a real event never does.
      </p>
      <pre
        className="code"
        tabIndex={0}
        aria-label="Verification with HMAC"
      >{hexSnippet()}</pre>
      <pre
        className="code"
        tabIndex={0}
        aria-label="Verification with the Standard Webhooks library"
      >
        {standardSnippet()}
      </pre>
    </details>
  );
}
