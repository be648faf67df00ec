// Why a payment notification could not be applied, in an administrator's words. The stored error (with
// its database code) stays in the detail for support; the page leads with these words.

/** An amount in minor units as money in its currency (2500 USD is $25.00, 500 JPY is ¥500). */
export function money(minor: number, currency: string): string {
  try {
    const f = new Intl.NumberFormat(undefined, { style: "currency", currency });
    const digits = f.resolvedOptions().maximumFractionDigits ?? 2;
    return f.format(minor / 10 ** digits);
  } catch {
    return `${minor} ${currency} (minor units)`;
  }
}

const RULES: { match: RegExp; words(m: RegExpExecArray): string }[] = [
  {
    match: /refunds \((\d+) ([A-Z]{3})\) exceed the donation \((\d+) ([A-Z]{3})\) for payment (\S+)/,
    words: (m) =>
      `The refunds for payment ${m[5]} add up to ${money(Number(m[1]), m[2]!)}, more than the donation of ` +
      `${money(Number(m[3]), m[4]!)}. Check the donation's amount (or the refund with your provider), ` +
      "then replay it.",
  },
  {
    match: /refund currency differs from donation currency ([A-Z]{3}) for payment (\S+)/,
    words: (m) =>
      `The refund for payment ${m[2]} is in another currency than the donation (${
        m[1]
      }). Check the payment ` +
      "with your provider.",
  },
  {
    match: /signature/i,
    words: () => "Its signature did not match this organization's secret, so it was not trusted.",
  },
];

/** Why an entry needs attention, in words, or null when nothing does. Unknown errors keep their message,
 *  without the code. An unmatched entry has no error: it was kept because nothing here matches it yet. */
export function explain(error: string | null, status?: string): string | null {
  if (!error) {
    return status === "unmatched"
      ? "It names a subscription or payment this organization does not have yet, so it was kept but not " +
        "applied. Replay it once that exists."
      : null;
  }
  for (const r of RULES) {
    const m = r.match.exec(error);
    if (m) return r.words(m);
  }
  return `It could not be applied: ${error.replace(/^[0-9A-Z]{5}: |^[a-z_]+: /, "")}`;
}

/** Statuses a replay can change: anything verified and well-formed. */
export const REPLAYABLE = new Set([
  "received",
  "processed",
  "unmatched",
  "failed",
]);

/** Why an entry cannot be replayed, in words; null when it can. */
export function whyNotReplayable(status: string): string | null {
  if (status === "unverified") {
    return "Its signature did not match, so it was never applied and its content was not kept: nothing can be " +
      "replayed. If it was genuine, check the provider's signing secret, then have the provider send it again.";
  }
  if (status === "rejected") {
    return "It was malformed or an event this service does not handle, so it was refused (400) and is never " +
      "applied. The provider's next correct notification is applied as usual.";
  }
  return null;
}
