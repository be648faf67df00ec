#!/usr/bin/env bash
# Prepares a PostgreSQL database to behave like a Supabase project database, then applies the
# migrations:
#   1. pg_cron present and preloaded (installs the Debian package and sets shared_preload_libraries
#      when run as root against a local cluster; otherwise says what to run); pgTAP, for the tests,
#      created where it is installed;
#   2. Supabase's platform objects where missing (scripts/supabase-platform.sql);
#   3. supabase/migrations applied with the Supabase CLI (they give edge_user, the configuration API's
#      user-request pool, its login), and a check that edge_user can log in.
# Usage: scripts/db-bootstrap.sh [postgres-url]   (default: $SUPABASE_DB_URL or the local cluster)
# See docs/getting-started.md#prerequisites
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
url=${1:-${SUPABASE_DB_URL:-postgresql://postgres@127.0.0.1:5432/postgres}}
# Shown in messages without its password.
shown=$(printf '%s' "$url" | sed -E 's#(://[^:/@]+):[^@]*@#\1:***@#')

die() {
  echo "db-bootstrap: $*" >&2
  exit 1
}

command -v psql >/dev/null || die "psql not found; install PostgreSQL's client (apt-get install postgresql-client-15)"

q() { PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning" psql "$url" -X -v ON_ERROR_STOP=1 -qAt "$@"; }

if ! err=$(q -c 'select 1' 2>&1 >/dev/null); then
  reason=$(printf '%s' "$err" | head -n 1 | sed 's/^psql: //')
  case "$err" in
    *"password authentication failed"* | *"no password supplied"* | *"Peer authentication failed"* | *"Ident authentication failed"*)
      # Debian's pg_createcluster makes local sockets `peer` and 127.0.0.1 `scram-sha-256`: postgres
      # needs a password unless pg_hba.conf trusts it.
      die "cannot connect to $shown: $reason
  The server wants a password for postgres (Debian's default). Either give postgres one and say it:
    sudo -u postgres psql -c '\\password postgres'
    export SUPABASE_DB_URL=postgresql://postgres:<password>@127.0.0.1:5432/postgres
  or trust local TCP connections in pg_hba.conf (a development machine only):
    host all all 127.0.0.1/32 trust      (then: pg_ctlcluster $(psql --version | sed -E 's/.* ([0-9]+)\..*/\1/') main reload)"
      ;;
    *) die "cannot connect to $shown: $reason" ;;
  esac
fi

is_local_url() {
  case "$url" in
    *@127.0.0.1[:/]* | *@localhost[:/]* | *@\[::1\][:/]* | postgres*:///*) return 0 ;;
    *) return 1 ;;
  esac
}

major=$(q -c "select current_setting('server_version_num')::int / 10000")
preloaded=$(q -c "select current_setting('shared_preload_libraries') ~ '(^|[ ,])pg_cron($|[ ,])'")
have_cron=$(q -c "select count(*) from pg_available_extensions where name = 'pg_cron'")
have_tap=$(q -c "select count(*) from pg_available_extensions where name = 'pgtap'")

if [ "$have_cron" = 0 ]; then
  pkgs="postgresql-$major-cron"
  if [ "$(id -u)" = 0 ] && is_local_url && command -v apt-get >/dev/null; then
    echo "db-bootstrap: installing $pkgs" >&2
    (apt-get install -y -qq $pkgs >/dev/null 2>&1) ||
      (apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $pkgs >/dev/null 2>&1) ||
      die "could not install $pkgs; run: apt-get update && apt-get install -y $pkgs"
  else
    die "pg_cron is missing on $shown; run as root: apt-get install -y $pkgs"
  fi
fi

if [ "$preloaded" != t ]; then
  port=$(q -c "show port")
  cluster=$(pg_lsclusters -h 2>/dev/null | awk -v m="$major" -v p="$port" '$1 == m && $3 == p { print $2 }' | head -n 1)
  if [ "$(id -u)" = 0 ] && is_local_url && [ -n "$cluster" ]; then
    echo "db-bootstrap: preloading pg_cron in cluster $major/$cluster and restarting it" >&2
    current=$(q -c "show shared_preload_libraries")
    q -c "alter system set shared_preload_libraries = '${current:+$current,}pg_cron'"
    pg_ctlcluster --skip-systemctl-redirect "$major" "$cluster" restart >/dev/null ||
      die "could not restart cluster $major/$cluster; run: pg_ctlcluster $major $cluster restart"
    for _ in $(seq 1 50); do q -c 'select 1' >/dev/null 2>&1 && break; sleep 0.2; done
  else
    # What to run on the database's host, as printed: psql as the OS user postgres (root has no role),
    # adding pg_cron to what is preloaded now rather than replacing it, then the restart preloading needs.
    current=$(q -c "show shared_preload_libraries")
    as_postgres="sudo -u postgres" as_root="sudo "
    [ "$(id -u)" = 0 ] && as_postgres="runuser -u postgres --" as_root=""
    die "pg_cron is not preloaded on $shown; on its host run: $as_postgres psql -p $port -c \"alter system set shared_preload_libraries = '${current:+$current,}pg_cron'\" && ${as_root}pg_ctlcluster $major ${cluster:-main} restart"
  fi
fi

if [ "$(q -c "select current_database() = current_setting('cron.database_name')")" != t ]; then
  die "pg_cron runs only in database '$(q -c "show cron.database_name")'; point the URL at that database"
fi

q -f "$root/scripts/supabase-platform.sql" >/dev/null
# pgTAP for the test suite (supabase test db expects it in the extensions schema too), where installed:
# the tests install it (scripts/ensure-deps.sh); `npm run dev` does not need it.
if [ "$have_tap" != 0 ]; then
  q -c "create extension if not exists pgtap with schema extensions" >/dev/null
fi

supabase=$root/node_modules/.bin/supabase
[ -x "$supabase" ] || die "Supabase CLI missing; run: npm ci"
# Local clusters have no TLS; say so instead of letting the CLI fall back with a warning.
if is_local_url; then export PGSSLMODE=disable; fi
if ! out=$(cd "$root" && "$supabase" migration up --db-url "$url" --yes 2>&1); then
  printf '%s\n' "$out" | grep -v '^\s*$' | tail -n 15 >&2
  die "migrations failed on $shown"
fi
# The migrations gave edge_user (the configuration API's user-request pool) a login and a password the
# functions read from the database: check it logs in here as the functions will, so a pg_hba.conf that
# refuses it is said now, not as an error on every configuration API call later.
user_url=$(printf '%s' "$url" | sed -E 's#^(postgres(ql)?://)([^@/]*@)?#\1edge_user@#')
user_pw=$(q -c "select coalesce(private.edge_user_password(), '')")
if ! err=$(PGPASSWORD="$user_pw" psql "$user_url" -X -qAt -c 'select 1' 2>&1 >/dev/null); then
  die "edge_user (the configuration API's user-request pool) cannot log in to $shown: $(printf '%s' "$err" | head -n 1 | sed 's/^psql: //'); allow it in pg_hba.conf like postgres (password or trust)"
fi
applied=$(q -c "select count(*) from supabase_migrations.schema_migrations" 2>/dev/null || echo 0)
echo "db-bootstrap: $shown is ready ($applied migrations applied)"
