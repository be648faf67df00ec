#!/usr/bin/env bash
# Runs scripts/bench/outbound_pg_stages.ts through scripts/bench/run.sh (a throwaway cluster, bootstrapped
# and migrated, removed afterwards) with the test run's durability settings: fsync and synchronous_commit off.
set -euo pipefail
BENCH_PG_OPTS="-o fsync=off -o synchronous_commit=off" exec bash "$(dirname "$0")/run.sh" outbound_pg_stages "$@"
