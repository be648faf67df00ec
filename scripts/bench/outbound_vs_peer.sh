#!/usr/bin/env bash
# Outbound webhook dispatch against a graphile-worker peer, same work side by side, then the
# claim and record statement timings (outbound_claim.sh). Each run gets its own throwaway cluster from
# scripts/bench/run.sh (fsync and synchronous_commit off, as the test run). The peer's dependencies live
# only in scripts/bench/peer (its own package.json and lockfile), installed here, never by the project.
#   bash scripts/bench/outbound_vs_peer.sh                 # 3 runs each, alternating, then the claim table
#   BENCH_REPEATS=5 BENCH_SKIP_CLAIM=1 bash scripts/bench/outbound_vs_peer.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
bash scripts/ensure-deps.sh
export PATH="$root/node_modules/.bin:$PATH"
if ! command -v node >/dev/null || [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 20 ]; then
  echo "outbound_vs_peer: the graphile-worker peer needs Node 20 or later on PATH" >&2
  exit 1
fi
peer=scripts/bench/peer
if [ ! -d "$peer/node_modules/graphile-worker" ] || [ "$peer/package-lock.json" -nt "$peer/node_modules/.package-lock.json" ]; then
  npm ci --prefix "$peer" --no-audit --no-fund --loglevel=error >/dev/null
fi
echo "uptime: $(uptime)"
deno run -A scripts/bench/outbound_vs_peer.ts
if [ "${BENCH_SKIP_CLAIM:-}" != 1 ]; then
  echo
  bash scripts/bench/outbound_claim.sh
fi
