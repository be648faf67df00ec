// The table of scheduled jobs in docs/operations.md must list exactly the jobs a migrated database runs:
// it is generated from the migrations' cron.schedule calls (`npm run docs`), and held here against
// cron.job of the run's database, so a job added, renamed or rescheduled without its row fails. (The
// table once lacked three of the seven jobs.)
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, sql } from "./helpers/db.ts";
import { cronJobsMarkdown, migrationCronJobs, OPERATIONS_GUIDE, withCronJobs } from "../scripts/gen-docs.ts";

Deno.test("docs/operations.md's scheduled jobs are the migrations' (run `npm run docs` after changing one)", async () => {
  const guide = await Deno.readTextFile(OPERATIONS_GUIDE);
  const jobs = await migrationCronJobs();
  assert(jobs.length >= 7, `found ${jobs.length} cron.schedule calls`);
  assertEquals(guide, withCronJobs(guide, jobs));
});

Deno.test("every job of the table runs in a migrated database as the table says, and no job of ours is missing", async () => {
  const documented = await migrationCronJobs();
  const running = await sql()<{ jobname: string; schedule: string; command: string }[]>`
    select jobname, schedule, command from cron.job order by jobname`;
  const [scheduler] = await sql()<{ seconds: boolean }[]>`
    select private.pg_cron_schedules_seconds() as seconds`;
  const seconds = scheduler!.seconds;
  for (const job of documented) {
    const found = running.find((r) => r.jobname === job.jobname);
    if (!found && /seconds?$/.test(job.schedule) && !seconds) continue; // pg_cron 1.4 schedules no seconds
    assertEquals(found, job, `cron.job has ${job.jobname} as documented`);
  }
  // Jobs of ours a migration made some other way (dynamic SQL) would be missing from the table.
  const ours = running.filter((r) => /\bprivate\./.test(r.command));
  assertEquals(
    ours.map((r) => r.jobname).filter((name) => !documented.some((j) => j.jobname === name)),
    [],
    "every job calling our functions is in the table",
  );
});

Deno.test("a job without a purpose in the generator is refused, not written as an empty cell", () => {
  let refused = false;
  try {
    cronJobsMarkdown([{ jobname: "surprise", schedule: "* * * * *", command: "select 1" }]);
  } catch {
    refused = true;
  }
  assert(refused);
});

Deno.test("cleanup", async () => {
  await closeSql();
});
