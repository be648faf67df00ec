// Minimal assertions (JSR's @std/assert is not reachable here); node:assert does the deep comparison.
import nodeAssert from "node:assert/strict";

export function assert(cond: unknown, msg = "assertion failed"): asserts cond {
  if (!cond) throw new Error(msg);
}

export function assertEquals<T>(actual: T, expected: T, msg?: string): void {
  nodeAssert.deepStrictEqual(actual, expected, msg);
}

export function assertNotEquals<T>(actual: T, expected: T, msg?: string): void {
  nodeAssert.notDeepStrictEqual(actual, expected, msg);
}

export function assertMatch(actual: string, re: RegExp, msg?: string): void {
  nodeAssert.match(actual, re, msg);
}

export async function assertRejects(fn: () => Promise<unknown>, msg?: string): Promise<unknown> {
  try {
    await fn();
  } catch (e) {
    return e;
  }
  throw new Error(msg ?? "expected the promise to reject");
}

export function assertThrows(fn: () => unknown, msg?: string): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error(msg ?? "expected the function to throw");
}
