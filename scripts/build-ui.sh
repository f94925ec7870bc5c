#!/usr/bin/env bash
# Rebuilds the web UI into web/dist, which is committed and embedded in the binary (cargo
# build never needs Node). `--check` rebuilds and fails when the committed dist is stale.
set -euo pipefail
cd "$(dirname "$0")/../web"
npm ci --no-audit --no-fund --loglevel=error
npm run --silent check
npm run --silent build
# rust-embed picks up changed files by itself; a new or removed asset name needs the embedding
# module rebuilt.
touch ../crates/http/src/ui.rs
if [ "${1:-}" = "--check" ]; then
  if ! git diff --exit-code --stat -- dist || [ -n "$(git status --porcelain -- dist)" ]; then
    echo "web/dist is stale: run scripts/build-ui.sh and commit web/dist" >&2
    exit 1
  fi
fi
