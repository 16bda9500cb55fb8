#!/usr/bin/env bash
# dist/python/: the `mcpmux` Python package as PyPI would take it, built once (cargo profile
# `dist`, scripts/dist/toolchain.sh): an abi3 wheel (one file for CPython 3.10 and later)
# tagged manylinux_2_17, and the sdist;
# then checked as an installer or an auditor would: auditwheel (the platform tag the wheel
# really meets), abi3audit (only the stable ABI is used), twine --strict (the metadata and
# README render on PyPI), check-wheel-contents (no stray or duplicate files), and the typing
# files present (py.typed, the native module's stub), and the sdist self-contained and locked.
# Run through scripts/dist.sh, which puts maturin and the checkers on PATH.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
root="$PWD"
dist="${MCPMUX_DIST_DIR:?run through scripts/dist.sh}/python"
platform=manylinux_2_17_x86_64
# shellcheck source=scripts/dist/toolchain.sh
. scripts/dist/toolchain.sh

rm -rf "$dist"
mkdir -p "$dist"
(
    cd bindings/python
    # The target dir, profile, target and toolchain of scripts/dist/c.sh and node.sh: this
    # build reuses their compile of the core. maturin checks the glibc symbols against the tag.
    maturin build --quiet --profile dist --target "$triple" \
        --compatibility "manylinux_${glibc_floor/./_}" --out "$dist"
    maturin sdist --out "$dist"
)
wheel="$(ls "$dist"/mcpmux-*-abi3-*.whl)"
sdist="$(ls "$dist"/mcpmux-*.tar.gz)"

echo "== auditwheel show"
audit="$(auditwheel show "$wheel")"
echo "$audit"
# auditwheel wraps its lines: compare with the whitespace folded.
tr -s ' \n' '  ' <<<"$audit" | grep -q "consistent with the following platform tag: \"$platform\"" || {
    echo "dist python: auditwheel does not find the wheel $platform" >&2
    exit 1
}
echo "== abi3audit"
abi3audit --strict --summary "$wheel"
echo "== twine check --strict"
twine check --strict "$wheel" "$sdist"
echo "== check-wheel-contents"
check-wheel-contents "$wheel"
wheel_files="$(python3 -m zipfile -l "$wheel")"
for typing_file in mcpmux/py.typed mcpmux/_native.pyi; do
    grep -q "^$typing_file " <<<"$wheel_files" || {
        echo "dist python: $typing_file is missing from $wheel" >&2
        exit 1
    }
done
# The sdist builds without the repository around it: the core crate it depends on is inside.
# (The listing is read whole: `grep -q` ending the pipe early would fail it under pipefail.)
sdist_files="$(tar -tzf "$sdist")"
grep -q '/core/src/lib.rs$' <<<"$sdist_files" || {
    echo "dist python: the sdist lacks the core crate (core/src/lib.rs)" >&2
    exit 1
}
# ...and resolves with the lock file's versions: maturin trims the workspace to the core and
# the binding, so cargo drops the other members' packages from Cargo.lock; it must add or
# change none (that would mean a build from the sdist compiles other code than the wheel's).
sdist_dir="$(mktemp -d)"
trap 'rm -rf "$sdist_dir"' EXIT
tar -xzf "$sdist" -C "$sdist_dir"
sdist_root="$(echo "$sdist_dir"/mcpmux-*)"
lock_packages() { awk '/^name = /{n=$3} /^version = /{print n, $3}' "$1" | sort -u; }
lock_packages "$sdist_root/Cargo.lock" >"$sdist_dir/shipped"
cargo metadata --quiet --offline --format-version 1 \
    --manifest-path "$sdist_root/bindings/python/Cargo.toml" >/dev/null
changed="$(comm -13 "$sdist_dir/shipped" <(lock_packages "$sdist_root/Cargo.lock"))"
[[ -z "$changed" ]] || {
    echo "dist python: the sdist does not build with its Cargo.lock; cargo would add:" >&2
    echo "$changed" >&2
    exit 1
}
echo "dist python: $(basename "$wheel"), $(basename "$sdist")"
