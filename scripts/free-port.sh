#!/usr/bin/env bash
# Prints a TCP port on 127.0.0.1 that was free a moment ago (the system's choice: from its ephemeral
# range, away from the 5432, 5433... that PostgreSQL clusters take by default). For throwaway clusters
# started side by side: left to itself, pg_virtualenv gives each the first port no cluster uses yet, the
# same one to lanes that start together, and all but one fail ("Port conflict").
set -euo pipefail
exec deno eval 'const l = Deno.listen({ hostname: "127.0.0.1", port: 0 }); console.log(l.addr.port); l.close();'
