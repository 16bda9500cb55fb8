"""The blocking API, from plain code and from inside a running event loop (as in Jupyter)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

import mcpmux
import mcpmux.sync
from conftest import POOL_OPTIONS


def test_sync_pool(config_path: str, test_server: str) -> None:
    with mcpmux.sync.Pool(config_path, **POOL_OPTIONS) as pool:
        rec = pool.add_server("t", command=test_server)
        assert isinstance(rec, mcpmux.ServerRecord)
        assert [s.name for s in pool.list_servers()] == ["t"]
        assert pool.get_server("t").id == rec.id
        assert "mcp__t__echo" in {t.id for t in pool.list_tools()}
        assert pool.call_tool("mcp__t__echo", {"text": "sync"}).text == "sync"
        progress: list[mcpmux.Progress] = []
        assert (
            pool.call_tool("mcp__t__sleep", {"ms": 350}, on_progress=progress.append).text
            == "slept"
        )
        time.sleep(0.05)
        assert progress
        assert pool.read_resource("t", "test://hello").text
        assert pool.get_prompt("t", "greet", {"name": "S"}).messages
        assert pool.list_resources() and pool.list_resource_templates() and pool.list_prompts()
        assert pool.test_server("t").success
        assert pool.discover("t").tools
        assert pool.update_server("t", is_trusted=True).is_trusted
        assert pool.server_states()[0].state == "connected"
        with pytest.raises(mcpmux.NotFoundError):
            pool.call_tool("mcp__t__nope")
        with pytest.raises(mcpmux.TimeoutError):
            pool.add_server(
                "silent", command=test_server, args=["--silent"], timeouts={"connect_ms": 500}
            )
            pool.list_tools("silent")
        pool.remove_server("t")
    assert pool.closed
    with pytest.raises(mcpmux.ShuttingDownError):
        pool.list_servers()


def test_sync_events(config_path: str, test_server: str) -> None:
    pool = mcpmux.sync.Pool.open(config_path, **POOL_OPTIONS)
    try:
        called: list[tuple[str, str]] = []
        done = threading.Event()

        def on_call(e: mcpmux.Event) -> None:
            called.append((e["tool_id"], threading.current_thread().name))
            done.set()

        handle = pool.on("tool:called", on_call)
        events = pool.events()
        pool.add_server("t", command=test_server)
        pool.call_tool("mcp__t__add", {"a": 1, "b": 1})
        assert done.wait(5)
        assert called == [("mcp__t__add", "mcpmux-sync-loop")]
        handle()
        assert not handle.active
        first = next(events)
        assert first.type == "servers:changed"
    finally:
        pool.close()
    # After close the iterator drains and ends.
    assert "tool:called" in [e.type for e in events]


def test_sync_inside_a_running_loop(config_path: str, test_server: str) -> None:
    # Jupyter runs cells inside an event loop; the blocking API must not need that loop.
    async def cell() -> str:
        with mcpmux.sync.Pool(config_path, **POOL_OPTIONS) as pool:
            pool.add_server("t", command=test_server)
            return pool.call_tool("mcp__t__echo", {"text": "in a loop"}).text

    assert asyncio.run(cell()) == "in a loop"


def test_sync_loop_thread_stops_with_the_last_pool(config_path: str) -> None:
    def loop_threads() -> int:
        return sum(t.name == "mcpmux-sync-loop" for t in threading.enumerate())

    a = mcpmux.sync.Pool(config_path, **POOL_OPTIONS)
    b = mcpmux.sync.Pool(config_path, **POOL_OPTIONS)
    assert loop_threads() == 1
    a.close()
    assert loop_threads() == 1
    b.close()
    assert loop_threads() == 0


def test_sync_call_from_its_own_callback_is_refused(config_path: str, test_server: str) -> None:
    with mcpmux.sync.Pool(config_path, **POOL_OPTIONS) as pool:
        outcome: list[BaseException] = []
        done = threading.Event()

        def nested(e: mcpmux.Event) -> None:
            try:
                pool.list_servers()
            except mcpmux.InvalidArgumentError as err:
                outcome.append(err)
            done.set()

        pool.on("servers:changed", nested)
        pool.add_server("t", command=test_server)
        assert done.wait(5)
        assert outcome and "callbacks" in str(outcome[0])


def test_sync_host_tools_handlers_and_agent(config_path: str, test_server: str) -> None:
    with mcpmux.sync.Pool(config_path, health_check_interval_ms=0) as pool:

        @pool.tool
        def shout(text: str) -> str:
            return text.upper()

        assert pool.call_tool("shout", {"text": "hi"}).text == "HI"
        pool.add_server("t", command=test_server)
        pool.set_sampling_handler(lambda request: "sampled")
        pool.set_elicitation_handler(lambda request: {"name": "Grace"})
        pool.set_roots(["file:///a"])
        assert pool.roots == [{"uri": "file:///a"}]
        assert pool.call_tool("mcp__t__ask").text == 'name="Grace" sample="sampled" roots=1'

        turns = iter(
            [
                {
                    "content": [
                        {"type": "tool_use", "id": "1", "name": "shout", "input": {"text": "a"}}
                    ]
                },
                "done",
            ]
        )
        agent = mcpmux.sync.Agent(pool, lambda request: next(turns), max_iterations=3)
        result = agent.run("shout a")
        assert result.stop == "finished" and result.text == "done"
        assert pool.unregister_tool("shout")


def test_sync_roots_handler(config_path: str, test_server: str) -> None:
    with mcpmux.sync.Pool(config_path, **POOL_OPTIONS) as pool:
        pool.add_server("t", command=test_server)
        pool.set_sampling_handler(lambda request: "sampled")
        pool.set_elicitation_handler(lambda request: {"name": "Grace"})
        pool.set_roots(["file:///a"])
        asked: list[tuple[str, str]] = []

        def roots(request: mcpmux.HostRequest) -> list[str]:
            asked.append((request.server_name, threading.current_thread().name))
            return ["file:///x", "file:///y"]

        pool.set_roots_handler(roots)
        assert pool.call_tool("mcp__t__ask").text == 'name="Grace" sample="sampled" roots=2'
        assert asked == [("t", "mcpmux-sync-loop")]
        pool.notify_roots_changed()

        def refuse(request: mcpmux.HostRequest) -> list[str]:
            raise PermissionError("roots are private")

        pool.set_roots_handler(refuse)
        try:
            text = pool.call_tool("mcp__t__ask").text
        except mcpmux.Error as e:
            text = str(e)
        assert "roots are private" in text

        pool.set_roots_handler(None)
        assert pool.call_tool("mcp__t__ask").text.endswith("roots=1")


def test_sync_conversation(config_path: str, test_server: str) -> None:
    with mcpmux.sync.Pool(config_path, **POOL_OPTIONS) as pool:
        pool.add_server("t", command=test_server)
        pool.list_tools()
        conv = pool.conversation()
        assert isinstance(conv, mcpmux.sync.Conversation)
        assert isinstance(conv.async_conversation, mcpmux.Conversation)
        names = [t.name for t in conv.tools()]
        assert "search_tools" in names and "t_mcp_list_tools" in names
        assert "mcp__t__echo" not in names
        assert conv.activated() == []

        assert "mcp__t__echo" in conv.call("t_mcp_list_tools").text
        r = conv.call("mcp__t__echo", {"text": "sync hey"}, timeout=10)
        assert isinstance(r, mcpmux.CallToolResult) and r.text == "sync hey"
        assert conv.activated() == [pool.get_server("t").id]
        assert "mcp__t__echo" in [t.name for t in conv.tools()]

        other = pool.conversation(servers=["elsewhere"])
        assert [t.name for t in other.tools()] == ["search_tools"]
        with pytest.raises(mcpmux.InvalidArgumentError, match="disabled for this conversation"):
            other.call("mcp__t__echo", {"text": "x"})
        limited = pool.conversation(servers={"disabled": ["t"]})
        assert [t.name for t in limited.tools()] == ["search_tools"]
    with pytest.raises(mcpmux.ShuttingDownError):
        conv.call("mcp__t__echo", {"text": "closed"})
