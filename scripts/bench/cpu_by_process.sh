#!/usr/bin/env bash
# Where a command's CPU goes, by kind of process: runs COMMAND in a cgroup of its own (cgroup v1
# cpuacct, so the PostgreSQL clusters pg_virtualenv starts, which leave the process tree, are counted
# too) and reads every process of the cgroup twice a second. At the end: the cgroup's whole CPU time,
# and each kind's (the deno test or script it runs, node's script, chromium, postgres...), largest first.
# A process that lives less than half a second is missed by the samples: the "not seen" line is that
# difference. Needs root. Used to find what `npm test` spends its CPU on (docs/benchmarks/history.md#the-test-suites-wall-time):
#   bash scripts/bench/cpu_by_process.sh npm test
#   bash scripts/bench/cpu_by_process.sh bash scripts/test.sh --no-static web/tests/journey_browser_test.ts
set -uo pipefail
cg=/sys/fs/cgroup/cpuacct/cpu-by-process-$$
mkdir "$cg" || {
  echo "cpu_by_process: cannot make a cgroup at $cg (root and cgroup v1 cpuacct needed)" >&2
  exit 1
}
samples=$(mktemp)
hz=$(getconf CLK_TCK)
# The command in the cgroup (its first process joins before exec, so every child is in it).
bash -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' _ "$cg" "$@" &
cmd=$!
# One line per process seen: pid, label, CPU ticks so far; the last line of each pid wins.
label_of() {
  { tr '\0' ' ' <"/proc/$1/cmdline"; } 2>/dev/null | awk '
    { exe = $1; sub(".*/", "", exe)
      if (exe == "deno") { for (i = 2; i <= NF; i++) if ($i ~ /\.(ts|js|mjs)$/) { print "deno " $i; exit } print "deno " $2; exit }
      if (exe == "node") { for (i = 2; i <= NF; i++) if ($i !~ /^-/) { n = $i; sub(".*node_modules/", "", n); print "node " n; exit } }
      if (exe ~ /^postgres/ || $0 ~ /^postgres:/) { print "postgres"; exit }
      if (exe ~ /chrom/) { print "chromium"; exit }
      print exe }'
}
declare -A labels
while kill -0 "$cmd" 2>/dev/null; do
  while read -r pid; do
    [ -n "$pid" ] || continue
    [ -n "${labels[$pid]:-}" ] || labels[$pid]=$(label_of "$pid")
    [ -n "${labels[$pid]}" ] || continue
    # utime and stime: fields 14 and 15, the 12th and 13th after the ") " that ends the command name.
    # Read without a subprocess: the sampler must not cost the run much CPU itself.
    { read -r stat <"/proc/$pid/stat"; } 2>/dev/null || continue
    read -r -a fields <<<"${stat##*) }"
    printf '%s\t%s\t%s\n' "$pid" "${labels[$pid]}" $((fields[11] + fields[12])) >>"$samples"
  done <"$cg/cgroup.procs"
  sleep 0.5
done
wait "$cmd"
rc=$?
total=$(($(cat "$cg/cpuacct.usage") / 1000000))
rmdir "$cg" 2>/dev/null
echo
echo "== CPU by process kind (cgroup total $((total / 1000)) s)"
awk -F '\t' -v hz="$hz" -v total="$total" '
  { last[$1] = $3; label[$1] = $2 }
  END {
    for (p in last) { ms[label[p]] += last[p] * 1000 / hz; n[label[p]]++; seen += last[p] * 1000 / hz }
    for (l in ms) printf "%8.1f s  %4d processes  %s\n", ms[l] / 1000, n[l], l | "sort -k1,1nr"
    close("sort -k1,1nr")
    printf "%8.1f s  not seen (processes shorter than a sample)\n", (total - seen) / 1000
  }' "$samples"
rm -f "$samples"
exit "$rc"
