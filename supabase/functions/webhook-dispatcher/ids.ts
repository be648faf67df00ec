// Typed ids. Every id the dispatcher handles is a uuid string, so a bare string would let a delivery id
// go where an endpoint id belongs without the type check noticing. Each kind is branded: only the rows
// the database returns (claims.ts) carry them, and nothing converts one kind into another.
declare const kind: unique symbol;
type Id<K extends string> = string & { readonly [kind]: K };

export type DeliveryId = Id<"delivery">;
export type EndpointId = Id<"endpoint">;
export type EventId = Id<"event">;
export type LeaseToken = Id<"lease">;
