"""Fixtures: real MCP servers (the repository's test server, server-everything over stdio and
Streamable HTTP, mcp-server-time) and pools over a temporary config file."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import mcpmux

# The repository, for the test servers and data files: named by scripts/test-python.sh,
# which runs a copy of this suite outside the tree against the installed wheel.
REPO = Path(os.environ.get("MCPMUX_REPO") or Path(__file__).resolve().parents[3])
DEPS = Path(os.environ.get("MCPMUX_DEPS_DIR", REPO / ".deps"))
if not DEPS.is_absolute():
    DEPS = REPO / DEPS
# Set by scripts/test-python.sh, which installs every server: a missing one is then a failure.
REQUIRE = os.environ.get("MCPMUX_REQUIRE_SERVERS") == "1"


def pytest_report_header() -> str:
    return f"mcpmux {mcpmux.__version__} from {Path(mcpmux.__file__).parent}"


def pytest_sessionstart(session: pytest.Session) -> None:
    """With MCPMUX_TEST_INSTALLED set, the package under test must be the installed one:
    a suite that imported the source tree would test what no user gets."""
    if os.environ.get("MCPMUX_TEST_INSTALLED") == "1":
        where = Path(mcpmux.__file__).resolve()
        if not where.is_relative_to(Path(sys.prefix).resolve()):
            pytest.exit(f"mcpmux was imported from {where}, not from the venv {sys.prefix}", 2)


def _need(path: Path, how: str) -> str:
    if path.exists():
        return str(path)
    message = f"{path} is missing: {how}"
    if REQUIRE:
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def test_server() -> str:
    """Path of the mcpmux-test-server binary."""
    path = Path(os.environ.get("MCPMUX_TEST_SERVER", REPO / "target/debug/mcpmux-test-server"))
    return _need(path, "cargo build -p mcpmux-tests --bin mcpmux-test-server")


@pytest.fixture
def fake_llm() -> Iterator[Callable[[list[dict[str, Any]]], str]]:
    """Starts the scripted model service (mcpmux-fake-llm: OpenAI's streaming wire format on
    127.0.0.1) with a list of turns; returns its base URL. Stopped after the test."""
    path = Path(os.environ.get("MCPMUX_FAKE_LLM", REPO / "target/debug/mcpmux-fake-llm"))
    binary = _need(path, "cargo build -p mcpmux-tests --bin mcpmux-fake-llm")
    started: list[subprocess.Popen[str]] = []

    def start(turns: list[dict[str, Any]]) -> str:
        process = subprocess.Popen(
            [binary, json.dumps(turns)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        started.append(process)
        assert process.stdout is not None
        return process.stdout.readline().strip()

    yield start
    for process in started:
        assert process.stdin is not None
        process.stdin.close()  # it serves until its stdin ends
        process.wait(timeout=10)


@pytest.fixture(scope="session")
def everything_js() -> str:
    """server-everything's entry point (run with node)."""
    path = DEPS / "npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
    return _need(path, "bash scripts/test-deps.sh")


@pytest.fixture(scope="session")
def time_server() -> str:
    """mcp-server-time, a Python MCP server from PyPI."""
    return _need(DEPS / "venv/bin/mcp-server-time", "bash scripts/test-deps.sh")


@pytest.fixture(scope="session")
def tasks_server() -> list[str]:
    """FastMCP with fastmcp-tasks (tests/servers/fastmcp_tasks_server.py): tools that run as
    tasks; the command line that starts it."""
    python = _need(DEPS / "tasks-venv/bin/python", "bash scripts/test-deps.sh")
    return [python, str(REPO / "tests/servers/fastmcp_tasks_server.py")]


@pytest.fixture(scope="session")
def skills_server() -> list[str]:
    """FastMCP's skills provider (tests/servers/fastmcp_skills_server.py); append the folder of
    skills it serves."""
    python = _need(DEPS / "tasks-venv/bin/python", "bash scripts/test-deps.sh")
    return [python, str(REPO / "tests/servers/fastmcp_skills_server.py")]


@pytest.fixture
def config_path(tmp_path: Path) -> str:
    return str(tmp_path / "servers.json")


# Background health checks off: tests look at connections themselves.
POOL_OPTIONS = {"health_check_interval_ms": 0, "shutdown_timeout_ms": 2000}


@pytest.fixture
async def pool(config_path: str) -> AsyncIterator[mcpmux.Pool]:
    pool = await mcpmux.Pool.open(config_path, **POOL_OPTIONS)
    try:
        yield pool
    finally:
        await pool.close()


@pytest.fixture
async def tpool(pool: mcpmux.Pool, test_server: str) -> mcpmux.Pool:
    """A pool with the test server added as `t`."""
    await pool.add_server("t", command=test_server)
    return pool


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    # A Node server starts listening in about a second, but a busy CI machine once took over
    # 20 s to start one; a generous bound costs nothing when it is quick.
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited early with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on port {port} after {timeout} s")


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture
def everything_http(everything_js: str) -> Iterator[str]:
    """server-everything over Streamable HTTP on a free port; yields its URL."""
    port = free_port()
    proc = subprocess.Popen(
        ["node", everything_js, "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(proc)


@pytest.fixture
def test_server_http(test_server: str) -> Iterator[str]:
    """The test server over Streamable HTTP; yields its URL."""
    proc = subprocess.Popen(
        [test_server, "--http", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().decode().strip()
        assert url.startswith("http://"), url
        yield url
    finally:
        stop(proc)


def live_children() -> list[int]:
    """Pids of this process's children that are still running (not zombies)."""
    me = os.getpid()
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # The command name may contain spaces; the fields after it are fixed.
        fields = stat.rsplit(")", 1)[1].split()
        state, ppid = fields[0], int(fields[1])
        if ppid == me and state != "Z":
            out.append(int(entry))
    return out


def thread_count() -> int:
    """OS threads of this process (Rust runtime threads included)."""
    return len(os.listdir("/proc/self/task"))


def pid_alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def python() -> str:
    return sys.executable


async def cancel(task: asyncio.Task[Any]) -> float:
    """Cancels `task`, checks that it ends cancelled, and gives how long that took (seconds)."""
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return time.monotonic() - started


async def until_idle(pool: mcpmux.Pool, timeout: float = 5.0) -> None:
    """Waits until nothing is in flight in `pool` (the core's count, not Python's tasks)."""
    deadline = time.monotonic() + timeout
    while pool.in_flight and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert pool.in_flight == 0


class Hang:
    """Work that never finishes by itself: it says when it started and when it was cancelled."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()

    async def forever(self) -> None:
        self.started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
