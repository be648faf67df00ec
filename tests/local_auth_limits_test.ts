// Local sign-in hygiene (the development stand-in for Supabase Auth, scripts/local-auth/): attempts are
// limited per e-mail and client address together, and per client address, with Supabase Auth's 429;
// passwords are bcrypt of cost 10, and an unknown address is answered like a known one with a wrong
// password (both run one bcrypt comparison: against the stored hash, or against a dummy hash of the
// same cost).
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, sql } from "./helpers/db.ts";
import { type DevStack, startDevStack, upsertDevUser } from "./helpers/dev_stack.ts";
import { ATTEMPTS_PER_ADDRESS } from "../scripts/local-auth/service.ts";

const PASSWORD = "correct horse battery";
const OVER_LIMIT = { code: 429, error_code: "over_request_rate_limit", msg: "Request rate limit reached" };

async function signIn(s: DevStack, email: string, password: string) {
  const res = await fetch(`${s.url}/auth/v1/token?grant_type=password`, {
    method: "POST",
    headers: { apikey: s.anonKey, "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  });
  return { status: res.status, body: await res.json() };
}

const address = () => `user-${crypto.randomUUID().slice(0, 8)}@example.org`;

// The attack as reported: 30 wrong passwords for one account, then the right one, all accepted.
Deno.test("30 wrong passwords then the right one: 429 over_request_rate_limit once the address's attempts are spent", async () => {
  const s = await startDevStack();
  try {
    const user = await upsertDevUser({ email: address(), password: PASSWORD });
    const answers: number[] = [];
    for (let i = 0; i < 30; i++) {
      const r = await signIn(s, user.email, `wrong-${i}`);
      answers.push(r.status);
      if (r.status === 429) assertEquals(r.body, OVER_LIMIT, "Supabase Auth's error body");
    }
    assertEquals(answers, [
      ...Array(ATTEMPTS_PER_ADDRESS).fill(400),
      ...Array(30 - ATTEMPTS_PER_ADDRESS).fill(429),
    ]);
    const right = await signIn(s, user.email, PASSWORD);
    assertEquals([right.status, right.body], [429, OVER_LIMIT], "the right password is refused too");
    // The address's limit holds whatever the address: one without an account is limited alike.
    const unknown = address();
    for (let i = 0; i < ATTEMPTS_PER_ADDRESS; i++) await signIn(s, unknown, "x");
    assertEquals((await signIn(s, unknown, "x")).status, 429);
  } finally {
    await s.stop();
  }
});

/** A sign-in sent from another loopback address (curl binds 127.0.0.2): another client. */
async function signInFrom(source: string, s: DevStack, email: string, password: string) {
  const out = await new Deno.Command("curl", {
    args: [
      "-s",
      "--interface",
      source,
      "-X",
      "POST",
      `${s.url}/auth/v1/token?grant_type=password`,
      "-H",
      `apikey: ${s.anonKey}`,
      "-H",
      "content-type: application/json",
      "--data-binary",
      JSON.stringify({ email, password }),
      "-w",
      "\n%{http_code}",
    ],
    stdout: "piped",
  }).output();
  const [body, status] = new TextDecoder().decode(out.stdout).split(/\n(?=\d+$)/);
  return { status: Number(status), body: JSON.parse(body!) };
}

// The attack as reported: anyone could lock any address out of the local sign-in with 10 wrong
// passwords, then keep it locked with one every 30 s. Attempts count per address and client together.
Deno.test("a hostile client's wrong passwords lock out that client, not the real user signing in from theirs", async () => {
  const s = await startDevStack();
  try {
    const user = await upsertDevUser({ email: address(), password: PASSWORD });
    const hostile: number[] = [];
    for (let i = 0; i < ATTEMPTS_PER_ADDRESS + 5; i++) {
      hostile.push((await signInFrom("127.0.0.2", s, user.email, `wrong-${i}`)).status);
    }
    assertEquals(hostile, [...Array(ATTEMPTS_PER_ADDRESS).fill(400), ...Array(5).fill(429)]);
    const owner = await signIn(s, user.email, PASSWORD);
    assertEquals(owner.status, 200, `the owner's own client signs in: ${JSON.stringify(owner.body)}`);
    // The hostile client stays refused, even with the right password.
    assertEquals((await signInFrom("127.0.0.2", s, user.email, PASSWORD)).status, 429);
  } finally {
    await s.stop();
  }
});

Deno.test("per client address: sign-ins and sign-ups beyond config.toml's sign_in_sign_ups in 5 minutes answer 429", async () => {
  const s = await startDevStack({ env: { GOTRUE_RATE_LIMIT_OTP: "12" } });
  try {
    const user = await upsertDevUser({ email: address(), password: PASSWORD });
    const answers: number[] = [];
    // Different addresses, so only the client's own limit can stop them.
    for (let i = 0; i < 11; i++) answers.push((await signIn(s, address(), "x")).status);
    const signup = await fetch(`${s.url}/auth/v1/signup`, {
      method: "POST",
      headers: { apikey: s.anonKey, "content-type": "application/json" },
      body: JSON.stringify({ email: address(), password: PASSWORD }),
    });
    answers.push(signup.status);
    await signup.body?.cancel();
    const over = await signIn(s, user.email, PASSWORD);
    assertEquals([...answers, over.status], [...Array(11).fill(400), 200, 429]);
    assertEquals(over.body, OVER_LIMIT);
  } finally {
    await s.stop();
  }
});

Deno.test("passwords are bcrypt of cost 10; an unknown address is answered exactly like a wrong password", async () => {
  const s = await startDevStack();
  try {
    const user = await upsertDevUser({ email: address(), password: PASSWORD });
    const signedUp = address();
    const res = await fetch(`${s.url}/auth/v1/signup`, {
      method: "POST",
      headers: { apikey: s.anonKey, "content-type": "application/json" },
      body: JSON.stringify({ email: signedUp, password: PASSWORD }),
    });
    assertEquals(res.status, 200);
    await res.body?.cancel();
    const hashes = await sql()<{ email: string; cost: string }[]>`
      select email, split_part(encrypted_password, '$', 3) as cost
      from auth.users where email in (${user.email}, ${signedUp}) order by email`;
    assertEquals(hashes.map((h) => h.cost), ["10", "10"], "dev:user and sign-up hash with cost 10");

    const wrong = await signIn(s, user.email, "not the password");
    const unknown = await signIn(s, address(), "not the password");
    assertEquals(wrong, unknown, "the same answer, known or not");
    assertEquals(wrong.status, 400);
    assert((await signIn(s, user.email, PASSWORD)).status === 200, "control: the right password signs in");
  } finally {
    await s.stop();
  }
});

Deno.test("a sign-up with text PostgreSQL cannot hold is a 400, never a 500, and stores nothing", async () => {
  const s = await startDevStack();
  try {
    const tag = crypto.randomUUID().slice(0, 8);
    const bodies = [
      { email: `nul-${tag}\u0000@example.org`, password: PASSWORD },
      { email: `pw-${tag}@example.org`, password: `${PASSWORD}\u0000` },
      { email: `meta-${tag}@example.org`, password: PASSWORD, data: { name: "a\u0000b" } },
      { email: `half-${tag}@example.org`, password: PASSWORD, data: { name: "\ud800" } },
    ].map((b) => JSON.stringify(b));
    // Metadata nested 30,000 deep (60 KB): past PostgreSQL's stack when stored as jsonb.
    bodies.push(
      `{"email":"deep-${tag}@example.org","password":"${PASSWORD}","data":{"a":${"[".repeat(30000)}${
        "]".repeat(30000)
      }}}`,
    );
    const answers = [];
    for (const body of bodies) {
      const res = await fetch(`${s.url}/auth/v1/signup`, {
        method: "POST",
        headers: { apikey: s.anonKey, "content-type": "application/json" },
        body,
      });
      answers.push([res.status, (await res.json()).error_code]);
    }
    assertEquals(answers, bodies.map(() => [400, "validation_failed"]));
    const [stored] = await sql()<
      { n: number }[]
    >`select count(*)::int as n from auth.users where email like ${`%${tag}%`}`;
    assertEquals(stored!.n, 0);
  } finally {
    await s.stop();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
