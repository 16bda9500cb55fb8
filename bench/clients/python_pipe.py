"""Python's floor: asyncio on the server's raw pipes. Preformatted request lines, replies
matched to their futures by the id read from the line's first bytes, no JSON parsing: what an
asyncio client that costs nothing of its own would score.

With `--json` (the `python-pipe-json` client): the floor of a client that hands back parsed
results, which adds what no such client skips with the standard library's JSON: `json.dumps` of
the call's arguments and `json.loads` of each reply (matched to its future by the parsed id)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from typing import Any

from bench_common import args, measure, report

INIT = (
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    b'"capabilities":{},"clientInfo":{"name":"python-pipe","version":"0"}}}\n'
)
ARGUMENTS = {"text": "hello"}


async def main(parsed: bool) -> None:
    server, k, conc = args()
    loop = asyncio.get_running_loop()
    started = time.perf_counter_ns()
    proc = subprocess.Popen([server], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert proc.stdin is not None and proc.stdout is not None
    w, r = proc.stdin.fileno(), proc.stdout.fileno()
    os.set_blocking(r, False)
    waiting: dict[int, asyncio.Future[Any]] = {}
    pending = b""

    def take_lines() -> list[bytes]:
        """The whole lines the server has written since the last read; none once it closed."""
        nonlocal pending
        data = os.read(r, 1 << 16)
        if not data:
            loop.remove_reader(r)
            return []
        pending += data
        *lines, pending = pending.split(b"\n")
        return lines

    def readable() -> None:
        for line in take_lines():
            # The bench server writes `{"id":N,...`.
            start = line.index(b'"id":') + 5
            end = line.index(b",", start)
            future = waiting.pop(int(line[start:end]), None)
            if future is not None and not future.done():
                future.set_result(line)

    def readable_parsed() -> None:
        for line in take_lines():
            message = json.loads(line)
            future = waiting.pop(message["id"], None)
            if future is not None and not future.done():
                future.set_result(message)

    loop.add_reader(r, readable_parsed if parsed else readable)

    def request(id: int, line: bytes) -> asyncio.Future[Any]:
        future = loop.create_future()
        waiting[id] = future
        os.write(w, line)
        return future

    await request(0, INIT)
    os.write(w, b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    connect_ns = time.perf_counter_ns() - started
    next_id = 1

    async def call() -> None:
        nonlocal next_id
        id = next_id
        next_id += 1
        line = await request(
            id,
            b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo",'
            b'"arguments":{"text":"hello"}}}\n' % id,
        )
        assert b"hello" in line

    async def call_parsed() -> None:
        nonlocal next_id
        id = next_id
        next_id += 1
        message = await request(
            id,
            b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo",'
            b'"arguments":%s}}\n' % (id, json.dumps(ARGUMENTS).encode()),
        )
        assert message["result"]["content"][0]["text"] == "hello", message

    figures = await measure(k, conc, call_parsed if parsed else call)
    loop.remove_reader(r)
    proc.stdin.close()
    proc.wait()
    report("python-pipe-json" if parsed else "python-pipe", k, conc, connect_ns, figures)


asyncio.run(main("--json" in sys.argv[4:]))
