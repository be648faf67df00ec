#!/usr/bin/env bash
# `npm run build`: the settings UI as static files in web/dist, for any static host.
# Configure it at build time:
#   VITE_SUPABASE_URL=https://<project-ref>.supabase.co VITE_SUPABASE_ANON_KEY=<anon key> npm run build
# Without them it is built for the local stack (http://127.0.0.1:54321 and the local anon key).
# web/dist/_headers carries the security headers (CSP, frame-ancestors, ...) that Netlify and Cloudflare
# Pages apply; web/security_headers.ts writes it.
# See docs/deploy-settings-ui.md
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ ! -x web/node_modules/.bin/vite ] || [ web/package-lock.json -nt web/node_modules/.package-lock.json ]; then
  npm ci --prefix web --no-audit --no-fund --loglevel=error >/dev/null
fi
if [ -z "${VITE_SUPABASE_URL:-}" ]; then
  export VITE_SUPABASE_URL="http://127.0.0.1:${PORT:-54321}"
  if [ -z "${VITE_SUPABASE_ANON_KEY:-}" ]; then
    VITE_SUPABASE_ANON_KEY=$(node_modules/.bin/deno run --allow-read --allow-write=supabase/.temp --allow-env \
      scripts/print-anon-key.ts)
    export VITE_SUPABASE_ANON_KEY
  fi
  echo "build: no VITE_SUPABASE_URL given; building for the local stack at $VITE_SUPABASE_URL" >&2
fi
if [ -z "${VITE_SUPABASE_ANON_KEY:-}" ]; then
  echo "build: VITE_SUPABASE_ANON_KEY is required with VITE_SUPABASE_URL (the project's public anon key)" >&2
  exit 1
fi
npm --prefix web run -s build -- "$@"
# Static hosts answer unknown paths with 404.html: the app itself routes /auth and /settings/...
cp web/dist/index.html web/dist/404.html
echo "build: wrote web/dist for $VITE_SUPABASE_URL"
