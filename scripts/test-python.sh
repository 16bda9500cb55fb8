#!/usr/bin/env bash
# Tests mcpmux's Python package as users get it: lints the source (ruff, rustfmt, clippy,
# mypy --strict), builds the wheel once (scripts/dist.sh python: release, abi3,
# manylinux_2_17, checked), installs it into a fresh venv with `pip install --no-index`, and
# runs stubtest and the suite (a copy of bindings/python/tests outside the tree, so only the
# installed package can be imported) with no Rust toolchain on PATH, against real MCP servers:
# the repository's test server, server-everything (stdio and Streamable HTTP), mcp-server-time
# and the conformance suite's OAuth-protected servers. Everything it installs goes under .deps/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo_root="$(pwd)"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-1}"

bash scripts/test-deps.sh
# The official conformance suite: its OAuth-protected mock servers test the OAuth API.
bash scripts/conformance-deps.sh
# The test server and the scripted model service the tests start: the workspace's one debug
# build (scripts/debug-build.sh), which is already there when test.sh ran it before.
bash scripts/debug-build.sh
export MCPMUX_TEST_SERVER="$repo_root/target/debug/mcpmux-test-server"
export MCPMUX_FAKE_LLM="$repo_root/target/debug/mcpmux-fake-llm"
export MCPMUX_DEPS_DIR="$repo_root/.deps"
export MCPMUX_REPO="$repo_root"
dist="${MCPMUX_DIST_DIR:-$repo_root/dist}"
export MCPMUX_DIST_DIR="$dist"

# The linters' venv: the package itself is never installed here.
lint_venv="$repo_root/.deps/py-lint-venv"
[[ -x "$lint_venv/bin/python" ]] || python3 -m venv --clear "$lint_venv"
test_requirements=("pytest>=8" "pytest-asyncio>=0.24" "mypy>=1.10" "opentelemetry-api>=1.30")
# pip only reaches the registry when a requirement is not yet met.
"$lint_venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "${test_requirements[@]}" "ruff==0.17.6"

echo "== ruff check, ruff format --check (every Python file, ruff.toml)"
# ruff is pinned: its rules and formatting change between releases.
"$lint_venv/bin/ruff" check .
"$lint_venv/bin/ruff" format --check .

echo "== cargo fmt --check, clippy (bindings/python)"
(
    cd bindings/python
    cargo fmt -- --check
    # scripts/test.sh lints every member at once (MCPMUX_CLIPPY_DONE).
    [[ "${MCPMUX_CLIPPY_DONE:-}" == 1 ]] || cargo clippy --quiet --all-targets -- -D warnings
)
echo "== mypy --strict (the package's source and its stubs)"
(cd bindings/python && "$lint_venv/bin/python" -m mypy --no-error-summary python/mcpmux)

echo "== the wheel (scripts/dist.sh python)"
bash scripts/dist.sh python

echo "== a fresh venv, the wheel installed from dist/python only"
venv="$repo_root/.deps/py-installed-venv"
python3 -m venv --clear "$venv"
# PIP_FIND_LINKS (this machine's wheel cache) is left out: dist/python is the only source.
env -u PIP_FIND_LINKS "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    --no-index --find-links "$dist/python" mcpmux
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${test_requirements[@]}"

# From here on no Rust toolchain: what is tested is what was installed.
# shellcheck source=scripts/without-rust.sh
. scripts/without-rust.sh
suite="$repo_root/.deps/py-installed-tests"
rm -rf "$suite"
mkdir -p "$suite"
cp -r bindings/python/tests "$suite/tests"
find "$suite" -name __pycache__ -prune -exec rm -rf {} +
cd "$suite"
"$venv/bin/python" -c 'import mcpmux; print(f"mcpmux {mcpmux.__version__} installed at {mcpmux.__file__}")'

echo "== stubtest (the installed package against its stubs)"
"$venv/bin/python" -m mypy.stubtest mcpmux

echo "== pytest (bindings/python/tests, copied out of the tree)"
# The options are the package's own (pyproject.toml); the suite is the copy.
MCPMUX_TEST_INSTALLED=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider \
    -c "$repo_root/bindings/python/pyproject.toml" --rootdir "$suite" tests
