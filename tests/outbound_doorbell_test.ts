// How the dispatcher's run loop waits (doorbell.ts): a ring ends the wait, the timeout ends it too, and
// a ring nobody waited for is not kept (the loop looks at its state before each wait instead).
import { assertEquals } from "./helpers/assert.ts";
import { Doorbell } from "../supabase/functions/webhook-dispatcher/doorbell.ts";

Deno.test("a ring ends the wait; so does the timeout", async () => {
  const bell = new Doorbell();
  const rung = bell.wait(60_000);
  bell.ring();
  assertEquals(await rung, false);
  assertEquals(await bell.wait(5), true);
});

Deno.test("a ring with nobody waiting is dropped", async () => {
  const bell = new Doorbell();
  bell.ring();
  assertEquals(await bell.wait(5), true);
});
