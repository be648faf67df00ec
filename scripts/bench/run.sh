#!/usr/bin/env bash
# Runs one benchmark against a throwaway PostgreSQL cluster prepared exactly like the test database
# (pg_cron preloaded, Supabase platform objects, migrations).
#   bash scripts/bench/run.sh access_token_hook [args...]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
name=${1:?usage: scripts/bench/run.sh <benchmark> [args...]}
shift
bash scripts/ensure-deps.sh
export PATH="$root/node_modules/.bin:$PATH"
major=$(psql --version | sed -E 's/.* ([0-9]+)\..*/\1/')
# BENCH_PG_OPTS: more server settings for one benchmark, e.g. "-o fsync=off -o synchronous_commit=off".
# shellcheck disable=SC2086
exec pg_virtualenv -t -v "$major" -o shared_preload_libraries=pg_cron -o cron.database_name=postgres \
  -o max_connections=300 ${BENCH_PG_OPTS:-} \
  bash -c 'url="postgresql://postgres:${PGPASSWORD}@127.0.0.1:${PGPORT}/postgres"
    bash scripts/db-bootstrap.sh "$url" >&2
    BENCH_DATABASE_URL="$url" deno run -A "scripts/bench/$0.ts" "$@"' "$name" "$@"
