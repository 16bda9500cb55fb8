#!/usr/bin/env bash
# The one debug build every test step runs on: the libraries (libmcpmux.so and .a), the
# programs (the CLI, the test server, the scripted model service, the conformance client and
# fixture) and every test target, in one cargo invocation.
# Why one invocation: cargo unifies features over what one command selects, and a test
# target's dev-dependencies turn on core features (`otel`, `mimalloc`) and rmcp features
# that a plain `cargo build -p <crate>` would leave off. A per-crate build therefore compiled
# the core and rmcp again under another feature set (twice more in a full run: minutes and
# about a gigabyte), and overwrote the programs `cargo test` had just built. After this
# command `cargo test` compiles nothing, and running it again only checks fingerprints.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if ! command -v cargo >/dev/null 2>&1 && [[ -f "$HOME/.cargo/env" ]]; then
    # shellcheck disable=SC1091
    . "$HOME/.cargo/env"
fi
cargo build --quiet --lib --bins --tests --examples
