#!/usr/bin/env bash
# Runs every test of mcpmux, the same way on a laptop and in CI: installs the pinned
# third-party MCP servers the integration tests use, then lint, then the test suites.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# Both cores for our own builds (the binding scripts default to one when run alone).
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"

# Each step's seconds, printed at the end (CI's budget is 45 minutes on 2 cores).
timings=()
step_name=""
step_started=$SECONDS
step() {
    if [[ -n "$step_name" ]]; then
        timings+=("$((SECONDS - step_started))s $step_name")
    fi
    step_name="$1"
    step_started=$SECONDS
    [[ -z "$step_name" ]] || echo "== $step_name"
}
print_timings() {
    local status=$?
    local failed_step="$step_name"
    step ""
    echo "== seconds per step (total ${SECONDS}s)"
    printf '  %s\n' "${timings[@]}"
    # What the run left on disk: a CI machine's free space is not fixed, and a full disk
    # fails a build in whichever step it happens to be.
    echo "== disk used by the build (du -sh), and free"
    du -sh target .deps dist 2>/dev/null | sed 's/^/  /' || true
    echo "  $(df -h . | awk 'NR==2 {print $4}') free"
    if ((status != 0)); then
        # CI may show only the head and the tail of a long log: the cause, again, last.
        echo "== FAILED in step: ${failed_step:-?} (exit $status); its error lines:"
        grep -a -E 'error|panicked|FAIL|No space|Killed|failed' "$run_log" \
            | grep -a -v -E '^test .* ok$|^(PASS|ok) ' | tail -n 30 | cut -c -300 | sed 's/^/  /' || true
    fi
}
# The whole output also goes to a file, for the summary of a failure. On the terminal, lines
# are cut at 2,000 characters: a failed link prints the linker's whole command line (tens of
# kilobytes on one line), and a CI log once ended inside it, exit 141 (SIGPIPE), without the
# linker's own message or this script's summary. The file keeps every line whole.
run_log="$(mktemp "${TMPDIR:-/tmp}/mcpmux-test.XXXXXX")"
exec > >(tee "$run_log" | stdbuf -oL cut -c -2000) 2>&1
trap print_timings EXIT
echo "== free disk where the build writes: $(df -h . | awk 'NR==2 {print $4}')"

step "cargo fmt --check"
cargo fmt --all -- --check
step "repository checks (scripts/check-repo.py, shellcheck)"
python3 scripts/check-repo.py
bash scripts/apt-install.sh shellcheck
git ls-files -z '*.sh' .ci/run | xargs -0 shellcheck -x
# The test dependencies (pinned MCP servers from npm and PyPI, nginx, chromium) download and
# install while the compiler checks the code: mostly network and disk beside clippy's CPU.
# Started after shellcheck's install (one apt at a time), waited for before the tests.
deps_log="$(mktemp "${TMPDIR:-/tmp}/mcpmux-deps.XXXXXX")"
bash scripts/test-deps.sh >"$deps_log" 2>&1 &
deps_pid=$!
step "cargo clippy"
# Every member at once, the bindings' crates too: one check build with the features unified,
# where a separate clippy of each binding would check the core and its dependencies again
# with that binding's features (minutes each). Their scripts then skip their own clippy.
cargo clippy --workspace --all-targets --quiet -- -D warnings
export MCPMUX_CLIPPY_DONE=1
step "core without serve and agent (cargo features)"
# An application that embeds only the pool builds neither the gateway nor the agent: with
# each left out, the compiler checks that nothing beneath it reaches up into it.
for features in "" serve agent; do
    cargo clippy -p mcpmux --no-default-features --features "$features" --quiet -- -D warnings
done
step "test dependencies (scripts/test-deps.sh, installed beside the checks)"
deps_status=0
wait "$deps_pid" || deps_status=$?
cat "$deps_log"
if ((deps_status != 0)); then
    echo "scripts/test-deps.sh failed (exit $deps_status)"
    exit "$deps_status"
fi
# The deps are installed: a test that cannot find one must fail, not skip.
export MCPMUX_REQUIRE_SERVERS=1
step "cargo test"
# One debug build for every step (scripts/debug-build.sh): the test crate turns on core's
# `mimalloc` (the bindings' allocator, whose own tests are core's alloc::) and `otel`
# features for the whole workspace, and the later steps reuse its programs and libraries.
bash scripts/debug-build.sh
# Four tests at a time on 2 cores: the integration tests mostly wait on servers, timeouts and
# reconnects (two at a time used about half of the cores; four take 140 s here, not 195).
RUST_TEST_THREADS="${RUST_TEST_THREADS:-4}" cargo test
# ffi's own tests (the header drift among them) ran here: scripts/test-c.sh skips them.
export MCPMUX_CARGO_TESTED=1
step "MCP conformance suite (tests/conformance)"
bash scripts/test-conformance.sh
step "C API (ffi/, include/mcpmux.h, tests/c)"
bash scripts/test-c.sh
step "Python package (bindings/python)"
bash scripts/test-python.sh
step "npm package (bindings/node)"
bash scripts/test-node.sh
