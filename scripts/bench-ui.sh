#!/usr/bin/env bash
# The web UI's speed in a real browser: first paint of the folder list, a 1 MB document opened,
# search as you type over 10,000 documents, and that folder's tree. Prints a table (also written
# to target/ui-bench.json). Against the release binary when it is built (cargo build --release),
# else the debug one. Needs chromium and chromium-driver (scripts/test.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -x target/release/ragdown && -z "${RAGDOWN_TEST_BIN:-}" ]]; then
  export RAGDOWN_TEST_BIN="$PWD/target/release/ragdown"
fi
echo "benchmarking ${RAGDOWN_TEST_BIN:-the debug build}" >&2
cargo nextest run -p ragdown-cli --run-ignored only -E 'test(=ui::benchmark)' --no-capture
