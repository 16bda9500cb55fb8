#!/usr/bin/env bash
# Installs libmcpmux under a prefix, laid out as C and C++ build systems expect:
#   PREFIX/include/mcpmux.h
#   PREFIX/lib/libmcpmux.so.X.Y.Z, libmcpmux.so.SONAME -> it, libmcpmux.so -> that
#   PREFIX/lib/libmcpmux.a
#   PREFIX/lib/pkgconfig/mcpmux.pc          pkg-config mcpmux (and --static)
#   PREFIX/lib/cmake/mcpmux/                find_package(mcpmux CONFIG)
#   PREFIX/share/doc/mcpmux/                README.md, LICENSE
# Every path inside is relative, so the tree can be moved or packed (scripts/dist/c.sh).
#
# Usage: bash scripts/install-c.sh PREFIX
# Env:   MCPMUX_LIB_DIR  the directory holding the built libmcpmux.so and libmcpmux.a
#                        (default: `cargo build --release -p mcpmux-ffi`, then target/release)
set -euo pipefail
if [[ $# -ne 1 || -z "$1" ]]; then
    echo "usage: bash scripts/install-c.sh PREFIX   (e.g. /usr/local, or \$HOME/.local)" >&2
    exit 2
fi
prefix="$1"
cd "$(dirname "${BASH_SOURCE[0]}")/.."

version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)"
IFS=. read -r major minor _ <<<"$version"
# The SONAME that ffi/build.rs gives the library (cargo-c's rule).
if [[ "$major" == 0 ]]; then soname="libmcpmux.so.0.$minor"; else soname="libmcpmux.so.$major"; fi
# What the Rust standard library needs from the system when libmcpmux.a is linked.
static_libs="-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"

lib_dir="${MCPMUX_LIB_DIR:-}"
if [[ -z "$lib_dir" ]]; then
    cargo build --quiet --release -p mcpmux-ffi
    lib_dir="$(cargo metadata --format-version 1 --no-deps \
        | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release"
fi
for f in libmcpmux.so libmcpmux.a; do
    [[ -f "$lib_dir/$f" ]] || { echo "install-c: no $lib_dir/$f (build mcpmux-ffi first)" >&2; exit 1; }
done
built_soname="$(readelf -d "$lib_dir/libmcpmux.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
if [[ "$built_soname" != "$soname" ]]; then
    echo "install-c: $lib_dir/libmcpmux.so has SONAME '${built_soname:-none}', expected $soname" >&2
    exit 1
fi

mkdir -p "$prefix/include" "$prefix/lib/pkgconfig" "$prefix/lib/cmake/mcpmux" "$prefix/share/doc/mcpmux"
install -m 644 include/mcpmux.h "$prefix/include/mcpmux.h"
install -m 755 "$lib_dir/libmcpmux.so" "$prefix/lib/libmcpmux.so.$version"
ln -sfn "libmcpmux.so.$version" "$prefix/lib/$soname"
ln -sfn "$soname" "$prefix/lib/libmcpmux.so"
install -m 644 "$lib_dir/libmcpmux.a" "$prefix/lib/libmcpmux.a"

fill() {
    sed -e "s|@VERSION@|$version|g" -e "s|@VERSION_MAJOR@|$major|g" -e "s|@VERSION_MINOR@|$minor|g" \
        -e "s|@SONAME@|$soname|g" -e "s|@STATIC_LIBS@|$1|g" "$2" >"$3"
}
fill "$static_libs" ffi/mcpmux.pc.in "$prefix/lib/pkgconfig/mcpmux.pc"
# CMake takes a list of library names: no -l, separated by semicolons.
cmake_libs="${static_libs//-l/}"
fill "${cmake_libs// /;}" ffi/cmake/mcpmuxConfig.cmake.in "$prefix/lib/cmake/mcpmux/mcpmuxConfig.cmake"
fill "" ffi/cmake/mcpmuxConfigVersion.cmake.in "$prefix/lib/cmake/mcpmux/mcpmuxConfigVersion.cmake"
install -m 644 ffi/README.md "$prefix/share/doc/mcpmux/README.md"
install -m 644 LICENSE "$prefix/share/doc/mcpmux/LICENSE"
echo "install-c: libmcpmux $version ($soname) installed under $prefix" >&2
