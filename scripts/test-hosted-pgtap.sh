#!/usr/bin/env bash
# The hosted-like pgTAP lane: the pgTAP suite as `supabase test db --linked` runs it against a real
# project, twice in a row on one database that is not empty. A throwaway cluster of its own, prepared as
# a hosted project's database is (tests/helpers/hosted_platform.sql: Supabase's setup played by the
# superuser supabase_admin, then `postgres` NOT a superuser), the migrations applied by `db push` as
# postgres, then the demo seed (supabase/seed.sql) and other organizations' open work
# (tests/helpers/other_organizations_work.sql: due, retrying and leased deliveries, mail in the outbox,
# unprocessed inbound webhooks). Every pgTAP file must count only what it made: run on this database,
# one that counts whole tables fails.
#
# Usage: test-hosted-pgtap.sh RESULTS_DIR SQL_TARGETS...
#   records suites pgtap-hosted and pgtap-hosted-again (and their tenancy-matrix rows) in RESULTS_DIR.
# Run by scripts/test-in-cluster.sh beside the main lane; by hand:
#   d=$(mktemp -d) && bash scripts/test-hosted-pgtap.sh "$d" supabase/tests/ && cat "$d/counts"
# See docs/testing.md#the-pgtap-suite-on-a-database-that-holds-data
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export PATH="$root/node_modules/.bin:$PATH"

if [ "${1:-}" != --inside ]; then
  results=$1
  shift
  started=$SECONDS
  major=$(psql --version | sed -E 's/.* ([0-9]+)\..*/\1/')
  for attempt in 1 2 3; do
    # Nothing of the calling cluster's environment (PGHOST, PGPORT, PG_CLUSTER_CONF_ROOT...) leaks in; a
    # port of its own (scripts/free-port.sh says why).
    env -i PATH="$PATH" HOME="${HOME:-/root}" LANG=C.UTF-8 PGPORT="$(bash scripts/free-port.sh)" \
      pg_virtualenv -t -v "$major" \
      -o shared_preload_libraries=pg_cron -o cron.database_name=postgres \
      -o cron.use_background_workers=on -o max_worker_processes=16 \
      -o fsync=off -o synchronous_commit=off \
      bash "$0" --inside "$results" "$@" >"$results/hosted-lane.log" 2>&1
    grep -q '^pgtap-hosted-bootstrap ' "$results/counts" 2>/dev/null && break
    sleep $((attempt * 2))
  done
  grep -q '^pgtap-hosted-bootstrap ' "$results/counts" 2>/dev/null ||
    echo "pgtap-hosted-bootstrap 0 1 0 $((SECONDS - started))" >>"$results/counts"
  grep -E '^\[pgtap-hosted|^hosted-lane:' "$results/hosted-lane.log" || true
  exit 0
fi

# Inside the lane's cluster: PGHOST/PGPORT/PGPASSWORD name it, PGUSER is its superuser postgres.
shift
results=$1
shift
started=$SECONDS
fail() {
  echo "hosted-lane: $*"
  echo "pgtap-hosted-bootstrap 0 1 0 $((SECONDS - started))" >>"$results/counts"
  echo "pgtap-hosted: $*" >>"$results/notes"
  exit 0
}
psql -X -q -v ON_ERROR_STOP=1 -c "create role supabase_admin superuser login password '$PGPASSWORD'" ||
  fail "could not create supabase_admin"
export PGOPTIONS='-c client_min_messages=warning'
PGUSER=supabase_admin psql -X -q -v ON_ERROR_STOP=1 -f tests/helpers/hosted_platform.sql >/dev/null ||
  fail "Supabase's setup (tests/helpers/hosted_platform.sql) failed"
# pgTAP as `supabase test db` finds it on a project: in extensions, created by the platform.
PGUSER=supabase_admin psql -X -q -v ON_ERROR_STOP=1 -c "create extension if not exists pgtap with schema extensions" ||
  fail "could not create pgtap"
export PGUSER=postgres
[ "$(psql -X -qAt -c "select rolsuper from pg_roles where rolname = 'postgres'")" = f ] ||
  fail "postgres is still a superuser"

# The migrations as the deploy applies them: `db push` as postgres, Vault secrets from the variables.
url="postgresql://postgres:${PGPASSWORD}@127.0.0.1:${PGPORT}/postgres"
if ! out=$(SUPABASE_PROJECT_URL=http://127.0.0.1:9 WEBHOOK_DISPATCH_SECRET="lane-$PGPORT-$RANDOM$RANDOM$RANDOM" \
  PGSSLMODE=disable SUPABASE_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1 HTTP_PROXY=http://127.0.0.1:9 \
  HTTPS_PROXY=http://127.0.0.1:9 NO_PROXY=127.0.0.1 NO_COLOR=1 \
  supabase db push --db-url "$url" --yes 2>&1); then
  printf '%s\n' "$out" | tail -n 15
  fail "db push failed"
fi
# What a project holds: the demo seed's two churches and another church's work in flight.
psql -X -q -v ON_ERROR_STOP=1 -f supabase/seed.sql >/dev/null || fail "supabase/seed.sql failed"
psql -X -q -v ON_ERROR_STOP=1 -f tests/helpers/other_organizations_work.sql >/dev/null ||
  fail "tests/helpers/other_organizations_work.sql failed"
echo "pgtap-hosted-bootstrap 1 0 0 $((SECONDS - started))" >>"$results/counts"

# Twice on the same database: a file that leaves anything behind, or depends on a first run, fails the
# second pass.
bash scripts/test-pgtap.sh "$results" pgtap-hosted "$@"
bash scripts/test-pgtap.sh "$results" pgtap-hosted-again "$@"
exit 0
