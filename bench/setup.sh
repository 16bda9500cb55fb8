#!/usr/bin/env bash
# Prepares what the bench needs besides its own Rust crate: release builds of mcpmux's Python
# and Node bindings, a venv with the official Python SDK, and the official TypeScript SDK.
# Everything goes under .deps/ and bench/node_modules (both gitignored); the bindings' own
# folders and in-place test builds are left alone. Idempotent: cargo rebuilds only what
# changed, pip and npm only reach the registry when a pinned version is missing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$(pwd)"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-1}"

PY_SDK_VERSION="2.3.0"     # pip `mcp`
deps="$root/.deps"
target="$deps/bench-target" # one target dir for both bindings' release builds
venv="$deps/bench-venv"
node_dir="$deps/bench-node"

step() { echo "== bench setup: $*" >&2; }

step "Python venv (mcp==$PY_SDK_VERSION, maturin)"
[[ -x "$venv/bin/python" ]] || python3 -m venv --clear "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "mcp==$PY_SDK_VERSION" "maturin>=1.9.4,<2"

step "mcpmux Python binding (release wheel)"
rm -rf "$deps/bench-wheels"
(cd bindings/python && VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" \
    "$venv/bin/maturin" build --quiet --release --target-dir "$target" -o "$deps/bench-wheels")
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
    --force-reinstall "$deps"/bench-wheels/mcpmux-*.whl

step "mcpmux Node binding (release addon)"
# A plain cargo build of the napi cdylib (what `napi build` runs); index.js loads it through
# NAPI_RS_NATIVE_LIBRARY_PATH, so the in-place debug addon of bindings/node stays as it is.
cargo build --quiet --release --lib --manifest-path bindings/node/Cargo.toml --target-dir "$target"
mkdir -p "$node_dir"
cp "$target/release/libmcpmux_node.so" "$node_dir/mcpmux.linux-x64-gnu.node"
# The binding's JavaScript layer beside it, with a loader in place of the native.js that
# `napi build` writes into bindings/node (absent in a fresh clone), and the package.json the
# layer reads its name and version from; it needs nothing from node_modules at run time.
rm -rf "${node_dir:?}/lib"
cp -r bindings/node/index.js bindings/node/lib bindings/node/package.json "$node_dir/"
echo "module.exports = require('./mcpmux.linux-x64-gnu.node');" > "$node_dir/native.js"

step "TypeScript SDK (bench/package-lock.json)"
(cd bench && if [[ ! -d node_modules/@modelcontextprotocol/sdk ]] ||
    [[ package-lock.json -nt node_modules/.package-lock.json ]]; then
    npm ci --no-audit --no-fund --loglevel=error
fi)

echo "python: $venv/bin/python"
echo "node addon: $node_dir/mcpmux.linux-x64-gnu.node"
