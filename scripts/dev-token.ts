// Local development only: signs in at the running dev server's token service (a real password grant,
// through the access-token hook) and prints the access token, for curl examples:
//   TOKEN=$(npm run -s dev:token -- --email admin@firstchurch.example --password demo-password)
import { parseCli } from "./cli.ts";
import { keysDir } from "./local-auth/keys.ts";

const USAGE = `Usage: npm run -s dev:token -- --email EMAIL --password PASSWORD

Signs in at the local token service of the running dev server (npm run dev; SUPABASE_URL or
http://127.0.0.1:$PORT, default port 54321) and prints the access token. Users come from
supabase/seed.sql or npm run dev:user.`;

const cli = parseCli("dev:token", USAGE, ["email", "password"]);
const email = cli.get("email");
const password = cli.get("password");
if (!email || !password) cli.fail("--email and --password are required");

let anonKey = Deno.env.get("SUPABASE_ANON_KEY");
try {
  anonKey ??= (await Deno.readTextFile(new URL("anon-key", keysDir()))).trim();
} catch {
  console.error("dev:token: no local anon key yet; start the dev server first (npm run dev)");
  Deno.exit(1);
}
const base = Deno.env.get("SUPABASE_URL") ?? `http://127.0.0.1:${Deno.env.get("PORT") ?? 54321}`;
let res: Response;
try {
  res = await fetch(`${base}/auth/v1/token?grant_type=password`, {
    method: "POST",
    headers: { apikey: anonKey, "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  });
} catch {
  console.error(`dev:token: nothing answers at ${base}; start the dev server first (npm run dev)`);
  Deno.exit(1);
}
const body = await res.json().catch(() => ({}));
if (!res.ok || typeof body.access_token !== "string") {
  console.error(
    `dev:token: sign-in refused (${res.status}): ${body.msg ?? body.message ?? "unexpected answer"}`,
  );
  Deno.exit(1);
}
console.log(body.access_token);
