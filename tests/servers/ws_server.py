"""A WebSocket MCP server for mcpmux's tests.

Built on the Python SDK 1.x, the last line that ships a WebSocket server transport
(`mcp.server.websocket`, removed in 2.x). Usage: ws_server.py PORT; it listens on
127.0.0.1:PORT/ws and prints "ready" once it does.
"""

import sys

import anyio
import uvicorn
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.websocket import websocket_server
from mcp.types import SamplingMessage, TextContent

mcp = FastMCP("ws-test")


@mcp.tool()
def echo(text: str) -> str:
    """Send the text back."""
    return text


@mcp.tool()
async def ask_host(prompt: str, ctx: Context) -> str:
    """Ask the client's LLM (sampling) and return its answer."""
    result = await ctx.session.create_message(
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text=prompt))],
        max_tokens=50,
    )
    return result.content.text if isinstance(result.content, TextContent) else str(result.content)


@mcp.tool()
async def sleep(seconds: float) -> str:
    """Wait, then answer (to stop the server mid-call)."""
    await anyio.sleep(seconds)
    return "slept"


@mcp.tool()
def big(size: int) -> str:
    """Return a text of `size` bytes (to test message size limits)."""
    return "x" * size


async def app(scope, receive, send):
    if scope["type"] == "websocket" and scope["path"] == "/ws":
        async with websocket_server(scope, receive, send) as (read, write):
            server = mcp._mcp_server
            await server.run(read, write, server.create_initialization_options())
    elif scope["type"] == "http":
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b"not found"})


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", lifespan="off")
