// Which URLs outbound webhooks may be sent to, checked when an endpoint is saved and again by the
// dispatcher for every connection: an organization must not make our servers call inward. Refusals of
// what the URL says (its scheme, an address written in it, a name known to be local) name the rule; a
// refusal that depends on what a name resolves to is one message whatever the reason (does not resolve,
// resolves to loopback, private, metadata...), so saving URLs cannot map internal host names, not even
// which of them exist.
// @see docs/outbound-webhooks.md#target-safety (the ranges, and what WEBHOOKS_ALLOW_PRIVATE_TARGETS allows)
import ipaddr from "ipaddr.js";

export type TargetVerdict =
  | { ok: true; url: URL; addresses: string[] }
  | { ok: false; reason: string };

export interface TargetPolicy {
  allowPrivate: boolean;
  /** Resolves a host name to its addresses; defaults to the system resolver (A and AAAA). */
  resolve?: (host: string) => Promise<string[]>;
  /** Resolve and check names in development too (the dispatcher: metadata stays refused there). */
  alwaysResolve?: boolean;
}

type Address = ipaddr.IPv4 | ipaddr.IPv6;

// ipaddr.js range names -> what we call them in a refusal. Ranges not listed here are allowed:
// "unicast", and the special-purpose blocks IANA marks globally reachable that are real services
// (AMT 192.52.193.0/24 and 2001:3::/32, DRIP 2001:30::/28).
const REFUSED: Record<string, string> = {
  unspecified: "unspecified",
  broadcast: "broadcast",
  multicast: "multicast",
  linkLocal: "link-local",
  loopback: "loopback",
  carrierGradeNat: "carrier-grade NAT",
  private: "private",
  reserved: "reserved (documentation, benchmarking or future use)",
  as112: "AS112 (DNS sink)",
  as112v6: "AS112 (DNS sink)",
  uniqueLocal: "unique local (private)",
  deprecatedSiteLocal: "site-local",
  discard: "discard-only",
  rfc6145: "IPv4-translated",
  teredo: "Teredo",
  benchmarking: "benchmarking",
  deprecatedOrchid: "ORCHID",
  orchid2: "ORCHIDv2",
  segmentRouting: "SRv6 segment routing",
};

// Cloud metadata services: refused in every mode, including development. Link-local holds AWS, GCP,
// Azure, OCI and ECS task metadata (169.254.169.254, 169.254.170.2); the others sit outside it.
const CLOUD_METADATA: [Address, number][] = [
  "169.254.0.0/16", // link-local: instance metadata of most clouds
  "100.100.100.200/32", // Alibaba Cloud
  "168.63.129.16/32", // Azure WireServer
  "192.0.0.192/32", // Oracle Cloud
  "fd00:ec2::/32", // AWS IPv6 instance metadata and DNS
  "fe80::/10", // IPv6 link-local
].map((cidr) => ipaddr.parseCIDR(cidr));
const METADATA_NAMES = new Set([
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "instance-data",
  "instance-data.ec2.internal",
  "metadata.azure.internal",
]);

function parseAddress(text: string): Address | null {
  let s = text.trim().toLowerCase();
  if (s.startsWith("[") && s.endsWith("]")) s = s.slice(1, -1);
  if (ipaddr.IPv4.isValidFourPartDecimal(s)) return ipaddr.IPv4.parse(s);
  if (s.includes(":") && ipaddr.IPv6.isValid(s)) return ipaddr.IPv6.parse(s);
  return null;
}

/** The IPv4 address an IPv6 address carries and reaches through translation, if any. */
function embeddedV4(a: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = a.parts;
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 255, lo >> 8, lo & 255]);
  const zero = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && p[5] === 0xffff) return v4(p[6]!, p[7]!); // mapped
  if (zero(0, 6) && !zero(6, 8) && !(zero(6, 7) && p[7] === 1)) return v4(p[6]!, p[7]!); // compatible
  if (p[0] === 0x64 && p[1] === 0xff9b && zero(2, 6)) return v4(p[6]!, p[7]!); // NAT64
  if (p[0] === 0x2002) return v4(p[1]!, p[2]!); // 6to4
  return null;
}

/**
 * The IPv4 address in the last 32 bits of an IPv4-translated (::ffff:0:0/96, RFC 6145) or local-use
 * NAT64 (64:ff9b:1::/48, RFC 8215) address. Only for the metadata rule: production refuses both
 * prefixes whole, but development allows them and a translator would still reach the address inside.
 */
function translatedV4(a: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = a.parts;
  const siit = p.slice(0, 4).every((x) => x === 0) && p[4] === 0xffff && p[5] === 0;
  const localNat64 = p[0] === 0x64 && p[1] === 0xff9b && p[2] === 1;
  if (!siit && !localNat64) return null;
  return new ipaddr.IPv4([p[6]! >> 8, p[6]! & 255, p[7]! >> 8, p[7]! & 255]);
}

function metadataReason(a: Address): string | null {
  const inner = a.kind() === "ipv6" ? embeddedV4(a as ipaddr.IPv6) ?? translatedV4(a as ipaddr.IPv6) : null;
  const target = inner ?? a;
  for (const [base, bits] of CLOUD_METADATA) {
    if (target.kind() === base.kind() && target.match(base, bits)) return "cloud metadata / link-local";
  }
  return null;
}

function rangeReason(a: Address): string | null {
  if (a.kind() === "ipv6") {
    const inner = embeddedV4(a as ipaddr.IPv6);
    if (inner) return rangeReason(inner);
    const p = (a as ipaddr.IPv6).parts;
    if (p[0] === 0x64 && p[1] === 0xff9b && p[2] === 1) return "NAT64 local-use";
  }
  return REFUSED[a.range()] ?? null;
}

/**
 * Why an IP address literal is refused as a webhook target, or null if it may be used. With
 * `allowPrivate` only cloud-metadata addresses are refused.
 */
export function blockedAddressReason(address: string, allowPrivate = false): string | null {
  const a = parseAddress(address);
  if (!a) return "not an IP address";
  if (allowPrivate) return metadataReason(a);
  return rangeReason(a) ?? metadataReason(a);
}

function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, "").replace(/\.$/, "").toLowerCase();
}

/** Checks the URL's form only (no DNS): scheme, credentials, and names/literals known to be local. */
export function checkTargetUrlSyntax(raw: string, allowPrivate: boolean): TargetVerdict {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: "not a valid URL" };
  }
  // The reason names the rule in force: a development setup also accepts http (and says so beside the field).
  const schemes = allowPrivate ? ["https:", "http:"] : ["https:"];
  if (!schemes.includes(url.protocol)) {
    return { ok: false, reason: allowPrivate ? "scheme must be http or https" : "scheme must be https" };
  }
  if (url.username || url.password) return { ok: false, reason: "credentials in the URL are not allowed" };
  if (raw.length > 2048) return { ok: false, reason: "URL longer than 2048 characters" };
  // The WHATWG parser has already turned 0x7f.1, 2130706433 and friends into dotted IPv4.
  const host = hostOf(url);
  if (!host) return { ok: false, reason: "no host" };
  if (!allowPrivate) {
    if (host === "localhost" || host.endsWith(".localhost")) return { ok: false, reason: "loopback host" };
    if (host.endsWith(".internal") || host.endsWith(".local")) {
      return { ok: false, reason: "internal host name" };
    }
  }
  if (METADATA_NAMES.has(host)) return { ok: false, reason: "cloud metadata host name" };
  const literal = parseAddress(host);
  if (literal) {
    const why = blockedAddressReason(host, allowPrivate);
    if (why) return { ok: false, reason: `address is ${why}` };
  }
  return { ok: true, url, addresses: literal ? [host] : [] };
}

async function systemResolve(host: string): Promise<string[]> {
  const { lookup } = await import("node:dns/promises");
  try {
    return (await lookup(host, { all: true, verbatim: true })).map((r) => r.address);
  } catch (err) {
    const code = (err as { code?: string }).code;
    throw new Error(`could not resolve ${host}${code ? `: ${code}` : ""}`, { cause: err });
  }
}

/** What a refusal that depends on name resolution says, whatever the reason: no oracle. */
export const notPublicReason = (host: string) => `${host} does not resolve to a public internet address`;

/**
 * The addresses a host may be reached at: resolved once, and refused as a whole when any one of them
 * is blocked (defeats hosts that publish a public and a private record side by side). A name that does
 * not resolve and one that resolves somewhere refused get the same reason.
 */
export async function resolveTarget(
  host: string,
  policy: TargetPolicy,
): Promise<{ ok: true; addresses: string[] } | { ok: false; reason: string }> {
  let addresses: string[];
  try {
    addresses = await (policy.resolve ?? systemResolve)(host);
  } catch {
    return { ok: false, reason: notPublicReason(host) };
  }
  if (addresses.length === 0) return { ok: false, reason: notPublicReason(host) };
  for (const address of addresses) {
    if (blockedAddressReason(address, policy.allowPrivate)) {
      return { ok: false, reason: notPublicReason(host) };
    }
  }
  return { ok: true, addresses };
}

/**
 * The check when an endpoint is saved: syntax, then (in production) every address the host resolves
 * to. In development names are not resolved here (the dispatcher still checks every connection).
 */
export async function checkTargetUrl(raw: string, policy: TargetPolicy): Promise<TargetVerdict> {
  const syntax = checkTargetUrlSyntax(raw, policy.allowPrivate);
  if (!syntax.ok || syntax.addresses.length > 0) return syntax;
  if (policy.allowPrivate && !policy.alwaysResolve) return syntax;
  const resolved = await resolveTarget(hostOf(syntax.url), policy);
  return resolved.ok ? { ok: true, url: syntax.url, addresses: resolved.addresses } : resolved;
}
