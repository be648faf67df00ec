// E-mail codes, their hashes and where e-mail links may lead, as Supabase Auth makes and checks them
// (internal/crypto/crypto.go GenerateOtp and GenerateTokenHash, internal/utilities/request.go
// GetReferrer and IsRedirectURLValid).
import { createHash } from "node:crypto";

/** A code of `digits` decimal digits, uniformly random (crypto.GenerateOtp). */
export function newOtp(digits: number): string {
  let out = "";
  while (out.length < digits) {
    for (const b of crypto.getRandomValues(new Uint8Array(digits))) {
      // 250 = 25 * 10: rejecting the rest keeps every digit equally likely.
      if (b < 250 && out.length < digits) out += String(b % 10);
    }
  }
  return out;
}

/** What is stored and put into links for a code sent to `email`: hex SHA-224 of address and code. */
export const tokenHash = (email: string, otp: string): string =>
  createHash("sha224").update(email + otp).digest("hex");

const LOOPBACK = new Set(["localhost", "127.0.0.1", "::1", "[::1]"]);

/** A glob of additional_redirect_urls (`*` within a host label or path segment, `**` across them). */
function globMatches(glob: string, url: string): boolean {
  const pattern = glob.split(/(\*\*|\*)/).map((part) =>
    part === "**" ? ".*" : part === "*" ? "[^./]*" : part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")
  ).join("");
  return new RegExp(`^${pattern}$`).test(url);
}

/**
 * Whether e-mail links and redirects may lead to `target`: the site's own scheme and host (any port
 * on loopback), or an entry of additional_redirect_urls.
 */
export function redirectAllowed(siteUrl: string, allowed: string[], target: string): boolean {
  if (!target) return false;
  let base: URL;
  let url: URL;
  try {
    base = new URL(siteUrl);
    url = new URL(target);
  } catch {
    return false;
  }
  if (
    base.hostname === url.hostname && base.protocol === url.protocol &&
    (base.port === url.port || LOOPBACK.has(url.hostname))
  ) {
    return true;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return false;
  return allowed.some((glob) => glob === target || globMatches(glob, target));
}

/** GetReferrer: `redirect_to` if allowed, else the Referer header if allowed, else the site URL. */
export function referrer(req: Request, siteUrl: string, allowed: string[], redirectTo?: string): string {
  const asked = redirectTo ?? new URL(req.url).searchParams.get("redirect_to") ?? "";
  if (redirectAllowed(siteUrl, allowed, asked)) return asked;
  const header = req.headers.get("referer") ?? "";
  if (redirectAllowed(siteUrl, allowed, header)) return header;
  return siteUrl;
}
