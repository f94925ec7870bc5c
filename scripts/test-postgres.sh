#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests: installs Debian's server (and builds pgvector)
# when missing,
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
# pgvector (RAGDOWN_DENSE_POOL=pgvector's tests): not packaged for Debian bookworm, so it is
# built from Debian's own source package (trixie's, signed and checksummed by apt) against
# the installed server's headers — about ten seconds.
pg_version=$("$initdb" --version | awk '{print $3}' | cut -d. -f1)
if [ ! -f "/usr/share/postgresql/$pg_version/extension/vector.control" ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "postgresql-server-dev-$pg_version" make gcc >&2
  build=$(mktemp -d /tmp/ragdown-pgvector.XXXXXX)
  apt_opts=(-o "Dir::Etc::SourceList=$build/sources.list" -o Dir::Etc::SourceParts=/nonexistent
    -o "Dir::State::Lists=$build/lists" -o "Dir::Cache=$build/cache")
  mkdir -p "$build/lists/partial" "$build/cache/archives/partial"
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
    >"$build/sources.list"
  if (cd "$build" && apt-get -qq "${apt_opts[@]}" update >&2 \
      && apt-get -qq "${apt_opts[@]}" source --download-only pgvector >&2); then
    :
  else
    # The pinned release from Debian's pool, checked by its SHA-256, when apt cannot fetch.
    curl -fsSL -o "$build/pgvector_0.8.0.orig.tar.gz" \
      http://deb.debian.org/debian/pool/main/p/pgvector/pgvector_0.8.0.orig.tar.gz
    echo "867a2c328d4928a5a9d6f052cd3bc78c7d60228a9b914ad32aa3db88e9de27b0  $build/pgvector_0.8.0.orig.tar.gz" \
      | sha256sum -c - >&2
  fi
  tar -xzf "$build"/pgvector_*.orig.tar.gz -C "$build"
  pg_config="/usr/lib/postgresql/$pg_version/bin/pg_config"
  (cd "$build"/pgvector-*/ && make -s -j"$(nproc)" PG_CONFIG="$pg_config" >&2 \
    && $sudo make -s install PG_CONFIG="$pg_config" >&2)
  rm -rf "$build"
fi
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
