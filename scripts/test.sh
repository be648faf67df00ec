#!/usr/bin/env bash
# Every test, on a fresh database: formatting, lint and type checks, then the pgTAP suite and the Deno
# tests against a throwaway PostgreSQL cluster (pg_cron preloaded, database `postgres` as on Supabase)
# that exists only for this run. Ends with one line: `N passed, N failed`.
#
#   scripts/test.sh                       everything
#   scripts/test.sh --no-static           skip fmt/lint/check
#   scripts/test.sh tests/foo_test.ts     only these Deno tests (and no pgTAP unless .sql files are named)
#   scripts/test.sh web/tests/            only the browser tests of the settings UI (Chromium)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export PATH="$root/node_modules/.bin:$PATH"

static=1
deno_targets=()
sql_targets=()
browser_targets=()
for arg in "$@"; do
  case "$arg" in
    --no-static) static=0 ;;
    *.sql) sql_targets+=("$arg") ;;
    web/tests*) browser_targets+=("$arg") ;;
    *) deno_targets+=("$arg") ;;
  esac
done
if [ $# -eq 0 ] || { [ ${#deno_targets[@]} -eq 0 ] && [ ${#sql_targets[@]} -eq 0 ] && [ ${#browser_targets[@]} -eq 0 ]; }; then
  deno_targets=(tests/)
  sql_targets=(supabase/tests/)
  browser_targets=(web/tests/)
fi
# Read by test-in-cluster.sh.
export BROWSER_TARGETS="${browser_targets[*]}"

deps_flag=()
[ ${#browser_targets[@]} -gt 0 ] && deps_flag=(--browser)
bash scripts/ensure-deps.sh "${deps_flag[@]}" || { echo "0 passed, 1 failed"; exit 1; }

results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
record() { echo "$1 $2 $3" >>"$results/counts"; } # suite passed failed

if [ "$static" = 1 ]; then
  for step in "fmt --check" "lint" "check supabase/functions scripts tests web/tests"; do
    echo "== deno $step"
    # shellcheck disable=SC2086
    if deno $step; then record "deno-${step%% *}" 1 0; else record "deno-${step%% *}" 0 1; fi
  done
fi

major=$(psql --version | sed -E 's/.* ([0-9]+)\..*/\1/')
# -t: a cluster in a fresh temporary directory, removed at the end whatever happens. Creating one can
# fail when another run grabs the same free port at the same moment: try again, up to three times.
for attempt in 1 2 3; do
  pg_virtualenv -t -v "$major" \
    -o shared_preload_libraries=pg_cron -o cron.database_name=postgres \
    -o max_connections=300 -o fsync=off -o synchronous_commit=off \
    bash scripts/test-in-cluster.sh "$results" "${#sql_targets[@]}" "${sql_targets[@]}" "${deno_targets[@]}"
  cluster_rc=$?
  grep -q '^bootstrap ' "$results/counts" 2>/dev/null && break
  echo "test: could not start a throwaway PostgreSQL cluster (attempt $attempt, exit $cluster_rc)" >&2
  sleep $((attempt * 2))
done
if ! grep -q '^bootstrap ' "$results/counts" 2>/dev/null; then
  record cluster 0 1
fi

echo
echo "== summary"
passed=0
failed=0
while read -r suite p f; do
  printf '  %-14s %5s passed %5s failed\n' "$suite" "$p" "$f"
  passed=$((passed + p))
  failed=$((failed + f))
done <"$results/counts"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
