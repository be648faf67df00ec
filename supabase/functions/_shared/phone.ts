// Phone numbers as the service compares them: digits only, no leading '+'. This is the same rule the
// database applies to members.primary_phone (the generated column primary_phone_normalized), so a
// number normalized here matches a member's stored number however it was typed.

/** E.164 allows at most 15 digits; anything with fewer than 5 is not a dialable number. */
const MIN_DIGITS = 5;
const MAX_DIGITS = 15;

/**
 * Normalizes a phone number to digits only, or returns null when the value is not a phone number:
 * it may contain digits, spaces, dashes, dots, brackets and one leading '+', nothing else. Identifiers
 * that only look numeric in part (WhatsApp business-scoped user ids such as "US.1349120865530274")
 * are therefore not phone numbers.
 */
export function normalizePhone(value: string | null | undefined): string | null {
  if (typeof value !== "string") return null;
  const trimmed = value.trim();
  if (!/^\+?[0-9\s().\-]+$/.test(trimmed)) return null;
  const digits = trimmed.replace(/[^0-9]/g, "");
  if (digits.length < MIN_DIGITS || digits.length > MAX_DIGITS) return null;
  return digits;
}
