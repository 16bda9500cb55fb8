#!/usr/bin/env bash
# Runs every test of mcpmux, the same way on a laptop and in CI: installs the pinned
# third-party MCP servers the integration tests use, then lint, then the test suites.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# Both cores for our own builds (the binding scripts default to one when run alone).
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"

bash scripts/test-deps.sh
# The deps are installed: a test that cannot find one must fail, not skip.
export MCPMUX_REQUIRE_SERVERS=1

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== repository checks (scripts/check-repo.py, shellcheck)"
python3 scripts/check-repo.py
bash scripts/apt-install.sh shellcheck
git ls-files -z '*.sh' .ci/run | xargs -0 shellcheck
echo "== cargo clippy"
cargo clippy --workspace --all-targets --quiet -- -D warnings
echo "== cargo test"
cargo test --workspace
echo "== cargo test: the bindings' allocator (core's mimalloc feature)"
cargo test -p mcpmux --features mimalloc --lib alloc::
echo "== MCP conformance suite (tests/conformance)"
bash scripts/test-conformance.sh
echo "== C API (ffi/, include/mcpmux.h, tests/c)"
bash scripts/test-c.sh
echo "== Python package (bindings/python)"
bash scripts/test-python.sh
echo "== npm package (bindings/node)"
bash scripts/test-node.sh
