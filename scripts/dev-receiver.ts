// Local development only: a webhook receiver on loopback that prints every delivery it gets (event,
// id, whether the signature verifies when --secret is given, body) and answers --status (default 200).
//   npm run dev:receiver -- --port 8787 --secret whsec_...
import { parseCli } from "./cli.ts";
import { verifyHexSignature } from "../supabase/functions/_shared/hmac.ts";

const USAGE = `Usage: npm run dev:receiver -- [--port 8787] [--secret whsec_...] [--status 200]

Listens on http://127.0.0.1:PORT and prints each POST it receives. With --secret (the endpoint's
secret, as the API showed it) it checks x-webhook-signature and answers 401 when it does not verify.`;

const cli = parseCli("dev:receiver", USAGE, ["port", "secret", "status"]);
const secret = cli.get("secret");
const port = Number(cli.get("port") ?? 8787);
const status = Number(cli.get("status") ?? 200);
if (!Number.isInteger(port) || port < 1 || port > 65535) cli.fail("--port must be a port number");
if (!Number.isInteger(status) || status < 200 || status > 599) cli.fail("--status must be an HTTP status");

try {
  Deno.serve({
    hostname: "127.0.0.1",
    port,
    onListen: () => console.log(`receiving on http://127.0.0.1:${port}/`),
  }, async (req) => {
    const raw = new Uint8Array(await req.arrayBuffer());
    const event = req.headers.get("x-webhook-event") ?? "-";
    let verdict = "";
    if (secret) {
      const ok = await verifyHexSignature(secret, raw, req.headers.get("x-webhook-signature"));
      verdict = ok ? " signature ok" : " SIGNATURE MISMATCH";
      if (!ok) {
        console.log(
          `${new Date().toISOString()} ${req.method} ${new URL(req.url).pathname} ${event}${verdict} -> 401`,
        );
        return new Response("bad signature", { status: 401 });
      }
    }
    console.log(
      `${new Date().toISOString()} ${req.method} ${new URL(req.url).pathname} ${event} id=${
        req.headers.get("x-webhook-id") ?? "-"
      }${verdict} -> ${status}`,
    );
    console.log(`  ${new TextDecoder().decode(raw)}`);
    return new Response(status < 300 ? "ok" : "failing on purpose", { status });
  });
} catch (err) {
  if (err instanceof Deno.errors.AddrInUse) {
    console.error(`dev:receiver: port ${port} is already in use; choose another with --port`);
    Deno.exit(1);
  }
  throw err;
}
