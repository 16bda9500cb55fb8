#!/usr/bin/env bash
# Builds the artifacts users install, into dist/ (or $MCPMUX_DIST_DIR), each with the
# registries' own tools and checked the way a registry or an auditor would:
#   dist/python/  the abi3 wheel (manylinux_2_17) and the sdist       scripts/dist/python.sh
#   dist/npm/     the root package `mcpmux` and its platform package   scripts/dist/node.sh
#   dist/c/       libmcpmux under a prefix, and a relocatable tarball   scripts/dist/c.sh
# Usage: bash scripts/dist.sh [python|node|c]...   (no argument: all three)
# The three are built with cargo's `dist` profile for x86_64-unknown-linux-gnu, with one C
# toolchain (scripts/dist/toolchain.sh: zig, glibc 2.17), in the root target dir: the core and
# its dependencies compile once, and running a part again only repacks.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"
export MCPMUX_DIST_DIR="${MCPMUX_DIST_DIR:-$root/dist}"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"

# The packaging tools, pinned, in a venv of their own: zig (ziglang) and cargo-zigbuild's
# `zig cc` are the C toolchain of scripts/dist/toolchain.sh.
tools="$root/.deps/dist-venv"
pins=(maturin==1.16.0 ziglang==0.17.1 cargo-zigbuild==0.24.0 auditwheel==6.8.2
    abi3audit==0.0.26 twine==7.0.0 check-wheel-contents==0.6.3)
installed="$("$tools/bin/python" -m pip freeze 2>/dev/null || true)"
if [[ "$(printf '%s\n' "${pins[@]}" | grep -cvxF -f <(echo "$installed"))" != 0 ]]; then
    [[ -x "$tools/bin/python" ]] || python3 -m venv --clear "$tools"
    "$tools/bin/python" -m pip install --quiet --disable-pip-version-check "${pins[@]}"
fi
export PATH="$tools/bin:$PATH"

parts=("$@")
((${#parts[@]})) || parts=(python node c)
for part in "${parts[@]}"; do
    [[ -f "scripts/dist/$part.sh" ]] || { echo "dist: no part '$part' (python, node or c)" >&2; exit 2; }
    echo "== dist: $part"
    bash "scripts/dist/$part.sh"
done
