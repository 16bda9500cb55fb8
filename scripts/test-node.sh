#!/usr/bin/env bash
# Builds and tests the npm package in bindings/node: installs its dev tools from the npm
# registry, builds the napi addon, lints the crate, type-checks index.d.ts, then runs
# `node --test` against real MCP servers (the test server binary and server-everything).
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
cargo build --quiet -p mcpmux-tests --bin mcpmux-test-server
export MCPMUX_TEST_SERVER="$repo_root/target/debug/mcpmux-test-server"

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

echo "== tsc --strict (index.d.ts)"
npx tsc -p test/types

echo "== node --test"
# One file at a time: the tests start real servers and child processes on a 2-core machine.
node --test --test-concurrency=1 test/*.test.js
