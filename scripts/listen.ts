// Forwards an organization's events to a receiver on your machine, signed exactly as a delivery is, so
// the receiver's verification code runs unchanged (the idea of `stripe listen`). It follows the events
// feed (GET /webhooks/events, long polls) with an API key, posts each event with the dispatcher's own
// signing code, prints one line per event, and keeps its cursor (and the secret it made) in a state
// file, so a restart resumes where it stopped: nothing lost, nothing twice. Ctrl-C stops it between
// two events. It imports only the signing module beside it and the runtime, so it also runs on its own:
// `deno run --allow-net --allow-env --allow-read --allow-write <path or URL of this file> ...`.
// @see docs/receiving-webhooks.md#test-your-receiver-locally
//
//   WEBHOOKS_API_KEY=orgkey_... npm run listen -- --forward-to http://127.0.0.1:8000/ \
//     [--events member.created,donation.recorded] [--endpoint <id> --secret <its secret>] \
//     [--api https://<project>.supabase.co/functions/v1/webhooks] [--state .webhooks-listen.json]
import { signedHeaders } from "../supabase/functions/webhook-dispatcher/signing.ts";

const USAGE = "usage: WEBHOOKS_API_KEY=orgkey_... npm run listen -- --forward-to <url> [--events a,b] " +
  "[--endpoint <id> --secret <its signing secret>] [--api <configuration API URL>] [--state <file>]";

interface Options {
  forwardTo: URL;
  api: string;
  apiKey: string;
  events?: string;
  endpoint?: string;
  secret?: string;
  state: string;
}

interface State {
  cursor?: string;
  /** The secret this forwarder made (never an endpoint's: that one is passed each time). */
  secret?: string;
}

interface FeedEvent {
  id: string;
  type: string;
  cursor: string;
  payload: unknown;
}

function fail(message: string): never {
  console.error(message);
  Deno.exit(2);
}

function parseOptions(args: string[]): Options {
  const flags: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(args[i]!);
    if (!m) fail(`unexpected argument ${args[i]}\n${USAGE}`);
    flags[m[1]!] = m[2] ?? args[++i] ?? fail(`--${m[1]} needs a value\n${USAGE}`);
  }
  const known = ["forward-to", "events", "endpoint", "secret", "api", "state"];
  const unknown = Object.keys(flags).filter((f) => !known.includes(f));
  if (unknown.length) fail(`unknown option --${unknown[0]}\n${USAGE}`);
  if (!flags["forward-to"]) fail(USAGE);
  let forwardTo: URL;
  try {
    forwardTo = new URL(flags["forward-to"]);
    if (!/^https?:$/.test(forwardTo.protocol)) throw new Error();
  } catch {
    fail(`--forward-to must be an http(s) URL, e.g. http://127.0.0.1:3000/hooks`);
  }
  const apiKey = Deno.env.get("WEBHOOKS_API_KEY") ?? "";
  if (!apiKey.startsWith("orgkey_")) {
    fail("set WEBHOOKS_API_KEY to an API key of the organization (Settings > Integrations > API keys)");
  }
  const secret = flags.secret ?? Deno.env.get("WEBHOOK_SECRET");
  if (flags.endpoint && !secret) {
    fail(
      "--endpoint needs that endpoint's signing secret: --secret whsec_... or WEBHOOK_SECRET " +
        "(an admin reveals it on the Webhooks page)",
    );
  }
  return {
    forwardTo,
    api: (flags.api ?? Deno.env.get("WEBHOOKS_API_URL") ?? "http://127.0.0.1:54321/functions/v1/webhooks")
      .replace(/\/+$/, ""),
    apiKey,
    events: flags.events,
    endpoint: flags.endpoint,
    secret,
    state: flags.state ?? ".webhooks-listen.json",
  };
}

async function readState(file: string): Promise<State> {
  try {
    return JSON.parse(await Deno.readTextFile(file)) as State;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return {};
    fail(`cannot read the state file ${file}: ${(err as Error).message}`);
  }
}

/** Written whole, then renamed over the old one: a stop at any moment leaves one or the other. */
async function writeState(file: string, state: State): Promise<void> {
  const tmp = `${file}.tmp`;
  await Deno.writeTextFile(tmp, JSON.stringify(state), { mode: 0o600 });
  await Deno.rename(tmp, file);
}

function newSecret(): string {
  return "whsec_" + crypto.getRandomValues(new Uint8Array(32)).toBase64();
}

async function api<T>(o: Options, path: string, signal?: AbortSignal): Promise<T> {
  for (;;) {
    const res = await fetch(`${o.api}${path}`, { headers: { "x-api-key": o.apiKey }, signal });
    const body = await res.json().catch(() => null);
    if (res.ok) return body as T;
    const code = body?.error?.code ?? res.status;
    if (res.status === 429 || res.status >= 500) {
      const wait = Number(res.headers.get("retry-after") ?? 5);
      console.error(`the API answered ${res.status} (${code}); trying again in ${wait} s`);
      await new Promise((r) => setTimeout(r, wait * 1000));
      continue;
    }
    throw Object.assign(new Error(`${res.status} ${code}: ${body?.error?.message ?? ""}`), { code });
  }
}

const encoder = new TextEncoder();

/** One event to the receiver, signed as the dispatcher signs a delivery; the line to print. */
async function forward(o: Options, secret: string, event: FeedEvent): Promise<string> {
  const body = encoder.encode(JSON.stringify(event.payload));
  const headers = signedHeaders({
    eventId: event.id,
    eventType: event.type,
    secret,
    body,
    timestamp: Math.floor(Date.now() / 1000),
  });
  const started = performance.now();
  const at = new Date().toISOString().slice(11, 19);
  try {
    const res = await fetch(o.forwardTo, {
      method: "POST",
      headers,
      body,
      signal: AbortSignal.timeout(10_000),
      redirect: "manual",
    });
    await res.body?.cancel();
    return `${at}  ${event.type}  ${event.id}  -> ${res.status} in ${
      Math.round(performance.now() - started)
    } ms`;
  } catch (err) {
    const why = (err as Error).name === "TimeoutError" ? "no answer within 10 s" : (err as Error).message;
    return `${at}  ${event.type}  ${event.id}  -> failed: ${why}`;
  }
}

async function main() {
  const o = parseOptions(Deno.args);
  const state = await readState(o.state);
  let events = o.events;
  if (o.endpoint) {
    const ep = await api<{ events: string[]; url: string }>(
      o,
      `/endpoints/${encodeURIComponent(o.endpoint)}`,
    );
    events ??= ep.events.join(",");
  }
  let secret = o.secret ?? state.secret;
  if (!secret) {
    secret = newSecret();
    state.secret = secret;
    // Shown this once (like the settings page's); kept in the state file for the next start.
    console.log(`Signing secret (give it to your receiver; kept in ${o.state}): ${secret}`);
  }
  const filter = events ? `&event_type=${encodeURIComponent(events)}` : "";
  if (!state.cursor) {
    // From now on: the feed's head.
    state.cursor = (await api<{ next_cursor: string }>(o, `/events?limit=1${filter}`)).next_cursor;
  }
  await writeState(o.state, state);
  console.log(
    `Forwarding ${events ?? "every event"} to ${o.forwardTo} (Ctrl-C stops; state in ${o.state})`,
  );

  const stop = new AbortController();
  const onSignal = () => stop.abort();
  Deno.addSignalListener("SIGINT", onSignal);
  Deno.addSignalListener("SIGTERM", onSignal);
  try {
    while (!stop.signal.aborted) {
      let page: { data: FeedEvent[]; next_cursor: string };
      try {
        page = await api(o, `/events?after=${state.cursor}&wait=25&limit=100${filter}`, stop.signal);
      } catch (err) {
        if (stop.signal.aborted) break;
        if ((err as { code?: string }).code === "cursor_expired") {
          console.error("The saved cursor is older than the organization's retention; starting from now.");
          state.cursor = (await api<{ next_cursor: string }>(o, `/events?limit=1${filter}`)).next_cursor;
          await writeState(o.state, state);
          continue;
        }
        throw err;
      }
      for (const event of page.data) {
        // An event under way is finished and recorded before a stop takes effect.
        console.log(await forward(o, secret, event));
        state.cursor = event.cursor;
        await writeState(o.state, state);
        if (stop.signal.aborted) break;
      }
      if (!stop.signal.aborted && page.data.length === 0) {
        state.cursor = page.next_cursor;
        await writeState(o.state, state);
      }
    }
  } finally {
    Deno.removeSignalListener("SIGINT", onSignal);
    Deno.removeSignalListener("SIGTERM", onSignal);
  }
  console.log("Stopped; the next start resumes after the last event forwarded.");
}

if (import.meta.main) {
  await main().catch((err) => fail(`listen: ${(err as Error).message}`));
}
