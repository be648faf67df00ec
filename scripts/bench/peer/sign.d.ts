// Types of sign.mjs for outbound_vs_peer.ts (Deno type-checks it; the peer itself is plain Node).
export function signedHeaders(
  eventId: string,
  eventType: string,
  secret: string,
  body: Uint8Array,
  timestamp: number,
): Record<string, string>;
