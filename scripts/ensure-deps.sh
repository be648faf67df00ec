#!/usr/bin/env bash
# Installs what the project needs on a fresh machine, and nothing when it is already there: the pinned
# CLIs (npm ci), and as root the Debian packages the tests use (pgTAP, pg_prove, pg_virtualenv, openssl,
# PostgreSQL's server headers with make and gcc, PgBouncer; Chromium with --browser). With --dev only
# the CLIs: `npm run dev` needs no test tool (db-bootstrap installs pg_cron itself). Safe to run every time.
# See docs/getting-started.md#prerequisites and docs/development.md#tests
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# Whether DIR's packages are installed from DIR/package-lock.json as it is now: the lockfile's hash at the
# last `npm ci` (kept beside the packages) is its hash now. A checkout that rewrites the lockfile with the
# same content (a new worktree, a branch switch) leaves it equal: `npm ci` costs a minute or more, every run.
# Packages installed before the hash was kept: the lockfile no newer than npm's own record of the install.
installed() {
  local dir=$1 bin=$2 stamp="$1/node_modules/.cache/package-lock.sha256"
  [ -x "$dir/node_modules/.bin/$bin" ] || return 1
  if [ -e "$stamp" ]; then
    [ "$(sha256sum <"$dir/package-lock.json")" = "$(cat "$stamp")" ]
  else
    [ ! "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]
  fi
}
install() {
  npm ci --prefix "$1" --no-audit --no-fund --loglevel=error >/dev/null &&
    mkdir -p "$1/node_modules/.cache" && sha256sum <"$1/package-lock.json" >"$1/node_modules/.cache/package-lock.sha256"
}
{ installed . deno && installed . supabase; } || install .
# The settings UI (web/) has its own lockfile.
installed web vite || install web

[ "${1:-}" = --dev ] && exit 0

major=$(psql --version 2>/dev/null | sed -E 's/.* ([0-9]+)\..*/\1/')
major=${major:-15}
need=()
[ -e "/usr/share/postgresql/$major/extension/pg_cron.control" ] || need+=("postgresql-$major-cron")
[ -e "/usr/share/postgresql/$major/extension/pgtap.control" ] || need+=("postgresql-$major-pgtap")
command -v pg_prove >/dev/null || need+=(libtap-parser-sourcehandler-pgtap-perl)
command -v pg_virtualenv >/dev/null || need+=(postgresql-common)
command -v openssl >/dev/null || need+=(openssl) # the outbound TLS test makes its own CA
# The API-role guard (scripts/require-where) is built with PGXS; the pooler tests run PgBouncer.
[ -e "/usr/include/postgresql/$major/server/postgres.h" ] || need+=("postgresql-server-dev-$major") # pgxs.mk alone comes with the client
command -v make >/dev/null && command -v gcc >/dev/null || need+=(make gcc)
[ -x /usr/sbin/pgbouncer ] || need+=(pgbouncer)
# The browser tests drive Debian's Chromium headless shell (Playwright cannot download its own browser
# here; web/tests/helpers/browser.ts falls back to the full chromium where only that is installed).
[ "${1:-}" = --browser ] && { [ -x /usr/lib/chromium/chromium-headless-shell ] || need+=(chromium-headless-shell); }
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "ensure-deps: missing ${need[*]}; run as root: apt-get update && apt-get install -y ${need[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq "${need[@]}" >/dev/null
fi
