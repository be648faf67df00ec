#!/usr/bin/env bash
# The endpoint-health trigger's cost on attempt inserts (scripts/bench/endpoint_health.sql), in a
# throwaway PostgreSQL cluster prepared like the test database.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
export PATH="$root/node_modules/.bin:$PATH"
major=$(psql --version | sed -E 's/.* ([0-9]+)\..*/\1/')
exec pg_virtualenv -t -v "$major" -o shared_preload_libraries=pg_cron -o cron.database_name=postgres \
  bash -c 'url="postgresql://postgres:${PGPASSWORD}@127.0.0.1:${PGPORT}/postgres"
    bash scripts/db-bootstrap.sh "$url" >/dev/null && psql "$url" -X -f scripts/bench/endpoint_health.sql'
