#!/usr/bin/env bash
# Runs scripts/bench/checkout_webhook.ts against a throwaway PostgreSQL cluster (the test run's settings:
# pg_cron preloaded, fsync and synchronous_commit off), bootstrapped and migrated, removed afterwards.
# Extra arguments go to the benchmark, e.g. `--write` to update docs/benchmarks/checkout-webhook.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
export PATH="$root/node_modules/.bin:$PATH"
major=$(psql --version | sed -E 's/.* ([0-9]+)\..*/\1/')
export BENCH_ARGS="$*"
exec pg_virtualenv -t -v "$major" \
  -o shared_preload_libraries=pg_cron -o cron.database_name=postgres \
  -o max_connections=300 -o fsync=off -o synchronous_commit=off \
  bash -c 'url="postgresql://postgres:${PGPASSWORD}@127.0.0.1:${PGPORT}/postgres"
    bash scripts/db-bootstrap.sh "$url" >/dev/null &&
    BENCH_DATABASE_URL="$url" deno run --allow-net --allow-env --allow-read --allow-write --allow-run --allow-sys \
      scripts/bench/checkout_webhook.ts $BENCH_ARGS'
