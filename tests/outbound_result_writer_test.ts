// The dispatcher's result writer (results.ts) on its own: when batches are cut and how many are written
// at once. Writing a batch (recording it and claiming along) takes milliseconds of database time; with
// one writer, another endpoint's results finished meanwhile waited behind it, and so did that
// endpoint's next claim. Each test sets a 5 s batching delay, so anything that waits for it fails.
import { assertEquals } from "./helpers/assert.ts";
import { gate } from "./helpers/outbound.ts";
import { ResultWriter } from "../supabase/functions/webhook-dispatcher/results.ts";

const DELAY_MS = 5000;

/** A writer whose every write waits for its own gate; `writes` lists the batches as they start. */
function gatedWriter(maxWriting: number) {
  const writes: { ids: string[]; open(): void }[] = [];
  let idle = 0;
  const writer = new ResultWriter<string>(
    (batch) => {
      const g = gate();
      writes.push({ ids: batch, open: g.open });
      return g.wait;
    },
    1000,
    DELAY_MS,
    () => idle++,
    maxWriting,
  );
  return { writer, writes, idleCount: () => idle };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

Deno.test("results that come in while a batch is being written are written beside it, not after it", async () => {
  const { writer, writes } = gatedWriter(2);
  writer.add("a");
  writer.writeNow();
  writer.add("b");
  writer.writeNow();
  await tick();
  assertEquals(writes.map((w) => w.ids), [["a"], ["b"]], "two batches in flight at once");
  // Both writers busy: what comes in gathers, and goes as soon as one is free, without the delay.
  writer.add("c");
  writer.add("d");
  writer.writeNow();
  await tick();
  assertEquals(writes.length, 2, "no third write while two are in flight");
  writes[0]!.open();
  await tick();
  assertEquals(writes.map((w) => w.ids), [["a"], ["b"], ["c", "d"]]);
  for (const w of writes) w.open();
});

Deno.test("one writer at a time when told so, and idle is told once every batch is written", async () => {
  const { writer, writes, idleCount } = gatedWriter(1);
  writer.add("a");
  writer.writeNow();
  writer.add("b");
  writer.writeNow();
  await tick();
  assertEquals(writes.map((w) => w.ids), [["a"]]);
  writes[0]!.open();
  await tick();
  assertEquals(writes.map((w) => w.ids), [["a"], ["b"]]);
  assertEquals([writer.idle, idleCount()], [false, 0], "a batch is still being written");
  writes[1]!.open();
  await tick();
  assertEquals([writer.idle, idleCount()], [true, 1], "idle is reported once everything is written");
});
