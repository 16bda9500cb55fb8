# Sourced by scripts/dist/{c,python,node}.sh: the one C toolchain of every artifact's build.
# zig compiles the C in the dependencies and links each library against glibc 2.17's symbols
# (zig ships the headers and stubs of old glibc releases), so the artifacts load on any x86_64
# Linux since 2014. cargo-zigbuild's `zig cc` adapts the linker's arguments to zig.
#
# Why not `cargo zigbuild`, maturin's `--zig` and napi's `-x` each: they write their own
# wrapper scripts, at paths named after their own executables, and cargo recompiles every
# crate whose linker or C compiler path changed. With these fixed wrappers set in the
# environment, plain cargo, maturin and napi builds of the `dist` profile share one compile
# of the core and its dependencies in target/.
# shellcheck shell=bash
: "${root:?set root to the repository before sourcing}"
# shellcheck disable=SC2034 # used by the scripts that source this one
triple=x86_64-unknown-linux-gnu
glibc_floor=2.17
zig_dir="$root/.deps/dist-zig"
tools_bin="$root/.deps/dist-venv/bin"
mkdir -p "$zig_dir"
# The wrappers' contents only change with the venv's path: rewriting them keeps their paths.
for tool in cc c++; do
    cat >"$zig_dir/zig$tool" <<WRAPPER
#!/bin/sh
export CARGO_ZIGBUILD_ZIG_COMMAND="$tools_bin/python3"
export CARGO_ZIGBUILD_ZIG_COMMAND_ARGS='-m ziglang'
exec "$tools_bin/cargo-zigbuild" zig $tool -- -g -fno-sanitize=all -target x86_64-linux-gnu.$glibc_floor "\$@"
WRAPPER
    chmod +x "$zig_dir/zig$tool"
done
for tool in ar ranlib; do
    cat >"$zig_dir/zig$tool" <<WRAPPER
#!/bin/sh
export CARGO_ZIGBUILD_ZIG_COMMAND="$tools_bin/python3"
export CARGO_ZIGBUILD_ZIG_COMMAND_ARGS='-m ziglang'
exec "$tools_bin/cargo-zigbuild" zig $tool -- "\$@"
WRAPPER
    chmod +x "$zig_dir/zig$tool"
done
export CC_x86_64_unknown_linux_gnu="$zig_dir/zigcc"
export CXX_x86_64_unknown_linux_gnu="$zig_dir/zigc++"
export AR_x86_64_unknown_linux_gnu="$zig_dir/zigar"
export RANLIB_x86_64_unknown_linux_gnu="$zig_dir/zigranlib"
export CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER="$zig_dir/zigcc"
# The target is the host's own triple: without these (what cargo-zigbuild sets too), the
# linker above would also link the build scripts, and the host's C compiles would go to zig.
export CARGO_TARGET_APPLIES_TO_HOST=false
export CARGO_UNSTABLE_TARGET_APPLIES_TO_HOST=true
export __CARGO_TEST_CHANNEL_OVERRIDE_DO_NOT_USE_THIS=nightly

# Fails unless the library asks for no glibc symbol newer than the floor.
check_glibc_floor() {
    local lib="$1" newest
    newest="$(objdump -T "$lib" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)"
    if [[ "$(printf '%s\n%s\n' "$newest" "$glibc_floor" | sort -V | tail -1)" != "$glibc_floor" ]]; then
        echo "dist: $lib needs GLIBC_$newest, newer than the promised $glibc_floor:" >&2
        objdump -T "$lib" | grep -F "GLIBC_$newest" >&2
        return 1
    fi
    echo "dist: $(basename "$lib") needs GLIBC_$newest at most"
}
