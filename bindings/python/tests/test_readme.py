"""The README's examples as a reader runs them: each copied into a file of its own in one fresh
folder, in the README's order, and run with the installed package and `mcp-server-time` on
PATH; then the first one again, as a user runs a script twice. The example that signs in to
a remote server through a browser is only compiled: no test machine has the server."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import REPO

README = REPO / "bindings/python/README.md"

# What each example prints, found by a line only it has; None: compiled, not run.
EXPECTED: dict[str, list[str] | None] = {
    'await pool.add_server("time", command="mcp-server-time")\n        for tool': [
        "mcp__time__get_current_time",
        "'timezone': 'UTC'",
    ],
    "from mcpmux.sync import Pool": ['"timezone": "UTC"'],
    '@pool.tool\n        def add(a: int, b: int = 1) -> str:\n            """Add': [
        "5\n",
        "'city': 'Oslo'",
        "'chart'",
    ],
    "serve_http()": ["MCP endpoint: http://127.0.0.1:", '"timezone": "UTC"'],
    "class KeychainStore": None,
    "class Echo": ["The sum is 3", "finished 2"],
    "sandbox=mcpmux.Sandbox(required=True)": ['"timezone": "UTC"'],
}


def examples() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", README.read_text(), re.S | re.M)


def expected(code: str) -> list[str] | None:
    found = [lines for key, lines in EXPECTED.items() if key in code]
    assert len(found) == 1, f"an example of the README with no expectation here:\n{code}"
    return found[0]


def run(folder: Path, name: str, time_server: str) -> str:
    env = dict(os.environ, PATH=f"{Path(time_server).parent}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(
        [sys.executable, name],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"{name} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_every_example_runs_as_written_and_again(tmp_path: Path, time_server: str) -> None:
    blocks = examples()
    assert len(blocks) == len(EXPECTED), "the README's examples and this table differ"
    for i, code in enumerate(blocks, 1):
        name = f"example_{i}.py"
        (tmp_path / name).write_text(code)
        wanted = expected(code)
        if wanted is None:
            compile(code, name, "exec")
            continue
        printed = run(tmp_path, name, time_server)
        for text in wanted:
            assert text in printed, f"{name} printed:\n{printed}"
    # A script run again finds its server saved: it goes on as the first time.
    printed = run(tmp_path, "example_1.py", time_server)
    assert "mcp__time__get_current_time" in printed, printed
