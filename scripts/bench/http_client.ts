// A minimal keep-alive HTTP/1.1 client for load generation: one TCP connection per worker, requests
// written as prepared bytes, responses framed by Content-Length (or chunked). Much lighter than fetch,
// so on a small machine the load generator takes less CPU away from the server it measures.
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const HEADER_END = [13, 10, 13, 10];

export interface RawResponse {
  status: number;
  body: string;
}

export class KeepAliveClient {
  #conn: Deno.TcpConn;
  #buf = new Uint8Array(0);
  private constructor(conn: Deno.TcpConn) {
    this.#conn = conn;
  }

  static async connect(hostname: string, port: number): Promise<KeepAliveClient> {
    const conn = await Deno.connect({ hostname, port });
    conn.setNoDelay(true);
    return new KeepAliveClient(conn);
  }

  /** Builds the bytes of a POST request once, so sending it costs only the write. */
  static post(url: URL, headers: Record<string, string>, body: string): Uint8Array {
    const bodyBytes = encoder.encode(body);
    const head = [
      `POST ${url.pathname}${url.search} HTTP/1.1`,
      `host: ${url.host}`,
      `content-length: ${bodyBytes.byteLength}`,
    ]
      .concat(Object.entries(headers).map(([k, v]) => `${k}: ${v}`))
      .join("\r\n");
    const headBytes = encoder.encode(`${head}\r\n\r\n`);
    const out = new Uint8Array(headBytes.byteLength + bodyBytes.byteLength);
    out.set(headBytes);
    out.set(bodyBytes, headBytes.byteLength);
    return out;
  }

  async send(request: Uint8Array): Promise<RawResponse> {
    let written = 0;
    while (written < request.byteLength) written += await this.#conn.write(request.subarray(written));
    let headerEnd: number;
    while ((headerEnd = indexOf(this.#buf, HEADER_END)) < 0) await this.#fill();
    const head = decoder.decode(this.#buf.subarray(0, headerEnd));
    const status = Number(head.slice(9, 12));
    const length = head.match(/\r\ncontent-length:\s*(\d+)/i)?.[1];
    let rest = headerEnd + 4;
    let body: Uint8Array;
    if (length !== undefined) {
      while (this.#buf.byteLength < rest + Number(length)) await this.#fill();
      body = this.#buf.slice(rest, rest + Number(length));
      rest += Number(length);
    } else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
      const parts: Uint8Array[] = [];
      for (;;) {
        let lineEnd: number;
        while ((lineEnd = indexOf(this.#buf, [13, 10], rest)) < 0) await this.#fill();
        const size = parseInt(decoder.decode(this.#buf.subarray(rest, lineEnd)), 16);
        while (this.#buf.byteLength < lineEnd + 2 + size + 2) await this.#fill();
        if (size === 0) {
          rest = lineEnd + 4;
          break;
        }
        parts.push(this.#buf.slice(lineEnd + 2, lineEnd + 2 + size));
        rest = lineEnd + 2 + size + 2;
      }
      body = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
      let o = 0;
      for (const p of parts) (body.set(p, o), o += p.byteLength);
    } else {
      throw new Error("response without length");
    }
    this.#buf = this.#buf.slice(rest);
    return { status, body: decoder.decode(body) };
  }

  close(): void {
    this.#conn.close();
  }

  async #fill(): Promise<void> {
    const chunk = new Uint8Array(16 * 1024);
    const n = await this.#conn.read(chunk);
    if (n === null) throw new Error("connection closed by server");
    const next = new Uint8Array(this.#buf.byteLength + n);
    next.set(this.#buf);
    next.set(chunk.subarray(0, n), this.#buf.byteLength);
    this.#buf = next;
  }
}

function indexOf(haystack: Uint8Array, needle: number[], from = 0): number {
  outer: for (let i = from; i <= haystack.byteLength - needle.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}
