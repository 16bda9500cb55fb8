"""How awaitables complete: through one wake-up channel per event loop, calls polled on the
loop's thread, results built there. Many calls at once, cancellation, several loops and
threads, arguments converted without JSON text, and results equal to what JSON would give."""

from __future__ import annotations

import asyncio
import collections
import enum
import gc
import json
import os
import stat
import threading
import time
from typing import Any

import pytest

import mcpmux
from conftest import POOL_OPTIONS, cancel


async def test_many_calls_in_flight_each_get_their_own_result(tpool: mcpmux.Pool) -> None:
    texts = [f"call {i} ✓" for i in range(400)]
    results = await asyncio.gather(*(tpool.call_tool("mcp__t__echo", {"text": t}) for t in texts))
    assert [r.text for r in results] == texts
    assert all(isinstance(r, mcpmux.CallToolResult) and not r.is_error for r in results)
    # Errors and results completing together keep their own outcome too.
    mixed = await asyncio.gather(
        *(
            tpool.call_tool("mcp__t__add", {"a": i, "b": 1})
            if i % 3
            else tpool.call_tool("mcp__t__nope")
            for i in range(60)
        ),
        return_exceptions=True,
    )
    for i, r in enumerate(mixed):
        if i % 3:
            assert isinstance(r, mcpmux.CallToolResult) and r.text == str(i + 1)
        else:
            assert isinstance(r, mcpmux.NotFoundError), r
    assert tpool.in_flight == 0


async def test_results_are_what_the_json_gives(tpool: mcpmux.Pool) -> None:
    r = await tpool.call_tool("mcp__t__structured")
    again = mcpmux.CallToolResult.from_dict(r.to_dict())
    assert r == again
    assert r.structured_content == again.structured_content and r.structured_content
    assert r.meta is None and r.is_error is False
    assert json.loads(json.dumps(r.to_dict())) == r.to_dict()
    failed = await tpool.call_tool("mcp__t__fail")
    assert failed.is_error is True and failed == mcpmux.CallToolResult.from_dict(failed.to_dict())
    assert "CallToolResult(" in repr(failed)


async def _cancelled_count(pool: mcpmux.Pool) -> int:
    return int((await pool.call_tool("mcp__t__cancelled")).text)


async def test_cancelling_a_call_reaches_the_server(tpool: mcpmux.Pool) -> None:
    before = await _cancelled_count(tpool)
    task = asyncio.create_task(tpool.call_tool("mcp__t__sleep", {"ms": 10_000}))
    await asyncio.sleep(0.3)
    assert tpool.in_flight == 1
    assert await cancel(task) < 1.0
    deadline = time.monotonic() + 5
    while (
        tpool.in_flight or await _cancelled_count(tpool) != before + 1
    ) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert tpool.in_flight == 0
    assert await _cancelled_count(tpool) == before + 1
    # Cancelled before the task ever ran: nothing reaches the server, nothing is left.
    task = asyncio.create_task(tpool.call_tool("mcp__t__hang", {"ms": 10_000}))
    await cancel(task)
    assert tpool.in_flight == 0
    # Many cancelled at once, others finishing beside them.
    sleepers = [
        asyncio.create_task(tpool.call_tool("mcp__t__hang", {"ms": 10_000})) for _ in range(20)
    ]
    echoes = [
        asyncio.create_task(tpool.call_tool("mcp__t__echo", {"text": str(i)})) for i in range(20)
    ]
    await asyncio.sleep(0.2)
    for s in sleepers:
        s.cancel()
    assert [r.text for r in await asyncio.gather(*echoes)] == [str(i) for i in range(20)]
    assert all(r is not None for r in await asyncio.gather(*sleepers, return_exceptions=True))
    deadline = time.monotonic() + 5
    while tpool.in_flight and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert tpool.in_flight == 0
    assert (await tpool.call_tool("mcp__t__echo", {"text": "after"})).text == "after"


def test_one_pool_across_event_loops_and_threads(config_path: str, test_server: str) -> None:
    async def setup() -> mcpmux.Pool:
        pool = await mcpmux.Pool.open(config_path, **POOL_OPTIONS)
        await pool.add_server("t", command=test_server)
        return pool

    first = asyncio.new_event_loop()
    pool = first.run_until_complete(setup())
    try:
        # A new loop on this thread each time (the last one closed in between).
        for i in range(3):
            assert (
                asyncio.run(pool.call_tool("mcp__t__echo", {"text": f"run {i}"})).text == f"run {i}"
            )
        # The first loop, not closed, still gets its results.
        assert first.run_until_complete(pool.call_tool("mcp__t__add", {"a": 1, "b": 2})).text == "3"

        # Loops on several threads at once.
        results: dict[int, list[str]] = {}
        errors: list[BaseException] = []

        def worker(n: int) -> None:
            async def many() -> list[str]:
                rs = await asyncio.gather(
                    *(pool.call_tool("mcp__t__add", {"a": n, "b": j}) for j in range(100))
                )
                return [r.text for r in rs]

            try:
                results[n] = asyncio.run(many())
            except BaseException as e:  # reported below
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()

        # Meanwhile, calls on the first loop.
        async def echoes() -> list[mcpmux.CallToolResult]:
            return await asyncio.gather(
                *(pool.call_tool("mcp__t__echo", {"text": str(i)}) for i in range(100))
            )

        texts = first.run_until_complete(echoes())
        for t in threads:
            t.join(30)
        assert not errors, errors
        assert [r.text for r in texts] == [str(i) for i in range(100)]
        assert results == {n: [str(n + j) for j in range(100)] for n in range(4)}
    finally:
        first.run_until_complete(pool.close())
        first.close()


def _watched_pipes(event_loop: asyncio.AbstractEventLoop) -> set[int]:
    """The pipes `event_loop` watches, by inode (a server's stdout, once a call wrote to it).
    The completion channel and asyncio's own are sockets, not pipes."""
    selector = event_loop._selector  # type: ignore[attr-defined]
    pipes: set[int] = set()
    for key in selector.get_map().values():
        st = os.fstat(key.fd)
        if stat.S_ISFIFO(st.st_mode):
            pipes.add(st.st_ino)
    return pipes


async def _until(check: Any, what: str) -> None:
    for _ in range(200):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(what)


async def test_the_loop_reads_a_stdio_servers_replies_itself(tpool: mcpmux.Pool) -> None:
    # A reply read on the loop's own thread reaches its caller without a runtime thread
    # waking the loop: the loop watches the server's stdout from the first call on.
    event_loop = asyncio.get_running_loop()
    assert _watched_pipes(event_loop) == set()
    assert (await tpool.call_tool("mcp__t__echo", {"text": "a"})).text == "a"
    first = _watched_pipes(event_loop)
    assert len(first) == 1, first

    many = await asyncio.gather(
        *(tpool.call_tool("mcp__t__add", {"a": i, "b": 1}) for i in range(300))
    )
    assert [r.text for r in many] == [str(i + 1) for i in range(300)]
    # Everything else the server says still reaches the pool (rmcp's side of the pipe).
    assert any(t.name == "echo" for t in await tpool.list_tools())
    assert _watched_pipes(event_loop) == first

    # A new connection's pipe is watched in its place; the old one is given up at its end.
    await tpool.disconnect("t")
    await _until(lambda: _watched_pipes(event_loop) == set(), "the ended pipe is unwatched")
    assert (await tpool.call_tool("mcp__t__echo", {"text": "b"})).text == "b"
    second = _watched_pipes(event_loop)
    assert len(second) == 1 and second != first, (first, second)


async def test_a_burst_of_notifications_during_a_call_all_arrive(tpool: mcpmux.Pool) -> None:
    # 5,000 progress notifications back to back before the reply, read by the loop: each
    # reaches the callback in order, and the loop still watches the pipe after. (Should the
    # session fall behind, the loop stops reading and the runtime reads at the session's pace;
    # the core's tests force that case.)
    event_loop = asyncio.get_running_loop()
    assert (await tpool.call_tool("mcp__t__echo", {"text": "a"})).text == "a"
    watched = _watched_pipes(event_loop)
    assert len(watched) == 1, watched
    heard: list[float] = []
    result = await tpool.call_tool(
        "mcp__t__sleep", {"ms": 0, "burst": 5000}, on_progress=lambda p: heard.append(p.progress)
    )
    assert result.text == "slept"
    await _until(lambda: len(heard) == 5000, "every progress notification arrives")
    assert heard == [float(i) for i in range(1, 5001)]
    assert (await tpool.call_tool("mcp__t__echo", {"text": "b"})).text == "b"
    assert _watched_pipes(event_loop) == watched


def test_when_the_watching_loop_is_gone_the_next_loop_watches(
    config_path: str, test_server: str
) -> None:
    async def setup() -> mcpmux.Pool:
        pool = await mcpmux.Pool.open(config_path, **POOL_OPTIONS)
        await pool.add_server("t", command=test_server)
        return pool

    async def echo_watching(text: str) -> set[int]:
        assert (await pool.call_tool("mcp__t__echo", {"text": text})).text == text
        return _watched_pipes(asyncio.get_running_loop())

    first = asyncio.new_event_loop()
    second = asyncio.new_event_loop()
    try:
        pool = first.run_until_complete(setup())
        assert len(first.run_until_complete(echo_watching("first"))) == 1
        # While the first loop watches, another loop's calls are served by the runtime's reader.
        assert second.run_until_complete(echo_watching("second")) == set()
        first.close()
        del first
        gc.collect()
        # The first loop is gone: the second watches from its next call on.
        assert len(second.run_until_complete(echo_watching("again"))) == 1
        second.run_until_complete(pool.close())
    finally:
        second.close()


def test_a_call_needs_a_running_loop() -> None:
    # The native awaitable belongs to the running loop; outside any there is a clear error.
    from mcpmux import _native

    with pytest.raises(RuntimeError, match="no running event loop"):
        _native.open_pool("{}")


class Color(enum.IntEnum):
    RED = 1


@pytest.mark.parametrize(
    "args",
    [
        {},
        {
            "s": "héllo ✓\u0000",
            "i": -(2**63),
            "u": 2**64 - 1,
            "f": 1.5,
            "whole": 2.0,
            "t": True,
            "n": None,
        },
        {"nested": {"list": [1, [2, {"x": (3, 4.25)}]], "empty": {}, "tuple": ()}},
        # Beyond the direct conversion: json.dumps decides, as it always did.
        {"big": 2**70},
        {1: "int key", None: "none key", 2.5: "float key"},
        {True: "bool key", False: "other bool key"},
        {"ordered": collections.OrderedDict([("b", 1), ("a", 2)])},
        {"enum": Color.RED},
        {"deep": json.loads("[" * 100 + "]" * 100)},
    ],
)
async def test_arguments_reach_tools_as_json_dumps_writes_them(
    pool: mcpmux.Pool, args: dict[Any, Any]
) -> None:
    seen: list[dict[str, Any]] = []

    def record(**kwargs: Any) -> str:
        seen.append(kwargs)
        return "ok"

    pool.register_tool("record", {"type": "object"}, record)
    assert (await pool.call_tool("record", args)).text == "ok"
    assert seen == [json.loads(json.dumps(args))]


async def test_arguments_json_cannot_write(pool: mcpmux.Pool) -> None:
    pool.register_tool("record", {"type": "object"}, lambda **kw: "ok")
    with pytest.raises(mcpmux.InvalidArgumentError, match="not JSON"):
        await pool.call_tool("record", {"set": {1, 2}})
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    with pytest.raises(mcpmux.InvalidArgumentError, match="not JSON"):
        await pool.call_tool("record", {"cycle": cyclic})
    # NaN is written by json.dumps but is not JSON: the core refuses it.
    with pytest.raises(mcpmux.InvalidArgumentError):
        await pool.call_tool("record", {"x": float("nan")})
    with pytest.raises(mcpmux.InvalidArgumentError, match="JSON object"):
        await pool.call_tool("record", (1, 2))  # type: ignore[arg-type]
    assert (await pool.call_tool("record", None)).text == "ok"
