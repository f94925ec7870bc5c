#!/usr/bin/env bash
# The container test: builds the image users get (Dockerfile, with the release binary built
# here and the offline test model baked in instead of granite-small) and runs the quick start's
# compose.yaml with podman-compose, as a user would: the status from the host through the
# published 127.0.0.1 port, a search that finds a mounted document, MCP on /mcp/work, a restart
# that keeps the index (nothing embedded again), and `podman stop` ending it cleanly within 10 s.
#
# No registry is reachable here: the base image (debian:bookworm-slim) is made from Debian's
# packages with mmdebstrap and imported under the name the Dockerfile asks for.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
test -f .test-model/env || scripts/fetch-test-model.sh .test-model

sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
if ! command -v podman >/dev/null || ! command -v runc >/dev/null || ! command -v mmdebstrap >/dev/null \
  || ! command -v podman-compose >/dev/null; then
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    podman runc mmdebstrap podman-compose uidmap slirp4netns fuse-overlayfs >/dev/null
fi
podman() { $sudo env CONTAINERS_CONF="$CONTAINERS_CONF" podman "$@"; }

work=$(mktemp -d)
project="ragdown-test-$$"
cleanup() {
  (cd "$root" && RAGDOWN_NOTES="$work/notes" RAGDOWN_TOKEN=x $sudo env CONTAINERS_CONF="${CONTAINERS_CONF:-}" \
    podman-compose -p "$project" down -v >/dev/null 2>&1) || true
  rm -rf "$work" "$root"/docker/models/minilm "$root"/docker/models/onnxruntime-*
}
trap cleanup EXIT

# These machines' quirks: crun refuses their hybrid cgroups (runc does not), and a container
# may not be given limits above the machine's (nproc is also capped by pid_max).
nproc=$(ulimit -Hu)
pid_max=$(cat /proc/sys/kernel/pid_max)
[ "$nproc" = unlimited ] || [ "$nproc" -gt "$pid_max" ] && nproc=$pid_max
nofile=$(ulimit -Hn)
[ "$nofile" = unlimited ] && nofile=1048576
export CONTAINERS_CONF="$work/containers.conf"
cat >"$CONTAINERS_CONF" <<CONF
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF

if ! podman image exists docker.io/library/debian:bookworm-slim; then
  $sudo mmdebstrap --quiet --variant=minbase --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    bookworm "$work/rootfs.tar"
  podman import --quiet "$work/rootfs.tar" docker.io/library/debian:bookworm-slim >/dev/null
  rm -f "$work/rootfs.tar"
fi

# Built as the Dockerfile's Rust stage builds it (no debug info, stripped): the binary users get.
CARGO_PROFILE_RELEASE_DEBUG=false CARGO_PROFILE_RELEASE_STRIP=true \
  cargo build --release --locked --bin ragdown
# The offline test model and ONNX Runtime, where the Dockerfile takes files instead of
# downloading them.
mkdir -p docker/models/minilm docker/models/onnxruntime-1.32.0
cp .test-model/models/minilm/{model.onnx,tokenizer.json,config.json} docker/models/minilm/
cp .test-model/lib/libonnxruntime.so docker/models/onnxruntime-1.32.0/
started=$(date +%s)
podman build --quiet --pull=never --build-arg RAGDOWN_BINARY=prebuilt \
  --build-arg RAGDOWN_EMBEDDER=minilm -t localhost/ragdown:latest . >/dev/null
echo "container: image built in $(($(date +%s) - started)) s" >&2

# A notes directory as the quick start mounts it: the folder `work`, with MCP on.
mkdir -p "$work/notes/work"
cat >"$work/notes/work/backup.md" <<'MD'
# Backups

## Restore

To restore the nightly backup, run `kbrestore --from s3` and wait for the green light.
MD
echo '{ "mcp": true }' >"$work/notes/work/.ragdown.json"
chmod -R a+rwX "$work/notes"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
compose() {
  RAGDOWN_NOTES="$work/notes" RAGDOWN_PORT="$port" RAGDOWN_TOKEN=container-test-token \
    $sudo env CONTAINERS_CONF="$CONTAINERS_CONF" RAGDOWN_NOTES="$work/notes" RAGDOWN_PORT="$port" \
    RAGDOWN_TOKEN=container-test-token podman-compose -p "$project" "$@" >/dev/null
}
compose up -d
python3 tests/container/check.py "http://127.0.0.1:$port" container-test-token first
# A new container on the same volume: the index is kept.
compose down
compose up -d
python3 tests/container/check.py "http://127.0.0.1:$port" container-test-token restart

container=$(podman ps --filter "label=io.podman.compose.project=$project" --format '{{.Names}}' | head -1)
started=$(date +%s%N)
podman stop --time 10 "$container" >/dev/null
took=$((($(date +%s%N) - started) / 1000000))
code=$(podman inspect "$container" --format '{{.State.ExitCode}}')
echo "container: podman stop took $took ms, exit code $code" >&2
[ "$code" = 0 ] || { echo "container: ragdown exited with $code on SIGTERM" >&2; exit 1; }
[ "$took" -lt 10000 ] || { echo "container: stopping took $took ms (10 s is the limit)" >&2; exit 1; }
echo "container: all checks passed" >&2
