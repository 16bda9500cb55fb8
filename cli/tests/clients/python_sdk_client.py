"""A user of `mcpmux serve` on the Python SDK 2.3 client: lists and calls tools of three
upstream servers, reads a resource, gets a prompt, completes an argument, follows a call's
progress, and answers the sampling and elicitation requests an upstream makes during its
call; every check fails the script with what it saw.

    python_sdk_client.py stdio MCPMUX_BINARY CONFIG
    python_sdk_client.py http URL TOKEN

or, as one session's many calls (e.g. through replicas behind a load balancer), calls
demo__echo N times and checks every answer:

    python_sdk_client.py calls URL TOKEN N

or, against `mcpmux serve --mode search` in front of hundreds of tools, finds a tool with
search_tools and calls it through call_tool, never seeing the whole list:

    python_sdk_client.py search URL TOKEN

or calls `tasks__crunch` of a FastMCP server that runs it as a task, as a client that takes
no tasks (so the gateway follows the task for it), its progress followed:

    python_sdk_client.py task-tool URL TOKEN

or, as two sessions, checks that an upstream's question during B's call is never put to A,
whose call on that server came first (SERVER is a server-everything; EXPECT is `placed` when
its transport tells which call a question is for, `refused` when not):

    python_sdk_client.py wrong-client URL TOKEN SERVER EXPECT

or subscribes to the test server's test://hello, has the server announce an update, and
waits for it under the served URI:

    python_sdk_client.py subscribe URL TOKEN

or calls the test server's `ask`, whose 2026-07-28 input round asks mcpmux for a sample and
the roots, which mcpmux asks this client for:

    python_sdk_client.py ask URL TOKEN

or opens two sessions against a fleet whose `test` server is `perClient`, and checks that each
has a process of its own, ended with the session:

    python_sdk_client.py per-client URL TOKEN
"""

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

asked: list[str] = []


async def on_sampling(
    context: Any, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    asked.append("sampling")
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="sampled by the Python client"),
        model="a-model",
        stop_reason="endTurn",
    )


async def on_elicitation(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    asked.append("elicitation")
    return types.ElicitResult(action="decline")


@asynccontextmanager
async def session(argv: list[str], **handlers: Any) -> AsyncIterator[ClientSession]:
    """A session with mcpmux serve: over stdio (`stdio BINARY CONFIG`) or HTTP (`http URL
    TOKEN`), answering sampling and elicitation, with more of ClientSession's handlers."""
    handlers = {
        "sampling_callback": on_sampling,
        "elicitation_callback": on_elicitation,
        **handlers,
    }
    mode = argv[0]
    if mode == "stdio":
        binary, config = argv[1], argv[2]
        params = StdioServerParameters(
            command=binary, args=["--config", config, "serve", "--stdio", "--mode", "direct"]
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, **handlers) as s:
                yield s
    elif mode == "http":
        url, token = argv[1], argv[2]
        # The SDK's own client, as its users get it: httpx's default 5-second read timeout
        # cut the stream of a first call that starts its upstream on a busy machine, and
        # the SDK then waits for that answer forever.
        headers = {"Authorization": f"Bearer {token}"}
        async with create_mcp_http_client(headers=headers) as http:
            async with streamable_http_client(url, http_client=http) as streams:
                async with ClientSession(streams[0], streams[1], **handlers) as s:
                    yield s
    else:
        raise SystemExit(f"unknown mode {mode}")


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def check(condition: bool, what: str, seen: Any) -> None:
    if not condition:
        raise SystemExit(f"FAILED: {what}; saw {seen!r}")


async def main(argv: list[str]) -> None:
    async with session(argv) as s:
        init = await s.initialize()
        check(init.server_info.name == "mcpmux", "serverInfo.name is mcpmux", init.server_info)

        names = [t.name for t in (await s.list_tools()).tools]
        for expected in [
            "demo__echo",
            "demo__countdown",
            "everything__echo",
            "everything__get-sum",
            "py__say",
        ]:
            check(expected in names, f"tool {expected} listed", names)
        check(
            not any(n.startswith("broken__") for n in names), "the broken server drops out", names
        )
        check(all(len(n) <= 64 for n in names), "names within 64 characters", names)

        echoed = await s.call_tool("demo__echo", {"text": "through mcpmux"})
        check(text_of(echoed) == "through mcpmux", "demo__echo answers", echoed)
        summed = await s.call_tool("everything__get-sum", {"a": 2, "b": 3})
        check("5" in text_of(summed), "everything__get-sum answers", summed)
        said = await s.call_tool("py__say", {"message": "hi"})
        check(not said.is_error, "py__say answers", said)

        progress: list[float] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append(value)

        done = await s.call_tool("demo__countdown", {"steps": 3}, progress_callback=on_progress)
        check(text_of(done) == "liftoff", "demo__countdown answers", done)
        check(progress == [1.0, 2.0, 3.0], "progress arrives in order", progress)

        unknown = None
        try:
            await s.call_tool("nope__nothing", {})
        except Exception as e:  # the SDK raises the JSON-RPC error
            unknown = str(e)
        check(
            unknown is not None and "tools/list" in unknown,
            "an unknown tool names tools/list",
            unknown,
        )
        # A name in another form (the pool's id of the tool) is offered under its served name.
        misnamed = None
        try:
            await s.call_tool("mcp__demo__countdown", {})
        except Exception as e:
            misnamed = str(e)
        check(
            misnamed is not None and "did you mean demo__countdown?" in misnamed,
            "a misnamed tool's error offers its served name",
            misnamed,
        )

        resources = (await s.list_resources()).resources
        uris = [str(r.uri) for r in resources]
        check("mcpmux:demo/demo://readme" in uris, "demo's resource is listed, wrapped", uris)
        read = await s.read_resource("mcpmux:demo/demo://readme")
        check("demo server" in read.contents[0].text, "the resource reads", read)
        check(
            str(read.contents[0].uri) == "mcpmux:demo/demo://readme",
            "contents name the wrapped URI",
            read,
        )

        prompts = [p.name for p in (await s.list_prompts()).prompts]
        check("demo__greet" in prompts, "demo's prompt is listed", prompts)
        got = await s.get_prompt("demo__greet", {"name": "Ada"})
        check("Ada" in got.messages[0].content.text, "the prompt is filled", got)

        from mcp.types import PromptReference

        completion = await s.complete(
            PromptReference(type="ref/prompt", name="demo__greet"), {"name": "name", "value": "Gr"}
        )
        check(
            completion.completion.values == ["Grace"], "the prompt argument completes", completion
        )

        # server-everything asks its client (mcpmux) during these calls; mcpmux asks this one.
        sampled = await s.call_tool(
            "everything__trigger-sampling-request", {"prompt": "hi", "maxTokens": 5}
        )
        check(
            "sampled by the Python client" in text_of(sampled),
            "the sampling answer reaches the server",
            sampled,
        )
        declined = await s.call_tool("everything__trigger-elicitation-request", {})
        check(
            "declined" in text_of(declined), "the elicitation answer reaches the server", declined
        )
        check(asked == ["sampling", "elicitation"], "this client was asked, once each", asked)
    print("python sdk client: ok")


async def calls(url: str, token: str, count: int) -> None:
    async with session(["http", url, token]) as s:
        init = await s.initialize()
        check(init.server_info.name == "mcpmux", "serverInfo.name is mcpmux", init.server_info)
        for i in range(count):
            sent = f"call {i}"
            echoed = await s.call_tool("demo__echo", {"text": sent})
            check(text_of(echoed) == sent, f"call {i} answers", echoed)
    print("python sdk client: ok")


async def task_tool(url: str, token: str) -> None:
    """A tool whose upstream runs it as a task, called by a client that takes no tasks: the
    result comes as a plain result, and what the task reports while it runs (its status
    messages) as the call's progress."""
    reported: list[tuple[float, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        reported.append((value, message))

    async with session(["http", url, token]) as s:
        await s.initialize()
        crunched = await s.call_tool("tasks__crunch", {"n": 3}, progress_callback=on_progress)
        check(text_of(crunched) == "crunched 3", "the task's result, as a plain result", crunched)
    messages = [m for _, m in reported if m]
    check(bool(messages), "the task's progress reaches the caller", reported)
    check(
        all(m.startswith("step ") and m.endswith(" of 3") for m in messages),
        "the progress is the task's own messages",
        reported,
    )
    values = [v for v, _ in reported]
    check(values == sorted(values), "progress grows", reported)
    print("python sdk client: ok")


async def wrong_client(url: str, token: str, server: str, expect: str) -> None:
    """Two sessions: A holds a long call on `server` while B calls a tool of it that asks its
    client for a sample. The question is B's, never A's: placed with B's call where the
    upstream's transport tells (`expect` "placed"), else refused, as mcpmux cannot tell whose
    it is ("refused"). Alone, B is asked."""
    asked: dict[str, int] = {"A": 0, "B": 0}

    def sampler(who: str) -> Any:
        async def on_sampling(
            context: Any, params: types.CreateMessageRequestParams
        ) -> types.CreateMessageResult:
            asked[who] += 1
            return types.CreateMessageResult(
                role="assistant",
                content=types.TextContent(type="text", text=f"sampled by {who}"),
                model="a-model",
                stop_reason="endTurn",
            )

        return on_sampling

    sample = {"prompt": "hi", "maxTokens": 5}
    async with (
        session(["http", url, token], sampling_callback=sampler("A")) as a,
        session(["http", url, token], sampling_callback=sampler("B")) as b,
    ):
        await a.initialize()
        await b.initialize()
        long = asyncio.create_task(
            a.call_tool(f"{server}__trigger-long-running-operation", {"duration": 3, "steps": 3})
        )
        await asyncio.sleep(1.0)
        check(not long.done(), "A's call is still running", long)
        answered = await b.call_tool(f"{server}__trigger-sampling-request", sample)
        await long
        check(asked["A"] == 0, "A, whose call came first, is not asked B's question", asked)
        if expect == "placed":
            check("sampled by B" in text_of(answered), "B is asked its own question", answered)
            check(asked["B"] == 1, "B is asked once", asked)
        else:
            check(answered.is_error is True, "the question goes to nobody", answered)
            check("cannot tell" in text_of(answered), "mcpmux says why", answered)
            check(asked["B"] == 0, "B is not asked either", asked)
        alone = await b.call_tool(f"{server}__trigger-sampling-request", sample)
        check("sampled by B" in text_of(alone), "alone, B is asked", alone)
    print("python sdk client: ok")


async def search(url: str, token: str) -> None:
    async with session(["http", url, token]) as s:
        await s.initialize()
        names = sorted(t.name for t in (await s.list_tools()).tools)
        check(
            names == ["call_tool", "describe_tools", "search_tools"],
            "only the search tools are listed",
            names,
        )
        found = await s.call_tool("search_tools", {"query": "count down reporting progress"})
        hits = (found.structured_content or {}).get("tools", [])
        check(bool(hits) and hits[0]["name"] == "demo__countdown", "demo__countdown first", hits)
        steps = hits[0]["inputSchema"]["properties"]["steps"]
        check(steps["type"] == "integer", "the best hit comes with its input schema", hits[0])
        done = await s.call_tool("call_tool", {"name": hits[0]["name"], "arguments": {"steps": 2}})
        check(text_of(done) == "liftoff", "call_tool calls the tool found", done)
    print("python sdk client: ok")


async def subscribe(url: str, token: str) -> None:
    served = "mcpmux:test/test://hello"
    updated: asyncio.Queue[str] = asyncio.Queue()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.put_nowait(str(message.params.uri))

    async with session(["http", url, token], message_handler=on_message) as s:
        init = await s.initialize()
        caps = init.capabilities.resources
        check(caps is not None and caps.subscribe, "resources.subscribe offered", caps)
        await s.subscribe_resource(served)
        await s.call_tool("test__notify", {"what": "updated", "uri": "test://hello"})
        uri = await asyncio.wait_for(updated.get(), timeout=10)
        check(uri == served, "the update names the served URI", uri)
        await s.unsubscribe_resource(served)
    print("python sdk client: ok")


async def ask(url: str, token: str) -> None:
    async def on_roots(context: Any) -> types.ListRootsResult:
        asked.append("roots")
        return types.ListRootsResult(
            roots=[
                types.Root(uri="file:///srv/one", name="one"),
                types.Root(uri="file:///srv/two", name="two"),
            ]
        )

    async with session(["http", url, token], list_roots_callback=on_roots) as s:
        await s.initialize()
        answered = text_of(await s.call_tool("test__ask", {}))
        check("sampled by the Python client" in answered, "the sample is ours", answered)
        check("roots=2" in answered, "the server got this client's two roots", answered)
        check("roots" in asked, "this client was asked for its roots", asked)
    print("python sdk client: ok")


async def logs(url: str, token: str) -> None:
    """An upstream's log messages reach a client that set a level, at that level or above."""
    heard: asyncio.Queue[types.LoggingMessageNotificationParams] = asyncio.Queue()

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        heard.put_nowait(params)

    async with session(["http", url, token], logging_callback=on_log) as s:
        init = await s.initialize()
        check(init.capabilities.logging is not None, "logging offered", init.capabilities)
        await s.set_logging_level("info")
        for level in ["debug", "warning"]:
            await s.call_tool("test__log", {"message": f"a {level} line", "level": level})
        first = await asyncio.wait_for(heard.get(), timeout=10)
        check(first.level == "warning", "the debug line is below the level asked", first)
        check(first.logger == "test", "the logger is the server's name", first)
        check("a warning line" in str(first.data), "the server's message", first)
        check(heard.empty(), "nothing else was heard", heard)
    print("python sdk client: ok")


async def legacy_sse(url: str, token: str) -> None:
    """The HTTP+SSE transport of 2024-11-05 (`serve --sse`): a session over /sse."""
    from mcp.client.sse import sse_client

    async with sse_client(url, headers={"Authorization": f"Bearer {token}"}) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            names = [t.name for t in (await s.list_tools()).tools]
            check("demo__echo" in names, "the fleet's tools are listed", names)
            echoed = text_of(await s.call_tool("demo__echo", {"text": "over sse"}))
            check(echoed == "over sse", "a call answers on the event stream", echoed)
    print("python sdk client: ok")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def per_client(url: str, token: str) -> None:
    """Two sessions of one client program: each has a process of its own of the `perClient`
    server `test`, kept for the session, ended with it; `demo`'s is shared."""
    async with session(["http", url, token]) as a, session(["http", url, token]) as b:
        await a.initialize()
        await b.initialize()

        async def pid(s: ClientSession) -> int:
            return int(text_of(await s.call_tool("test__pid", {})))

        pa, pb = await pid(a), await pid(b)
        check(pa != pb, "each session has its own process", (pa, pb))
        check(await pid(a) == pa and await pid(b) == pb, "a session keeps its process", pa)
        echoed = [text_of(await s.call_tool("demo__echo", {"text": "x"})) for s in (a, b)]
        check(echoed == ["x", "x"], "a shared server answers both", echoed)
    # Both sessions ended (the client deletes them): their processes end with them.
    for _ in range(100):
        if not alive(pa) and not alive(pb):
            break
        await asyncio.sleep(0.1)
    check(not alive(pa) and not alive(pb), "the processes ended with their sessions", (pa, pb))
    print(f"pids {pa} {pb}")
    print("python sdk client: ok")


if __name__ == "__main__":
    if sys.argv[1] == "calls":
        asyncio.run(calls(sys.argv[2], sys.argv[3], int(sys.argv[4])))
    elif sys.argv[1] == "task-tool":
        asyncio.run(task_tool(sys.argv[2], sys.argv[3]))
    elif sys.argv[1] == "wrong-client":
        asyncio.run(wrong_client(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]))
    elif sys.argv[1] == "search":
        asyncio.run(search(sys.argv[2], sys.argv[3]))
    elif sys.argv[1] == "subscribe":
        asyncio.run(subscribe(sys.argv[2], sys.argv[3]))
    elif sys.argv[1] == "ask":
        asyncio.run(ask(sys.argv[2], sys.argv[3]))
    elif sys.argv[1] == "logs":
        asyncio.run(logs(sys.argv[2], sys.argv[3]))
    elif sys.argv[1] == "sse":
        asyncio.run(legacy_sse(sys.argv[2], sys.argv[3]))
    elif sys.argv[1] == "per-client":
        asyncio.run(per_client(sys.argv[2], sys.argv[3]))
    else:
        asyncio.run(main(sys.argv[1:]))
