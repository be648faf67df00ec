// Getting started's "what the first run changes in the local cluster" must name what the bootstrap
// creates: every role and extension of scripts/supabase-platform.sql and the migrations, and the number
// of pg_cron jobs a local database gets. It once left out config_api, edge_user's login and password,
// uuid-ossp and pg_trgm, and called every job the dispatcher's.
import { assert, assertEquals } from "./helpers/assert.ts";
import { ROOT } from "./helpers/markdown.ts";
import { migrationCronJobs } from "../scripts/gen-docs.ts";

async function bootstrapSql(): Promise<string> {
  const dir = new URL("supabase/migrations/", ROOT);
  const files = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.endsWith(".sql")).sort();
  const texts = await Promise.all(files.map((n) => Deno.readTextFile(new URL(n, dir))));
  return [await Deno.readTextFile(new URL("scripts/supabase-platform.sql", ROOT)), ...texts].join("\n");
}

/** The bullet of getting-started.md that says what the first run changes. */
export async function firstRunBullet(): Promise<string> {
  const guide = await Deno.readTextFile(new URL("docs/getting-started.md", ROOT));
  const at = guide.indexOf("- **What the first run changes in the local cluster**");
  assert(at >= 0, "getting-started.md has its 'What the first run changes' bullet");
  const end = guide.indexOf("\n- ", at + 1);
  return guide.slice(at, end < 0 ? undefined : end).replace(/\s+/g, " ");
}

/** What the bullet leaves out of `sql`: roles, extensions (but `except`), and the local job count. */
export function missingFromBullet(
  bullet: string,
  sql: string,
  localJobs: number,
  except: string[] = [],
): string[] {
  const roles = [...sql.matchAll(/create role (\w+)/g)].map((m) => m[1]!);
  const extensions = [...sql.matchAll(/create extension if not exists "?([\w-]+)"?/g)].map((m) => m[1]!)
    .filter((e) => !except.includes(e));
  const missing = [...new Set([...roles, ...extensions])].filter((name) => !bullet.includes(name));
  if (!bullet.includes(`${localJobs} pg_cron jobs`)) missing.push(`"${localJobs} pg_cron jobs"`);
  if (roles.includes("edge_user") && !/edge_user`? with a login and a random password/.test(bullet)) {
    missing.push("edge_user's login and password");
  }
  return missing;
}

Deno.test("the first-run check finds what an incomplete bullet leaves out", () => {
  const sql = "create role anon nologin;\ncreate role edge_user nologin;\n" +
    "create extension if not exists pg_trgm with schema extensions;";
  assertEquals(missingFromBullet("creates `anon` and `edge_user`, pg_cron jobs", sql, 6), [
    "pg_trgm",
    '"6 pg_cron jobs"',
    "edge_user's login and password",
  ]);
});

Deno.test("getting started names every role, extension and local pg_cron job the first run creates", async () => {
  // Jobs scheduled in seconds need pg_cron 1.5+ (hosted); a local database's Debian pg_cron 1.4 runs the rest.
  const jobs = await migrationCronJobs();
  const local = jobs.filter((j) => !/second/.test(j.schedule)).length;
  assert(local >= 6 && local < jobs.length, `${local} of ${jobs.length} jobs`);
  // supabase_vault: created only where the server has it (a hosted project), never locally.
  assertEquals(
    missingFromBullet(await firstRunBullet(), await bootstrapSql(), local, ["supabase_vault"]),
    [],
  );
});
