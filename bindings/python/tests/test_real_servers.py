"""Third-party servers: server-everything (Node) over stdio and Streamable HTTP,
mcp-server-time (Python, from PyPI), and the test server over Streamable HTTP."""

from __future__ import annotations

import asyncio
import json

import mcpmux


async def check_everything(pool: mcpmux.Pool, server: str, *, all_progress: bool = True) -> None:
    tools = {t.name: t for t in await pool.list_tools(server)}
    assert {"echo", "get-sum", "trigger-long-running-operation"} <= set(tools)
    prefix = tools["echo"].id.removesuffix("echo")
    r = await pool.call_tool(prefix + "echo", {"message": "hi"})
    assert r.text == "Echo: hi"
    r = await pool.call_tool(prefix + "get-sum", {"a": 2, "b": 3})
    assert "5" in r.text
    bad = await pool.call_tool(prefix + "get-sum", {"a": "x"})
    assert bad.is_error  # argument validation fails as a tool result
    progress: list[mcpmux.Progress] = []
    r = await pool.call_tool(
        prefix + "trigger-long-running-operation",
        {"duration": 1, "steps": 3},
        on_progress=progress.append,
    )
    assert not r.is_error
    await asyncio.sleep(0.05)
    if all_progress:
        assert [p.progress for p in progress] == [1, 2, 3]
    else:
        # Over HTTP the core sometimes loses the notification sent right before the result
        # (reported to the core's owner); the ones before it always arrive, in order.
        assert [p.progress for p in progress][:2] == [1, 2]
    resources = await pool.list_resources(server)
    assert resources
    doc = resources[0]
    read = await pool.read_resource(server, doc.uri)
    assert read.contents and read.contents[0]["uri"] == doc.uri
    prompts = {p.name for p in await pool.list_prompts(server)}
    assert "simple-prompt" in prompts
    filled = await pool.get_prompt(server, "args-prompt", {"city": "Paris"})
    assert "Paris" in json.dumps(filled.to_dict())


async def test_everything_over_stdio(pool: mcpmux.Pool, everything_js: str) -> None:
    await pool.add_server("ev", command="node", args=[everything_js, "stdio"])
    await check_everything(pool, "ev")

    # Server notifications become events: resource updates of a subscription, and logs.
    updated: list[mcpmux.Event] = []
    logs: list[mcpmux.Event] = []
    pool.on("resource:updated", updated.append)
    pool.on("log", logs.append)
    uri = (await pool.list_resources("ev"))[0].uri
    await pool.subscribe_resource("ev", uri)
    assert not (await pool.call_tool("mcp__ev__toggle-subscriber-updates")).is_error
    assert not (await pool.call_tool("mcp__ev__toggle-simulated-logging")).is_error
    for _ in range(150):  # server-everything sends both every 5 s
        if updated and any(e["source"] == "notification" for e in logs):
            break
        await asyncio.sleep(0.1)
    assert updated and updated[0]["uri"] == uri and updated[0].server_id
    assert any(e["source"] == "notification" and e["message"] for e in logs)
    await pool.unsubscribe_resource("ev", uri)


async def test_everything_over_http(pool: mcpmux.Pool, everything_http: str) -> None:
    rec = await pool.add_server("evh", url=everything_http)
    assert rec.type == "http"
    await check_everything(pool, "evh", all_progress=False)
    [state] = pool.server_states()
    assert state.state == "connected" and state.pid is None


async def test_time_server(pool: mcpmux.Pool, time_server: str) -> None:
    await pool.add_server("time", command=time_server)
    r = await pool.call_tool("mcp__time__get_current_time", {"timezone": "UTC"})
    assert isinstance(r.structured_content, dict)
    assert r.structured_content["timezone"] == "UTC"
    bad = await pool.call_tool("mcp__time__get_current_time", {"timezone": "Nowhere/Bad"})
    assert bad.is_error and "Nowhere/Bad" in bad.text


async def test_a_tool_that_runs_as_a_task_is_called_like_any_other(
    pool: mcpmux.Pool, tasks_server: list[str]
) -> None:
    # FastMCP's `crunch` requires a task: the core follows it to its result.
    await pool.add_server("tasks", command=tasks_server[0], args=tasks_server[1:])
    result = await pool.call_tool("mcp__tasks__crunch", {"n": 2})
    assert result.text == "crunched 2"
    assert not result.is_error


async def test_test_server_over_http(pool: mcpmux.Pool, test_server_http: str) -> None:
    await pool.add_server("th", url=test_server_http)
    assert (await pool.call_tool("mcp__th__add", {"a": 1, "b": 2})).text == "3"
    assert (await pool.read_resource("th", "test://hello")).text == "Hello from mcpmux-test-server"


async def roots_seen(pool: mcpmux.Pool, tool: str, want: str) -> str:
    """server-everything's roots once they contain ``want`` (it asks again after a
    ``roots/list_changed``); the last answer otherwise."""
    text = ""
    for _ in range(50):
        text = (await pool.call_tool(tool)).text
        if want in text:
            break
        await asyncio.sleep(0.1)
    return text


async def test_everything_asks_the_roots_handler(pool: mcpmux.Pool, everything_js: str) -> None:
    await pool.set_roots(["file:///tmp/mcpmux-first"])
    await pool.add_server("ev", command="node", args=[everything_js, "stdio"])
    await pool.connect("ev")
    tool = "mcp__ev__get-roots-list"
    assert "mcpmux-first" in await roots_seen(pool, tool, "mcpmux-first")

    asked: list[str] = []

    async def roots(request: mcpmux.HostRequest) -> list[dict[str, str]]:
        asked.append(request.server_name)
        return [{"uri": "file:///tmp/mcpmux-from-python", "name": "py"}]

    pool.set_roots_handler(roots)
    await pool.notify_roots_changed()
    text = await roots_seen(pool, tool, "mcpmux-from-python")
    assert "mcpmux-from-python" in text, text
    assert asked and set(asked) == {"ev"}

    # Without the handler, the pool's list answers again.
    pool.set_roots_handler(None)
    await pool.notify_roots_changed()
    text = await roots_seen(pool, tool, "mcpmux-first")
    assert "mcpmux-first" in text and "mcpmux-from-python" not in text, text
