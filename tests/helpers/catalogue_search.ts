// Searches every text-like column (text, varchar, json, jsonb, and arrays of them) of every table of the
// project's schemas for a value, as the database owner (no row-level security). The columns come from
// the catalogue, so a table added later is searched without anyone listing it here.
import { sql } from "./db.ts";

export interface Hit {
  table: string;
  column: string;
  rows: number;
}

interface Column {
  schema: string;
  table: string;
  column: string;
}

/** Every column of the tables (not views: they show the same rows) of `public` and `private`, with its type. */
async function columns(): Promise<(Column & { type: string; element: string | null; text: boolean })[]> {
  return await sql()`
    select n.nspname as schema, c.relname as table, a.attname as column, t.typname as type,
           e.typname as element,
           (t.typcategory = 'S' or t.typname in ('json', 'jsonb') or e.typcategory = 'S'
            or e.typname in ('json', 'jsonb')) as text
    from pg_attribute a
    join pg_class c on c.oid = a.attrelid
    join pg_namespace n on n.oid = c.relnamespace
    join pg_type t on t.oid = a.atttypid
    left join pg_type e on e.oid = t.typelem and t.typcategory = 'A'
    where c.relkind in ('r', 'p') and n.nspname in ('public', 'private') and a.attnum > 0 and not a.attisdropped
    order by 1, 2, 3`;
}

/** The searched columns: text, varchar, json and jsonb, and arrays of them. */
export async function textColumns(): Promise<Column[]> {
  return (await columns()).filter((c) => c.text).map(({ schema, table, column }) => ({
    schema,
    table,
    column,
  }));
}

/** Every column holding `value` (case-insensitively, as a substring), with how many rows do. */
export async function rowsMentioning(value: string): Promise<Hit[]> {
  const hits: Hit[] = [];
  for (const col of await textColumns()) {
    const [row] = await sql().unsafe(
      `select count(*)::int as n from "${col.schema}"."${col.table}"
       where strpos(lower("${col.column}"::text), lower($1)) > 0`,
      [value],
    );
    if (row!.n > 0) hits.push({ table: `${col.schema}.${col.table}`, column: col.column, rows: row!.n });
  }
  return hits;
}

/** The rows (as JSON, sorted) of every table that mention any of `values`: a fingerprint to compare. */
export async function rowsAbout(values: string[]): Promise<string[]> {
  const out: string[] = [];
  const byTable = new Map<string, string[]>();
  for (const col of await textColumns()) {
    const key = `"${col.schema}"."${col.table}"`;
    byTable.set(key, [...(byTable.get(key) ?? []), col.column]);
  }
  for (const [table, columns] of byTable) {
    const where = columns.map((c) => `strpos(lower("${c}"::text), lower(v)) > 0`).join(" or ");
    const rows = await sql().unsafe(
      `select distinct to_jsonb(x)::text as r from ${table} x, unnest($1::text[]) v where ${where}`,
      [values],
    );
    for (const r of rows) out.push(`${table} ${r.r}`);
  }
  return out.sort();
}

/** The uuid and uuid[] columns of the same tables: where ids, and the links to people, are kept. */
async function idColumns(): Promise<Column[]> {
  return (await columns()).filter((c) => c.type === "uuid" || c.element === "uuid");
}

/**
 * Every column holding `value`: the text-like ones as rowsMentioning, and the uuid and uuid[] ones
 * (where a member's id is kept: references and the `member_ids` links).
 */
export async function rowsHolding(value: string): Promise<Hit[]> {
  const hits = await rowsMentioning(value);
  for (const col of await idColumns()) {
    const [row] = await sql().unsafe(
      `select count(*)::int as n from "${col.schema}"."${col.table}"
       where strpos(lower("${col.column}"::text), lower($1)) > 0`,
      [value],
    );
    if (row!.n > 0) hits.push({ table: `${col.schema}.${col.table}`, column: col.column, rows: row!.n });
  }
  return hits;
}

/**
 * Every row of an organization, as JSON by `<table>:<id>`: each table of `public` and `private` with an
 * `id` and an `organization_id` column (from the catalogue), so a test can tell exactly which rows an
 * operation changed, added or removed.
 */
export async function organizationRows(organizationId: string): Promise<Map<string, string>> {
  const tables = await sql()<{ schema: string; table: string }[]>`
    select n.nspname as schema, c.relname as table
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where c.relkind in ('r', 'p') and n.nspname in ('public', 'private')
      and exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'id' and not a.attisdropped)
      and exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'organization_id'
                  and not a.attisdropped)
    order by 1, 2`;
  const out = new Map<string, string>();
  for (const t of tables) {
    const rows = await sql().unsafe(
      `select x.id::text as id, to_jsonb(x)::text as r from "${t.schema}"."${t.table}" x where x.organization_id = $1`,
      [organizationId],
    );
    for (const r of rows) out.set(`${t.schema}.${t.table}:${r.id}`, r.r);
  }
  return out;
}

/** The keys whose rows differ between two organizationRows snapshots (changed, removed or added). */
export function changedRows(before: Map<string, string>, after: Map<string, string>): string[] {
  const keys = new Set([...before.keys(), ...after.keys()]);
  return [...keys].filter((k) => before.get(k) !== after.get(k)).sort();
}
