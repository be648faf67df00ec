#!/usr/bin/env bash
# The whole suite's wall time (`npm test`, i.e. scripts/test.sh), before and after, side by side: two
# throwaway clones of this repository (BASE, default main, and HEAD), each with its npm packages
# installed first (not timed), then `npm test` in each in turn, BENCH_REPEATS times (default 1),
# alternating which goes first. Prints each run's wall time, final line, and the machine's load before and
# after; then the medians and their ratio. Both trees' final lines are printed so a run that dropped or
# added a check shows. Takes 10-30 minutes.
#   bash scripts/bench/test_suite.sh [BASE_REF]
#   BENCH_REPEATS=3 bash scripts/bench/test_suite.sh main
# See docs/benchmarks/history.md#the-test-suites-wall-time
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
base=${1:-main}
repeats=${BENCH_REPEATS:-1}
work=$(mktemp -d /tmp/bench-test-suite.XXXXXX)
# The clones go at the end; each run's whole output stays, for a failure to be read afterwards.
logs=$(mktemp -d /tmp/bench-test-suite-logs.XXXXXX)
trap 'cp "$work"/*.log "$work/times.tsv" "$logs/" 2>/dev/null; rm -rf "$work"; echo "logs: $logs"' EXIT

for side in base head; do
  ref=$base
  [ "$side" = head ] && ref=$(git -C "$root" rev-parse HEAD)
  git clone -q --no-hardlinks "$root" "$work/$side"
  git -C "$work/$side" checkout -q "$ref" || {
    echo "bench: no such ref: $ref" >&2
    exit 1
  }
  echo "$side: $(git -C "$work/$side" log --oneline -1)"
  (cd "$work/$side" && npm ci --no-audit --no-fund --loglevel=error >/dev/null &&
    npm ci --prefix web --no-audit --no-fund --loglevel=error >/dev/null) || {
    echo "bench: npm ci failed in $side" >&2
    exit 1
  }
done

load() { cut -d ' ' -f 1-3 /proc/loadavg; }
for i in $(seq 1 "$repeats"); do
  order="base head"
  [ $((i % 2)) = 0 ] && order="head base"
  for side in $order; do
    before=$(load)
    started=$(date +%s.%N)
    (cd "$work/$side" && npm test >"$work/$side-$i.log" 2>&1)
    rc=$?
    seconds=$(echo "$(date +%s.%N) - $started" | bc)
    printf '%s\t%d\t%.0f\t%s\t%s -> %s\n' "$side" "$i" "$seconds" "$(tail -n 1 "$work/$side-$i.log")" "$before" "$(load)" |
      tee -a "$work/times.tsv"
    [ "$rc" = 0 ] || sed -n '/^== summary/,$p' "$work/$side-$i.log"
  done
done
echo
echo "side  median wall time (s)"
for side in base head; do
  printf '%s  %s\n' "$side" "$(awk -F '\t' -v s="$side" '$1 == s { print $3 }' "$work/times.tsv" | sort -n |
    awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')"
done | tee "$work/medians"
awk '{ m[$1] = $2 } END { if (m["base"] > 0) printf "head/base: %.2f\n", m["head"] / m["base"] }' "$work/medians"
echo
echo "head's summary (last run):"
sed -n '/^== summary/,$p' "$work/head-$repeats.log"
