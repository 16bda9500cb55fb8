"""Opening pools and managing servers."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

import mcpmux
from conftest import POOL_OPTIONS


async def test_open_close_and_context_managers(config_path: str) -> None:
    pool = await mcpmux.Pool.open(config_path, request_timeout_ms=1234, **POOL_OPTIONS)
    assert pool.config_path == config_path
    assert pool.options["requestTimeoutMs"] == 1234
    assert pool.options["healthCheckIntervalMs"] == 0
    assert not pool.closed
    await pool.close()
    await pool.close()  # idempotent
    assert pool.closed

    async with mcpmux.Pool.open(config_path) as p:
        assert await p.list_servers() == []
    assert p.closed
    async with await mcpmux.Pool.open(config_path) as p2:
        assert not p2.closed
    assert p2.closed


async def test_unknown_option_is_a_clear_error(config_path: str) -> None:
    with pytest.raises(mcpmux.InvalidArgumentError, match="request_timeout_msec") as e:
        await mcpmux.Pool.open(config_path, request_timeout_msec=5)
    assert "request_timeout_ms" in str(e.value)  # the known names are listed
    assert e.value.code == "invalid_argument"
    with pytest.raises(mcpmux.InvalidArgumentError, match="pool options"):
        await mcpmux.Pool.open(config_path, request_timeout_ms="soon")


async def test_default_config_path_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "from-env.json"
    monkeypatch.setenv("MCPMUX_CONFIG", str(path))
    async with mcpmux.Pool.open() as pool:
        assert pool.config_path == str(path)


async def test_add_get_update_remove(pool: mcpmux.Pool, test_server: str) -> None:
    rec = await pool.add_server(
        "t",
        command=test_server,
        args=["--name", "x"],
        env={"A": "1"},
        timeouts={"request_ms": 5000},
    )
    assert isinstance(rec, mcpmux.ServerRecord)
    assert rec.name == "t" and rec.type == "stdio" and rec.is_active
    assert rec.config.command == test_server and rec.config.args == ["--name", "x"]
    assert rec.config.env == {"A": "1"}
    assert rec.timeouts.request_ms == 5000
    assert rec.id.startswith("mcp_")
    assert rec.to_dict()["config"]["command"] == test_server
    # The record is in the config file, in the core's camelCase JSON.
    on_disk = json.loads(Path(pool.config_path).read_text())
    assert rec.id in json.dumps(on_disk)

    assert (await pool.get_server("t")).id == rec.id
    assert (await pool.get_server(rec.id)).name == "t"
    assert [s.name for s in await pool.list_servers()] == ["t"]

    up = await pool.update_server("t", name="t2", disabled_tools=["fail"], is_trusted=True)
    assert up.id == rec.id and up.name == "t2" and up.disabled_tools == ["fail"] and up.is_trusted
    assert up.updated_at is not None
    up = await pool.update_server("t2", config={"command": test_server, "args": []})
    assert up.config.args == []

    gone = await pool.remove_server("t2")
    assert gone.id == rec.id
    assert await pool.list_servers() == []
    with pytest.raises(mcpmux.NotFoundError):
        await pool.get_server("t2")


async def test_add_server_rejects_bad_input(pool: mcpmux.Pool, test_server: str) -> None:
    with pytest.raises(mcpmux.InvalidArgumentError):
        await pool.add_server("nothing")  # neither command nor url
    with pytest.raises(mcpmux.InvalidArgumentError, match="not both"):
        await pool.add_server("x", command=test_server, config={"command": test_server})
    dup = await pool.add_server("dup", command=test_server)
    # The same server again is the one saved (a script run twice); another under its name is
    # refused, naming what differs.
    assert (await pool.add_server("dup", command=test_server)).id == dup.id
    with pytest.raises(mcpmux.InvalidArgumentError, match=r"with another config\.args: update"):
        await pool.add_server("dup", command=test_server, args=["--legacy"])
    with pytest.raises(TypeError):
        await pool.add_server("x", comand=test_server)  # type: ignore[call-arg]


async def test_a_per_client_server_is_marked_in_its_record(
    pool: mcpmux.Pool, test_server: str
) -> None:
    shared = await pool.add_server("shared", command=test_server)
    assert (shared.session_scope, shared.max_clients) == ("shared", None)
    own = await pool.add_server(
        "own", command=test_server, session_scope="perClient", max_clients=3
    )
    assert (own.session_scope, own.max_clients) == ("perClient", 3)
    back = await pool.update_server("own", session_scope="shared")
    assert back.session_scope == "shared"
    with pytest.raises(mcpmux.InvalidArgumentError, match="expected `shared` or `perClient`"):
        await pool.add_server("typo", command=test_server, session_scope="per-client")
    with pytest.raises(mcpmux.InvalidArgumentError, match="maxClients must be 1 or more"):
        await pool.add_server("none", command=test_server, max_clients=0)


async def test_add_json(pool: mcpmux.Pool, test_server: str) -> None:
    results = await pool.add_json(
        {"mcpServers": {"a": {"command": test_server}, "b": {"url": "http://127.0.0.1:9/mcp"}}}
    )
    assert sorted(r.name for r in results) == ["a", "b"]
    assert all(r.success and r.record is not None and not r.already_there for r in results)
    by_name = {r.name: r for r in results}
    assert by_name["b"].record is not None and by_name["b"].record.type == "http"
    # The same file again (an import run twice): the servers saved are the answer. The same
    # name for another server fails on its own, naming what differs.
    again = await pool.add_json(
        json.dumps(
            {
                "mcpServers": {
                    "a": {"command": test_server},
                    "b": {"url": "http://127.0.0.1:9/other"},
                }
            }
        )
    )
    assert [(r.name, r.success) for r in again] == [("a", True), ("b", False)]
    assert again[0].record is not None and by_name["a"].record is not None
    assert again[0].record.id == by_name["a"].record.id
    assert again[0].already_there and not again[1].already_there
    assert again[1].error and "with another config.url" in again[1].error
    with pytest.raises(mcpmux.InvalidArgumentError):
        await pool.add_json("{not json")


async def test_an_imported_server_waits_for_approval(pool: mcpmux.Pool, test_server: str) -> None:
    events = pool.events()
    (imported,) = await pool.add_json(
        {"mcpServers": {"a": {"command": test_server, "env": {"API_KEY": "sk-not-shown"}}}}
    )
    assert imported.record is not None and imported.record.pending

    async def pending() -> mcpmux.Event:
        async for event in events:
            if event.type == "server:pending":
                return event
        raise AssertionError("no server:pending event")

    event = await asyncio.wait_for(pending(), 5)
    await events.aclose()
    # Its fields in Python's spelling; the consent as the core writes it.
    consent = event["consent"]
    assert consent["command"] == test_server and consent["envKeys"] == ["API_KEY"]
    assert "sk-not-shown" not in repr(event)
    with pytest.raises(mcpmux.InvalidArgumentError, match="waits for your approval"):
        await pool.connect("a")
    assert [t for t in await pool.list_tools() if t.server_name == "a"] == []
    approved = await pool.approve_server("a")
    assert not approved.pending
    assert (await pool.call_tool("mcp__a__echo", {"text": "hi"})).text == "hi"


async def test_test_server_test_config_and_discover(tpool: mcpmux.Pool, test_server: str) -> None:
    r = await tpool.test_server("t")
    assert isinstance(r, mcpmux.TestResult)
    assert r.success and "echo" in r.tools and r.protocol_version
    bad = await tpool.test_config(command="/definitely/not/a/program")
    assert not bad.success and bad.error
    ok = await tpool.test_config(command=test_server, args=["--legacy"])
    assert ok.success and "sleep" in ok.tools

    d = await tpool.discover("t")
    assert {t["name"] for t in d.tools} >= {"echo", "add", "sleep"}
    assert [p["name"] for p in d.prompts] == ["greet", "ask"]
    assert {r["uri"] for r in d.resources} == {"test://hello", "test://info"}


async def test_connect_disconnect_and_states(config_path: str, test_server: str) -> None:
    # No connect-on-add: a background connect would race with the states checked here.
    async with mcpmux.Pool.open(config_path, connect_on_add=False, **POOL_OPTIONS) as pool:
        await pool.add_server("t", command=test_server)
        [st] = pool.server_states()
        assert st.name == "t" and st.state == "disconnected" and st.pid is None
        st = await pool.connect("t")
        assert st.state == "connected" and st.pid and st.protocol_version
        # What the server said of itself, kept after it disconnects.
        assert st.instructions == "Test server for mcpmux; every tool is deterministic."
        assert st.server_info and st.server_info["name"] == "mcpmux-test-server"
        assert st.capabilities and "tools" in st.capabilities
        await pool.disconnect("t")
        [st] = pool.server_states()
        assert st.state == "disconnected" and st.instructions and st.protocol_version
        states = await pool.connect_all()
        assert [s.state for s in states] == ["connected"]
        with pytest.raises(mcpmux.NotFoundError):
            await pool.connect("nope")


async def test_broken_config_file_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("{ this is not json")
    with pytest.raises(mcpmux.ConfigError) as e:
        await mcpmux.Pool.open(path)
    assert str(path) in str(e.value)
    assert path.read_text() == "{ this is not json"  # left untouched


async def test_pathlike_and_cwd(pool: mcpmux.Pool, test_server: str, tmp_path: Path) -> None:
    rec = await pool.add_server("c", command=test_server, cwd=tmp_path)
    assert rec.config.cwd == os.fspath(tmp_path)
    r = await pool.call_tool("mcp__c__cwd")
    assert r.text == os.fspath(tmp_path)


async def test_a_server_gets_none_of_this_process_secrets(
    pool: mcpmux.Pool, test_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stdio server starts with HOME, PATH, the locale and the like of this process's
    environment, and its own ``env``: not the application's model keys or its other
    variables, unless ``inherit_env=True`` asks for them (and mcpmux's own secrets never)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-of-the-application")
    monkeypatch.setenv("MCPMUX_SERVE_TOKEN", "the-gateways-own-token-0123")
    monkeypatch.setenv("APP_SETTING", "only-when-inherited")
    await pool.add_server("plain", command=test_server, env={"GIVEN": "to-this-server"})
    await pool.add_server("inherits", command=test_server, inherit_env=True)
    assert (await pool.get_server("inherits")).config.inherit_env is True

    async def env(server: str, name: str) -> str:
        return (await pool.call_tool(f"mcp__{server}__env", {"name": name})).text

    assert await env("plain", "OPENAI_API_KEY") == "OPENAI_API_KEY is not set"
    assert await env("plain", "APP_SETTING") == "APP_SETTING is not set"
    assert await env("plain", "GIVEN") == "to-this-server"
    assert await env("plain", "PATH") == os.environ["PATH"]
    assert await env("inherits", "APP_SETTING") == "only-when-inherited"
    assert await env("inherits", "OPENAI_API_KEY") == "OPENAI_API_KEY is not set"
    assert await env("inherits", "MCPMUX_SERVE_TOKEN") == "MCPMUX_SERVE_TOKEN is not set"
