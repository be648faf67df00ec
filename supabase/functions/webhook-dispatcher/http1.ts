// A small HTTP/1.1 client for webhook POSTs, used instead of fetch for two reasons:
//
// 1. It connects to the address the target check approved. The dispatcher resolves the host, refuses
//    private/loopback/metadata addresses, then opens the TCP connection to that very address and
//    starts TLS with the URL's host name (SNI and certificate checked against the name). fetch would
//    resolve again on its own, leaving a DNS-rebinding window between check and connect; this has none.
// 2. It is cheaper: at thousands of deliveries a second fetch's per-request machinery was most of the
//    dispatcher's CPU time. Connections are kept alive per (address, port, host).
//
// Scope is deliberately narrow: one POST with a Content-Length body; the response head (at most 16 KiB),
// 1xx heads skipped; a body framed by Content-Length or chunked is read up to READ_LIMIT and the
// connection reused only if the body ended within it; anything else is read to the limit and closed.

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const HEAD_LIMIT = 16 * 1024;
const IDLE_MS = 4000; // below the 5 s keep-alive timeout many servers (Node's default) use
const MAX_IDLE_PER_KEY = 64;

export interface Http1Response {
  status: number;
  headers: Map<string, string>;
  /** The first `excerptBytes` of the body. */
  excerpt: Uint8Array;
}

export interface Http1Request {
  url: URL;
  /** The approved IP address to connect to; undefined connects by host name (private targets allowed). */
  address?: string;
  headers: Record<string, string>;
  body: Uint8Array;
  signal: AbortSignal;
  /** Bytes of the response body read at most (the rest is not read; the connection is closed). */
  readLimit: number;
  excerptBytes: number;
  /** Called as soon as the final response head is parsed, before the body is read. */
  onHead?: (status: number, headers: Map<string, string>) => void;
}

interface Connection {
  conn: Deno.Conn;
  reader: BufferedReader;
  idleSince: number;
}

class Closed extends Error {
  constructor(readonly beforeResponse: boolean) {
    super("connection closed by the receiver");
    this.name = "ConnectionClosed";
  }
}

/** Buffered reads over a connection. */
class BufferedReader {
  private buf = new Uint8Array(16 * 1024);
  private start = 0;
  private end = 0;
  /** True once any byte of the current response arrived. */
  gotBytes = false;

  constructor(private readonly conn: Deno.Conn) {}

  get buffered(): number {
    return this.end - this.start;
  }

  private async fill(): Promise<void> {
    if (this.start > 0 && this.start === this.end) this.start = this.end = 0;
    if (this.end === this.buf.length) {
      if (this.start > 0) {
        this.buf.copyWithin(0, this.start, this.end);
        this.end -= this.start;
        this.start = 0;
      } else {
        const bigger = new Uint8Array(this.buf.length * 2);
        bigger.set(this.buf);
        this.buf = bigger;
      }
    }
    const n = await this.conn.read(this.buf.subarray(this.end));
    if (n === null) throw new Closed(!this.gotBytes);
    this.gotBytes = true;
    this.end += n;
  }

  /** Reads through the next blank line (a response head), at most `limit` bytes. */
  async readHead(limit: number): Promise<string> {
    for (;;) {
      for (let i = this.start + 3; i < this.end; i++) {
        if (
          this.buf[i] === 10 && this.buf[i - 1] === 13 && this.buf[i - 2] === 10 && this.buf[i - 3] === 13
        ) {
          const head = decoder.decode(this.buf.subarray(this.start, i + 1));
          this.start = i + 1;
          return head;
        }
      }
      if (this.end - this.start > limit) throw new Error("response head larger than 16 KiB");
      await this.fill();
    }
  }

  async readLine(limit: number): Promise<string> {
    for (;;) {
      const at = this.buf.subarray(this.start, this.end).indexOf(10);
      if (at >= 0) {
        const line = decoder.decode(this.buf.subarray(this.start, this.start + at)).replace(/\r$/, "");
        this.start += at + 1;
        return line;
      }
      if (this.end - this.start > limit) throw new Error("response line too long");
      await this.fill();
    }
  }

  /** Passes the next `n` bytes to `sink` as they arrive. */
  async consume(n: number, sink: (chunk: Uint8Array) => void): Promise<void> {
    while (n > 0) {
      if (this.buffered === 0) await this.fill();
      const take = Math.min(n, this.buffered);
      sink(this.buf.subarray(this.start, this.start + take));
      this.start += take;
      n -= take;
    }
  }

  /** Reads until the peer closes or `n` bytes came; returns false if it stopped at the limit. */
  async consumeToEnd(n: number, sink: (chunk: Uint8Array) => void): Promise<boolean> {
    try {
      for (;;) {
        if (this.buffered === 0) await this.fill();
        const take = Math.min(n, this.buffered);
        sink(this.buf.subarray(this.start, this.start + take));
        this.start += take;
        n -= take;
        if (n === 0) return false;
      }
    } catch (e) {
      if (e instanceof Closed) return true;
      throw e;
    }
  }
}

export class Http1Client {
  private readonly idle = new Map<string, Connection[]>();

  async post(req: Http1Request): Promise<Http1Response> {
    const key = `${req.url.protocol}//${req.address ?? req.url.hostname}:${req.url.port}|${req.url.hostname}`;
    for (let tries = 0;; tries++) {
      const reused = this.takeIdle(key);
      const c = reused ?? await this.connect(req);
      const onAbort = () => closeQuietly(c.conn);
      if (req.signal.aborted) {
        onAbort();
        throw req.signal.reason ?? new Error("aborted");
      }
      req.signal.addEventListener("abort", onAbort);
      try {
        const { response, reusable } = await exchange(c, req);
        if (reusable && !req.signal.aborted) this.putIdle(key, c);
        else closeQuietly(c.conn);
        return response;
      } catch (err) {
        closeQuietly(c.conn);
        // A kept-alive connection the server had already closed: try once more on a fresh one.
        if (reused && tries === 0 && err instanceof Closed && err.beforeResponse && !req.signal.aborted) {
          continue;
        }
        throw err;
      } finally {
        req.signal.removeEventListener("abort", onAbort);
      }
    }
  }

  close(): void {
    for (const list of this.idle.values()) for (const c of list) closeQuietly(c.conn);
    this.idle.clear();
  }

  private takeIdle(key: string): Connection | undefined {
    const list = this.idle.get(key);
    const now = Date.now();
    while (list && list.length > 0) {
      const c = list.pop()!;
      if (now - c.idleSince < IDLE_MS && c.reader.buffered === 0) return c;
      closeQuietly(c.conn);
    }
    return undefined;
  }

  private putIdle(key: string, c: Connection): void {
    let list = this.idle.get(key);
    if (!list) this.idle.set(key, list = []);
    if (list.length >= MAX_IDLE_PER_KEY) {
      closeQuietly(c.conn);
      return;
    }
    c.idleSince = Date.now();
    list.push(c);
  }

  private async connect(req: Http1Request): Promise<Connection> {
    const port = Number(req.url.port || (req.url.protocol === "https:" ? 443 : 80));
    const hostname = (req.address ?? req.url.hostname).replace(/^\[|\]$/g, "");
    const tcp = await withAbort(Deno.connect({ hostname, port }), req.signal, (c) => closeQuietly(c));
    try {
      tcp.setNoDelay(true);
    } catch { /* not every platform exposes it */ }
    let conn: Deno.Conn = tcp;
    if (req.url.protocol === "https:") {
      // TLS to the approved address, with SNI and certificate checks against the URL's host name.
      conn = await withAbort(
        Deno.startTls(tcp, { hostname: req.url.hostname.replace(/^\[|\]$/g, "") }),
        req.signal,
        (c) => closeQuietly(c),
      );
    }
    return { conn, reader: new BufferedReader(conn), idleSince: Date.now() };
  }
}

async function exchange(
  c: Connection,
  req: Http1Request,
): Promise<{ response: Http1Response; reusable: boolean }> {
  const target = `${req.url.pathname || "/"}${req.url.search}`;
  let head = `POST ${target} HTTP/1.1\r\nhost: ${req.url.host}\r\ncontent-length: ${req.body.byteLength}\r\n`;
  for (const [name, value] of Object.entries(req.headers)) {
    if (/[\r\n]/.test(name) || /[\r\n]/.test(value)) throw new Error("invalid header");
    head += `${name}: ${value}\r\n`;
  }
  head += "\r\n";
  const headBytes = encoder.encode(head);
  const out = new Uint8Array(headBytes.byteLength + req.body.byteLength);
  out.set(headBytes);
  out.set(req.body, headBytes.byteLength);
  c.reader.gotBytes = false;
  for (let written = 0; written < out.byteLength;) written += await c.conn.write(out.subarray(written));

  // Skip interim 1xx responses (100 Continue, 103 Early Hints).
  let status: number;
  let version: string;
  let headers: Map<string, string>;
  for (;;) {
    const text = await c.reader.readHead(HEAD_LIMIT);
    const lines = text.split("\r\n");
    const m = /^HTTP\/(1\.[01]) (\d{3})/.exec(lines[0] ?? "");
    if (!m) throw new Error("malformed response status line");
    version = m[1]!;
    status = Number(m[2]);
    headers = new Map();
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(":");
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers.set(name, headers.has(name) ? `${headers.get(name)}, ${value}` : value);
    }
    if (status >= 200 || status === 101) break;
  }
  req.onHead?.(status, headers);

  const excerpt = new Uint8Array(req.excerptBytes);
  let kept = 0;
  const sink = (chunk: Uint8Array) => {
    if (kept < excerpt.length) {
      const take = chunk.subarray(0, excerpt.length - kept);
      excerpt.set(take, kept);
      kept += take.byteLength;
    }
  };
  const connectionHeader = (headers.get("connection") ?? "").toLowerCase();
  let reusable = version === "1.1"
    ? !connectionHeader.includes("close")
    : connectionHeader.includes("keep-alive");
  const te = (headers.get("transfer-encoding") ?? "").toLowerCase();
  const length = headers.get("content-length");
  let budget = req.readLimit;
  if (status === 101) {
    // Switching protocols: the connection is no longer HTTP; nothing more to read from it.
    reusable = false;
  } else if (status === 204 || status === 304) {
    // no body
  } else if (te.includes("chunked")) {
    for (;;) {
      const sizeLine = await c.reader.readLine(1024);
      const size = parseInt(sizeLine.split(";")[0]!.trim(), 16);
      if (Number.isNaN(size) || size < 0) throw new Error("malformed chunked body");
      if (size === 0) {
        // Trailers, up to the blank line.
        while ((await c.reader.readLine(HEAD_LIMIT)) !== "");
        break;
      }
      if (size > budget) {
        await c.reader.consume(budget, sink);
        reusable = false;
        break;
      }
      await c.reader.consume(size, sink);
      budget -= size;
      await c.reader.readLine(16);
    }
  } else if (length !== undefined && /^\d+$/.test(length)) {
    const n = Number(length);
    if (n > budget) {
      await c.reader.consume(budget, sink);
      reusable = false;
    } else {
      await c.reader.consume(n, sink);
    }
  } else {
    // Framed by the connection's end: read to the limit, never reuse.
    await c.reader.consumeToEnd(budget, sink);
    reusable = false;
  }
  return { response: { status, headers, excerpt: excerpt.subarray(0, kept) }, reusable };
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch { /* already closed */ }
}

/** Awaits a connect-like promise; if the signal fires first, rejects and disposes of the late result. */
function withAbort<T>(p: Promise<T>, signal: AbortSignal, dispose: (value: T) => void): Promise<T> {
  if (signal.aborted) {
    p.then(dispose, () => {});
    return Promise.reject(signal.reason ?? new Error("aborted"));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      p.then(dispose, () => {});
      reject(signal.reason ?? new Error("aborted"));
    };
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        if (signal.aborted) dispose(v);
        else resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}
