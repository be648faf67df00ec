#!/usr/bin/env bash
# Recording results with the lease table's statistics stale (scripts/bench/outbound_record_stale_stats.sql),
# alternating with fresh ones, each in its own throwaway cluster prepared like the test database (fsync
# off as in the test run; autovacuum off so the statistics stay as set).
#   BENCH_REPEATS=2 bash scripts/bench/outbound_record_stale_stats.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
export PATH="$root/node_modules/.bin:$PATH"
major=$(psql --version | sed -E 's/.* ([0-9]+)\..*/\1/')
for _ in $(seq "${BENCH_REPEATS:-2}"); do
  for stale in false true; do
    pg_virtualenv -t -v "$major" -o shared_preload_libraries=pg_cron -o cron.database_name=postgres \
      -o fsync=off -o synchronous_commit=off -o autovacuum=off \
      bash -c 'url="postgresql://postgres:${PGPASSWORD}@127.0.0.1:${PGPORT}/postgres"
        bash scripts/db-bootstrap.sh "$url" >/dev/null &&
        psql "$url" -X -v stale="$0" -f scripts/bench/outbound_record_stale_stats.sql' "$stale"
  done
done
