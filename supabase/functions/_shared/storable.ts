// What PostgreSQL can hold of a parsed JSON body. JSON can carry NUL characters and unpaired UTF-16
// surrogates that text and jsonb refuse, and nesting deep enough to exhaust the server's stack (and a
// recursive walk in ours): checking first turns those into a decision of ours instead of a 500.

/** Deeper than any provider's payload by far; deep enough to stop stack exhaustion anywhere. */
export const MAX_JSON_DEPTH = 64;

/**
 * The nesting depth of a JSON text, counted without recursion and without parsing; stops counting once
 * past `stopAt`. Brackets inside strings do not count.
 */
export function jsonDepth(text: string, stopAt = MAX_JSON_DEPTH + 1): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > max) {
        max = depth;
        if (max >= stopAt) return max;
      }
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return max;
}

/** True when every string (keys included) of a value is well-formed UTF-16 without NUL. Iterative. */
export function storableInPostgres(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "string") {
      if (!v.isWellFormed() || v.includes("\u0000")) return false;
    } else if (Array.isArray(v)) {
      for (const x of v) stack.push(x);
    } else if (v !== null && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) {
        stack.push(k);
        stack.push(x);
      }
    }
  }
  return true;
}

/** A string PostgreSQL can hold: unpaired surrogates and NUL become U+FFFD. */
export function storableString(s: string): string {
  return s.toWellFormed().replaceAll("\u0000", "\uFFFD");
}

/** The nesting depth of a parsed value, without recursion; stops counting once past `stopAt`. */
export function valueDepth(value: unknown, stopAt = MAX_JSON_DEPTH + 1): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    const d = depth + 1;
    if (d > max) {
      max = d;
      if (max >= stopAt) return max;
    }
    for (const x of Array.isArray(v) ? v : Object.values(v)) stack.push([x, d]);
  }
  return max;
}
