// How much a dispatcher run may still claim (budget.ts), with a CPU clock the test moves by hand: the
// first claims at an assumed cost per delivery, then at the marginal cost measured from the first results
// on, a margin kept, the rows still held counted, and a run that has claimed nothing always allowed one.
import { assertEquals } from "./helpers/assert.ts";
import {
  CPU_MARGIN,
  FIRST_ESTIMATE_MS,
  HANDOVER_LEAD_MS,
  RunBudget,
} from "../supabase/functions/webhook-dispatcher/budget.ts";

function clock(start = 5000) {
  let ms = start;
  return { read: () => ms, spend: (n: number) => (ms += n) };
}

Deno.test("no limits: any number of rows", () => {
  const budget = new RunBudget({});
  assertEquals(budget.allowance({ claimed: 10, recorded: 5, held: 5 }), Infinity);
  assertEquals(budget.spent({ claimed: 10, recorded: 5, held: 5 }), undefined);
});

Deno.test("a row cap counts what was claimed", () => {
  const budget = new RunBudget({ maxRows: 10 });
  assertEquals(budget.allowance({ claimed: 7, recorded: 0, held: 7 }), 3);
  assertEquals(budget.allowance({ claimed: 10, recorded: 0, held: 10 }), 0);
  assertEquals(budget.spent({ claimed: 10, recorded: 10, held: 0 }), "rows");
});

Deno.test("CPU: claims at the assumed cost until rows are measured, then at their marginal cost, less what is held", () => {
  const cpu = clock();
  const budget = new RunBudget({ cpuMs: 100 }, cpu.read);
  const usable = 100 * (1 - CPU_MARGIN); // 75 ms
  assertEquals(
    budget.allowance({ claimed: 0, recorded: 0, held: 0 }),
    Math.floor(usable / FIRST_ESTIMATE_MS),
  );
  cpu.spend(10); // the start: connections, the first claim; the first 10 rows recorded
  assertEquals(
    budget.allowance({ claimed: 40, recorded: 10, held: 30 }),
    Math.floor(65 / FIRST_ESTIMATE_MS) - 30,
  );
  cpu.spend(20); // 100 more recorded for 20 ms: 0.2 ms each; 45 ms left is 225 rows, 30 of them held
  assertEquals(budget.cpuUsed, 30);
  assertEquals(budget.allowance({ claimed: 140, recorded: 110, held: 30 }), 195);
  assertEquals(budget.spent({ claimed: 140, recorded: 110, held: 30 }), undefined);
  cpu.spend(45); // the usable share is gone: nothing more, whatever is held
  assertEquals(budget.allowance({ claimed: 250, recorded: 250, held: 0 }), 0);
  assertEquals(budget.spent({ claimed: 250, recorded: 250, held: 0 }), "cpu");
});

Deno.test("the start's cost is paid once, not charged to every row: a run that started dearly keeps claiming", () => {
  const cpu = clock();
  const budget = new RunBudget({ cpuMs: 2000 }, cpu.read);
  budget.allowance({ claimed: 0, recorded: 0, held: 0 });
  cpu.spend(150); // a cold start and the first 16 results
  budget.allowance({ claimed: 128, recorded: 16, held: 112 });
  cpu.spend(16); // 80 more at 0.2 ms each
  // Spread over 96 rows, 166 ms would be 1.7 ms a row and leave nothing for the 112 held (the run
  // that stopped at 128 deliveries with 193 ms used); at 0.2 ms a row there is room for 6,000 more.
  assertEquals(budget.spent({ claimed: 128, recorded: 96, held: 32 }), undefined);
  assertEquals(
    budget.allowance({ claimed: 128, recorded: 96, held: 32 }),
    Math.floor((1500 - 166) / 0.2) - 32,
  );
});

Deno.test("rows held that would take the rest of the budget stop the claiming before the CPU is used", () => {
  const cpu = clock();
  const budget = new RunBudget({ cpuMs: 100 }, cpu.read);
  budget.allowance({ claimed: 10, recorded: 10, held: 0 });
  cpu.spend(50); // 1 ms per recorded row; 25 ms left, 30 rows still held
  assertEquals(budget.allowance({ claimed: 90, recorded: 60, held: 30 }), 0);
  assertEquals(budget.spent({ claimed: 90, recorded: 60, held: 30 }), "cpu");
});

Deno.test("a run that has claimed nothing may claim one, even with its budget spent", () => {
  const cpu = clock();
  const budget = new RunBudget({ cpuMs: 1 }, cpu.read);
  cpu.spend(10);
  assertEquals(budget.allowance({ claimed: 0, recorded: 0, held: 0 }), 1);
  assertEquals(budget.spent({ claimed: 0, recorded: 0, held: 0 }), undefined);
  assertEquals(budget.allowance({ claimed: 1, recorded: 1, held: 0 }), 0);
});

Deno.test("the process's CPU clock moves with work done", async () => {
  const { processCpuMs } = await import("../supabase/functions/webhook-dispatcher/budget.ts");
  const before = processCpuMs();
  let x = 0;
  for (let i = 0; i < 2e7; i++) x += i;
  assertEquals(x > 0 && processCpuMs() > before, true);
});

Deno.test("hand-over: not before half the usable CPU is used, then once the rest would be gone within the lead", () => {
  const cpu = clock();
  let wall = 0;
  const budget = new RunBudget({ cpuMs: 2000 }, cpu.read, () => wall);
  const p = { claimed: 100, recorded: 100, held: 0 };
  // 1,500 ms usable. A run spending CPU as fast as time passes: 700 ms used in 700 ms is under half.
  cpu.spend(700);
  wall = 700;
  assertEquals(budget.handOver(p), false);
  // 800 used in 800 ms: past half, 700 ms of CPU left is 700 ms of time, within the 1,500 ms lead.
  cpu.spend(100);
  wall = 800;
  assertEquals(budget.handOver(p), true);
});

Deno.test("hand-over on a busy machine: a run spending CPU slowly asks later, when its last lead's worth is left", () => {
  const cpu = clock();
  let wall = 0;
  const budget = new RunBudget({ cpuMs: 2000 }, cpu.read, () => wall);
  const p = { claimed: 100, recorded: 100, held: 0 };
  // A quarter of a core: 800 ms of CPU took 3,200 ms; the 700 left would take 2,800 ms.
  cpu.spend(800);
  wall = 3200;
  assertEquals(budget.handOver(p), false);
  // 1,200 in 4,800 ms: 300 left is 1,200 ms away.
  cpu.spend(400);
  wall = 4800;
  assertEquals(budget.handOver(p), true);
  assertEquals(HANDOVER_LEAD_MS, 1500);
});

Deno.test("hand-over with a row cap: at half the cap", () => {
  const budget = new RunBudget({ maxRows: 10 });
  assertEquals(budget.handOver({ claimed: 4, recorded: 0, held: 4 }), false);
  assertEquals(budget.handOver({ claimed: 5, recorded: 0, held: 5 }), true);
});
