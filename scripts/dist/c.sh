#!/usr/bin/env bash
# dist/c/: libmcpmux built once (cargo profile `dist`, scripts/dist/toolchain.sh: loads on any
# x86_64 Linux with glibc 2.17 or later), installed under a staging prefix by
# scripts/install-c.sh and packed as a relocatable tarball:
#   dist/c/libmcpmux-VERSION-x86_64-linux-gnu/         the installed tree (a usable prefix)
#   dist/c/libmcpmux-VERSION-x86_64-linux-gnu.tar.gz   the same, packed
# Run through scripts/dist.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
root="$PWD"
dist="${MCPMUX_DIST_DIR:?run through scripts/dist.sh}/c"
# shellcheck source=scripts/dist/toolchain.sh
. scripts/dist/toolchain.sh

version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)"
cargo build --quiet --profile dist -p mcpmux-ffi --target "$triple"
lib_dir="$root/target/$triple/dist"
check_glibc_floor "$lib_dir/libmcpmux.so"

name="libmcpmux-$version-x86_64-linux-gnu"
rm -rf "$dist"
mkdir -p "$dist"
MCPMUX_LIB_DIR="$lib_dir" bash scripts/install-c.sh "$dist/$name"
# Owner and times fixed, entries sorted: the same build packs to the same tarball.
tar -C "$dist" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 \
    -czf "$dist/$name.tar.gz" "$name"
echo "dist c: $dist/$name.tar.gz"
