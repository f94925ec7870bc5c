#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests: installs Debian's server when it is missing,
# starts a cluster in a temp dir listening only on a unix socket there, and prints the
# `export RAGDOWN_TEST_DATABASE_URL=...` line for the caller to eval. The cluster stops when
# the caller's shell runs `pg_ctl stop` (scripts/test.sh does it on exit).
#
#   eval "$(scripts/test-postgres.sh)"
set -euo pipefail
find_bin() {
  command -v "$1" 2>/dev/null && return
  ls /usr/lib/postgresql/*/bin/"$1" 2>/dev/null | sort -V | tail -n 1
}
if [ -z "$(find_bin initdb)" ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends postgresql >&2
fi
initdb=$(find_bin initdb)
pg_ctl=$(find_bin pg_ctl)
dir=$(mktemp -d /tmp/ragdown-test-pg.XXXXXX)
# PostgreSQL refuses to run as root: the cluster belongs to the postgres user then.
as_owner=()
if [ "$(id -u)" = 0 ]; then
  id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
  chown postgres "$dir"
  as_owner=(runuser -u postgres --)
fi
"${as_owner[@]}" "$initdb" -D "$dir/data" -U ragdown --auth=trust -E UTF8 >"$dir/initdb.log" 2>&1
"${as_owner[@]}" "$pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
  -o "-c listen_addresses='' -c unix_socket_directories='$dir' -c fsync=off -c max_connections=200" \
  start >&2
echo "export RAGDOWN_TEST_DATABASE_URL='host=$dir user=ragdown dbname=postgres'"
echo "export RAGDOWN_TEST_PG_STOP='${as_owner[*]} $pg_ctl -D $dir/data -m fast stop'"
echo "export RAGDOWN_TEST_PG_DIR='$dir'"
