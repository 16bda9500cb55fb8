"""A FastMCP 4.1 server whose tools run as tasks (the tasks extension, SEP-2663), through
`fastmcp-tasks` and its in-memory backend, over stdio: what the tests of mcpmux's task driver
call.

- `crunch(n)`: counts to n (a fifth of a second each), reporting progress with a message
  ("step k of n", which a task's `tasks/get` gives as its `statusMessage`); "crunched n".
- `approve(item)`: asks the client (an elicitation, from inside the task) whether to approve,
  and says what it answered.
- `stall(marker)`: writes `marker`.started, works until cancelled, then writes `cancelled` to
  the file `marker`.
- `explode()`: raises, so its task ends in failure.

Every one requires a task (`taskSupport: required`); tasks suggest polling every 100 ms.

    python fastmcp_tasks_server.py
"""

import asyncio
import os
from datetime import timedelta
from pathlib import Path

import mcp_types
from fastmcp import Context, FastMCP
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension

mcp = FastMCP("tasks")
mcp.add_extension(TasksExtension())
REQUIRED = TaskConfig(mode="required", poll_interval=timedelta(milliseconds=100))


@mcp.tool(task=REQUIRED)
async def crunch(n: int, ctx: Context) -> str:
    for i in range(n):
        await ctx.report_progress(i, n, message=f"step {i + 1} of {n}")
        await asyncio.sleep(0.2)
    return f"crunched {n}"


@mcp.tool(task=REQUIRED)
async def approve(item: str, ctx: Context) -> str | mcp_types.InputRequiredResult:
    answers = ctx.input_responses or {}
    answer = answers.get("approval")
    if answer is None:
        ask = mcp_types.ElicitRequest(
            params=mcp_types.ElicitRequestFormParams(
                message=f"Approve {item}?",
                requested_schema={
                    "type": "object",
                    "properties": {"ok": {"type": "boolean"}},
                    "required": ["ok"],
                },
            )
        )
        return mcp_types.InputRequiredResult(input_requests={"approval": ask})
    content = answer.content if isinstance(answer, mcp_types.ElicitResult) else None
    return f"{item}: {answer.action if hasattr(answer, 'action') else answer} {content}"


@mcp.tool(task=REQUIRED)
async def stall(marker: str) -> str:
    Path(f"{marker}.started").write_text("started")
    try:
        await asyncio.sleep(60)
    except asyncio.CancelledError:
        # Written aside and renamed: a test that sees the file must never read it half-written.
        Path(f"{marker}.tmp").write_text("cancelled")
        os.replace(f"{marker}.tmp", marker)
        raise
    return "never cancelled"


@mcp.tool(task=REQUIRED)
async def explode() -> str:
    raise RuntimeError("the reactor went critical")


if __name__ == "__main__":
    mcp.run(show_banner=False)
