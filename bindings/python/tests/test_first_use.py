"""A fresh config as a new user meets it: a real server added and, at once, an agent run
against the scripted model service over HTTP (mcpmux-fake-llm, OpenAI's wire format), with
no listing call in between. The model searches, then calls the tool its search found."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

import mcpmux

SCRIPT: list[dict[str, Any]] = [
    {"tools": [["search_tools", {"query": "echo"}]]},
    {"callFound": "echo", "arguments": {"message": "hi from Python"}},
    {"text": "It said hi."},
]


def tool_results(result: mcpmux.AgentResult) -> list[str]:
    return [
        block["content"]
        for message in result.transcript
        for block in message["content"]
        if block["type"] == "tool_result"
    ]


@pytest.mark.parametrize("with_broken", [False, True], ids=["alone", "beside_a_broken_server"])
async def test_the_agent_finds_and_calls_a_tool_on_a_fresh_config(
    config_path: str,
    everything_js: str,
    fake_llm: Callable[[list[dict[str, Any]]], str],
    with_broken: bool,
) -> None:
    base_url = fake_llm(SCRIPT)
    # The defaults a new user gets: adding a server connects it.
    async with await mcpmux.Pool.open(config_path, health_check_interval_ms=0) as pool:
        await pool.add_server(
            "everything", command="node", args=[everything_js, "stdio"], is_trusted=True
        )
        if with_broken:
            await pool.add_server("broken", command="/nonexistent/server")
        agent = mcpmux.Agent(pool, mcpmux.OpenAIProvider("m", base_url=base_url))
        result = await agent.run("Use the echo tool and say hi")
        layers = {layer.server_name: layer for layer in await pool.layers()}

    assert result.stop == "finished" and result.text == "It said hi.", result
    search, echoed = tool_results(result)[:2]
    answer = json.loads(search)
    assert "mcp__everything__echo" in [hit["id"] for hit in answer["tools"]], answer
    assert "Echo: hi from Python" in echoed
    assert layers["everything"].tools and layers["everything"].error is None
    if with_broken:
        assert answer["unavailable"][0]["server"] == "broken", answer
        assert "cannot start `/nonexistent/server`" in answer["unavailable"][0]["error"]
        assert "cannot start" in (layers["broken"].error or "")
    else:
        assert "unavailable" not in answer


async def test_a_reply_over_the_limit_is_message_too_large(
    config_path: str, test_server: str
) -> None:
    async with await mcpmux.Pool.open(
        config_path, health_check_interval_ms=0, max_message_bytes=65536
    ) as pool:
        await pool.add_server("t", command=test_server)
        with pytest.raises(mcpmux.MessageTooLargeError) as e:
            await pool.call_tool("mcp__t__big", {"size": 100_000})
        assert e.value.code == "message_too_large"
        # The reply: 100,000 bytes of filler in its JSON-RPC envelope.
        assert "server 't' sent a message of 100" in str(e.value)
        assert "over the limit of 65536 bytes (64 KiB)" in str(e.value)
        assert "max_message_bytes" in str(e.value)
        assert (await pool.call_tool("mcp__t__big", {"size": 3})).text == "xxx"
