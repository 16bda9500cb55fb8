#!/usr/bin/env bash
# Installs the real third-party MCP servers that the integration tests talk to.
#
# Everything goes into ${MCPMUX_DEPS_DIR:-<repo>/.deps} (gitignored) so the tests
# never depend on whatever happens to be installed globally, and CI and
# developers run the very same pinned versions. Versions are pinned because
# server-everything renames its tools between releases and the tests assert on
# names. Re-running is cheap: each step is skipped when the exact pinned version
# is already there.
set -euo pipefail

EVERYTHING_VERSION="2026.8.31"
FILESYSTEM_VERSION="2026.8.31"
TIME_SERVER_VERSION="2026.10.19"
# The Python SDK beside it, for tests/servers/python_sdk_server.py (a 2026-07-28 MCPServer).
PY_SDK_VERSION="2.3.0"
# An MCP App server (io.modelcontextprotocol/ui): a tool with an HTML view.
APP_SERVER_VERSION="2.0.3"

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
deps_dir="${MCPMUX_DEPS_DIR:-$repo_root/.deps}"
# A relative MCPMUX_DEPS_DIR means relative to the repository, as in the tests
# (which run from another folder).
[[ "$deps_dir" == /* ]] || deps_dir="$repo_root/$deps_dir"
mkdir -p "$deps_dir"
deps_dir="$(cd "$deps_dir" && pwd)"

# --- @modelcontextprotocol/server-everything (Node) --------------------------
npm_prefix="$deps_dir/npm"
everything_pkg="$npm_prefix/node_modules/@modelcontextprotocol/server-everything"

installed_everything_version() {
    # Read the version from the installed package.json; empty when absent.
    [[ -f "$everything_pkg/package.json" ]] || return 0
    node -e 'process.stdout.write(require(process.argv[1]).version || "")' \
        "$everything_pkg/package.json" 2>/dev/null || true
}

if [[ "$(installed_everything_version)" != "$EVERYTHING_VERSION" ]]; then
    command -v npm >/dev/null || { echo "test-deps: npm is required" >&2; exit 1; }
    mkdir -p "$npm_prefix"
    # --no-save keeps npm from writing a package.json we would then have to manage;
    # the quiet flags keep CI logs readable.
    npm install --prefix "$npm_prefix" --no-save --no-audit --no-fund --loglevel=error \
        "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" \
        "@modelcontextprotocol/server-filesystem@$FILESYSTEM_VERSION" >&2
    if [[ "$(installed_everything_version)" != "$EVERYTHING_VERSION" ]]; then
        echo "test-deps: server-everything $EVERYTHING_VERSION did not install" >&2
        exit 1
    fi
fi
echo "server-everything $EVERYTHING_VERSION: $everything_pkg"

# --- @modelcontextprotocol/server-filesystem (Node): roots from the host --------
filesystem_pkg="$npm_prefix/node_modules/@modelcontextprotocol/server-filesystem"
installed_filesystem_version() {
    [[ -f "$filesystem_pkg/package.json" ]] || return 0
    node -e 'process.stdout.write(require(process.argv[1]).version || "")' \
        "$filesystem_pkg/package.json" 2>/dev/null || true
}
if [[ "$(installed_filesystem_version)" != "$FILESYSTEM_VERSION" ]]; then
    # Both packages in one install: npm --no-save prunes what the command line omits.
    npm install --prefix "$npm_prefix" --no-save --no-audit --no-fund --loglevel=error \
        "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" \
        "@modelcontextprotocol/server-filesystem@$FILESYSTEM_VERSION" >&2
    if [[ "$(installed_filesystem_version)" != "$FILESYSTEM_VERSION" ]]; then
        echo "test-deps: server-filesystem $FILESYSTEM_VERSION did not install" >&2
        exit 1
    fi
fi
echo "server-filesystem $FILESYSTEM_VERSION: $filesystem_pkg"

# --- @modelcontextprotocol/server-basic-vanillajs (Node): an MCP App -----------
# In a prefix of its own: an npm --no-save install prunes what its command line omits.
app_prefix="$deps_dir/npm-apps"
app_pkg="$app_prefix/node_modules/@modelcontextprotocol/server-basic-vanillajs"
installed_app_version() {
    [[ -f "$app_pkg/package.json" ]] || return 0
    node -e 'process.stdout.write(require(process.argv[1]).version || "")' \
        "$app_pkg/package.json" 2>/dev/null || true
}
if [[ "$(installed_app_version)" != "$APP_SERVER_VERSION" ]]; then
    mkdir -p "$app_prefix"
    npm install --prefix "$app_prefix" --no-save --no-audit --no-fund --loglevel=error \
        "@modelcontextprotocol/server-basic-vanillajs@$APP_SERVER_VERSION" >&2
    if [[ "$(installed_app_version)" != "$APP_SERVER_VERSION" ]]; then
        echo "test-deps: server-basic-vanillajs $APP_SERVER_VERSION did not install" >&2
        exit 1
    fi
fi
echo "server-basic-vanillajs $APP_SERVER_VERSION: $app_pkg"

# --- @modelcontextprotocol/client (the TypeScript SDK v2's client) and Ajv --------------
# What cli/tests/clients/ts_sdk_v2_client.mjs drives `mcpmux serve` with, in 2026-07-28, and
# checks its answers against the specification's schema with. A prefix of its own, as above.
TS_CLIENT_VERSION="2.4.0"
AJV_VERSION="8.20.0"
client_prefix="$deps_dir/npm-client"
client_pkg="$client_prefix/node_modules/@modelcontextprotocol/client"
installed_client_versions() {
    [[ -f "$client_pkg/package.json" ]] || return 0
    node -e 'process.stdout.write(process.argv.slice(1).map((p) => require(p).version).join(" "))' \
        "$client_pkg/package.json" "$client_prefix/node_modules/ajv/package.json" 2>/dev/null || true
}
if [[ "$(installed_client_versions)" != "$TS_CLIENT_VERSION $AJV_VERSION" ]]; then
    mkdir -p "$client_prefix"
    npm install --prefix "$client_prefix" --no-save --no-audit --no-fund --loglevel=error \
        "@modelcontextprotocol/client@$TS_CLIENT_VERSION" "ajv@$AJV_VERSION" >&2
    if [[ "$(installed_client_versions)" != "$TS_CLIENT_VERSION $AJV_VERSION" ]]; then
        echo "test-deps: @modelcontextprotocol/client $TS_CLIENT_VERSION did not install" >&2
        exit 1
    fi
fi
echo "@modelcontextprotocol/client $TS_CLIENT_VERSION (ajv $AJV_VERSION): $client_pkg"

# --- mcp-server-time (Python) ------------------------------------------------
venv="$deps_dir/venv"

# "<mcp-server-time version> <mcp version>" of the venv.
installed_time_version() {
    [[ -x "$venv/bin/python" ]] || return 0
    "$venv/bin/python" - <<'EOF' 2>/dev/null || true
import importlib.metadata as m
try:
    print(m.version("mcp-server-time"), m.version("mcp"), end="")
except m.PackageNotFoundError:
    pass
EOF
}

if [[ "$(installed_time_version)" != "$TIME_SERVER_VERSION $PY_SDK_VERSION" ]]; then
    if [[ ! -x "$venv/bin/python" ]]; then
        # --clear: a venv whose interpreter vanished (e.g. Python upgraded) is rebuilt.
        python3 -m venv --clear "$venv"
    fi
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        "mcp-server-time==$TIME_SERVER_VERSION" "mcp==$PY_SDK_VERSION" >&2
    if [[ "$(installed_time_version)" != "$TIME_SERVER_VERSION $PY_SDK_VERSION" ]]; then
        echo "test-deps: mcp-server-time $TIME_SERVER_VERSION with mcp $PY_SDK_VERSION did not install" >&2
        exit 1
    fi
fi
echo "mcp-server-time $TIME_SERVER_VERSION (mcp $PY_SDK_VERSION): $venv/bin/mcp-server-time"

# --- Python mcp 1.x WebSocket server (tests/servers/ws_server.py) -------------
# Its own venv: the WebSocket server transport exists only in mcp 1.x, while
# mcp-server-time above needs 2.x.
WS_MCP_VERSION="1.30.0"
UVICORN_VERSION="0.54.0"
ws_venv="$deps_dir/ws-venv"
installed_ws_version() {
    [[ -x "$ws_venv/bin/python" ]] || return 0
    "$ws_venv/bin/python" -c 'import importlib.metadata as m, uvicorn, websockets; print(m.version("mcp"), end="")' 2>/dev/null || true
}
if [[ "$(installed_ws_version)" != "$WS_MCP_VERSION" ]]; then
    [[ -x "$ws_venv/bin/python" ]] || python3 -m venv --clear "$ws_venv"
    "$ws_venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        "mcp[ws]==$WS_MCP_VERSION" "uvicorn==$UVICORN_VERSION" >&2
    if [[ "$(installed_ws_version)" != "$WS_MCP_VERSION" ]]; then
        echo "test-deps: mcp[ws] $WS_MCP_VERSION did not install" >&2
        exit 1
    fi
fi
echo "mcp[ws] $WS_MCP_VERSION (WebSocket test server): $ws_venv/bin/python"

# --- FastMCP with fastmcp-tasks (Python): tools that run as tasks -----------------
# (tests/servers/fastmcp_tasks_server.py, tests/tests/integration/tasks.rs). Its own venv: FastMCP pins
# its own `mcp`.
FASTMCP_VERSION="4.1.4"
tasks_venv="$deps_dir/tasks-venv"
installed_fastmcp_version() {
    [[ -x "$tasks_venv/bin/python" ]] || return 0
    "$tasks_venv/bin/python" -c 'import importlib.metadata as m, fastmcp_tasks; print(m.version("fastmcp"), m.version("fastmcp-tasks"), end="")' 2>/dev/null || true
}
if [[ "$(installed_fastmcp_version)" != "$FASTMCP_VERSION $FASTMCP_VERSION" ]]; then
    [[ -x "$tasks_venv/bin/python" ]] || python3 -m venv --clear "$tasks_venv"
    "$tasks_venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        "fastmcp==$FASTMCP_VERSION" "fastmcp-tasks==$FASTMCP_VERSION" >&2
    if [[ "$(installed_fastmcp_version)" != "$FASTMCP_VERSION $FASTMCP_VERSION" ]]; then
        echo "test-deps: fastmcp and fastmcp-tasks $FASTMCP_VERSION did not install" >&2
        exit 1
    fi
fi
echo "fastmcp $FASTMCP_VERSION with fastmcp-tasks: $tasks_venv/bin/python"

# --- oidc-provider (Node): the authorization server of `serve --oauth-issuer` -----
# (cli/tests/integration/serve_oauth.rs). Its own prefix: the one above is pruned to its packages.
OIDC_PROVIDER_VERSION="9.13.3"
oidc_prefix="$deps_dir/oidc"
installed_oidc_version() {
    local manifest="$oidc_prefix/node_modules/oidc-provider/package.json"
    [[ -f "$manifest" ]] || return 0
    node -e 'process.stdout.write(require(process.argv[1]).version || "")' "$manifest" \
        2>/dev/null || true
}
if [[ "$(installed_oidc_version)" != "$OIDC_PROVIDER_VERSION" ]]; then
    mkdir -p "$oidc_prefix"
    npm install --prefix "$oidc_prefix" --no-save --no-audit --no-fund --loglevel=error \
        "oidc-provider@$OIDC_PROVIDER_VERSION" >&2
    if [[ "$(installed_oidc_version)" != "$OIDC_PROVIDER_VERSION" ]]; then
        echo "test-deps: oidc-provider $OIDC_PROVIDER_VERSION did not install" >&2
        exit 1
    fi
fi
echo "oidc-provider $OIDC_PROVIDER_VERSION: $oidc_prefix"

# The load balancer in front of `mcpmux serve` replicas (cli/tests/integration/serve_replicas.rs).
bash "$repo_root/scripts/apt-install.sh" nginx
echo "nginx: $(nginx -v 2>&1)"

# The browser that loads a page using `mcpmux serve` through CORS (cli/tests/integration/serve_browser.rs).
bash "$repo_root/scripts/apt-install.sh" chromium
echo "chromium: $(chromium --version 2>/dev/null)"
