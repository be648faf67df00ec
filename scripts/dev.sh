#!/usr/bin/env bash
# One command for the whole local service: dependencies, the local database prepared like a Supabase
# one (platform objects, pg_cron, migrations), then every function on http://127.0.0.1:54321.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/ensure-deps.sh
export SUPABASE_DB_URL=${SUPABASE_DB_URL:-postgresql://postgres@127.0.0.1:5432/postgres}
# Make sure the default local cluster is up (it is a service on this kind of machine).
if ! psql "$SUPABASE_DB_URL" -Atqc 'select 1' >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v pg_ctlcluster >/dev/null; then
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -n | tail -n 1)" main start || true
fi
bash scripts/db-bootstrap.sh "$SUPABASE_DB_URL"
# Local development delivers outbound webhooks to loopback receivers unless told otherwise.
export WEBHOOKS_ALLOW_PRIVATE_TARGETS=${WEBHOOKS_ALLOW_PRIVATE_TARGETS:-true}
exec node_modules/.bin/deno run --allow-net --allow-env --allow-read --allow-write=supabase/.temp --allow-sys --allow-run=node scripts/dev.ts
