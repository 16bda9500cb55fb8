#!/usr/bin/env bash
# Builds mcpmux's Python package (bindings/python) and runs its tests against real MCP
# servers: the repository's test server, server-everything (stdio and Streamable HTTP) and
# mcp-server-time. Idempotent; everything it installs goes under .deps/ (gitignored).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo_root="$(pwd)"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-1}"

bash scripts/test-deps.sh
# The official conformance suite: its OAuth-protected mock servers test the OAuth API.
bash scripts/conformance-deps.sh
# The test server and the scripted model service are members of the root workspace: built
# into the root target dir.
cargo build --quiet -p mcpmux-tests --bin mcpmux-test-server --bin mcpmux-fake-llm
export MCPMUX_TEST_SERVER="$repo_root/target/debug/mcpmux-test-server"
export MCPMUX_FAKE_LLM="$repo_root/target/debug/mcpmux-fake-llm"
export MCPMUX_DEPS_DIR="$repo_root/.deps"

venv="$repo_root/.deps/py-binding-venv"
if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv --clear "$venv"
fi
# pip only reaches the registry when a requirement is not yet met.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "maturin>=1.9.4,<2" "pytest>=8" "pytest-asyncio>=0.24" "mypy>=1.10" "ruff==0.17.6" \
    "opentelemetry-api>=1.30"

echo "== ruff check, ruff format --check (every Python file, ruff.toml)"
# ruff is pinned: its rules and formatting change between releases.
"$venv/bin/ruff" check .
"$venv/bin/ruff" format --check .

cd bindings/python
echo "== cargo fmt --check (bindings/python)"
cargo fmt -- --check
echo "== cargo clippy (bindings/python)"
# maturin builds into target/maturin: its builds and plain cargo ones would otherwise
# invalidate each other.
cargo clippy --quiet --all-targets -- -D warnings

echo "== maturin develop"
# `maturin develop` builds in place into the venv (pyo3 finds this venv's interpreter);
# `pip install ./bindings/python` works too but copies the tree and rebuilds from cold.
VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" \
    "$venv/bin/maturin" develop --quiet --target-dir target/maturin

echo "== mypy (strict) and stubtest"
"$venv/bin/python" -m mypy --no-error-summary python/mcpmux
"$venv/bin/python" -m mypy.stubtest mcpmux

echo "== pytest (bindings/python)"
"$venv/bin/python" -m pytest -q -p no:cacheprovider tests
