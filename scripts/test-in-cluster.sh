#!/usr/bin/env bash
# Runs inside pg_virtualenv (PGHOST/PGPORT/PGUSER/PGPASSWORD point at the throwaway cluster).
# Usage: test-in-cluster.sh RESULTS_DIR N_SQL SQL_TARGETS... DENO_TARGETS...
# See docs/development.md#tests
set -uo pipefail
results=$1
nsql=$2
shift 2
sql_targets=("${@:1:$nsql}")
deno_targets=("${@:$((nsql + 1))}")
record() { echo "$1 $2 $3 ${4:-0}" >>"$results/counts"; } # suite passed failed skipped
note() { echo "$1" >>"$results/notes"; }
# Deno's ignored tests: their count, and their names in the notes ("name ... ignored (0ms)").
ignored() {
  grep -E ' \.\.\. ignored' "$2" | sed -E 's/ \.\.\. ignored.*//' | while read -r name; do note "$1 ignored: $name"; done
  grep -cE ' \.\.\. ignored' "$2"
}
# Runs `deno test` on the targets and records the suite from Deno's closing line
# ("ok | 12 passed (3 steps) | 0 failed (1s)"); a non-zero exit without failures counts as one.
deno_suite() {
  local suite=$1 rc line p f
  shift
  NO_COLOR=1 deno test --allow-all --no-check=remote "$@" 2>&1 | tee "$results/$suite.out"
  rc=${PIPESTATUS[0]}
  line=$(grep -E '^(ok|FAILED) \| [0-9]+ passed' "$results/$suite.out" | tail -n 1)
  p=$(printf '%s' "$line" | sed -nE 's/.*\| ([0-9]+) passed.*/\1/p')
  f=$(printf '%s' "$line" | sed -nE 's/.*\| ([0-9]+) failed.*/\1/p')
  p=${p:-0}
  f=${f:-0}
  if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; fi
  record "$suite" "$p" "$f" "$(ignored "$suite" "$results/$suite.out")"
}
# Suites share the run's database: retire the endpoints earlier suites left enabled (as the tests' own
# retireEndpoints does, which ends their open deliveries), so a dispatcher in the next suite does not
# spend its time on their leftovers (hosted_dispatch_test counts what one run claims; the dev server the
# browser tests drive would work through them first).
retire_endpoints() {
  psql -X -q -d postgres -c "update public.webhook_endpoints set enabled = false, disabled_reason = 'test finished' where enabled" >/dev/null
}
pg_config_of_cluster() {
  local major
  major=$(psql -X -qAt -d postgres -c "select current_setting('server_version_num')::int / 10000")
  echo "/usr/lib/postgresql/$major/bin/pg_config"
}

export TEST_DATABASE_URL="postgresql://postgres:${PGPASSWORD}@127.0.0.1:${PGPORT}/postgres"
if ! bash scripts/db-bootstrap.sh "$TEST_DATABASE_URL"; then
  record bootstrap 0 1
  exit 1
fi
record bootstrap 1 0
# edge_user's password (random, set by the migrations) becomes the cluster's: PgBouncer's user list
# (scripts/pooler.sh) and the tests that open a user pool with a bare URL (postgres.js then sends
# PGPASSWORD) need to know it. Set the way an operator changes it, so the functions read the same one.
psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "select private.set_edge_user_login('$PGPASSWORD')" >/dev/null

# The API role as hosted Supabase has it: `authenticator` logs in and becomes anon, authenticated or
# service_role, with pg-safeupdate loaded. pg-safeupdate is not a Debian package: our own stand-in
# (scripts/require-where, same rule, same message) is built here and preloaded for that role only.
guard_build="$results/require-where"
rm -rf "$guard_build" && cp -r scripts/require-where "$guard_build"
if make -s -C "$guard_build" PG_CONFIG="$(pg_config_of_cluster)" with_llvm=no >"$results/require-where.log" 2>&1; then
  chmod -R a+rX "$results"
  export TEST_API_PASSWORD="api-$PGPORT-$$"
  psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "alter role authenticator login password '$TEST_API_PASSWORD'" \
    -c "alter role authenticator set session_preload_libraries = '$guard_build/require_where.so'" >/dev/null &&
    export TEST_API_DATABASE_URL="postgresql://authenticator:${TEST_API_PASSWORD}@127.0.0.1:${PGPORT}/postgres"
else
  echo "test: could not build scripts/require-where (the API-role guard):" >&2
  cat "$results/require-where.log" >&2
fi

if [ ${#sql_targets[@]} -gt 0 ] && ls "${sql_targets[@]}" >/dev/null 2>&1; then
  echo "== pgTAP"
  # The files in name order, always with the shared fixtures first and their removal last, whichever
  # files were chosen.
  fixtures=supabase/tests/00000_fixtures.test.sql
  drop=supabase/tests/zzzzz_fixtures_drop.test.sql
  mapfile -t sql_files < <(find "${sql_targets[@]}" -name '*.sql' | grep -vxF -e "$fixtures" -e "$drop" | LC_ALL=C sort -u)
  PGOPTIONS='-c search_path=public,extensions' pg_prove --verbose -d postgres "$fixtures" "${sql_files[@]}" "$drop" \
    >"$results/pgtap.out" 2>&1
  prove_rc=$?
  grep -E '^(not ok|#.*[Ff]ail|.*\.\. ?(ok|Failed|Dubious))|^Result' "$results/pgtap.out" || true
  # Per file: passed, failed (a `not ok`, or a planned test that never ran: prove's "Failed N/M"), and
  # skipped (`ok N # skip`, counted apart from the passes). The tenancy matrix is one check of many
  # probes: reported as one line with its probe and table counts.
  awk -v results="$results" '
    / \.\.+ ?$/ || /\.sql \.\./ { file = $1 }
    /^[ \t]*ok [0-9]+.*# [Ss][Kk][Ii][Pp]/ { skip[file]++; next }
    /^[ \t]*ok [0-9]/ { ok[file]++ }
    /^[ \t]*not ok [0-9]/ { bad[file]++ }
    /^Failed [0-9]+\/[0-9]+ subtests/ { split($2, a, "/"); missing[file] = a[1] }
    /^# tenancy matrix: / { sub(/^# /, ""); matrix = $0 }
    END {
      for (f in ok) files[f]; for (f in bad) files[f]; for (f in skip) files[f]; for (f in missing) files[f]
      for (f in files) {
        failed = (missing[f] > bad[f]) ? missing[f] : bad[f]
        if (f ~ /03_tenancy_matrix/) { mp += 0; mf += failed; mprobes += ok[f] + failed; continue }
        p += ok[f]; fl += failed; k += skip[f]
        if (skip[f]) printf "pgTAP skipped %d in %s\n", skip[f], f >> (results "/notes")
      }
      if (mprobes) {
        printf "tenancy-matrix %d %d 0\n", (mf ? 0 : 1), (mf ? 1 : 0) >> (results "/counts")
        printf "%s (%d checks), %d failed\n", matrix, mprobes, mf >> (results "/notes")
      }
      printf "pgtap %d %d %d\n", p, fl, k >> (results "/counts")
    }' "$results/pgtap.out"
  # A file that dies before its plan completes without prove saying how many it missed is one failure.
  if [ "$prove_rc" != 0 ] && ! grep -qE '^\s*not ok [0-9]|^Failed [0-9]+/' "$results/pgtap.out"; then
    record pgtap-run 0 1
    note "pgTAP: pg_prove exited $prove_rc"
    sed -n '1,60p' "$results/pgtap.out"
  fi
fi

# PgBouncer in transaction mode in front of this cluster (Debian's pgbouncer; Supabase's pooler plays
# this part for Edge Functions): tests/pooler_test.ts uses it, and the pooler suite below runs the
# configuration API, receiver and dispatcher tests through it.
if command -v pgbouncer >/dev/null || [ -x /usr/sbin/pgbouncer ]; then
  export PATH="$PATH:/usr/sbin"
  chmod a+x "$results"
  if pooler_port=$(bash scripts/pooler.sh "$results/pooler"); then
    export TEST_POOLER_URL="postgresql://postgres:${PGPASSWORD}@127.0.0.1:${pooler_port}/postgres"
    # (also when this runner is killed: pgbouncer runs as a daemon and would outlive the cluster)
    trap 'kill "$(cat "$results/pooler/pgbouncer.pid" 2>/dev/null)" 2>/dev/null' EXIT
    trap 'exit 143' TERM INT
  else
    echo "test: could not start PgBouncer" >&2
  fi
fi

if [ ${#deno_targets[@]} -gt 0 ]; then
  echo "== deno test"
  deno_suite deno-test "${deno_targets[@]}"
fi

if [ "${POOLER_SUITE:-0}" = 1 ]; then
  echo "== through PgBouncer (transaction mode, prepared statements off)"
  if [ -n "${TEST_POOLER_URL:-}" ]; then
    retire_endpoints
    TEST_DATABASE_URL="$TEST_POOLER_URL?prepare=false" deno_suite pooler \
      tests/hosted_dispatch_test.ts tests/invitations_api_test.ts tests/outbound_delivery_test.ts \
      tests/payments_webhook_test.ts tests/webhooks_api_test.ts tests/webhooks_api_keys_test.ts \
      tests/platform_api_test.ts tests/platform_suspension_test.ts
  else
    record pooler 0 1
    note "pooler: PgBouncer did not start (see above)"
  fi
fi

# The settings UI in a real browser (web/tests/, Chromium through playwright-core) against the real dev
# stack on this cluster. Screenshots go to web/tests/artifacts/ (git-ignored).
if [ -n "${BROWSER_TARGETS:-}" ]; then
  echo "== browser tests (settings UI, Chromium)"
  retire_endpoints
  # shellcheck disable=SC2086
  deno_suite browser $BROWSER_TARGETS
fi

# The runner got to its end: scripts/test.sh treats any other exit as a runner that died.
exit 0
