"""MCP Apps: a view handed over checked, its bridge answering it, its calls kept to its server
and to the tools apps may call; against the test server's app (``--apps``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

import mcpmux
import mcpmux.sync
from conftest import POOL_OPTIONS


@pytest.fixture
async def app_pool(config_path: str, test_server: str) -> AsyncIterator[mcpmux.Pool]:
    pool = await mcpmux.Pool.open(config_path, apps={}, **POOL_OPTIONS)
    try:
        await pool.add_server("app", command=test_server, args=["--apps"])
        yield pool
    finally:
        await pool.close()


def text(result: mcpmux.CallToolResult) -> str:
    return "".join(c.get("text", "") for c in result.content)


async def test_a_view_comes_with_its_policy_and_calls_only_its_tools_for_apps(
    app_pool: mcpmux.Pool,
) -> None:
    view = await app_pool.app_view("mcp__app__dashboard")
    assert isinstance(view, mcpmux.AppView)
    assert view.resource_uri == "ui://test/dashboard.html"
    assert view.mime_type == "text/html;profile=mcp-app"
    assert "test dashboard" in view.html
    assert view.csp.connect_domains == ["https://api.example.com"]
    assert "connect-src 'self' https://api.example.com;" in view.content_security_policy
    assert view.permissions.camera and not view.permissions.microphone
    assert view.allow == "camera"
    assert view.tool.name == "dashboard"

    assert text(await app_pool.app_call(view, "refresh", {"city": "Oslo"})) == "refreshed Oslo"
    with pytest.raises(mcpmux.InvalidArgumentError, match="visibility"):
        await app_pool.app_call(view, "secret")
    with pytest.raises(mcpmux.NotFoundError):
        await app_pool.app_call(view, "nope")
    read = await app_pool.app_read_resource(view, "test://hello")
    assert len(read.contents) == 1
    hits = await app_pool.search_tools("refresh the dashboard figures")
    assert all(h.name != "refresh" for h in hits)


async def test_the_bridge_tells_the_view_the_input_and_result_once_initialized(
    app_pool: mcpmux.Pool,
) -> None:
    bridge = app_pool.app_bridge(await app_pool.app_view("mcp__app__dashboard"), {"theme": "dark"})
    assert bridge.view.tool_id == "mcp__app__dashboard"
    assert bridge.tool_input({"city": "Rome"}) == []
    result = await app_pool.call_tool("mcp__app__dashboard", {"city": "Rome"})
    assert bridge.tool_result(result) == []

    init = await bridge.handle(
        {"jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": {"appCapabilities": {}}}
    )
    assert init.post[0]["result"]["hostContext"]["theme"] == "dark"
    ready = await bridge.handle({"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
    assert [m["method"] for m in ready.post] == [
        "ui/notifications/tool-input",
        "ui/notifications/tool-result",
    ]
    assert ready.post[1]["params"]["content"][0]["text"] == "sunny in Rome"

    link = {"jsonrpc": "2.0", "id": 3, "method": "ui/message", "params": {"role": "user"}}
    out = await bridge.handle(link)
    assert out.post == [] and out.host == link
    assert mcpmux.AppBridge.reply(3, PermissionError("no")) == {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {"code": -32000, "message": "no"},
    }
    assert mcpmux.AppBridge.reply("a", {"opened": True}) == {
        "jsonrpc": "2.0",
        "id": "a",
        "result": {"opened": True},
    }
    for no_request_id in (None, True, [3]):
        with pytest.raises(mcpmux.InvalidArgumentError, match="a string or a number"):
            mcpmux.AppBridge.reply(no_request_id, {})  # type: ignore[arg-type]
    with pytest.raises(mcpmux.InvalidArgumentError):
        await bridge.handle("not a mapping")  # type: ignore[arg-type]


def test_the_blocking_pool_serves_views_too(config_path: str, test_server: str) -> None:
    with mcpmux.sync.Pool(config_path, apps={}, **POOL_OPTIONS) as pool:
        pool.add_server("app", command=test_server, args=["--apps"])
        view = pool.app_view("mcp__app__dashboard")
        assert text(pool.app_call(view, "refresh", {"city": "Nice"})) == "refreshed Nice"
        bridge = pool.app_bridge(view)
        out = bridge.handle({"jsonrpc": "2.0", "id": 7, "method": "ping"})
        assert out.post == [{"jsonrpc": "2.0", "id": 7, "result": {}}]


async def test_without_the_apps_option_views_are_refused(
    config_path: str, test_server: str
) -> None:
    pool = await mcpmux.Pool.open(config_path, **POOL_OPTIONS)
    try:
        await pool.add_server("app", command=test_server, args=["--apps"])
        with pytest.raises(mcpmux.InvalidArgumentError, match="apps"):
            await pool.app_view("mcp__app__dashboard")
    finally:
        await pool.close()
