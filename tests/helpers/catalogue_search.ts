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

/** The searched columns: tables (not views: they show the same rows) of `public` and `private`. */
export async function textColumns(): Promise<Column[]> {
  return await sql()<Column[]>`
    select n.nspname as schema, c.relname as table, a.attname as column
    from pg_attribute a
    join pg_class c on c.oid = a.attrelid
    join pg_namespace n on n.oid = c.relnamespace
    join pg_type t on t.oid = a.atttypid
    left join pg_type e on e.oid = t.typelem and t.typcategory = 'A'
    where c.relkind in ('r', 'p') and n.nspname in ('public', 'private') and a.attnum > 0 and not a.attisdropped
      and (t.typcategory = 'S' or t.typname in ('json', 'jsonb') or e.typcategory = 'S'
           or e.typname in ('json', 'jsonb'))
    order by 1, 2, 3`;
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
