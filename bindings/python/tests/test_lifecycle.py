"""Nothing is left behind: no threads, no child processes; and a forked child works."""

from __future__ import annotations

import asyncio
import os
import time

import mcpmux
from conftest import POOL_OPTIONS, live_children, pid_alive, thread_count


async def test_close_leaves_no_processes_or_threads(config_path: str, test_server: str) -> None:
    # The runtime's worker threads start with the first pool and stay: warm them up first.
    async with mcpmux.Pool.open(config_path, **POOL_OPTIONS) as warm:
        await warm.list_servers()
    await asyncio.sleep(1.0)
    threads_before = thread_count()
    children_before = live_children()

    pool = await mcpmux.Pool.open(config_path, **POOL_OPTIONS)
    await pool.add_server("a", command=test_server)
    await pool.add_server("b", command=test_server, args=["--legacy"])
    pool.on("*", lambda e: None)
    events = pool.events()
    await asyncio.gather(*(pool.call_tool("mcp__a__echo", {"text": str(i)}) for i in range(50)))
    await pool.call_tool("mcp__b__echo", {"text": "b"})
    grandchild = int((await pool.call_tool("mcp__a__spawn_grandchild")).text)
    pids = [s.pid for s in pool.server_states()]
    assert all(pids) and all(pid_alive(p) for p in pids if p)
    assert len(live_children()) == len(children_before) + 2
    await pool.close()
    assert await asyncio.wait_for(_drain(events), 5) >= 0

    assert not any(pid_alive(p) for p in pids if p)
    assert not pid_alive(grandchild)  # the server's process group went too
    assert live_children() == children_before
    # Idle blocking threads of the runtime go away after their keep-alive.
    deadline = time.monotonic() + 5
    while thread_count() > threads_before and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert thread_count() <= threads_before


async def _drain(events: mcpmux.EventStream) -> int:
    n = 0
    async for _ in events:
        n += 1
    return n


def test_forked_child_can_use_a_new_pool(config_path: str, test_server: str) -> None:
    async def use(pool: mcpmux.Pool) -> str:
        return (await pool.call_tool("mcp__t__echo", {"text": "child"})).text

    async def parent_setup() -> mcpmux.Pool:
        pool = await mcpmux.Pool.open(config_path, **POOL_OPTIONS)
        await pool.add_server("t", command=test_server)
        await pool.call_tool("mcp__t__echo", {"text": "parent"})
        return pool

    loop = asyncio.new_event_loop()
    try:
        parent_pool = loop.run_until_complete(parent_setup())
        parent_server = parent_pool.server_states()[0].pid
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: report through the pipe, never return into pytest
            code = 1
            try:
                message = "ok"
                try:
                    parent_pool.server_states()
                    message = "the parent's pool worked in the child"
                except mcpmux.InvalidArgumentError as e:
                    if "fork" not in str(e):
                        message = f"unclear error: {e}"

                async def child() -> str:
                    async with mcpmux.Pool.open(config_path, **POOL_OPTIONS) as pool:
                        return await asyncio.wait_for(use(pool), 20)

                text = asyncio.run(child())
                if message == "ok" and text != "child":
                    message = f"unexpected answer {text!r}"
                os.write(write_fd, message.encode())
                code = 0
            finally:
                os._exit(code)
        os.close(write_fd)
        _, status = os.waitpid(pid, 0)
        report = os.read(read_fd, 1000).decode()
        os.close(read_fd)
        assert os.WEXITSTATUS(status) == 0 and report == "ok", report
        # The parent's pool and server are untouched by the child.
        assert parent_server and pid_alive(parent_server)
        assert (
            loop.run_until_complete(parent_pool.call_tool("mcp__t__echo", {"text": "p"})).text
            == "p"
        )
        loop.run_until_complete(parent_pool.close())
    finally:
        loop.close()
