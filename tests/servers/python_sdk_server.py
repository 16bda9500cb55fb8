"""A 2026-07-28 MCP server on the Python SDK 2.3 (`MCPServer`, stdio), for what such servers
do that older ones do not.

Input rounds (multi round-trip requests):
- prompt `greet_asked`: asks for a name (form elicitation), then greets it;
- resource template `asked://{thing}`: one round with only its state (still working), then
  asks for a name, then answers `{thing} for {name}`.

Changes, told on the client's `subscriptions/listen` stream only:
- tool `add_tool {name}`: adds a tool `name` (it answers `{name} was added later`);
- tool `touch {uri}`: says that the resource `uri` was updated.

Logs: tool `say {message}` logs `message` at `warning`, which the SDK sends only to a request
whose `_meta` asks for that level.

Plain: tool `echo {text}` answers `text`.
"""

import warnings
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult

server = MCPServer("mrtr")


def ask_name() -> InputRequiredResult:
    schema: Any = {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    }
    question = ElicitRequest(
        params=ElicitRequestFormParams(message="Your name?", requested_schema=schema)
    )
    return InputRequiredResult(input_requests={"name": question}, request_state="asked")


def answered_name(ctx: Context) -> str | None:
    """The name the client gave, what it did instead (`declined`), or None before it was asked."""
    if ctx.request_state != "asked":
        return None
    answer: Any = (ctx.input_responses or {}).get("name")
    data = answer.model_dump() if hasattr(answer, "model_dump") else dict(answer or {})
    if data.get("action") != "accept":
        return str(data.get("action", "no answer"))
    return str((data.get("content") or {}).get("name", ""))


@server.prompt()
def greet_asked(ctx: Context) -> str | InputRequiredResult:
    """Asks the client for a name, then greets it."""
    name = answered_name(ctx)
    return ask_name() if name is None else f"Hello, {name}!"


@server.resource("asked://{thing}")
def asked(thing: str, ctx: Context) -> str | InputRequiredResult:
    """A state-only round, a round asking for a name, then the text."""
    if ctx.request_state is None:
        return InputRequiredResult(request_state="working")
    if ctx.request_state == "working":
        return ask_name()
    return f"{thing} for {answered_name(ctx)}"


@server.tool()
async def add_tool(name: str, ctx: Context) -> str:
    """Adds a tool called `name`, and says the tool list changed."""

    def added() -> str:
        return f"{name} was added later"

    server.add_tool(added, name=name, description="Added by add_tool")
    await ctx.notify_tools_changed()
    return f"added {name}"


@server.tool()
async def touch(uri: str, ctx: Context) -> str:
    """Says that the resource `uri` was updated."""
    await ctx.notify_resource_updated(uri)
    return f"touched {uri}"


@server.tool()
def echo(text: str) -> str:
    """Answers `text` as it came: what a test that checks each call got its own answer calls."""
    return text


@server.tool()
async def say(message: str, ctx: Context) -> str:
    """Logs `message` at warning."""
    with warnings.catch_warnings():
        # Logging is deprecated in 2026-07-28 (SEP-2577) but still what servers send.
        warnings.simplefilter("ignore")
        await ctx.log("warning", message, logger_name="py")
    return "said"


@server.resource("note://{name}")
def note(name: str) -> str:
    """A note to subscribe to."""
    return f"note {name}"


if __name__ == "__main__":
    server.run("stdio")
