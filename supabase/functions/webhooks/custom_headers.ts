// An endpoint's custom request headers in the configuration API: the shapes accepted and returned, and
// the one write (private.webhook_set_custom_headers, the only way to them: no user role reads the values).
// @see docs/custom-headers.md
import { z } from "@hono/zod-openapi";
import type { Tx } from "../_shared/db.ts";
import {
  headerNameRefusal,
  headerValueRefusal,
  MAX_CUSTOM_HEADERS,
  MAX_HEADER_NAME,
} from "../_shared/custom_headers.ts";
import { mapSqlErrors } from "./sql_errors.ts";

/** As every answer shows one: its name and a hint of its value, never the value. */
export const CustomHeaderShown = z.object({
  name: z.string(),
  value_hint: z.string().describe(
    'The last 4 characters of the value after "…" (only "…" for a value under 12 characters)',
  ),
});
export type CustomHeaderShown = z.infer<typeof CustomHeaderShown>;

const name = z.string().max(MAX_HEADER_NAME).describe(
  "An HTTP header name. Not a hop-by-hop or proxy header (Connection, Keep-Alive, Proxy-*, TE, Trailer, " +
    "Transfer-Encoding, Upgrade, Expect) nor one the dispatcher sets (webhook-*, x-webhook-*, Host, " +
    "Content-Length, Content-Type, Content-Encoding, User-Agent)",
);
const value = z.string().describe(
  "1 to 1024 printable ASCII characters, no line break, no space at either end. Write-only: never shown again",
);

/** Each header's refusal at the field that holds it, its name in the message; names unique in any case. */
function checkList(list: { name: string; value?: string }[], ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  list.forEach((h, i) => {
    const label = JSON.stringify(h.name);
    const nameRefusal = headerNameRefusal(h.name);
    if (nameRefusal) {
      ctx.addIssue({ code: "custom", path: [i, "name"], message: `header ${label} ${nameRefusal}` });
    } else if (seen.has(h.name.toLowerCase())) {
      ctx.addIssue({
        code: "custom",
        path: [i, "name"],
        message: `header ${label} is given twice (names are the same in any letter case)`,
      });
    }
    seen.add(h.name.toLowerCase());
    const valueRefusal = h.value === undefined ? null : headerValueRefusal(h.value);
    if (valueRefusal) {
      ctx.addIssue({
        code: "custom",
        path: [i, "value"],
        message: `the value of header ${label} ${valueRefusal}`,
      });
    }
  });
}

const TOO_MANY = `at most ${MAX_CUSTOM_HEADERS} custom headers per endpoint`;

export const CustomHeadersCreate = z.array(z.object({ name, value }).strict()).max(
  MAX_CUSTOM_HEADERS,
  TOO_MANY,
)
  .superRefine(checkList).describe(
    "Request headers sent with every delivery to this endpoint (at most 10), e.g. an API gateway's key",
  );

export const CustomHeadersUpdate = z.array(
  z.object({
    name,
    value: value.optional().describe(
      "The new value; leave it out to keep the value stored under this name (it cannot be read back)",
    ),
  }).strict(),
).max(MAX_CUSTOM_HEADERS, TOO_MANY).superRefine(checkList).describe(
  "The endpoint's headers from now on, replacing the set: a name left out is removed, an entry without " +
    "`value` keeps its stored value, [] removes them all. Leave the field out to change none",
);

/** Sets an endpoint's headers (the caller has found it visible); returns them as shown. */
export async function setCustomHeaders(
  tx: Tx,
  endpointId: string,
  headers: { name: string; value?: string }[],
): Promise<CustomHeaderShown[]> {
  const [row] = await mapSqlErrors(() =>
    tx<{ shown: CustomHeaderShown[] }[]>`
      select private.webhook_set_custom_headers(${endpointId}, ${tx.json(headers as never)}) as shown`
  );
  return row!.shown;
}
