#!/usr/bin/env bash
# Runs inside pg_virtualenv (PGHOST/PGPORT/PGUSER/PGPASSWORD point at the throwaway cluster).
# Usage: test-in-cluster.sh RESULTS_DIR N_SQL SQL_TARGETS... DENO_TARGETS...
#
# The run's lanes, side by side (a test run mostly waits: on servers starting, timers, the database):
#   - the hosted-like pgTAP lane (scripts/test-hosted-pgtap.sh), in a cluster of its own;
#   - this cluster: bootstrap, the pgTAP suite, then worker 1 of the queue of test files;
#   - workers 2..TEST_WORKERS (default 4) of that queue, each in a cluster of its own prepared as this
#     one (bootstrap, edge_user's login, the API role's guard, PgBouncer).
# The queue holds one job per test file: the Deno tests (suite deno-test), the configuration API,
# receiver and dispatcher tests again through PgBouncer (pooler), the browser tests (browser); longest
# first by the last run's times (node_modules/.cache/test-durations.tsv, else the committed
# scripts/test-durations.tsv; a file never timed goes first), so a new test file joins without anyone
# listing it. A worker runs `deno test` on one file at a time,
# after retiring the endpoints earlier files left enabled (tests/helpers retireEndpoints does the same:
# it ends their open deliveries, so a dispatcher in the next file, or the dev server the browser tests
# drive, does not spend its time on them). Each suite is then one row of the summary, with the time
# from its first file's start to its last file's end.
# See docs/testing.md#lanes
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

record() { echo "$1 $2 $3 ${4:-0} ${5:-}" >>"$results/counts"; } # suite passed failed skipped seconds
note() { echo "$1" >>"$results/notes"; }
# The variables pg_virtualenv sets for this cluster, and ours derived from them: a worker's cluster
# must not inherit them.
cluster_env=(PGHOST PGPORT PGUSER PGPASSWORD PGDATABASE PGVERSION PG_CONFIG PG_CLUSTER_CONF_ROOT PGSYSCONFDIR
  TEST_DATABASE_URL TEST_API_DATABASE_URL TEST_API_PASSWORD TEST_POOLER_URL)

retire_endpoints() {
  psql -X -q -d postgres -c "update public.webhook_endpoints set enabled = false, disabled_reason = 'test finished' where enabled" >/dev/null
}
pg_config_of_cluster() {
  local major
  major=$(psql -X -qAt -d postgres -c "select current_setting('server_version_num')::int / 10000")
  echo "/usr/lib/postgresql/$major/bin/pg_config"
}

# This lane's cluster made ready for the tests: migrations, edge_user's login, the API role with its
# guard, PgBouncer in front. $1 names the lane (its PgBouncer's folder). Fails when the bootstrap does.
prepare_cluster() {
  local lane=$1 pooler_port
  export TEST_DATABASE_URL="postgresql://postgres:${PGPASSWORD}@127.0.0.1:${PGPORT}/postgres"
  bash scripts/db-bootstrap.sh "$TEST_DATABASE_URL" || return 1
  # edge_user's password (random, set by the migrations) becomes the cluster's: PgBouncer's user list
  # (scripts/pooler.sh) and the tests that open a user pool with a bare URL (postgres.js then sends
  # PGPASSWORD) need to know it. Set the way an operator changes it, so the functions read the same one.
  psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "select private.set_edge_user_login('$PGPASSWORD')" >/dev/null
  # The API role as hosted Supabase has it: `authenticator` logs in and becomes anon, authenticated or
  # service_role, with pg-safeupdate loaded (our stand-in, scripts/require-where, built once a run).
  if [ -e "$results/require-where/require_where.so" ]; then
    export TEST_API_PASSWORD="api-$PGPORT-$$"
    psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "alter role authenticator login password '$TEST_API_PASSWORD'" \
      -c "alter role authenticator set session_preload_libraries = '$results/require-where/require_where.so'" >/dev/null &&
      export TEST_API_DATABASE_URL="postgresql://authenticator:${TEST_API_PASSWORD}@127.0.0.1:${PGPORT}/postgres"
  fi
  # PgBouncer in transaction mode in front of this cluster (Debian's pgbouncer; Supabase's pooler plays
  # this part for Edge Functions): tests/pooler_test.ts uses it, and the pooler suite's jobs run through it.
  if command -v pgbouncer >/dev/null || [ -x /usr/sbin/pgbouncer ]; then
    export PATH="$PATH:/usr/sbin"
    if pooler_port=$(bash scripts/pooler.sh "$results/pooler-$lane"); then
      export TEST_POOLER_URL="postgresql://postgres:${PGPASSWORD}@127.0.0.1:${pooler_port}/postgres"
    else
      echo "test: could not start PgBouncer (lane $lane)" >&2
    fi
  fi
  return 0
}
stop_pooler() {
  kill "$(cat "$results/pooler-$1/pgbouncer.pid" 2>/dev/null)" 2>/dev/null
}

# The lane's one Chromium, for its browser files (launchBrowser in web/tests/helpers/browser.ts connects
# to TEST_BROWSER_WS): started at the lane's first browser job, again if it died, stopped when the lane
# ends. A Chromium per file cost ~3 s of CPU each, on cores the lanes share. If it cannot start, each
# file launches its own as when run alone.
browser_pid=
ensure_browser() {
  local lane=$1 log="$results/browser-$1.log" i
  [ -n "$browser_pid" ] && kill -0 "$browser_pid" 2>/dev/null && return 0
  unset TEST_BROWSER_WS
  # --config: web/package.json would otherwise decide how a script under web/ resolves its imports.
  deno run --allow-all --no-check --config deno.json web/tests/helpers/browser.ts >"$log" 2>&1 &
  browser_pid=$!
  for i in $(seq 1 120); do
    TEST_BROWSER_WS=$(sed -n 's/^browser server //p' "$log")
    if [ -n "$TEST_BROWSER_WS" ]; then
      export TEST_BROWSER_WS
      return 0
    fi
    kill -0 "$browser_pid" 2>/dev/null || break
    sleep 0.5
  done
  echo "test: lane $lane's shared Chromium did not start (its browser files launch their own):" >&2
  cat "$log" >&2
  stop_browser
}
stop_browser() {
  [ -n "$browser_pid" ] && kill -TERM "$browser_pid" 2>/dev/null && wait "$browser_pid" 2>/dev/null
  browser_pid=
  unset TEST_BROWSER_WS
}

# The next job of the queue ("suite file"), taken under a lock; nothing when it is empty.
next_job() {
  local job
  exec 8>>"$results/queue.lock"
  flock 8
  job=$(head -n 1 "$results/queue")
  [ -n "$job" ] && sed -i 1d "$results/queue"
  flock -u 8
  printf '%s' "$job"
}

# One job: `deno test` on one file, as its suite runs it; its result appended to jobs.tsv
# ("suite passed failed ignored start end file"), its output printed whole when it ends.
run_job() {
  local lane=$1 suite=$2 file=$3 out rc line p f k start end
  out="$results/jobs/$(printf '%s' "$suite-$file" | tr '/' '_').out"
  start=$(date +%s)
  retire_endpoints
  local check=(--no-check=remote)
  # The static step type-checks every test (deno check ... tests web/tests): not again per file.
  [ "${TEST_TYPECHECKED:-0}" = 1 ] && check=(--no-check)
  [ "$suite" = browser ] && ensure_browser "$lane"
  if [ "$suite" = pooler ]; then
    if [ -z "${TEST_POOLER_URL:-}" ]; then
      echo "pooler: PgBouncer did not start (lane $lane)" >"$out"
      rc=1
    else
      TEST_DATABASE_URL="$TEST_POOLER_URL?prepare=false" NO_COLOR=1 \
        deno test --allow-all "${check[@]}" "${deno_flags[@]}" "$file" >"$out" 2>&1
      rc=$?
    fi
  else
    NO_COLOR=1 deno test --allow-all "${check[@]}" "${deno_flags[@]}" "$file" >"$out" 2>&1
    rc=$?
  fi
  end=$(date +%s)
  # Deno's closing line: "ok | 12 passed (3 steps) | 0 failed (1s)"; a non-zero exit without failures
  # counts as one.
  line=$(grep -E '^(ok|FAILED) \| [0-9]+ passed' "$out" | tail -n 1)
  p=$(printf '%s' "$line" | sed -nE 's/.*\| ([0-9]+) passed.*/\1/p')
  f=$(printf '%s' "$line" | sed -nE 's/.*\| ([0-9]+) failed.*/\1/p')
  p=${p:-0}
  f=${f:-0}
  if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; fi
  # Deno's ignored tests: their count, and their names in the notes ("name ... ignored (0ms)").
  k=$(grep -cE ' \.\.\. ignored' "$out")
  grep -E ' \.\.\. ignored' "$out" | sed -E 's/ \.\.\. ignored.*//' | while read -r name; do note "$suite ignored: $name"; done
  echo "$suite $p $f $k $start $end $file" >>"$results/jobs.tsv"
  {
    echo "== [$suite, lane $lane, $((end - start)) s] $file"
    cat "$out"
  } | flock "$results/print.lock" cat
}

run_worker() {
  local lane=$1 job
  while job=$(next_job) && [ -n "$job" ]; do
    run_job "$lane" "${job%% *}" "${job#* }"
  done
}

# A worker in a cluster of its own (started by the main lane below through pg_virtualenv).
if [ "${1:-}" = --worker ]; then
  results=$2
  lane=$3
  touch "$results/lane-$lane.started"
  read -r -a deno_flags <<<"${TEST_DENO_FLAGS:-}"
  if ! prepare_cluster "$lane" >"$results/lane-$lane.log" 2>&1; then
    cat "$results/lane-$lane.log"
    record "lane-$lane-bootstrap" 0 1
    note "lane $lane: its cluster did not bootstrap (its jobs went to the other lanes)"
    exit 0
  fi
  trap 'stop_pooler "$lane"; stop_browser' EXIT
  run_worker "$lane"
  exit 0
fi

# The test files under a folder, as `deno test FOLDER` finds them ({*_,*.,}test.{ts,tsx,mts,js,mjs,jsx}).
test_files_in() {
  find "$1" -regextype posix-extended -regex '.*/([^/]*[_.])?test\.(ts|tsx|mts|js|mjs|jsx)' -not -path '*/node_modules/*'
}

results=$1
nsql=$2
shift 2
sql_targets=("${@:1:$nsql}")
targets=("${@:$((nsql + 1))}")
deno_files=()
deno_flags=()
for t in ${targets[@]+"${targets[@]}"}; do
  case "$t" in
    -*) deno_flags+=("$t") ;; # e.g. --filter=...: for every Deno job
    *) [ -d "$t" ] && mapfile -t -O "${#deno_files[@]}" deno_files < <(test_files_in "$t") ||
      deno_files+=("$t") ;;
  esac
done
browser_files=()
for t in ${BROWSER_TARGETS:-}; do
  [ -d "$t" ] && mapfile -t -O "${#browser_files[@]}" browser_files < <(test_files_in "$t") || browser_files+=("$t")
done
# The configuration API, receiver and dispatcher tests again through PgBouncer (POOLER_SUITE=1: set by
# scripts/test.sh for full runs).
pooler_files=()
[ "${POOLER_SUITE:-0}" = 1 ] && pooler_files=(tests/hosted_dispatch_test.ts tests/invitations_api_test.ts
  tests/outbound_delivery_test.ts tests/payments_webhook_test.ts tests/webhooks_api_test.ts
  tests/webhooks_api_keys_test.ts tests/platform_api_test.ts tests/platform_suspension_test.ts)
mkdir -p "$results/jobs"
: >"$results/jobs.tsv"
chmod a+x "$results"

# The hosted-like pgTAP lane needs nothing of this cluster: it starts first and runs beside everything.
if [ ${#sql_targets[@]} -gt 0 ] && [ "${HOSTED_PGTAP:-1}" = 1 ] && ls "${sql_targets[@]}" >/dev/null 2>&1; then
  bash scripts/test-hosted-pgtap.sh "$results" "${sql_targets[@]}" &
  hosted_pid=$!
fi

# The API role's guard: pg-safeupdate is not a Debian package; our stand-in (scripts/require-where, same
# rule, same message) is built once here with PGXS and preloaded for that role in every lane's cluster.
rm -rf "$results/require-where" && cp -r scripts/require-where "$results/require-where"
if make -s -C "$results/require-where" PG_CONFIG="$(pg_config_of_cluster)" with_llvm=no >"$results/require-where.log" 2>&1; then
  chmod -R a+rX "$results/require-where"
else
  echo "test: could not build scripts/require-where (the API-role guard):" >&2
  cat "$results/require-where.log" >&2
fi

# The queue, longest first: by this machine's last run (the cache), else by the times committed in
# scripts/test-durations.tsv (a fresh clone's), else first.
durations="$root/node_modules/.cache/test-durations.tsv"
{
  for f in ${deno_files[@]+"${deno_files[@]}"}; do echo "deno-test $f"; done
  for f in ${pooler_files[@]+"${pooler_files[@]}"}; do echo "pooler $f"; done
  for f in ${browser_files[@]+"${browser_files[@]}"}; do echo "browser $f"; done
} | LC_ALL=C sort -u | awk -v seed=scripts/test-durations.tsv -v cache="$durations" '
  BEGIN {
    while ((getline line < seed) > 0) { split(line, a, "\t"); t[a[1] " " a[2]] = a[3] }
    while ((getline line < cache) > 0) { split(line, a, "\t"); t[a[1] " " a[2]] = a[3] }
  }
  { print ((($0 in t) ? t[$0] : 100000)) "\t" $0 }' | sort -t "$(printf '\t')" -k1,1nr | cut -f2- >"$results/queue"
jobs_total=$(wc -l <"$results/queue")

# Workers 2..N start on their own clusters now: their bootstrap runs beside this lane's.
workers=${TEST_WORKERS:-4}
[ "$jobs_total" -lt "$workers" ] && workers=$((jobs_total > 0 ? jobs_total : 1))
worker_pids=()
major=$(psql -X -qAt -d postgres -c "select current_setting('server_version_num')::int / 10000")
# Each lane's cluster on a port the system just gave out (pg_virtualenv would take the first port no
# cluster uses, the same one for lanes starting together); if it is taken meanwhile, another, up to three
# times.
start_worker() {
  local lane=$1 attempt
  for attempt in 1 2 3; do
    # shellcheck disable=SC2046
    env $(printf -- '-u %s ' "${cluster_env[@]}") TEST_DENO_FLAGS="${deno_flags[*]}" PGPORT="$(bash scripts/free-port.sh)" \
      pg_virtualenv -t -v "$major" \
      -o shared_preload_libraries=pg_cron -o cron.database_name=postgres \
      -o max_connections=300 -o fsync=off -o synchronous_commit=off \
      bash "$0" --worker "$results" "$lane"
    [ -e "$results/lane-$lane.started" ] && return
    sleep $((attempt * 2))
  done
  note "lane $lane: could not start a throwaway PostgreSQL cluster (its jobs went to the other lanes)"
}
for lane in $(seq 2 "$workers"); do
  start_worker "$lane" &
  worker_pids+=($!)
done

started=$(date +%s)
if ! prepare_cluster 1; then
  record bootstrap 0 1
  # The other lanes still drain the queue: their results are not lost with this one.
else
  record bootstrap 1 0 0 $(($(date +%s) - started))
  trap 'stop_pooler 1; stop_browser' EXIT
  trap 'exit 143' TERM INT
  if [ ${#sql_targets[@]} -gt 0 ] && ls "${sql_targets[@]}" >/dev/null 2>&1; then
    echo "== pgTAP"
    bash scripts/test-pgtap.sh "$results" pgtap "${sql_targets[@]}"
  fi
  run_worker 1
fi
for pid in ${worker_pids[@]+"${worker_pids[@]}"}; do wait "$pid"; done
[ -n "${hosted_pid:-}" ] && wait "$hosted_pid"

# Each suite's row: its files' sums, its time from first start to last end. A file that never reported
# (a worker died with it) fails its suite.
for suite in deno-test pooler browser; do
  expected_files=$(
    case $suite in
      deno-test) printf '%s\n' ${deno_files[@]+"${deno_files[@]}"} ;;
      pooler) printf '%s\n' ${pooler_files[@]+"${pooler_files[@]}"} ;;
      browser) printf '%s\n' ${browser_files[@]+"${browser_files[@]}"} ;;
    esac | grep -c .
  )
  [ "$expected_files" = 0 ] && continue
  awk -v s="$suite" -v want="$expected_files" -v results="$results" '
    $1 == s { p += $2; f += $3; k += $4; n++
              if (!first || $5 < first) first = $5; if ($6 > last) last = $6 }
    END {
      if (n < want) { f += want - n; printf "%s: %d of its %d files never reported\n", s, want - n, want >> (results "/notes") }
      printf "%s %d %d %d %d\n", s, p, f, k, (n ? last - first : 0) >> (results "/counts")
    }' "$results/jobs.tsv"
done
# This run's times, for the next run's order.
mkdir -p "$(dirname "$durations")" && touch "$durations"
awk -v OFS='\t' 'FNR == NR { t[$1 " " $7] = $6 - $5; next }
  { split($0, a, "\t"); k = a[1] " " a[2]; if (!(k in t)) print }
  END { for (k in t) { split(k, a, " "); print a[1], a[2], t[k] } }' \
  "$results/jobs.tsv" "$durations" 2>/dev/null >"$durations.new" || true
[ -s "$durations.new" ] && mv "$durations.new" "$durations"
rm -f "$durations.new"

# The runner got to its end: scripts/test.sh treats any other exit as a runner that died.
exit 0
