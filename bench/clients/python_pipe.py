"""Python's floor: asyncio on the server's raw pipes. Preformatted request lines, replies
matched to their futures by the id read from the line's first bytes, no JSON parsing: what an
asyncio client that costs nothing of its own would score."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time

from bench_common import args, measure, report

INIT = (
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    b'"capabilities":{},"clientInfo":{"name":"python-pipe","version":"0"}}}\n'
)


async def main() -> None:
    server, k, conc = args()
    loop = asyncio.get_running_loop()
    started = time.perf_counter_ns()
    proc = subprocess.Popen([server], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert proc.stdin is not None and proc.stdout is not None
    w, r = proc.stdin.fileno(), proc.stdout.fileno()
    os.set_blocking(r, False)
    waiting: dict[int, asyncio.Future[bytes]] = {}
    pending = b""

    def readable() -> None:
        nonlocal pending
        data = os.read(r, 1 << 16)
        if not data:
            loop.remove_reader(r)
            return
        pending += data
        *lines, pending = pending.split(b"\n")
        for line in lines:
            # The bench server writes `{"jsonrpc":"2.0","id":N,...`.
            start = line.index(b'"id":') + 5
            end = line.index(b",", start)
            future = waiting.pop(int(line[start:end]), None)
            if future is not None and not future.done():
                future.set_result(line)

    loop.add_reader(r, readable)

    def request(id: int, line: bytes) -> asyncio.Future[bytes]:
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

    figures = await measure(k, conc, call)
    loop.remove_reader(r)
    proc.stdin.close()
    proc.wait()
    report("python-pipe", k, conc, connect_ns, figures)


asyncio.run(main())
