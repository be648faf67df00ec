// One postgres.js pool per process, and the one way user-facing code touches data: inside a
// transaction that has become the `authenticated` role with the verified JWT claims, so row-level
// security decides exactly as it does for PostgREST.
import postgres from "postgres";

export type Sql = postgres.Sql;
export type Tx = postgres.TransactionSql;

export function createSql(url: string, options: { max?: number } = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    idle_timeout: 30,
    connect_timeout: 5,
    // Our SQL never depends on notices; keeping them out of the logs keeps payloads out too.
    onnotice: () => {},
    connection: { application_name: "church-integration" },
  });
}

export type JwtClaims = Record<string, unknown> & { sub?: string; role?: string };

/** Runs `fn` in one transaction as `authenticated` (or the token's role) with the given claims. */
export function withClaims<T>(sql: Sql, claims: JwtClaims, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const role = claims.role === "anon" ? "anon" : "authenticated";
  return sql.begin(async (tx) => {
    await tx`select set_config('request.jwt.claims', ${JSON.stringify(claims)}, true),
                    set_config('role', ${role}, true)`;
    return await fn(tx);
  }) as Promise<T>;
}
