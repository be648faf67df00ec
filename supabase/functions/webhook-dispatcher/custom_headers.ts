// An endpoint's custom headers as the claim hands them over (JSON text, per delivery), parsed and checked
// once per distinct text rather than per delivery: every delivery to an endpoint carries the same text,
// and a change made in the settings is a new text, so it is used from the next claim on, as a changed
// URL or secret is. @see docs/custom-headers.md
import { type CustomHeader, headerNameRefusal, headerValueRefusal } from "../_shared/custom_headers.ts";

export interface PreparedHeaders {
  /** Name (as the admin wrote it) to value, sent before our own headers. */
  headers: Record<string, string>;
  /** The names, lower case: their values are masked in Webhook Logs (masking.ts). */
  names: ReadonlySet<string>;
  /** The values, masked wherever a receiver echoes them back. */
  values: readonly string[];
}

/** Bounded: a few thousand active endpoints at most; start over rather than grow without limit. */
const MAX_ENTRIES = 10_000;

export class CustomHeaderCache {
  private readonly entries = new Map<string, PreparedHeaders>();

  /** The prepared headers of a claim's text; throws (naming no value) when the text breaks the rule. */
  get(text: string | null): PreparedHeaders | undefined {
    if (text === null) return undefined;
    let prepared = this.entries.get(text);
    if (!prepared) {
      prepared = prepare(text);
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(text, prepared);
    }
    return prepared;
  }
}

function prepare(text: string): PreparedHeaders {
  const list = JSON.parse(text) as CustomHeader[];
  const headers: Record<string, string> = {};
  const names = new Set<string>();
  const values: string[] = [];
  for (const { name, value } of list) {
    // The database keeps the same rule; this stops a row written around it from breaking every send.
    const refusal = headerNameRefusal(String(name)) ??
      (typeof value === "string" ? headerValueRefusal(value) : "is not text");
    if (refusal || names.has(name.toLowerCase())) {
      throw new Error(`custom header ${JSON.stringify(String(name).slice(0, 100))} refused`);
    }
    headers[name] = value;
    names.add(name.toLowerCase());
    values.push(value);
  }
  return { headers, names, values };
}
