// Reads a request body as raw bytes exactly once, refusing it as soon as it grows past a limit so a
// huge body is never buffered whole. Signatures are computed over these bytes, never over re-encoded JSON.
import { badRequest, payloadTooLarge } from "./errors.ts";

export const DEFAULT_BODY_LIMIT = 1024 * 1024; // 1 MiB

export async function readRawBody(req: Request, limit = DEFAULT_BODY_LIMIT): Promise<Uint8Array> {
  const declared = req.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw payloadTooLarge(limit);
  if (!req.body) return new Uint8Array();
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => {});
        throw payloadTooLarge(limit);
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/** Parses JSON from raw bytes; a body that is not valid UTF-8 JSON is the caller's error. */
export function parseJson(raw: Uint8Array): unknown {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(raw);
  } catch {
    throw badRequest("invalid_json", "Body is not valid UTF-8");
  }
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest("invalid_json", "Body is not valid JSON");
  }
}
