#!/usr/bin/env bash
# The hosted path (pg_cron -> pg_net -> webhook-dispatcher under scripts/edge-runtime.ts) against the
# local loop, side by side: scripts/bench/hosted_dispatch.ts on a throwaway cluster with pg_cron and
# pg_net preloaded, bootstrapped and migrated, removed afterwards.
#
# pg_net is not among Debian's packages: BENCH_PG_BINDIR names the bin directory of a PostgreSQL
# installation that has it (its pg_config says where the extension files are); by default the system's.
# Without pg_net the script says so and exits 2.
# Vault: where that installation has supabase_vault, the cluster runs it as a hosted project does,
# preloaded with a server key of its own (a random one, made for this run, returned by a getkey script in
# the run's directory: vault.getkey_script); without that key every secret written fails ("pgsodium_derive:
# no server secret key defined"). Without supabase_vault, hosted_dispatch.ts keeps the two secrets in a
# table with Vault's view name.
#   BENCH_PG_BINDIR=/path/to/postgresql/15/bin BENCH_REPEATS=3 bash scripts/bench/hosted_dispatch.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
bash scripts/ensure-deps.sh
export PATH="$root/node_modules/.bin:$PATH"
bindir=${BENCH_PG_BINDIR:-$(pg_config --bindir)}
share=$("$bindir/pg_config" --sharedir)
for ext in pg_net pg_cron; do
  if [ ! -e "$share/extension/$ext.control" ]; then
    echo "hosted_dispatch: $ext is not installed in $share (set BENCH_PG_BINDIR to a PostgreSQL that has it)" >&2
    exit 2
  fi
done

dir=$(mktemp -d /tmp/hosted-dispatch-XXXXXX)
chmod 755 "$dir"
as_owner=()
# initdb refuses root: the cluster belongs to postgres then.
if [ "$(id -u)" = 0 ]; then
  chown postgres "$dir"
  as_owner=(runuser -u postgres --)
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cleanup() {
  "${as_owner[@]}" "$bindir/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
"${as_owner[@]}" "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust >/dev/null
preload=pg_cron,pg_net
vault=()
if [ -e "$share/extension/supabase_vault.control" ]; then
  openssl rand -hex 32 >"$dir/vault.key"
  printf '#!/bin/sh\ncat %s/vault.key\n' "$dir" >"$dir/getkey"
  chmod 700 "$dir/getkey"
  chmod 600 "$dir/vault.key"
  [ "$(id -u)" = 0 ] && chown postgres "$dir/getkey" "$dir/vault.key"
  preload=$preload,supabase_vault
  vault=(-c "vault.getkey_script=$dir/getkey")
  echo "hosted_dispatch: supabase_vault preloaded with a key of this run's own" >&2
fi
# As the test clusters (durability off, 300 connections), plus pg_net (and Vault, above); pg_cron runs its
# jobs in background workers (no password to give its own connections).
"${as_owner[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/log" -w start -o "-p $port -k $dir \
  -c listen_addresses=127.0.0.1 -c shared_preload_libraries=$preload ${vault[*]} -c cron.database_name=postgres \
  -c cron.use_background_workers=on -c max_worker_processes=32 -c max_connections=300 -c fsync=off \
  -c synchronous_commit=off" >/dev/null
url="postgresql://postgres@127.0.0.1:$port/postgres"
bash scripts/db-bootstrap.sh "$url" >&2
BENCH_DATABASE_URL="$url" deno run -A scripts/bench/hosted_dispatch.ts "$@"
