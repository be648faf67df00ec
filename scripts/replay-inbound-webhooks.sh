#!/usr/bin/env bash
# Replays logged inbound webhooks (see scripts/replay-inbound-webhooks.ts):
#   bash scripts/replay-inbound-webhooks.sh --log-id <uuid> | --organization <uuid> [--stale-after <s>]
# See docs/inbound-webhooks.md#replay
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$root/node_modules/.bin:$PATH"
exec deno run --allow-net --allow-env --allow-read "$root/scripts/replay-inbound-webhooks.ts" "$@"
