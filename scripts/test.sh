#!/usr/bin/env bash
# Every test, on a fresh database: formatting, lint and type checks, then the pgTAP suite and the Deno
# tests against a throwaway PostgreSQL cluster (pg_cron preloaded, database `postgres` as on Supabase)
# that exists only for this run, with the pgTAP suite again (twice) on a hosted-like database that holds
# data, and the test files shared out to lanes of their own clusters (scripts/test-in-cluster.sh). Ends
# with one line: `N passed, N failed`. The run fails unless every suite it expects (static, bootstrap,
# pgTAP, hosted-like pgTAP, Deno, browser) reported and the cluster runner finished; skipped and ignored
# tests are shown by name in the summary, not counted as passed; each suite's row gives its time.
#
#   scripts/test.sh                       everything
#   scripts/test.sh --no-static           skip fmt/lint/check
#   scripts/test.sh tests/foo_test.ts     only these Deno tests (and no pgTAP unless .sql files are named)
#   scripts/test.sh web/tests/            only the browser tests of the settings UI (Chromium)
#   TEST_WORKERS=1 scripts/test.sh ...    the test files in one lane (default 4 lanes side by side)
#   HOSTED_PGTAP=0 scripts/test.sh x.sql  pgTAP on the fresh database only, not the hosted-like one
# See docs/development.md#tests
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/check-node.sh "npm test" || exit 1
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

run_started=$SECONDS
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
# counts: one line per suite, `suite passed failed skipped [seconds]`; notes: what the summary must say
# besides.
record() { echo "$1 $2 $3 ${4:-0} ${5:-}" >>"$results/counts"; }
note() { echo "$1" >>"$results/notes"; }
# Every suite this run must hear from: a suite that never reports is a failure, not a zero.
expected=()
[ "$static" = 1 ] && expected+=(deno-fmt deno-lint deno-check)
expected+=(bootstrap)
[ ${#sql_targets[@]} -gt 0 ] && expected+=(pgtap)
# The pgTAP suite twice more on a hosted-like database holding data (scripts/test-hosted-pgtap.sh).
[ ${#sql_targets[@]} -gt 0 ] && [ "${HOSTED_PGTAP:-1}" = 1 ] && expected+=(pgtap-hosted pgtap-hosted-again)
[ ${#deno_targets[@]} -gt 0 ] && expected+=(deno-test)
[ ${#browser_targets[@]} -gt 0 ] && expected+=(browser)
# The configuration API, receiver and dispatcher tests again through PgBouncer in transaction mode, in
# full runs, or when POOLER_SUITE=1 is set (read by test-in-cluster.sh).
if [ "${deno_targets[*]}" = "tests/" ] || [ "${POOLER_SUITE:-0}" = 1 ]; then
  export POOLER_SUITE=1
  expected+=(pooler)
else
  export POOLER_SUITE=0
fi
# The cluster runner; tests of this script put a stand-in here.
runner=${TEST_CLUSTER_RUNNER:-scripts/test-in-cluster.sh}

# The static checks need no database: they run beside the cluster runner (their output shown after it).
if [ "$static" = 1 ]; then
  (
    for step in "fmt --check" "lint" "check supabase/functions scripts tests web/tests"; do
      echo "== deno $step"
      step_started=$SECONDS
      # shellcheck disable=SC2086
      if deno $step; then ok=1; else ok=0; fi
      record "deno-${step%% *}" "$ok" $((1 - ok)) 0 $((SECONDS - step_started))
    done
  ) >"$results/static.log" 2>&1 &
  static_pid=$!
  # `deno check` above type-checks every test file: the runner's `deno test` need not check them again.
  export TEST_TYPECHECKED=1
fi

major=$(psql --version | sed -E 's/.* ([0-9]+)\..*/\1/')
# -t: a cluster in a fresh temporary directory, removed at the end whatever happens, on a port the system
# just gave out (scripts/free-port.sh). Creating one can fail when another process takes that port at
# the same moment: try again, up to three times.
for attempt in 1 2 3; do
  PGPORT=$(bash scripts/free-port.sh) pg_virtualenv -t -v "$major" \
    -o shared_preload_libraries=pg_cron -o cron.database_name=postgres \
    -o max_connections=300 -o fsync=off -o synchronous_commit=off \
    bash "$runner" "$results" "${#sql_targets[@]}" "${sql_targets[@]}" "${deno_targets[@]}"
  cluster_rc=$?
  grep -q '^bootstrap ' "$results/counts" 2>/dev/null && break
  echo "test: could not start a throwaway PostgreSQL cluster (attempt $attempt, exit $cluster_rc)" >&2
  sleep $((attempt * 2))
done
if [ -n "${static_pid:-}" ]; then
  wait "$static_pid"
  cat "$results/static.log"
fi
# The runner ends with 0 whatever its suites found (they report through counts): anything else means
# it died on the way, and whatever it reported before cannot stand for the whole run.
if [ "$cluster_rc" != 0 ]; then
  record cluster-runner 0 1
  note "cluster runner: exited $cluster_rc before finishing"
fi
for suite in "${expected[@]}"; do
  if ! grep -q "^$suite " "$results/counts" 2>/dev/null; then
    record "$suite" 0 1
    note "$suite: did not report"
  fi
done

echo
echo "== summary"
passed=0
failed=0
while read -r suite p f k secs; do
  printf '  %-27s %5s passed %5s failed %5s skipped %6s\n' "$suite" "$p" "$f" "${k:-0}" "${secs:+${secs} s}"
  passed=$((passed + p))
  failed=$((failed + f))
done <"$results/counts"
[ -s "$results/notes" ] && sed 's/^/  /' "$results/notes"
echo "  wall time $((SECONDS - run_started)) s (suites run side by side: their times overlap)"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
