"""A user of `mcpmux serve` on the Python SDK 2.3 `Client` in its default mode, which finds the
server's protocol with `server/discover` and speaks 2026-07-28 to it: lists the tools, calls
tools of a 2026-07-28 upstream and of a legacy one (server-everything, which sends no
`resultType`), follows a call's progress, reads a resource, gets a prompt and completes an
argument. The SDK validates every answer against its models; this script also checks every
answer on the wire against the specification's JSON Schema of 2026-07-28 (SCHEMA). Any
failure ends the script with what it saw.

    python_sdk_modern_client.py SCHEMA stdio MCPMUX_BINARY CONFIG
    python_sdk_modern_client.py SCHEMA http URL TOKEN
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import jsonschema
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage
from mcp_types import PromptReference

# The schema's definition of each method's result.
RESULTS = {
    "server/discover": "DiscoverResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult",
    "resources/read": "ReadResourceResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "completion/complete": "CompleteResult",
}


def check(condition: bool, what: str, seen: Any) -> None:
    if not condition:
        raise SystemExit(f"FAILED: {what}; saw {seen!r}")


class Wire:
    """What went out (request id -> method) and every message that came in."""

    def __init__(self) -> None:
        self.methods: dict[Any, str] = {}
        self.incoming: list[dict[str, Any]] = []


def dumped(item: Any) -> dict[str, Any]:
    return item.message.model_dump(by_alias=True, mode="json", exclude_unset=True)


class Tapped:
    """A stream of the SDK's, looked at: the SDK enters and closes it, which dunder methods
    (not looked up through `__getattr__`) must pass on."""

    def __init__(self, inner: Any, wire: Wire) -> None:
        self._inner, self._wire = inner, wire

    async def __aenter__(self) -> Tapped:
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class TappedRead(Tapped):
    def _seen(self, item: Any) -> Any:
        if isinstance(item, SessionMessage):
            self._wire.incoming.append(dumped(item))
        return item

    async def receive(self) -> Any:
        return self._seen(await self._inner.receive())

    def __aiter__(self) -> TappedRead:
        return self

    async def __anext__(self) -> Any:
        return self._seen(await self._inner.__anext__())


class TappedWrite(Tapped):
    async def send(self, item: Any) -> None:
        message = dumped(item)
        if "method" in message and "id" in message:
            self._wire.methods[message["id"]] = message["method"]
        await self._inner.send(item)


@asynccontextmanager
async def tapped(transport: Any, wire: Wire) -> AsyncIterator[tuple[Any, Any]]:
    async with transport as (read, write):
        yield TappedRead(read, wire), TappedWrite(write, wire)


@asynccontextmanager
async def connected(argv: list[str], wire: Wire) -> AsyncIterator[Client]:
    if argv[0] == "stdio":
        params = StdioServerParameters(
            command=argv[1], args=["--config", argv[2], "serve", "--stdio", "--mode", "direct"]
        )
        async with Client(tapped(stdio_client(params), wire), cache=None) as client:
            yield client
    else:
        headers = {"Authorization": f"Bearer {argv[2]}"}
        timeout = httpx2.Timeout(30, read=300)
        async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http:
            transport = streamable_http_client(argv[1], http_client=http)
            async with Client(tapped(transport, wire), cache=None) as client:
                yield client


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def use(client: Client) -> None:
    check(client.protocol_version == "2026-07-28", "2026-07-28 is spoken", client.protocol_version)
    names = [t.name for t in (await client.list_tools()).tools]
    for expected in ["demo__echo", "demo__countdown", "everything__get-sum", "py__say"]:
        check(expected in names, f"tool {expected} listed", names)

    echoed = await client.call_tool("demo__echo", {"text": "through mcpmux"})
    check(text_of(echoed) == "through mcpmux", "demo__echo answers", echoed)
    summed = await client.call_tool("everything__get-sum", {"a": 2, "b": 3})
    check("5" in text_of(summed), "a legacy upstream's tool answers", summed)
    said = await client.call_tool("py__say", {"message": "hi"})
    check(not said.is_error, "a Python SDK upstream's tool answers", said)

    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    done = await client.call_tool("demo__countdown", {"steps": 3}, progress_callback=on_progress)
    check(text_of(done) == "liftoff", "demo__countdown answers", done)
    check(progress == [1.0, 2.0, 3.0], "progress arrives in order", progress)

    read = await client.read_resource("mcpmux:demo/demo://readme")
    check("demo server" in read.contents[0].text, "the resource reads", read)
    got = await client.get_prompt("demo__greet", {"name": "Ada"})
    check("Ada" in got.messages[0].content.text, "the prompt is filled", got)
    completion = await client.complete(
        PromptReference(type="ref/prompt", name="demo__greet"), {"name": "name", "value": "Gr"}
    )
    check(completion.completion.values == ["Grace"], "the argument completes", completion)


def validate(wire: Wire, schema: dict[str, Any]) -> None:
    """Every answer and notification on the wire, against the schema."""

    def violations(definition: str, value: Any) -> list[str]:
        root = {"$schema": schema["$schema"], "$defs": schema["$defs"]}
        root["$ref"] = f"#/$defs/{definition}"
        errors = jsonschema.Draft202012Validator(root).iter_errors(value)
        return [f"{definition} {list(e.absolute_path)}: {e.message}" for e in errors]

    problems: list[str] = []
    checked = 0
    for message in wire.incoming:
        if "result" in message and "id" in message:
            method = wire.methods.get(message["id"], "?")
            result = message["result"]
            if result.get("resultType") != "complete":
                problems.append(f"{method}: resultType {result.get('resultType')!r}")
            if method in RESULTS:
                problems += [f"{method}: {v}" for v in violations(RESULTS[method], result)]
                checked += 1
        elif message.get("method") == "notifications/progress":
            problems += violations("ProgressNotification", message)
        elif "error" in message:
            problems += violations("JSONRPCErrorResponse", message)
    check(not problems, "every answer is what the 2026-07-28 schema says", problems)
    check(checked >= 9, "the answers were seen on the wire", checked)


async def main(argv: list[str]) -> None:
    schema = json.loads(Path(argv[0]).read_text())
    wire = Wire()
    async with connected(argv[1:], wire) as client:
        await use(client)
    validate(wire, schema)
    print("python sdk modern client: ok")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])
