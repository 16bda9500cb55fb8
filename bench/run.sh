#!/usr/bin/env bash
# Runs the whole benchmark against its speed targets: prepares the bindings and SDKs
# (bench/setup.sh), builds the bench in release mode and runs every client interleaved over several rounds, then the
# scale figures, and prints medians, ratios and the targets with pass/fail.
#
#   bash bench/run.sh            # 5 rounds, K = 5000 calls per client
#   bash bench/run.sh --quick    # smoke run: 1 round, K = 300
#   bash bench/run.sh --rounds 3 --k 2000 --only raw,rmcp,mcpmux --no-scale
#
# MCPMUX_BENCH_SKIP_SETUP=1 skips bench/setup.sh (Rust clients only need the cargo build).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-1}"
if [[ "${MCPMUX_BENCH_SKIP_SETUP:-}" != 1 ]]; then
    bash bench/setup.sh
fi
cargo build --quiet --release -p mcpmux-bench -p mcpmux-cli
exec target/release/mcpmux-bench all "$@"
