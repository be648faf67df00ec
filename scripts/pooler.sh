#!/usr/bin/env bash
# Starts Debian's PgBouncer in transaction mode in front of the throwaway test cluster (as Supabase's
# pooler on 6543 is used by Edge Functions), on a free loopback port, in the background; prints the
# port. Run inside pg_virtualenv (PGPORT, PGPASSWORD). Usage: scripts/pooler.sh DIR  (DIR holds its
# configuration, log and pid file; `kill "$(cat DIR/pgbouncer.pid)"` stops it).
# Few server connections for many clients: consecutive transactions of one client land on different
# server connections, which is what breaks session state and prepared statements.
# See docs/operations.md#through-the-pooler
set -euo pipefail
dir=$1
mkdir -p "$dir"
port=$(deno eval 'const l = Deno.listen({ hostname: "127.0.0.1", port: 0 }); console.log(l.addr.port); l.close();')
printf '"postgres" "%s"\n"edge_user" "%s"\n' "$PGPASSWORD" "$PGPASSWORD" >"$dir/userlist.txt"
cat >"$dir/pgbouncer.ini" <<INI
[databases]
postgres = host=127.0.0.1 port=$PGPORT dbname=postgres
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = scram-sha-256
auth_file = $dir/userlist.txt
pool_mode = transaction
default_pool_size = 4
max_client_conn = 400
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
INI
# PgBouncer refuses to run as root: as root, run it as the cluster's owner.
if [ "$(id -u)" = 0 ]; then
  chown -R postgres "$dir"
  chmod -R go-rwx "$dir"
  runuser -u postgres -- pgbouncer -d "$dir/pgbouncer.ini"
else
  pgbouncer -d "$dir/pgbouncer.ini"
fi
for _ in $(seq 1 50); do
  [ -s "$dir/pgbouncer.pid" ] && psql -X -qAt "postgresql://postgres@127.0.0.1:$port/postgres" -c 'select 1' >/dev/null 2>&1 && break
  sleep 0.1
done
echo "$port"
