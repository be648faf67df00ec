#!/usr/bin/env bash
# Replays logged payment webhooks (see scripts/replay-payment-webhooks.ts):
#   bash scripts/replay-payment-webhooks.sh --log-id <uuid> | --organization <uuid>
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$root/node_modules/.bin:$PATH"
exec deno run --allow-net --allow-env --allow-read "$root/scripts/replay-payment-webhooks.ts" "$@"
