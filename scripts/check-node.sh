#!/usr/bin/env bash
# Stops `npm run dev` and `npm test` on a Node.js older than package.json's engines (^20.19.0 ||
# >=22.12.0, what Vite 8 and @redocly/cli 2 need), with one sentence, before anything is installed: on an
# older Node they would fail later, deep in a build, with an error that names neither.
#   bash scripts/check-node.sh "npm run dev"
set -uo pipefail
what=${1:-this command}
need="Node.js ^20.19.0 or >= 22.12.0"
if ! version=$(node --version 2>/dev/null); then
  echo "$what needs $need, and there is no node on PATH: install Node.js 22 LTS and run it again." >&2
  exit 1
fi
IFS=. read -r major minor _ <<<"${version#v}"
major=${major//[!0-9]/}
minor=${minor//[!0-9]/}
major=${major:-0}
minor=${minor:-0}
if [ "$major" -gt 22 ] || { [ "$major" = 22 ] && [ "$minor" -ge 12 ]; } || { [ "$major" = 20 ] && [ "$minor" -ge 19 ]; }; then
  exit 0
fi
echo "$what needs $need, but the node on PATH is $version: install Node.js 22 LTS (or 20.19+) and run it again." >&2
exit 1
