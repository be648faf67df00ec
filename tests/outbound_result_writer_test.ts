// The dispatcher's result writer (results.ts) on its own: when batches are cut and how many are written
// at once. Writing a batch (recording it and claiming along) takes milliseconds of database time; with
// one writer, another endpoint's results finished meanwhile waited behind it, and so did that
// endpoint's next claim. Each test sets a 5 s batching delay, so anything that waits for it fails.
import { assertEquals } from "./helpers/assert.ts";
import { gate } from "./helpers/outbound.ts";
import type { ResultRow } from "../supabase/functions/webhook-dispatcher/claims.ts";
import { ResultWriter } from "../supabase/functions/webhook-dispatcher/results.ts";

const DELAY_MS = 5000;

function row(id: string): ResultRow {
  return {
    delivery_id: id,
    endpoint_id: `endpoint-of-${id}`,
    lease_token: "t",
    outcome: "delivered",
    attempted_at: new Date().toISOString(),
    duration_ms: 1,
    response_status: 200,
    error: null,
    response_excerpt: null,
    retry_after_seconds: null,
    request_headers: null,
    response_headers: null,
  };
}

/** A writer whose every write waits for its own gate; `writes` lists the batches as they start. */
function gatedWriter(maxWriting: number) {
  const writes: { ids: string[]; open(): void }[] = [];
  let idle = 0;
  const writer = new ResultWriter(
    (batch) => {
      const g = gate();
      writes.push({ ids: batch.map((r) => r.delivery_id), open: g.open });
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
  writer.add(row("a"));
  writer.writeNow();
  writer.add(row("b"));
  writer.writeNow();
  await tick();
  assertEquals(writes.map((w) => w.ids), [["a"], ["b"]], "two batches in flight at once");
  // Both writers busy: what comes in gathers, and goes as soon as one is free, without the delay.
  writer.add(row("c"));
  writer.add(row("d"));
  writer.writeNow();
  await tick();
  assertEquals(writes.length, 2, "no third write while two are in flight");
  writes[0]!.open();
  await tick();
  assertEquals(writes.map((w) => w.ids), [["a"], ["b"], ["c", "d"]]);
  for (const w of writes) w.open();
  await writer.flush();
});

Deno.test("one writer at a time when told so, and flush waits for every batch", async () => {
  const { writer, writes, idleCount } = gatedWriter(1);
  writer.add(row("a"));
  writer.writeNow();
  writer.add(row("b"));
  writer.writeNow();
  await tick();
  assertEquals(writes.map((w) => w.ids), [["a"]]);
  let flushed = false;
  const flushing = writer.flush().then(() => (flushed = true));
  writes[0]!.open();
  await tick();
  assertEquals(writes.map((w) => w.ids), [["a"], ["b"]]);
  assertEquals(flushed, false, "flush waits for the batch still being written");
  writes[1]!.open();
  await flushing;
  assertEquals(writer.idle, true);
  assertEquals(idleCount(), 1, "idle is reported once everything is written");
});
