#!/usr/bin/env bash
# One pass of the pgTAP suite with pg_prove against the database libpq's environment names (PGHOST,
# PGPORT, PGUSER...), recorded in RESULTS_DIR as suite SUITE (see scripts/test.sh for the format).
# Usage: test-pgtap.sh RESULTS_DIR SUITE SQL_TARGETS...
# Used by scripts/test-in-cluster.sh (the fresh database) and scripts/test-hosted-pgtap.sh (the
# hosted-like one, twice). See docs/testing.md#lanes
set -uo pipefail
results=$1
suite=$2
shift 2
record() { echo "$1 $2 $3 ${4:-0} ${5:-}" >>"$results/counts"; } # suite passed failed skipped seconds
note() { echo "$1" >>"$results/notes"; }
started=$SECONDS
out="$results/$suite.out"

# The files in name order, always with the shared fixtures first and their removal last, whichever files
# were chosen.
fixtures=supabase/tests/00000_fixtures.test.sql
drop=supabase/tests/zzzzz_fixtures_drop.test.sql
mapfile -t sql_files < <(find "$@" -name '*.sql' | grep -vxF -e "$fixtures" -e "$drop" | LC_ALL=C sort -u)
PGOPTIONS='-c search_path=public,extensions' pg_prove --verbose -d postgres "$fixtures" "${sql_files[@]}" "$drop" \
  >"$out" 2>&1
prove_rc=$?
grep -E '^(not ok|#.*[Ff]ail|.*\.\. ?(ok|Failed|Dubious))|^Result' "$out" | sed "s/^/[$suite] /" || true
# Per file: passed, failed (a `not ok`, or a planned test that never ran: prove's "Failed N/M"), and
# skipped (`ok N # skip`, counted apart from the passes). The tenancy matrix is one check of many probes:
# reported as one line with its probe and table counts.
matrix_suite=tenancy-matrix${suite#pgtap}
seconds=$((SECONDS - started))
awk -v results="$results" -v suite="$suite" -v matrix_suite="$matrix_suite" -v seconds="$seconds" '
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
      if (skip[f]) printf "%s skipped %d in %s\n", suite, skip[f], f >> (results "/notes")
    }
    if (mprobes) {
      printf "%s %d %d 0\n", matrix_suite, (mf ? 0 : 1), (mf ? 1 : 0) >> (results "/counts")
      prefix = (matrix_suite == "tenancy-matrix") ? "" : matrix_suite ": "
      printf "%s%s (%d checks), %d failed\n", prefix, matrix, mprobes, mf >> (results "/notes")
    }
    printf "%s %d %d %d %d\n", suite, p, fl, k, seconds >> (results "/counts")
  }' "$out"
# A file that dies before its plan completes without prove saying how many it missed is one failure.
if [ "$prove_rc" != 0 ] && ! grep -qE '^\s*not ok [0-9]|^Failed [0-9]+/' "$out"; then
  record "$suite-run" 0 1
  note "$suite: pg_prove exited $prove_rc"
  sed -n '1,60p' "$out"
fi
exit 0
