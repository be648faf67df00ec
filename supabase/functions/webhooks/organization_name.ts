// What an organization's name may be: one line that shows what it says. It is put into mail subjects
// and bodies, every page's header and the organization switcher, where an invisible or blank-looking
// character lets one church's name pass for another's (or look empty), a line break writes a mail's
// body and a tower of combining marks draws over the rows around it. The table holds the same rule
// (private.organization_name_problem in 20261122100000_tenancy.sql); tests/organizations_api_test.ts
// holds the two equal. @see docs/authentication.md#organizations

/**
 * Refused anywhere in a name: control characters, line and paragraph separators, format characters
 * (bidi controls, zero-width spaces and joiners, the soft hyphen, BOM, tag characters...), Unicode's
 * default-ignorable code points (variation selectors, the Hangul fillers U+115F, U+1160, U+3164 and
 * U+FFA0, the combining grapheme joiner U+034F) and the blank braille pattern U+2800; but the text and
 * emoji selectors U+FE0E and U+FE0F right after a pictograph ("✝️"), where they choose its look.
 */
export const FORBIDDEN_IN_NAME =
  // deno-lint-ignore no-control-regex -- control characters are what it finds
  /[[\u0001-\u001f\u007f-\u009f\u2028\u2029\u2800\p{Cf}\p{Default_Ignorable_Code_Point}]--[\uFE0E\uFE0F]]|(?<!\p{Extended_Pictographic})[\uFE0E\uFE0F]/v;

/** More combining marks in a row than any script writes on one letter. */
export const MAX_COMBINING_MARKS = 5;
export const MAX_NAME_LENGTH = 200;
const MARK_RUN = new RegExp(`\\p{M}{${MAX_COMBINING_MARKS + 1}}`, "u");
const VISIBLE = /[^ \p{M}]/u;

export const NAME_RULE = `must be 1 to ${MAX_NAME_LENGTH} characters on one line, with a letter, digit or ` +
  `symbol, no control, invisible or blank-looking characters and at most ${MAX_COMBINING_MARKS} combining marks ` +
  "in a row";

/** NFC, each run of spaces (any Unicode space) one plain space, trimmed. */
export function normalizeOrganizationName(name: string): string {
  return name.normalize("NFC").replace(/\p{Zs}+/gu, " ").trim();
}

const hex = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;

/** What is wrong with a normalized name, said for the person typing it; undefined when nothing is. */
export function organizationNameProblem(name: string): string | undefined {
  const forbidden = name.match(FORBIDDEN_IN_NAME);
  if (forbidden) {
    return `contains ${hex(forbidden[0])}, a control, invisible or blank-looking character: remove it`;
  }
  if (!VISIBLE.test(name)) return "is blank: give a name with at least one letter, digit or symbol";
  if ([...name].length > MAX_NAME_LENGTH) return `is longer than ${MAX_NAME_LENGTH} characters`;
  if (MARK_RUN.test(name)) {
    return `has more than ${MAX_COMBINING_MARKS} combining marks in a row on one character`;
  }
  return undefined;
}
