# Sourced by the tests of installed artifacts (scripts/test-python.sh, test-node.sh,
# test-c.sh): takes the Rust toolchain off PATH, so what runs is what was installed and
# nothing can quietly build the tree instead.
# shellcheck shell=bash
PATH="$(tr ':' '\n' <<<"$PATH" | grep -v -e '/\.cargo/bin$' -e '/\.rustup/' | paste -sd:)"
export PATH
if command -v cargo >/dev/null || command -v rustc >/dev/null; then
    echo "without-rust: a Rust toolchain is still on PATH ($(command -v cargo rustc | head -1))" >&2
    exit 1
fi
