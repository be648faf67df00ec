#!/usr/bin/env bash
# Runs scripts/bench/outbound_claim.ts against a throwaway PostgreSQL cluster (same settings as the
# test run: pg_cron preloaded, fsync off), bootstrapped and migrated, removed afterwards.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
export PATH="$root/node_modules/.bin:$PATH"
major=$(psql --version | sed -E 's/.* ([0-9]+)\..*/\1/')
exec pg_virtualenv -t -v "$major" \
  -o shared_preload_libraries=pg_cron -o cron.database_name=postgres \
  -o max_connections=300 -o fsync=off -o synchronous_commit=off \
  bash -c 'url="postgresql://postgres:${PGPASSWORD}@127.0.0.1:${PGPORT}/postgres"
    bash scripts/db-bootstrap.sh "$url" >/dev/null &&
    BENCH_DATABASE_URL="$url" deno run --allow-net --allow-env --allow-read --allow-run scripts/bench/outbound_claim.ts'
