"""Host tools, host request handlers (sampling, elicitation, roots), recipes, conversations."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

import mcpmux
from conftest import Hang, cancel


async def test_event_names_come_from_the_core() -> None:
    for name in ("widget", "agent:turn", "agent:tool_use", "agent:tool_result", "tool:called"):
        assert name in mcpmux.EVENT_NAMES


async def test_host_tools_sync_and_async(pool: mcpmux.Pool) -> None:
    threads: list[threading.Thread] = []

    def add(a: int, b: int = 1) -> str:
        """Add two numbers."""
        threads.append(threading.current_thread())
        return str(a + b)

    async def lookup(key: str) -> dict[str, Any]:
        await asyncio.sleep(0.01)
        return {"key": key, "value": 42}

    info = pool.register_tool(
        "lookup",
        {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]},
        lookup,
        description="Look a key up",
    )
    assert isinstance(info, mcpmux.ToolInfo)
    assert (info.id, info.server_name, info.description) == ("lookup", "local", "Look a key up")
    decorated = pool.tool(add)
    assert decorated is add

    tools = {t.id: t for t in await pool.list_tools()}
    assert tools["add"].description == "Add two numbers."
    assert tools["add"].input_schema["properties"] == {
        "a": {"type": "integer"},
        "b": {"type": "integer"},
    }
    assert tools["add"].input_schema["required"] == ["a"]

    r = await pool.call_tool("add", {"a": 2, "b": 3})
    assert r.text == "5" and not r.is_error
    assert threads == [threading.current_thread()]  # on the loop's thread
    r = await pool.call_tool("lookup", {"key": "k"})
    assert r.structured_content == {"key": "k", "value": 42}
    assert '"value":42' in r.text  # core's JSON text, as in every language

    # The schema is checked first: the errors and the schema come back as an error result.
    r = await pool.call_tool("add", {"a": "two"})
    assert r.is_error and "invalid arguments" in r.text and "expected schema" in r.text

    assert pool.unregister_tool("add") is True
    assert pool.unregister_tool("add") is False
    with pytest.raises(mcpmux.NotFoundError):
        await pool.call_tool("add", {"a": 1})


async def test_host_tool_results_and_failures(pool: mcpmux.Pool) -> None:
    @pool.tool(name="explode", schema={"type": "object"})
    def explode() -> str:
        raise RuntimeError("the disk is on fire")

    @pool.tool(name="custom", schema={"type": "object"})
    async def custom() -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "half"}], "is_error": True}

    @pool.tool(name="nothing", schema={"type": "object"})
    def nothing() -> None:
        return None

    @pool.tool(name="bad_result", schema={"type": "object"})
    def bad_result() -> object:
        return object()

    @pool.tool(name="model", schema={"type": "object"})
    def model() -> mcpmux.CallToolResult:
        return mcpmux.CallToolResult.from_dict({"content": [{"type": "text", "text": "m"}]})

    r = await pool.call_tool("explode")
    assert r.is_error and r.text == "RuntimeError: the disk is on fire"
    r = await pool.call_tool("custom")
    assert r.is_error and r.text == "half"
    r = await pool.call_tool("nothing")
    assert r.content == [] and not r.is_error
    r = await pool.call_tool("bad_result")
    assert r.is_error and "bad_result" in r.text and "JSON serializable" in r.text
    assert (await pool.call_tool("model")).text == "m"

    with pytest.raises(mcpmux.InvalidArgumentError, match="object schema"):
        pool.register_tool("x", {"type": "string"}, nothing)
    with pytest.raises(mcpmux.InvalidArgumentError, match="reserved"):
        pool.register_tool("mcp__x", None, nothing)


async def test_a_cancelled_call_cancels_the_python_tool(pool: mcpmux.Pool) -> None:
    hang = Hang()

    @pool.tool
    async def wait_forever() -> str:
        await hang.forever()
        return "never"

    task = asyncio.create_task(pool.call_tool("wait_forever"))
    await asyncio.wait_for(hang.started.wait(), 5)
    await cancel(task)
    await asyncio.wait_for(hang.cancelled.wait(), 5)


async def test_host_tools_need_a_running_loop(pool: mcpmux.Pool) -> None:
    errors: list[BaseException] = []

    def register() -> None:
        try:
            pool.register_tool("t", None, lambda: "x")
        except BaseException as e:
            errors.append(e)

    thread = threading.Thread(target=register)
    thread.start()
    thread.join()
    assert isinstance(errors[0], mcpmux.InvalidArgumentError)
    assert "running event loop" in str(errors[0])


async def test_sampling_elicitation_and_roots_handlers(tpool: mcpmux.Pool) -> None:
    seen: list[mcpmux.HostRequest] = []

    async def sample(request: mcpmux.HostRequest) -> str:
        seen.append(request)
        return "hi from python"

    def elicit(request: mcpmux.HostRequest) -> dict[str, str]:
        seen.append(request)
        return {"name": "Grace"}  # the content alone: accepted

    tpool.set_sampling_handler(sample)
    tpool.set_elicitation_handler(elicit)
    await tpool.set_roots(["file:///a", {"uri": "file:///b", "name": "b"}])
    assert tpool.roots == [{"uri": "file:///a"}, {"uri": "file:///b", "name": "b"}]

    r = await tpool.call_tool("mcp__t__ask")
    assert r.text == 'name="Grace" sample="hi from python" roots=2'
    assert {s.server_name for s in seen} == {"t"}
    messages = [s for s in seen if "messages" in s.params]
    assert messages and messages[0].params["messages"][0]["content"]["text"] == "Say hi"

    # One server gets its own roots, then goes back to the pool's.
    await tpool.set_server_roots("t", [Path("/tmp")])
    r = await tpool.call_tool("mcp__t__ask")
    assert r.text.endswith("roots=1")
    await tpool.set_server_roots("t", None)
    assert (await tpool.call_tool("mcp__t__ask")).text.endswith("roots=2")

    # Elicitation declined (None) and full ElicitResult dicts.
    tpool.set_elicitation_handler(lambda request: {"action": "accept", "content": {"name": "Ada"}})
    assert 'name="Ada"' in (await tpool.call_tool("mcp__t__ask")).text


async def test_prompts_and_resources_ask_the_host_first(tpool: mcpmux.Pool) -> None:
    asked: list[mcpmux.HostRequest] = []

    def elicit(request: mcpmux.HostRequest) -> dict[str, str]:
        asked.append(request)
        return {"name": "Grace"}

    tpool.set_elicitation_handler(elicit)
    prompt = await tpool.get_prompt("t", "ask")
    assert prompt.messages[0]["content"]["text"] == "Hello, Grace!"
    assert (await tpool.read_resource("t", "test://ask")).text == "asked for Grace"
    # Rounds with only the server's state need nothing of the host.
    assert (await tpool.read_resource("t", "test://wait")).text == "waited two rounds"
    assert [r.server_name for r in asked] == ["t", "t"]


async def test_a_raising_handler_is_a_clear_error(tpool: mcpmux.Pool) -> None:
    def sample(request: mcpmux.HostRequest) -> str:
        raise PermissionError("no sampling today")

    tpool.set_sampling_handler(sample)
    tpool.set_elicitation_handler(lambda request: None)
    try:
        r = await tpool.call_tool("mcp__t__ask")
        text = r.text
    except mcpmux.Error as e:
        text = str(e)
    assert "no sampling today" in text

    tpool.set_sampling_handler(None)
    tpool.set_elicitation_handler(None)


async def _ask_text(pool: mcpmux.Pool) -> str:
    """The `ask` tool's answer, or the error it fails with."""
    try:
        return (await pool.call_tool("mcp__t__ask")).text
    except mcpmux.Error as e:
        return str(e)


async def test_a_roots_handler_answers_instead_of_the_lists(tpool: mcpmux.Pool) -> None:
    tpool.set_sampling_handler(lambda request: "s")
    tpool.set_elicitation_handler(lambda request: {"name": "Grace"})
    await tpool.set_roots(["file:///a", "file:///b"])
    assert (await _ask_text(tpool)).endswith("roots=2")

    seen: list[mcpmux.HostRequest] = []
    threads: list[threading.Thread] = []

    def roots(request: mcpmux.HostRequest) -> list[Any]:
        seen.append(request)
        threads.append(threading.current_thread())
        return [Path("/tmp"), "file:///x", {"uri": "file:///y", "name": "y"}]

    tpool.set_roots_handler(roots)
    assert await _ask_text(tpool) == 'name="Grace" sample="s" roots=3'
    server_id = (await tpool.get_server("t")).id
    assert [(r.server_name, r.server_id, r.params) for r in seen] == [("t", server_id, {})]
    assert threads == [threading.current_thread()]  # on this event loop's thread
    assert tpool.roots == [{"uri": "file:///a"}, {"uri": "file:///b"}]  # the lists stay

    # Asked each time: an async handler, and None (no roots).
    async def one_root(request: mcpmux.HostRequest) -> list[str]:
        await asyncio.sleep(0.01)
        return ["file:///only"]

    tpool.set_roots_handler(one_root)
    assert (await _ask_text(tpool)).endswith("roots=1")
    tpool.set_roots_handler(lambda request: None)
    assert (await _ask_text(tpool)).endswith("roots=0")
    await tpool.notify_roots_changed()  # servers that keep their roots ask again

    # None restores the lists.
    tpool.set_roots_handler(None)
    assert (await _ask_text(tpool)).endswith("roots=2")
    with pytest.raises(mcpmux.InvalidArgumentError, match="callable"):
        tpool.set_roots_handler("file:///a")  # type: ignore[arg-type]


async def test_a_raising_roots_handler_is_an_error_to_the_server(tpool: mcpmux.Pool) -> None:
    tpool.set_sampling_handler(lambda request: "s")
    tpool.set_elicitation_handler(lambda request: {"name": "Grace"})

    def roots(request: mcpmux.HostRequest) -> list[str]:
        raise PermissionError(f"no roots for {request.server_name} today")

    tpool.set_roots_handler(roots)
    text = await _ask_text(tpool)
    assert "no roots for t today" in text and "roots=" not in text

    # An answer that is not a list of roots fails the same way, saying why.
    tpool.set_roots_handler(lambda request: [42])
    assert "a root must be a URI, a path or a dict" in await _ask_text(tpool)
    tpool.set_roots_handler(lambda request: "file:///a")
    assert "roots must be a list" in await _ask_text(tpool)

    # The pool keeps working once the handler answers again.
    tpool.set_roots_handler(lambda request: ["file:///ok"])
    assert (await _ask_text(tpool)).endswith("roots=1")


async def test_recipes_widgets_and_the_canvas(pool: mcpmux.Pool) -> None:
    recipe = pool.register_recipe(
        "---\nwidget: chart\ndescription: Draw a bar chart of values\nschema:\n"
        "  type: object\n  properties:\n    values: {type: array}\n  required: [values]\n"
        "---\nUse it for numbers.\n"
    )
    assert isinstance(recipe, mcpmux.Recipe)
    assert recipe.name == "chart" and recipe.schema is not None and "numbers" in recipe.body
    assert pool.list_recipes() == [{"name": "chart", "description": "Draw a bar chart of values"}]
    got = pool.get_recipe("chart")
    assert got is not None and got.description == "Draw a bar chart of values"
    assert pool.get_recipe("nope") is None
    assert pool.search_recipes("bar chart")[0]["name"] == "chart"
    with pytest.raises(mcpmux.InvalidArgumentError):
        pool.register_recipe("no front matter")

    widgets: list[mcpmux.Event] = []
    pool.on("widget", widgets.append)
    r = await pool.call_tool("widget_display", {"name": "chart", "params": {"values": [1, 2]}})
    assert not r.is_error, r.text
    r = await pool.call_tool("widget_display", {"name": "chart", "params": {}})
    assert r.is_error and "invalid params" in r.text
    for _ in range(100):
        if widgets:
            break
        await asyncio.sleep(0.02)
    assert widgets[0]["name"] == "chart" and widgets[0]["params"] == {"values": [1, 2]}
    assert "chart" in str(pool.canvas())
    assert any(layer.server_name == "local" for layer in await pool.layers())
    assert any(layer.server_name == "local" for layer in pool.known_layers())


async def test_conversations_start_with_discovery_and_activate_servers(tpool: mcpmux.Pool) -> None:
    await tpool.list_tools()
    conv = tpool.conversation()
    names = [t.name for t in conv.tools()]
    assert "search_tools" in names and "t_mcp_list_tools" in names
    assert "mcp__t__echo" not in names
    assert conv.activated() == []

    listing = await conv.call("t_mcp_list_tools")
    assert "mcp__t__echo" in listing.text
    r = await conv.call("mcp__t__echo", {"text": "hey"})
    assert r.text == "hey"
    server_id = (await tpool.get_server("t")).id
    assert conv.activated() == [server_id]
    assert "mcp__t__echo" in [t.name for t in conv.tools()]

    # A conversation limited to other servers sees none of t's tools and may not call them.
    other = tpool.conversation(servers=["elsewhere"])
    assert [t.name for t in other.tools()] == ["search_tools"]
    with pytest.raises(mcpmux.InvalidArgumentError, match="disabled for this conversation"):
        await other.call("mcp__t__echo", {"text": "x"})
    assert [t.name for t in tpool.conversation(servers={"disabled": ["t"]}).tools()] == [
        "search_tools"
    ]
