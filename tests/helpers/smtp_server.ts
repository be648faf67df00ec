// An SMTP server on loopback that catches mail, for tests: it speaks enough of RFC 5321 for nodemailer
// (EHLO, MAIL, RCPT, DATA with dot-stuffing, RSET, NOOP, QUIT), keeps every message it accepted, and can
// be told to refuse them, temporarily (451) or for good (550), the way real servers do.
import { simpleParser } from "mailparser";

export interface CaughtMail {
  from: string;
  to: string[];
  raw: string;
  subject: string;
  text: string;
  html: string;
  headers: Map<string, unknown>;
}

export interface SmtpServer {
  port: number;
  url: string;
  messages: CaughtMail[];
  /** What the server answers to DATA: accept, a temporary failure, or a permanent refusal. */
  mode: "accept" | "tempfail" | "permfail";
  /** Resolves once `n` messages were caught (rejects after `timeoutMs`). */
  waitFor(n: number, timeoutMs?: number): Promise<CaughtMail[]>;
  close(): Promise<void>;
}

export function startSmtpServer(port = 0): Promise<SmtpServer> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port });
  const conns = new Set<Deno.Conn>();
  const waiters: (() => void)[] = [];
  const server: SmtpServer = {
    port: (listener.addr as Deno.NetAddr).port,
    url: `smtp://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    messages: [],
    mode: "accept",
    async waitFor(n, timeoutMs = 20_000) {
      const end = Date.now() + timeoutMs;
      while (server.messages.length < n) {
        if (Date.now() > end) {
          throw new Error(`timed out waiting for ${n} mails (caught ${server.messages.length})`);
        }
        await new Promise<void>((r) => {
          const t = setTimeout(r, 200);
          waiters.push(() => (clearTimeout(t), r()));
        });
      }
      return server.messages.slice(0, n);
    },
    async close() {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed already */ }
      }
      await accepting;
    },
  };
  const accepting = (async () => {
    try {
      for await (const conn of listener) {
        conns.add(conn);
        session(conn, server, () => waiters.splice(0).forEach((w) => w())).finally(() => conns.delete(conn));
      }
    } catch { /* listener closed */ }
  })();
  return Promise.resolve(server);
}

async function session(conn: Deno.Conn, server: SmtpServer, caught: () => void): Promise<void> {
  const enc = new TextEncoder();
  const write = (line: string) => conn.write(enc.encode(line + "\r\n"));
  let buffer = "";
  let from = "";
  let to: string[] = [];
  let data: string[] | null = null;
  try {
    await write("220 127.0.0.1 test SMTP ready");
    const decoder = new TextDecoder();
    for await (const chunk of conn.readable) {
      buffer += decoder.decode(chunk, { stream: true });
      let eol: number;
      while ((eol = buffer.indexOf("\r\n")) >= 0) {
        const line = buffer.slice(0, eol);
        buffer = buffer.slice(eol + 2);
        if (data) {
          if (line !== ".") {
            data.push(line.startsWith("..") ? line.slice(1) : line);
            continue;
          }
          const raw = data.join("\r\n") + "\r\n";
          data = null;
          if (server.mode === "tempfail") {
            await write("451 4.3.0 try again later");
          } else if (server.mode === "permfail") {
            await write("550 5.1.1 mailbox unavailable");
          } else {
            const parsed = await simpleParser(raw);
            server.messages.push({
              from,
              to,
              raw,
              subject: parsed.subject ?? "",
              text: parsed.text ?? "",
              html: typeof parsed.html === "string" ? parsed.html : "",
              headers: parsed.headers,
            });
            await write(`250 2.0.0 Ok: queued as test${server.messages.length}`);
            caught();
          }
          continue;
        }
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === "EHLO" || verb === "HELO") {
          await write(verb === "EHLO" ? "250-127.0.0.1\r\n250-8BITMIME\r\n250 SMTPUTF8" : "250 127.0.0.1");
        } else if (verb === "MAIL") {
          from = /<([^>]*)>/.exec(line)?.[1] ?? "";
          to = [];
          await write("250 2.1.0 Ok");
        } else if (verb === "RCPT") {
          to.push(/<([^>]*)>/.exec(line)?.[1] ?? "");
          await write("250 2.1.5 Ok");
        } else if (verb === "DATA") {
          data = [];
          await write("354 End data with <CR><LF>.<CR><LF>");
        } else if (verb === "RSET" || verb === "NOOP") {
          await write("250 2.0.0 Ok");
        } else if (verb === "QUIT") {
          await write("221 2.0.0 Bye");
          break;
        } else {
          await write("502 5.5.2 Error: command not recognized");
        }
      }
    }
  } catch { /* the client went away */ }
  try {
    conn.close();
  } catch { /* closed already */ }
}
