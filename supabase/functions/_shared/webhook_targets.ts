// Which URLs outbound webhooks may be sent to. Used when an endpoint is saved (the configuration API)
// and again by the dispatcher before every send, after DNS resolution: an organization must not be able
// to make our servers call loopback, the private network, link-local or cloud-metadata addresses.
//
// Refused unless `allowPrivate` (WEBHOOKS_ALLOW_PRIVATE_TARGETS=true, local development and tests):
// plain http, and any address in the ranges below, IPv4 or IPv6, including IPv4 embedded in IPv6
// (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16).

export type TargetVerdict =
  | { ok: true; url: URL; addresses: string[] }
  | { ok: false; reason: string };

export interface TargetPolicy {
  allowPrivate: boolean;
  /** Resolves a host name to its addresses; defaults to DNS (A and AAAA). */
  resolve?: (host: string) => Promise<string[]>;
}

// [first address as a number, prefix length, what it is]
const V4_BLOCKED: [number, number, string][] = [
  [v4("0.0.0.0"), 8, "this network"],
  [v4("10.0.0.0"), 8, "private"],
  [v4("100.64.0.0"), 10, "carrier-grade NAT"],
  [v4("127.0.0.0"), 8, "loopback"],
  [v4("169.254.0.0"), 16, "link-local / cloud metadata"],
  [v4("172.16.0.0"), 12, "private"],
  [v4("192.0.0.0"), 24, "IETF protocol assignments"],
  [v4("192.0.2.0"), 24, "documentation"],
  [v4("192.88.99.0"), 24, "6to4 relay"],
  [v4("192.168.0.0"), 16, "private"],
  [v4("198.18.0.0"), 15, "benchmarking"],
  [v4("198.51.100.0"), 24, "documentation"],
  [v4("203.0.113.0"), 24, "documentation"],
  [v4("224.0.0.0"), 4, "multicast"],
  [v4("240.0.0.0"), 4, "reserved"],
  // Cloud metadata services outside the ranges above (Azure's wire server, Alibaba's is in CGNAT).
  [v4("168.63.129.16"), 32, "cloud metadata"],
];

function v4(text: string): number {
  return text.split(".").reduce((acc, part) => acc * 256 + Number(part), 0);
}

function parseV4(text: string): number | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  let n = 0;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return null;
    n = n * 256 + Number(p);
  }
  return n;
}

function v4Blocked(n: number): string | null {
  for (const [base, bits, what] of V4_BLOCKED) {
    const size = 2 ** (32 - bits);
    if (n >= base && n < base + size) return what;
  }
  return null;
}

/** Parses an IPv6 address (optionally with a trailing dotted IPv4) into 8 16-bit groups. */
function parseV6(text: string): number[] | null {
  let s = text.toLowerCase();
  if (s.startsWith("[") && s.endsWith("]")) s = s.slice(1, -1);
  const zone = s.indexOf("%");
  if (zone >= 0) s = s.slice(0, zone);
  if (!s.includes(":")) return null;
  let tail: number[] = [];
  const lastColon = s.lastIndexOf(":");
  const last = s.slice(lastColon + 1);
  if (last.includes(".")) {
    const n = parseV4(last);
    if (n === null) return null;
    tail = [Math.floor(n / 65536), n % 65536];
    s = s.slice(0, lastColon + 1) + "0:0";
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(":") : [];
  const rest = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const groups = [
    ...head,
    ...(halves.length === 2 ? Array(8 - head.length - rest.length).fill("0") : []),
    ...rest,
  ];
  if (groups.length !== 8) return null;
  const out: number[] = [];
  for (const g of groups) {
    if (!/^[0-9a-f]{1,4}$/.test(g)) return null;
    out.push(parseInt(g, 16));
  }
  if (tail.length === 2) {
    out[6] = tail[0]!;
    out[7] = tail[1]!;
  }
  return out;
}

function v6Blocked(g: number[]): string | null {
  const embedded = (hi: number, lo: number) => v4Blocked(hi * 65536 + lo);
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 8)) return "unspecified";
  if (zeros(0, 7) && g[7] === 1) return "loopback";
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible): judge the IPv4 address inside.
  if (zeros(0, 5) && g[5] === 0xffff) return embedded(g[6]!, g[7]!) ?? null;
  if (zeros(0, 6)) return embedded(g[6]!, g[7]!) ?? "IPv4-compatible";
  // NAT64 well-known prefix 64:ff9b::/96 and local-use 64:ff9b:1::/48 reach IPv4 through a gateway.
  if (g[0] === 0x64 && g[1] === 0xff9b) {
    if (zeros(2, 6)) return embedded(g[6]!, g[7]!);
    if (g[2] === 1) return "NAT64 local-use";
  }
  if (g[0] === 0x2002) return embedded(g[1]!, g[2]!); // 6to4
  if (g[0] === 0x2001 && g[1] === 0) return "Teredo";
  if (g[0] === 0x2001 && g[1] === 0xdb8) return "documentation";
  if (g[0] === 0x100 && zeros(1, 4)) return "discard";
  if ((g[0]! & 0xfe00) === 0xfc00) return "unique local (private)";
  if ((g[0]! & 0xffc0) === 0xfe80) return "link-local";
  if ((g[0]! & 0xffc0) === 0xfec0) return "site-local";
  if ((g[0]! & 0xff00) === 0xff00) return "multicast";
  // AWS's IPv6 instance metadata endpoint.
  if (g[0] === 0xfd00 && g[1] === 0xec2) return "cloud metadata";
  return null;
}

/** Why an IP address literal is refused as a webhook target, or null if it is a public address. */
export function blockedAddressReason(address: string): string | null {
  const n = parseV4(address);
  if (n !== null) return v4Blocked(n);
  const g = parseV6(address);
  if (g) return v6Blocked(g);
  return "not an IP address";
}

function isIpLiteral(host: string): boolean {
  return parseV4(host) !== null || parseV6(host) !== null;
}

async function resolveDns(host: string): Promise<string[]> {
  const [a, aaaa] = await Promise.allSettled([Deno.resolveDns(host, "A"), Deno.resolveDns(host, "AAAA")]);
  const out = [
    ...(a.status === "fulfilled" ? a.value : []),
    ...(aaaa.status === "fulfilled" ? aaaa.value : []),
  ];
  if (out.length === 0) {
    const err = a.status === "rejected" ? a.reason : aaaa.status === "rejected" ? aaaa.reason : null;
    throw new Error(`could not resolve ${host}${err instanceof Error ? `: ${err.name}` : ""}`);
  }
  return out;
}

/** Checks the URL's form only (no DNS): scheme, credentials, and names/literals known to be local. */
export function checkTargetUrlSyntax(raw: string, allowPrivate: boolean): TargetVerdict {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: "not a valid URL" };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return { ok: false, reason: "scheme must be https" };
  }
  if (url.protocol === "http:" && !allowPrivate) return { ok: false, reason: "scheme must be https" };
  if (url.username || url.password) return { ok: false, reason: "credentials in the URL are not allowed" };
  if (raw.length > 2048) return { ok: false, reason: "URL longer than 2048 characters" };
  // The WHATWG parser has already turned 0x7f.1, 2130706433 and friends into dotted IPv4.
  const host = url.hostname.replace(/^\[|\]$/g, "").replace(/\.$/, "").toLowerCase();
  if (!host) return { ok: false, reason: "no host" };
  if (!allowPrivate) {
    if (host === "localhost" || host.endsWith(".localhost")) return { ok: false, reason: "loopback host" };
    if (host.endsWith(".internal") || host.endsWith(".local")) {
      return { ok: false, reason: "internal host name" };
    }
    if (isIpLiteral(host)) {
      const why = blockedAddressReason(host);
      if (why) return { ok: false, reason: `address is ${why}` };
    }
  }
  return { ok: true, url, addresses: isIpLiteral(host) ? [host] : [] };
}

/**
 * Full check: syntax, then every address the host resolves to must be public. Refusing when any one
 * address is private defeats hosts that publish a public and a private record side by side.
 */
export async function checkTargetUrl(raw: string, policy: TargetPolicy): Promise<TargetVerdict> {
  const syntax = checkTargetUrlSyntax(raw, policy.allowPrivate);
  if (!syntax.ok || policy.allowPrivate || syntax.addresses.length > 0) return syntax;
  const host = syntax.url.hostname.replace(/\.$/, "");
  let addresses: string[];
  try {
    addresses = await (policy.resolve ?? resolveDns)(host);
  } catch (e) {
    return { ok: false, reason: e instanceof Error ? e.message : "could not resolve host" };
  }
  for (const address of addresses) {
    const why = blockedAddressReason(address);
    if (why) return { ok: false, reason: `${host} resolves to ${address} (${why})` };
  }
  return { ok: true, url: syntax.url, addresses };
}
