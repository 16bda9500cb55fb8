"""A pool served as one MCP server over Streamable HTTP (``Pool.serve_http``), used by another
pool as an MCP client would: the served names, the token, the settings core refuses, and the
port closing when the server stops."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

import mcpmux
import mcpmux.sync
from conftest import POOL_OPTIONS


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[mcpmux.Pool]:
    """A second pool, over a config of its own: the served pool's client."""
    pool = await mcpmux.Pool.open(tmp_path / "client.json", **POOL_OPTIONS)
    try:
        yield pool
    finally:
        await pool.close()


def bearer(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token is not None else {}


async def accepts(url: str) -> bool:
    """Whether something listens at ``url``'s host and port."""
    parts = urlsplit(url)
    try:
        _, writer = await asyncio.open_connection(parts.hostname, parts.port)
    except OSError:
        return False
    writer.close()
    await writer.wait_closed()
    return True


async def closes(url: str, within: float = 5.0) -> bool:
    """Whether ``url``'s port stops accepting within ``within`` seconds (a pool's close stops
    its servers from the core's own tasks, not before ``close()`` returns)."""
    deadline = time.monotonic() + within
    while await accepts(url):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def test_a_client_pool_calls_the_served_tools(
    tpool: mcpmux.Pool, client: mcpmux.Pool
) -> None:
    server = await tpool.serve_http()
    assert isinstance(server, mcpmux.HttpServer)
    assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/mcp")
    assert urlsplit(server.url).port != 0  # port 0 asked for any free port: this is the one
    assert isinstance(server.token, str) and len(server.token) >= 32  # generated
    assert server.token not in repr(server)

    await client.add_server("fleet", url=server.url, headers=bearer(server.token))
    ids = {t.id for t in await client.list_tools("fleet")}
    # Served as `<server>__<tool>`, behind the client's own `mcp__<server>__`.
    assert {"mcp__fleet__t__echo", "mcp__fleet__t__add"} <= ids, ids
    result = await client.call_tool("mcp__fleet__t__echo", {"text": "served ✓"})
    assert result.text == "served ✓" and not result.is_error
    assert (await client.call_tool("mcp__fleet__t__add", {"a": 2, "b": 40})).text == "42"
    [state] = client.server_states()
    assert state.server_info is not None and state.server_info["name"] == "mcpmux"

    await server.stop()
    assert not await accepts(server.url), "the port still accepts after stop()"
    await server.stop()  # idempotent
    with pytest.raises(mcpmux.Error):
        await client.call_tool("mcp__fleet__t__echo", {"text": "gone"}, timeout=5)
    # The served pool itself goes on.
    assert (await tpool.call_tool("mcp__t__echo", {"text": "still"})).text == "still"


@pytest.mark.parametrize("token", ["not-the-token", None], ids=["wrong token", "no token"])
async def test_a_client_without_the_token_cannot_connect(
    tpool: mcpmux.Pool, client: mcpmux.Pool, token: str | None
) -> None:
    async with await tpool.serve_http() as server:
        await client.add_server("fleet", url=server.url, headers=bearer(token))
        # The 401 sends the client into OAuth discovery, which the served pool does not offer.
        with pytest.raises(mcpmux.ConnectionError, match="'fleet'"):
            await client.connect("fleet")
        [state] = client.server_states()
        assert state.state != "connected"
    # `async with` stopped it.
    assert not await accepts(server.url)


async def test_every_setting_reaches_core(tpool: mcpmux.Pool, client: mcpmux.Pool) -> None:
    async with await tpool.serve_http(
        addr="127.0.0.1:0",
        token="sesame-open-up-please",
        allowed_origins=["http://localhost:5173"],
        allowed_hosts=("mcpmux.test",),
        mode="search",
        auto_limit=5,
        name_budget=13,
        server_name="py-fleet",
    ) as server:
        assert server.token == "sesame-open-up-please"
        await client.add_server("fleet", url=server.url, headers=bearer("sesame-open-up-please"))
        ids = {t.id for t in await client.list_tools("fleet")}
        # The search surface instead of the tools themselves.
        assert "mcp__fleet__search_tools" in ids and "mcp__fleet__t__echo" not in ids, ids
        [state] = client.server_states()
        assert state.server_info is not None and state.server_info["name"] == "py-fleet"


async def test_no_auth_serves_on_loopback_without_a_token(
    tpool: mcpmux.Pool, client: mcpmux.Pool
) -> None:
    async with await tpool.serve_http(no_auth=True, mode="direct") as server:
        assert server.token is None
        await client.add_server("open", url=server.url)
        result = await client.call_tool("mcp__open__t__echo", {"text": "no token"})
        assert result.text == "no token"


@pytest.mark.parametrize(
    "settings,fix",
    [
        ({"addr": "localhost"}, "is not an IP address and port (e.g. 127.0.0.1:8808)"),
        ({"addr": "0.0.0.0:0", "no_auth": True}, "listen on 127.0.0.1, or keep the token"),
        ({"mode": "all"}, "direct, search or auto"),
        ({"token": "t", "no_auth": True}, "give a token or noAuth, not both"),
        ({"token": " "}, "the token is empty"),
        ({"token": "sesame"}, "fewer than 16 characters"),
        ({"allowed_origins": "http://localhost:5173"}, "expected a sequence"),
        ({"session_key": "short"}, "openssl rand -hex 32"),
        ({"oauth": {"issuer": "https://a.example"}, "token": "t"}, "give oauth, or a token"),
        ({"oauth": {"issuer": "http://auth.example.com"}}, "is not HTTPS"),
        ({"oauth": {"issuer": "https://a.example", "scope": "x"}}, "unknown field `scope`"),
    ],
    ids=["addr without port", "no_auth off loopback", "unknown mode", "token and no_auth",
         "empty token", "short token", "origins as one string", "short session key",
         "oauth and token",
         "oauth issuer over http", "oauth unknown key"],
)  # fmt: skip
async def test_a_bad_setting_says_what_to_change(
    pool: mcpmux.Pool, settings: Mapping[str, Any], fix: str
) -> None:
    with pytest.raises(mcpmux.InvalidArgumentError) as e:
        await pool.serve_http(**settings)
    assert fix in str(e.value), e.value
    assert e.value.code == "invalid_argument"


async def test_an_oauth_issuer_whose_keys_cannot_be_read_stops_the_start(
    pool: mcpmux.Pool,
) -> None:
    # Nothing listens on port 1: the key set (given, so no metadata is looked for) is
    # unreadable, and serving does not start with tokens it could never check.
    oauth = {"issuer": "http://127.0.0.1:1", "jwks_uri": "http://127.0.0.1:1/jwks"}
    with pytest.raises(mcpmux.ConnectionError) as e:
        await pool.serve_http(oauth=oauth)
    assert "the issuer's keys cannot be read: http://127.0.0.1:1/jwks" in str(e.value)


async def test_closing_the_pool_stops_what_serves_it(config_path: str, test_server: str) -> None:
    pool = await mcpmux.Pool.open(config_path, **POOL_OPTIONS)
    await pool.add_server("t", command=test_server)
    server = await pool.serve_http()
    assert await accepts(server.url)
    await pool.close()
    assert await closes(server.url), "the port still accepts after the pool closed"
    await server.stop()  # nothing left to stop, and no error


def test_sync_serve_http(config_path: str, tmp_path: Path, test_server: str) -> None:
    with mcpmux.sync.Pool(config_path, **POOL_OPTIONS) as served:
        served.add_server("t", command=test_server)
        with served.serve_http(mode="direct") as server:
            assert isinstance(server, mcpmux.sync.HttpServer)
            assert isinstance(server.async_server, mcpmux.HttpServer)
            with mcpmux.sync.Pool(tmp_path / "client.json", **POOL_OPTIONS) as client:
                client.add_server("fleet", url=server.url, headers=bearer(server.token))
                assert client.call_tool("mcp__fleet__t__echo", {"text": "sync"}).text == "sync"
        assert not asyncio.run(accepts(server.url))
        # A server left running stops with its pool; stop() after that does nothing.
        late = served.serve_http()
    late.stop()
    assert asyncio.run(closes(late.url)), "the port still accepts after the pool closed"
