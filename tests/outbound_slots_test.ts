// The dispatcher's room in rows and bytes (slots.ts), on its own: claims under way hold their share,
// bytes stay held until results are written, and an endpoint a claim filled frees up only when its
// last send ends and its result is written. Ids are typed: the type check refuses a delivery id where an
// endpoint id belongs.
import { assertEquals } from "./helpers/assert.ts";
import { Slots } from "../supabase/functions/webhook-dispatcher/slots.ts";
import type { DeliveryId, EndpointId } from "../supabase/functions/webhook-dispatcher/ids.ts";

const A = "endpoint-a" as EndpointId;
const B = "endpoint-b" as EndpointId;
const row = (endpoint_id: EndpointId, bytes: number, endpoint_full = false) => ({
  endpoint_id,
  endpoint_full,
  body_bytes: bytes,
});

Deno.test("claims under way hold rows and their share of the free bytes", () => {
  const slots = new Slots(10, 1000);
  const first = slots.reserve(4);
  assertEquals(first, { rows: 4, bytes: 400 });
  assertEquals(slots.free, 6);
  const second = slots.reserve(100); // everything left
  assertEquals(second, { rows: 6, bytes: 600 });
  assertEquals(slots.reserve(1), { rows: 0, bytes: 0 });
  slots.claimed(first, [row(A, 100), row(B, 50)]); // fewer than reserved: the rest comes back
  assertEquals([slots.rows, slots.bytes, slots.free], [2, 150, 2]);
  slots.claimed(second, []);
  assertEquals(slots.free, 8);
});

Deno.test("bytes are held until the result is written; a full byte budget leaves no room", () => {
  const slots = new Slots(10, 100);
  slots.claimed(slots.reserve(2), [row(A, 60), row(A, 60)]);
  assertEquals([slots.bytes, slots.free], [120, 0]);
  slots.finished(A);
  slots.finished(A);
  assertEquals([slots.rows, slots.free], [0, 0], "sent, not yet written: still held");
  slots.written(A, 60);
  assertEquals(slots.free, 10 - 0);
  slots.written(A, 60);
  assertEquals(slots.bytes, 0);
});

Deno.test("an endpoint a claim filled frees up once its last send ends and its result is written", () => {
  const slots = new Slots(10, 1000);
  slots.claimed(slots.reserve(3), [row(A, 1), row(A, 1, true), row(B, 1)]);
  assertEquals(slots.finished(A), false, "another send to A is still in flight");
  assertEquals(slots.finished(B), false, "B was never full");
  assertEquals(slots.finished(A), true, "the last send to a full endpoint");
  slots.written(A, 1);
  slots.claimed(slots.reserve(1), [row(A, 1)]);
  assertEquals(slots.finished(A), false, "written, A is no longer full: a later claim filled nothing");
});

Deno.test("typed ids: a delivery id is not an endpoint id", () => {
  const slots = new Slots(1, 1);
  const delivery = "d-1" as DeliveryId;
  const misuse = () => {
    // @ts-expect-error a DeliveryId where an EndpointId belongs does not type-check
    slots.finished(delivery);
    // @ts-expect-error nor does a bare string
    slots.written("endpoint-a", 1);
  };
  assertEquals(typeof misuse, "function");
});
