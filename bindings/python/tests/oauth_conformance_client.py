"""A client for the official MCP conformance suite, on mcpmux's Python binding:

    conformance client --command "python oauth_conformance_client.py [--sync]" --scenario auth/...

The suite appends its mock server's URL. This opens a pool, adds that URL as an HTTP server
with OAuth settings from ``MCP_CONFORMANCE_CONTEXT``, authorizes headlessly (the suite's
authorization server approves at once: GET the authorization URL without following redirects,
the ``Location`` is the redirect a browser would make), connects, lists and calls the tools.
Then it reconnects with the stored tokens and logs out.

Tokens live in a token store written in Python; what it and the OAuth handler saw goes, as
JSON, to the file named by ``MCPMUX_OAUTH_REPORT`` (for the tests). With
``MCPMUX_OAUTH_FAIL=<message>`` the handler raises instead, and the report gets the error.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import urllib.error
import urllib.request
from typing import Any

import mcpmux
import mcpmux.sync

SCENARIO = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
FAIL = os.environ.get("MCPMUX_OAUTH_FAIL")
REDIRECT_URI = "http://localhost:3000/callback"

report: dict[str, Any] = {
    "scenario": SCENARIO,
    "prompts": [],
    "loads": 0,
    "loaded": 0,
    "saves": 0,
    "clears": [],
    "tools": [],
}


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _location(url: str) -> str:
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(url, timeout=30) as response:
            status = response.status
            location = response.headers.get("Location")
    except urllib.error.HTTPError as e:  # 3xx without a redirect handler lands here
        status, location = e.code, e.headers.get("Location")
    if not location:
        raise RuntimeError(f"no redirect from the authorization server ({status})")
    return location


async def authorize(prompt: mcpmux.AuthorizationPrompt) -> str:
    """The OAuth handler: what a browser would do, without a browser."""
    report["prompts"].append(
        {
            "server_name": prompt.server_name,
            "server_id": prompt.server_id,
            "redirect_uri": prompt.redirect_uri,
            "has_url": prompt.authorization_url.startswith("http"),
        }
    )
    if FAIL:
        raise RuntimeError(FAIL)
    return await asyncio.to_thread(_location, prompt.authorization_url)


class Store:
    """A token store in Python (a keychain would do the same): async load, sync save/clear."""

    def __init__(self) -> None:
        self.tokens: dict[str, dict[str, Any]] = {}

    async def load(self, server_id: str) -> dict[str, Any] | None:
        report["loads"] += 1
        value = self.tokens.get(server_id)
        if value is not None:
            report["loaded"] += 1
        return value

    def save(self, server_id: str, credentials: dict[str, Any]) -> None:
        report["saves"] += 1
        self.tokens[server_id] = credentials

    def clear(self, server_id: str) -> None:
        report["clears"].append(server_id)
        self.tokens.pop(server_id, None)


def oauth_settings() -> mcpmux.OAuthSettings:
    """What a host would configure for this server, from what the suite passes."""
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    settings: mcpmux.OAuthSettings = {
        "clientMetadataUrl": "https://conformance-test.local/client-metadata.json"
    }
    for key in ("client_id", "client_secret", "private_key_pem", "signing_algorithm"):
        if isinstance(context.get(key), str):
            settings[key] = context[key]  # type: ignore[literal-required]
    if SCENARIO.startswith("auth/client-credentials"):
        settings["grant"] = "client_credentials"
    return settings


def arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Defaults of the schema, else small sample values."""
    samples = {"number": 2, "integer": 2, "boolean": True, "array": [], "object": {}}
    return {
        name: prop.get("default", samples.get(prop.get("type", ""), "conformance"))
        for name, prop in (schema.get("properties") or {}).items()
    }


def server_config(url: str) -> dict[str, Any]:
    return {"url": url, "strictTransport": True, "oauth": oauth_settings()}


async def run_async(url: str, config_path: str) -> None:
    async with mcpmux.Pool.open(
        config_path, connect_on_add=False, health_check_interval_ms=0
    ) as pool:
        pool.set_oauth_handler(authorize, redirect_uri=REDIRECT_URI)
        pool.set_token_store(Store())
        await pool.add_server("server", type="http", config=server_config(url), is_trusted=True)
        try:
            await pool.connect("server")
        except mcpmux.Error as e:
            report["error"] = f"{type(e).__name__}: {e}"
            raise
        for tool in await pool.list_tools("server"):
            result = await pool.call_tool(tool.id, arguments(tool.input_schema))
            report["tools"].append({"name": tool.name, "is_error": result.is_error})
        # Again with the stored tokens: no new authorization.
        await pool.disconnect("server")
        await pool.connect("server")
        await pool.list_tools("server")
        await pool.logout("server")
        report["state_after_logout"] = [s.to_dict() for s in pool.server_states()]


def run_sync(url: str, config_path: str) -> None:
    with mcpmux.sync.Pool(config_path, connect_on_add=False, health_check_interval_ms=0) as pool:
        pool.set_oauth_handler(authorize, redirect_uri=REDIRECT_URI)
        pool.set_token_store(Store())
        pool.add_server("server", type="http", config=server_config(url), is_trusted=True)
        try:
            pool.connect("server")
        except mcpmux.Error as e:
            report["error"] = f"{type(e).__name__}: {e}"
            raise
        for tool in pool.list_tools("server"):
            result = pool.call_tool(tool.id, arguments(tool.input_schema))
            report["tools"].append({"name": tool.name, "is_error": result.is_error})
        pool.disconnect("server")
        pool.connect("server")
        pool.list_tools("server")
        pool.logout("server")
        report["state_after_logout"] = [s.to_dict() for s in pool.server_states()]


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: oauth_conformance_client.py [--sync] <server-url>", file=sys.stderr)
        return 2
    url = sys.argv[-1]
    report["mode"] = "sync" if "--sync" in sys.argv[1:-1] else "async"
    code = 0
    with tempfile.TemporaryDirectory() as tmp:
        config_path = os.path.join(tmp, "servers.json")
        try:
            if report["mode"] == "sync":
                run_sync(url, config_path)
            else:
                asyncio.run(run_async(url, config_path))
        except Exception as e:
            print(f"[{SCENARIO}] failed: {type(e).__name__}: {e}", file=sys.stderr)
            report.setdefault("error", f"{type(e).__name__}: {e}")
            code = 1
    print(f"[{SCENARIO}] {json.dumps(report)}", file=sys.stderr)
    out = os.environ.get("MCPMUX_OAUTH_REPORT")
    if out:
        with open(out, "w") as f:
            json.dump(report, f)
    return code


if __name__ == "__main__":
    sys.exit(main())
