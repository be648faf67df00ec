#!/usr/bin/env bash
# A copy of the system's PostgreSQL in a folder of its own, with extensions built from their sources into
# it, for the benchmarks and checks that need extensions Debian does not package (pg_net, supabase_vault):
# the system's installation, and so every test run, stays as it was. Prints the copy's bin directory, for
# BENCH_PG_BINDIR (scripts/bench/hosted_dispatch.sh).
#
#   bash scripts/bench/stage_postgres.sh /tmp/pgstage ~/src/pg_net ~/src/vault
#
# Each source folder is an extension built with PGXS (`make`, `make install` with the copy's pg_config);
# libcurl's and libsodium's headers come from Debian (libcurl4-openssl-dev, libsodium-dev). The copy keeps
# Debian's layout under DEST (usr/lib/postgresql/N, usr/share/postgresql/N, usr/include/postgresql), so its
# binaries find their share and library folders relative to where they are.
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: stage_postgres.sh DEST [EXTENSION_SOURCE_DIR...]" >&2
  exit 2
fi
dest=$(mkdir -p "$1" && cd "$1" && pwd)
shift
major=$(pg_config --version | sed -E 's/PostgreSQL ([0-9]+).*/\1/')
if [ ! -d "$dest/usr/lib/postgresql/$major" ]; then
  mkdir -p "$dest/usr/lib/postgresql" "$dest/usr/share/postgresql" "$dest/usr/include"
  cp -a "/usr/lib/postgresql/$major" "$dest/usr/lib/postgresql/"
  cp -a "/usr/share/postgresql/$major" "$dest/usr/share/postgresql/"
  cp -a /usr/include/postgresql "$dest/usr/include/"
fi
pg_config_staged="$dest/usr/lib/postgresql/$major/bin/pg_config"
for src in "$@"; do
  echo "stage_postgres: building $(basename "$src") into $dest" >&2
  make -C "$src" -s PG_CONFIG="$pg_config_staged" >&2
  make -C "$src" -s PG_CONFIG="$pg_config_staged" install >&2
done
echo "$dest/usr/lib/postgresql/$major/bin"
