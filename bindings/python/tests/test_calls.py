"""Tools, resources and prompts against the test server, including cancellation, timeouts
and many concurrent calls."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

import mcpmux
from conftest import cancel, until_idle


async def test_list_and_call_tools(tpool: mcpmux.Pool) -> None:
    tools = await tpool.list_tools()
    ids = {t.id for t in tools}
    assert {"mcp__t__echo", "mcp__t__add", "mcp__t__sleep", "mcp__t__fail"} <= ids
    echo = next(t for t in tools if t.name == "echo")
    assert isinstance(echo, mcpmux.ToolInfo)
    assert echo.server_name == "t" and echo.description
    assert echo.input_schema["properties"]["text"]["type"] == "string"
    assert [t.id for t in await tpool.list_tools("t")] == sorted(ids)

    r = await tpool.call_tool("mcp__t__echo", {"text": "héllo ✓"})
    assert isinstance(r, mcpmux.CallToolResult)
    assert r.text == "héllo ✓" and not r.is_error
    assert r.content == [{"type": "text", "text": "héllo ✓"}]
    # Built directly for plain text results: the same JSON view, keys in the same (sorted)
    # order, as results built through core's JSON.
    raw = r.to_dict()
    assert list(raw) == sorted(raw) and set(raw) <= {"content", "isError", "resultType"}
    assert raw["content"] == r.content and raw.get("isError") is r.is_error
    assert raw.get("resultType", "complete") == "complete"
    assert [list(block) for block in raw["content"]] == [["text", "type"]]
    assert (await tpool.call_tool("mcp__t__add", {"a": 2, "b": 40})).text == "42"


async def test_search_lists_a_new_server_first_and_ranks_its_tools(tpool: mcpmux.Pool) -> None:
    hits = await tpool.search_tools("return the text unchanged", limit=3)
    assert isinstance(hits[0], mcpmux.SearchHit)
    assert hits[0].id == "mcp__t__echo" and hits[0].score > 0
    assert len(hits) <= 3
    assert {t.id for t in tpool.known_tools()} >= {"mcp__t__echo", "mcp__t__sleep"}
    # Core owns what a limit means: left out it is 10, and 0 is refused, as in every language.
    assert len(await tpool.search_tools("t")) <= 10
    for bad in (0, -1):
        with pytest.raises(mcpmux.InvalidArgumentError, match="limit must be at least 1"):
            await tpool.search_tools("x", limit=bad)
    with pytest.raises(mcpmux.InvalidArgumentError, match="limit must be at least 1"):
        tpool.search_recipes("x", limit=0)


async def test_structured_content_and_is_error(tpool: mcpmux.Pool) -> None:
    r = await tpool.call_tool("mcp__t__structured")
    assert isinstance(r.structured_content, dict) and r.structured_content
    assert r.to_dict()["structuredContent"] == r.structured_content
    failed = await tpool.call_tool("mcp__t__fail")
    assert failed.is_error is True  # a result, not an exception


async def test_progress_is_delivered_on_the_loop_thread(tpool: mcpmux.Pool) -> None:
    seen: list[tuple[mcpmux.Progress, threading.Thread]] = []
    r = await tpool.call_tool(
        "mcp__t__sleep",
        {"ms": 450},
        on_progress=lambda p: seen.append((p, threading.current_thread())),
    )
    assert r.text == "slept"
    await asyncio.sleep(0.05)
    assert len(seen) >= 3
    first = seen[0][0]
    assert first.total == 450.0 and 0 < first.progress < 450 and first.message
    assert all(t is threading.current_thread() for _, t in seen)

    # An async progress callback runs as a task.
    got: list[float] = []

    async def on_progress(p: mcpmux.Progress) -> None:
        got.append(p.progress)

    await tpool.call_tool("mcp__t__sleep", {"ms": 250}, on_progress=on_progress)
    await asyncio.sleep(0.05)
    assert got


async def test_cancelling_the_task_cancels_the_call(tpool: mcpmux.Pool) -> None:
    pid = (await tpool.call_tool("mcp__t__pid")).text
    progress: list[float] = []
    task = asyncio.create_task(
        tpool.call_tool(
            "mcp__t__sleep", {"ms": 10_000}, on_progress=lambda p: progress.append(p.progress)
        )
    )
    await asyncio.sleep(0.35)
    assert tpool.in_flight == 1
    assert await cancel(task) < 1.0
    # The call is gone from the core, not just from Python.
    await until_idle(tpool)
    # Nothing of the cancelled call reaches Python any more (its progress route is gone).
    await asyncio.sleep(0.1)
    count = len(progress)
    await asyncio.sleep(0.4)
    assert len(progress) == count
    # The connection is still the same and usable.
    assert (await tpool.call_tool("mcp__t__pid")).text == pid
    assert (await tpool.call_tool("mcp__t__echo", {"text": "still here"})).text == "still here"


async def test_wait_for_timeout_cancels_too(tpool: mcpmux.Pool) -> None:
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(tpool.call_tool("mcp__t__sleep", {"ms": 10_000}), 0.3)
    assert (await tpool.call_tool("mcp__t__echo", {"text": "ok"})).text == "ok"


async def test_timeouts(pool: mcpmux.Pool, test_server: str) -> None:
    await pool.add_server("t", command=test_server)
    # Progress resets a call's timeout: a 1.2 s sleep outlives a 0.5 s timeout.
    r = await pool.call_tool("mcp__t__sleep", {"ms": 1200}, timeout=0.5)
    assert r.text == "slept"
    with pytest.raises(mcpmux.InvalidArgumentError, match="timeout"):
        await pool.call_tool("mcp__t__echo", {"text": "x"}, timeout=-1)
    # A server that never answers: the connect timeout of the server's record applies.
    await pool.add_server(
        "silent", command=test_server, args=["--silent"], timeouts={"connect_ms": 700}
    )
    started = time.monotonic()
    with pytest.raises(mcpmux.TimeoutError) as e:
        await pool.list_tools("silent")
    assert time.monotonic() - started < 5
    assert isinstance(e.value, TimeoutError) and e.value.code == "timeout"
    assert "timed out" in str(e.value)


async def test_resources(tpool: mcpmux.Pool) -> None:
    resources = await tpool.list_resources()
    assert {r.uri for r in resources} == {"test://hello", "test://info"}
    hello = next(r for r in resources if r.uri == "test://hello")
    assert isinstance(hello, mcpmux.ResourceInfo)
    assert hello.server_name == "t" and hello.mime_type == "text/plain" and hello.name == "hello"
    [tpl] = await tpool.list_resource_templates("t")
    assert tpl.uri_template == "test://echo/{text}"
    r = await tpool.read_resource("t", "test://hello")
    assert r.text == "Hello from mcpmux-test-server"
    assert (await tpool.read_resource("t", "test://echo/abc")).text == "abc"
    with pytest.raises(mcpmux.ProtocolError):
        await tpool.read_resource("t", "test://nope")


async def test_prompts(tpool: mcpmux.Pool) -> None:
    prompts = await tpool.list_prompts()
    assert [p.name for p in prompts] == ["greet", "ask"]
    p = prompts[0]
    assert isinstance(p, mcpmux.PromptInfo)
    assert p.name == "greet" and p.server_name == "t"
    assert [a["name"] for a in p.arguments] == ["name"]
    r = await tpool.get_prompt("t", "greet", {"name": "Ada"})
    assert isinstance(r, mcpmux.GetPromptResult)
    assert r.messages[0]["content"]["text"] == "Hello, Ada!"
    with pytest.raises(mcpmux.ProtocolError):
        await tpool.get_prompt("t", "no-such-prompt")


async def test_500_concurrent_calls(tpool: mcpmux.Pool, test_server: str) -> None:
    await tpool.add_server("u", command=test_server)
    started = time.monotonic()
    results = await asyncio.gather(
        *(
            tpool.call_tool("mcp__t__add" if i % 2 else "mcp__u__add", {"a": i, "b": 1})
            for i in range(500)
        )
    )
    elapsed = time.monotonic() - started
    assert [r.text for r in results] == [str(i + 1) for i in range(500)]
    assert tpool.in_flight == 0
    assert elapsed < 30, elapsed
