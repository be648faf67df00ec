// Supabase Auth's minimum schema for the claims an access-token hook returns
// (tokens/service.go MinimumViableTokenSchema): these must be present, and known claims keep their types.
const REQUIRED = ["aud", "exp", "iat", "sub", "email", "phone", "role", "aal", "session_id", "is_anonymous"];

type Check = (v: unknown) => boolean;
const isString: Check = (v) => typeof v === "string";
const isInteger: Check = (v) => typeof v === "number" && Number.isInteger(v);
const isObject: Check = (v) => typeof v === "object" && v !== null && !Array.isArray(v);

const TYPES: Record<string, [string, Check]> = {
  aud: ["string, array", (v) => typeof v === "string" || Array.isArray(v)],
  exp: ["integer", isInteger],
  jti: ["string", isString],
  iat: ["integer", isInteger],
  iss: ["string", isString],
  nbf: ["integer", isInteger],
  sub: ["string", isString],
  email: ["string", isString],
  phone: ["string", isString],
  app_metadata: ["object", isObject],
  user_metadata: ["object", isObject],
  role: ["string", isString],
  aal: ["string", isString],
  amr: ["array", (v) => Array.isArray(v) && v.every((i) => typeof i === "string" || isObject(i))],
  session_id: ["string", isString],
  client_id: ["string", isString],
};

/** The schema violations, worded like gojsonschema's; empty when the claims are acceptable. */
export function validateClaims(claims: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const name of REQUIRED) {
    if (!(name in claims)) problems.push(`(root): ${name} is required`);
  }
  for (const [name, [expected, ok]] of Object.entries(TYPES)) {
    if (name in claims && !ok(claims[name])) problems.push(`${name}: Invalid type. Expected: ${expected}`);
  }
  return problems;
}
