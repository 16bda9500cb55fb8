"""Core errors arrive as the right mcpmux exception classes, with the core's message."""

from __future__ import annotations

import asyncio
import builtins
import pickle

import pytest

import mcpmux


def test_hierarchy() -> None:
    classes = [
        mcpmux.ConfigError, mcpmux.InvalidArgumentError, mcpmux.NotFoundError,
        mcpmux.ConnectionError, mcpmux.TimeoutError, mcpmux.CancelledError,
        mcpmux.ProtocolError, mcpmux.ToolError, mcpmux.ShuttingDownError, mcpmux.IoError,
    ]  # fmt: skip
    assert all(issubclass(c, mcpmux.Error) for c in classes)
    assert len({c.code for c in classes}) == len(classes)
    assert issubclass(mcpmux.CancelledError, asyncio.CancelledError)
    assert issubclass(mcpmux.TimeoutError, builtins.TimeoutError)
    assert issubclass(mcpmux.ConnectionError, builtins.ConnectionError)
    assert issubclass(mcpmux.NotFoundError, LookupError)
    assert issubclass(mcpmux.InvalidArgumentError, ValueError)
    e = pickle.loads(pickle.dumps(mcpmux.NotFoundError("tool not found: x", "not_found")))
    assert type(e) is mcpmux.NotFoundError and e.message == "tool not found: x"


async def test_not_found(tpool: mcpmux.Pool) -> None:
    with pytest.raises(mcpmux.NotFoundError, match="mcp__t__nope") as e:
        await tpool.call_tool("mcp__t__nope", {})
    assert e.value.code == "not_found" and isinstance(e.value, LookupError)
    with pytest.raises(mcpmux.NotFoundError, match="server not found: ghost"):
        await tpool.list_tools("ghost")
    with pytest.raises(mcpmux.NotFoundError):
        await tpool.remove_server("ghost")


async def test_invalid_argument(tpool: mcpmux.Pool) -> None:
    with pytest.raises(mcpmux.InvalidArgumentError, match="JSON object"):
        await tpool.call_tool("mcp__t__echo", [1, 2])  # type: ignore[arg-type]
    with pytest.raises(mcpmux.InvalidArgumentError, match="not JSON"):
        await tpool.call_tool("mcp__t__echo", {"text": object()})
    await tpool.list_tools()  # indexes the tool ids
    await tpool.update_server("t", disabled_tools=["echo"])
    with pytest.raises(mcpmux.InvalidArgumentError, match="disabled"):
        await tpool.call_tool("mcp__t__echo", {"text": "x"})
    with pytest.raises(mcpmux.InvalidArgumentError, match="unknown event"):
        tpool.on("tool:callled", print)


async def test_connection_errors(pool: mcpmux.Pool) -> None:
    await pool.add_server("missing", command="/definitely/not/a/program")
    with pytest.raises(mcpmux.ConnectionError, match="cannot start") as e:
        await pool.list_tools("missing")
    assert isinstance(e.value, builtins.ConnectionError) and e.value.code == "connection"
    await pool.add_server("down", url="http://127.0.0.1:9/mcp")
    with pytest.raises(mcpmux.ConnectionError, match="'down'"):
        await pool.connect("down")
    # Listing everything skips unreachable servers instead of failing.
    assert await pool.list_tools() == []


async def test_protocol_error(tpool: mcpmux.Pool) -> None:
    # The server answers with a JSON-RPC error: its code and message come through.
    with pytest.raises(
        mcpmux.ProtocolError, match=r"resources/read: no resource test://nope \(code -32"
    ):
        await tpool.read_resource("t", "test://nope")
    # A subscription the server refuses names the resource.
    with pytest.raises(mcpmux.ProtocolError, match="test://secret"):
        await tpool.subscribe_resource("t", "test://secret")


async def test_tool_error(pool: mcpmux.Pool, test_server: str, everything_js: str) -> None:
    # A tool id the pool knows, on a server that no longer has that tool: the server answers
    # tools/call with a JSON-RPC error, which is a ToolError (the tool list is cached until
    # it is listed again).
    await pool.add_server("x", command="node", args=[everything_js, "stdio"])
    assert "mcp__x__get-sum" in {t.id for t in await pool.list_tools()}
    await pool.update_server("x", config={"command": test_server})
    with pytest.raises((mcpmux.ToolError, mcpmux.NotFoundError)) as e:
        await pool.call_tool("mcp__x__get-sum", {"a": 1, "b": 2})
    if isinstance(e.value, mcpmux.ToolError):
        assert e.value.code == "tool" and "get-sum" in str(e.value)


async def test_shutting_down(config_path: str, test_server: str) -> None:
    pool = await mcpmux.Pool.open(config_path, health_check_interval_ms=0)
    await pool.add_server("t", command=test_server)
    await pool.close()
    with pytest.raises(mcpmux.ShuttingDownError) as e:
        await pool.call_tool("mcp__t__echo", {"text": "x"})
    assert e.value.code == "shutting_down"
    with pytest.raises(mcpmux.ShuttingDownError):
        await pool.list_tools()
