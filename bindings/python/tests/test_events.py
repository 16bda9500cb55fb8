"""Events: callbacks with `pool.on` and `async for event in pool.events()`."""

from __future__ import annotations

import asyncio
import threading

import pytest

import mcpmux


async def until(check: object, timeout: float = 5.0) -> None:
    """Waits until `check()` is true."""
    assert callable(check)
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


async def test_on_delivers_named_events_on_the_loop_thread(
    pool: mcpmux.Pool, test_server: str
) -> None:
    called: list[tuple[mcpmux.Event, threading.Thread]] = []
    every: list[str] = []
    handle = pool.on("tool:called", lambda e: called.append((e, threading.current_thread())))
    all_handle = pool.on("*", lambda e: every.append(e.type))

    await pool.add_server("t", command=test_server)
    await pool.call_tool("mcp__t__echo", {"text": "x"})
    await until(lambda: called)
    event, thread = called[0]
    assert thread is threading.current_thread()
    assert isinstance(event, mcpmux.Event) and event.type == "tool:called"
    assert event["tool_id"] == "mcp__t__echo" and event["tool_name"] == "echo"
    assert event["success"] is True and event.server_id
    assert event.to_dict()["toolId"] == "mcp__t__echo"
    await until(lambda: "servers:changed" in every and "server:connected" in every)
    assert "connection:state" in every

    handle()  # unsubscribe
    assert not handle.active
    await pool.call_tool("mcp__t__fail")
    await until(lambda: every.count("tool:called") == 2)
    await asyncio.sleep(0.1)
    assert len(called) == 1  # the unsubscribed callback got nothing more
    all_handle.unsubscribe()
    all_handle.unsubscribe()  # twice is fine


async def test_async_callbacks_and_failing_callbacks(pool: mcpmux.Pool, test_server: str) -> None:
    got: list[str] = []
    errors: list[BaseException] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, ctx: errors.append(ctx["exception"]))

    async def on_async(e: mcpmux.Event) -> None:
        await asyncio.sleep(0)
        got.append(e.type)

    def broken(e: mcpmux.Event) -> None:
        raise RuntimeError("listener bug")

    pool.on("servers:changed", broken)
    pool.on("servers:changed", on_async)
    await pool.add_server("t", command=test_server)
    await until(lambda: got == ["servers:changed"])
    assert any("listener bug" in str(e) for e in errors)


async def test_event_stream_ends_when_the_pool_closes(config_path: str, test_server: str) -> None:
    pool = await mcpmux.Pool.open(config_path, health_check_interval_ms=0)
    seen: list[mcpmux.Event] = []

    async def consume() -> None:
        async for event in pool.events():
            seen.append(event)

    consumer = asyncio.create_task(consume())
    await asyncio.sleep(0)
    await pool.add_server("t", command=test_server)
    await pool.call_tool("mcp__t__echo", {"text": "x"})
    await pool.close()
    await asyncio.wait_for(consumer, 5)  # the stream ended by itself
    types = [e.type for e in seen]
    assert "servers:changed" in types and "tool:called" in types
    # The close itself is reported before the stream ends.
    closing = [e for e in seen if e.type == "connection:state" and e["state"] == "disconnected"]
    assert closing and closing[-1]["phase"] == "closed"


async def test_event_stream_aclose(pool: mcpmux.Pool) -> None:
    stream = pool.events()
    waiting = asyncio.create_task(stream.__anext__())
    await asyncio.sleep(0.05)
    await stream.aclose()
    try:
        await asyncio.wait_for(waiting, 5)
        raise AssertionError("the stream should have ended")
    except StopAsyncIteration:
        pass


async def test_listeners_see_the_close(config_path: str, test_server: str) -> None:
    pool = await mcpmux.Pool.open(config_path, health_check_interval_ms=0)
    states: list[tuple[str, str]] = []
    pool.on("connection:state", lambda e: states.append((e["state"], e["phase"])))
    await pool.add_server("t", command=test_server)
    await pool.connect("t")
    await pool.close()
    await until(lambda: ("disconnected", "closed") in states)
    assert ("connected", "ready") in states
    with pytest.raises(mcpmux.ShuttingDownError):
        pool.on("log", print)


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_a_servers_changes_arrive_as_events_at_once(
    pool: mcpmux.Pool, test_server: str, era: str
) -> None:
    """A tool added after connect, list changes, a subscribed resource's update and a log line
    at the level asked for, on a 2026-07-28 server (its listen stream) and an older one, each
    within 2 s (no cache TTL)."""
    seen: list[mcpmux.Event] = []
    pool.on("*", seen.append)
    args = [] if era == "modern" else ["--legacy"]
    await pool.add_server(era, command=test_server, args=args)
    server_id = (await pool.get_server(era)).id
    await pool.call_tool(f"mcp__{era}__add_tool", {"name": "late"})

    def saw(name: str, **fields: str) -> bool:
        def matches(e: mcpmux.Event) -> bool:
            return all(e[k] == v for k, v in fields.items())

        return any(e.type == name and e.server_id == server_id and matches(e) for e in seen)

    await until(lambda: saw("tools:changed"), timeout=2.0)
    assert "late" in [t.name for t in await pool.list_tools(era)]
    await pool.call_tool(f"mcp__{era}__notify", {"what": "prompts"})
    await until(lambda: saw("prompts:changed"), timeout=2.0)

    with pytest.raises(mcpmux.ProtocolError, match="test://secret"):
        await pool.subscribe_resource(era, "test://secret")
    await pool.subscribe_resource(era, "test://hello")
    await pool.call_tool(f"mcp__{era}__notify", {"what": "updated", "uri": "test://hello"})
    await until(lambda: saw("resource:updated", uri="test://hello"), timeout=2.0)

    # Logs at the level asked for: in each request's _meta on 2026-07-28, setLevel before.
    record = await pool.update_server(era, log_level="warning")
    assert record.log_level == "warning"
    quiet = await pool.call_tool(f"mcp__{era}__log", {"message": "q", "level": "info"})
    assert quiet.text == "not asked for"
    await pool.call_tool(f"mcp__{era}__log", {"message": "loud", "level": "critical"})
    await until(lambda: saw("log", message="[test-server] loud", level="critical"), timeout=2.0)
