"""A sandboxed stdio server, from Python: the hostile probe server of the tests reads the
user's key and writes outside its folder without a sandbox, and cannot in one."""

from __future__ import annotations

from pathlib import Path

import pytest

import mcpmux


@pytest.fixture
def probe(test_server: str) -> str:
    return str(Path(test_server).with_name("mcpmux-probe-server"))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh/id_rsa").write_text("-----BEGIN FAKE KEY-----")
    (tmp_path / "project/out").mkdir(parents=True)
    (tmp_path / "project/notes.md").write_text("# notes")
    return tmp_path


async def test_a_sandboxed_server_gets_what_it_is_granted_and_nothing_else(
    pool: mcpmux.Pool, probe: str, home: Path
) -> None:
    sandbox = mcpmux.Sandbox(read=[str(home / "project")], write=[str(home / "project/out")])
    record = await pool.add_server("jailed", command=probe, sandbox=sandbox)
    assert record.config.sandbox == sandbox
    # A dict with Python's spelling is the same sandbox.
    await pool.add_server("free", command=probe)
    await pool.add_server("few", command=probe, sandbox={"open_files": 32, "network": "none"})

    async def probe_as(server: str, **attempt: str) -> mcpmux.CallToolResult:
        return await pool.call_tool(f"mcp__{server}__probe", attempt)

    key = str(home / ".ssh/id_rsa")
    for attempt in ({"read": key}, {"write": str(home / "planted.sh")}):
        assert not (await probe_as("free", **attempt)).is_error
        denied = await probe_as("jailed", **attempt)
        assert denied.is_error and "Permission denied" in denied.text, denied.text
    notes = await probe_as("jailed", read=str(home / "project/notes.md"))
    assert notes.text == "ok: read 7 bytes"
    written = await probe_as("jailed", write=str(home / "project/out/report.md"))
    assert not written.is_error, written.text
    too_many = await probe_as("few", holdFiles="64")
    assert too_many.is_error and "Too many open files" in too_many.text


async def test_a_sandbox_for_a_remote_server_is_refused_with_what_to_change(
    pool: mcpmux.Pool,
) -> None:
    with pytest.raises(mcpmux.InvalidArgumentError, match="only a stdio server"):
        await pool.add_server("remote", url="http://127.0.0.1:9/mcp", sandbox={})
    with pytest.raises(mcpmux.InvalidArgumentError, match="unknown field"):
        await pool.add_server("typo", command="x", sandbox={"raed": ["/"]})
