// Our signatures are cut short wherever Webhook Logs would keep them (webhook-dispatcher/masking.ts).
import { assert, assertEquals } from "./helpers/assert.ts";
import {
  maskEchoes,
  maskedRequestHeaders,
  sentSignatures,
  SIGNATURE_SHOWN,
} from "../supabase/functions/webhook-dispatcher/masking.ts";

const hex = "3f".repeat(32);
const base64 = "q+/Zx9n0T1W3f/8r1kq0Qx7m2s3Jb4nH5pL6vC8dE0A=";
const previous = "ab".repeat(32);
const sent = {
  "content-type": "application/json",
  "x-webhook-signature": hex,
  "x-webhook-signature-previous": previous,
  "webhook-signature": `v1,${base64} v1,${base64.split("").reverse().join("")}`,
};

Deno.test("the signatures an attempt sent: the hex ones and each Standard Webhooks entry", () => {
  assertEquals(
    sentSignatures(sent).sort(),
    [hex, previous, base64, base64.split("").reverse().join("")].sort(),
  );
  assertEquals(sentSignatures({ "content-type": "text/plain" }), []);
});

Deno.test("the headers we sent keep the first characters of each signature", () => {
  const masked = maskedRequestHeaders(sent);
  assertEquals(masked["x-webhook-signature"], `${hex.slice(0, SIGNATURE_SHOWN)}…`);
  assertEquals(masked["webhook-signature"]?.split(" ")[0], `v1,${base64.slice(0, SIGNATURE_SHOWN)}…`);
  assertEquals(masked["content-type"], "application/json");
});

Deno.test("an echo of our signatures is masked wherever it is: as sent, JSON-escaped, or cut at the end", () => {
  const signatures = sentSignatures(sent);
  const echoed = JSON.stringify({
    headers: { "X-Webhook-Signature": hex, "Webhook-Signature": `v1,${base64}` },
  });
  const masked = maskEchoes(echoed, signatures);
  assert(!masked.includes(hex) && !masked.includes(base64), masked);
  assert(
    masked.includes(`${hex.slice(0, SIGNATURE_SHOWN)}…`),
    "the beginning stays, to tell signatures apart",
  );
  // PHP's json_encode writes "/" as "\/".
  const escaped = maskEchoes(`{"sig":"${base64.replaceAll("/", "\\/")}"}`, signatures);
  assert(!escaped.includes(base64.replaceAll("/", "\\/")), escaped);
  // The excerpt ends inside a signature: the beginning that made it in is cut too.
  for (const keep of [SIGNATURE_SHOWN + 1, 40, hex.length - 1]) {
    const cut = maskEchoes(`...,"signature":"${hex.slice(0, keep)}`, signatures);
    assertEquals(cut, `...,"signature":"${hex.slice(0, SIGNATURE_SHOWN)}…`, `${keep} characters`);
  }
  // Text that merely shares a few characters is left alone.
  assertEquals(
    maskEchoes(`ok ${hex.slice(0, SIGNATURE_SHOWN)}`, signatures),
    `ok ${hex.slice(0, SIGNATURE_SHOWN)}`,
  );
  assertEquals(maskEchoes("ok", signatures), "ok");
});

Deno.test("custom header values show only their hint: sent, echoed as sent, JSON-escaped or cut", () => {
  const value = 'Bearer a/b"c\\d-0123456789';
  const hint = `…${value.slice(-4)}`;
  const masked = maskedRequestHeaders(
    { ...sent, Authorization: value, "X-Plain": "kept" },
    new Set(["authorization"]),
  );
  assertEquals(masked.Authorization, hint);
  assertEquals(masked["X-Plain"], "kept", "only the endpoint's custom headers");
  assertEquals(maskedRequestHeaders({ "X-Short": "abc" }, new Set(["x-short"]))["X-Short"], "…");

  const json = JSON.stringify({ headers: { authorization: value } });
  assertEquals(
    maskEchoes(json, [], [value]),
    JSON.stringify({ headers: { authorization: "VALUE" } }).replace("VALUE", hint),
  );
  const phpStyle = json.replaceAll("/", "\\/");
  assert(!maskEchoes(phpStyle, [], [value]).includes("a\\/b"), "\\/ written for /");
  assertEquals(maskEchoes(`x-key: ${value}`, [], [value]), `x-key: ${hint}`);
  // The excerpt's end cuts the value: 4 characters or more of it are masked.
  for (const keep of [4, 10, value.length - 1]) {
    assertEquals(
      maskEchoes(`...: ${value.slice(0, keep)}`, [], [value]),
      `...: ${hint}`,
      `${keep} characters`,
    );
  }
  assertEquals(maskEchoes("...: Bea", [], [value]), "...: Bea", "3 characters say nothing");
});
