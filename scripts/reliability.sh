#!/usr/bin/env bash
# The reliability suites (fault, hostile input, tenancy) on a fresh throwaway cluster, with their
# counts printed at the end. They also run as part of scripts/test.sh with the default sizes.
#
#   bash scripts/reliability.sh           default sizes (about a minute on 2 cores)
#   bash scripts/reliability.sh --long    larger runs: 5,000 restarted-load requests, 500 mutations per
#                                         endpoint, 3,000 events x 3 endpoints through 8 dispatcher kills,
#                                         1,000 WhatsApp messages through killed applies
# Sizes can also be set one by one: FAULT_REQUESTS, FAULT_CONCURRENCY, HOSTILE_SEED, HOSTILE_COUNT,
# DISPATCH_EVENTS, DISPATCH_KILLS, PROBE_EVENTS, PROBE_ROUNDS, FAULT_WHATSAPP_MESSAGES.
# See docs/development.md#reliability-suites
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ "${1:-}" = "--long" ]; then
  export FAULT_REQUESTS=${FAULT_REQUESTS:-5000} HOSTILE_COUNT=${HOSTILE_COUNT:-500}
  export DISPATCH_EVENTS=${DISPATCH_EVENTS:-3000} DISPATCH_KILLS=${DISPATCH_KILLS:-8}
  export PROBE_EVENTS=${PROBE_EVENTS:-120} PROBE_ROUNDS=${PROBE_ROUNDS:-8}
  export FAULT_WHATSAPP_MESSAGES=${FAULT_WHATSAPP_MESSAGES:-1000}
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
bash scripts/test.sh --no-static tests/reliability/ supabase/tests/03_tenancy_matrix.test.sql 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
echo
echo "== reliability counts"
grep -E '^(fault-[a-z-]+( api)?|hostile|tenancy-http[a-z -]*): [{0-9H]' "$out" | grep -v ' done after ' || true
exit "$rc"
