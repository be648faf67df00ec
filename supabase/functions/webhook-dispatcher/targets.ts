// The syntax verdict of each endpoint URL and the origin/path undici needs, worked out once per URL
// string rather than per delivery: the check (WHATWG parse, host rules, ipaddr.js for literals) costs
// 3-15 µs and ~2 KB of garbage, and every delivery to an endpoint repeats the same URL. Only the pure
// function of the string is kept; names are still resolved and checked at every new connection
// (transport.ts), so a cached verdict never stands in for the DNS check.
import { checkTargetUrlSyntax } from "../_shared/webhook_targets.ts";

export type Target = { ok: true; origin: string; path: string } | { ok: false; reason: string };

/** Bounded: a few thousand active endpoints at most; start over rather than grow without limit. */
const MAX_ENTRIES = 10_000;

export class TargetCache {
  private readonly entries = new Map<string, Target>();

  constructor(private readonly allowPrivate: boolean) {}

  get(url: string): Target {
    let target = this.entries.get(url);
    if (!target) {
      const verdict = checkTargetUrlSyntax(url, this.allowPrivate);
      target = verdict.ok
        ? { ok: true, origin: verdict.url.origin, path: `${verdict.url.pathname}${verdict.url.search}` }
        : { ok: false, reason: verdict.reason };
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(url, target);
    }
    return target;
  }
}
