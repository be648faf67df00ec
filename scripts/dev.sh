#!/usr/bin/env bash
# One command for the whole local service: dependencies, the local database prepared like a Supabase
# one (platform objects, pg_cron, migrations), then every function on http://127.0.0.1:54321.
# See docs/getting-started.md#run-the-service
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/check-node.sh "npm run dev" || exit 1
bash scripts/ensure-deps.sh --dev
export SUPABASE_DB_URL=${SUPABASE_DB_URL:-postgresql://postgres@127.0.0.1:5432/postgres}
# Make sure the default local cluster is up (it is a service on this kind of machine).
if ! psql "$SUPABASE_DB_URL" -Atqc 'select 1' >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v pg_ctlcluster >/dev/null; then
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -n | tail -n 1)" main start || true
fi
bash scripts/db-bootstrap.sh "$SUPABASE_DB_URL"
# A first run on an empty database gets the demo data of supabase/seed.sql (organizations, sign-ins).
empty=$(psql "$SUPABASE_DB_URL" -X -qAt -c \
  "select not exists (select 1 from auth.users) and not exists (select 1 from public.organizations)")
if [ "$empty" = t ]; then
  PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning" \
    psql "$SUPABASE_DB_URL" -X -q -v ON_ERROR_STOP=1 --single-transaction -f supabase/seed.sql >/dev/null
  echo "dev: the database was empty: applied supabase/seed.sql (demo organizations and sign-ins)"
fi
# Local development delivers outbound webhooks to loopback receivers unless told otherwise.
export WEBHOOKS_ALLOW_PRIVATE_TARGETS=${WEBHOOKS_ALLOW_PRIVATE_TARGETS:-true}
# A small V8 young generation (4 MiB semi-spaces): the in-process dispatcher makes short-lived garbage
# with every delivery (how much: docs/architecture.md#memory), and with V8's default the new space grows
# to its maximum under load, taking peak RSS from ~140 to ~190 MiB at no gain in speed.
exec node_modules/.bin/deno run --v8-flags=--max-semi-space-size=4 --allow-net --allow-env --allow-read --allow-write=supabase/.temp --allow-sys --allow-run=node scripts/dev.ts
