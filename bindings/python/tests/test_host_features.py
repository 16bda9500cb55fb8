"""Lists asked for again past every cache, a URL a server needs the user to open, and sampling
with tools: against the test server, in both protocol eras (2026-07-28 and ``--legacy``)."""

from __future__ import annotations

import asyncio
import json
import pickle
from typing import Any

import pytest

import mcpmux

ERAS = [("modern", []), ("legacy", ["--legacy"])]


async def test_refresh_lists_what_a_server_changed_without_saying(
    pool: mcpmux.Pool, test_server: str
) -> None:
    # The server says its lists stay fresh for a minute (else each list asks it again).
    await pool.add_server("q", command=test_server, args=["--tools-ttl-ms", "60000"])
    before = [t.name for t in await pool.list_tools("q")]
    assert len(await pool.list_resources("q")) == 2
    await pool.call_tool("mcp__q__add_tool", {"name": "unannounced", "quiet": True})
    assert [t.name for t in await pool.list_tools("q")] == before
    uris = [r.uri for r in await pool.list_resources("q")]
    assert "test://added/unannounced" not in uris
    fresh = [r.uri for r in await pool.list_resources("q", refresh=True)]
    assert "test://added/unannounced" in fresh
    tools = await pool.list_tools("q", refresh=True)
    assert "unannounced" in [t.name for t in tools]
    assert "mcp__q__unannounced" in [t.id for t in await pool.list_tools()]
    assert await pool.list_prompts("q", refresh=True)
    assert await pool.list_resource_templates(refresh=True)


@pytest.mark.parametrize(("era", "args"), ERAS)
async def test_a_url_elicitation_is_an_error_with_its_url_then_an_event(
    pool: mcpmux.Pool, test_server: str, era: str, args: list[str]
) -> None:
    completed: list[mcpmux.Event] = []
    pool.on("elicitation:complete", completed.append)
    await pool.add_server(era, command=test_server, args=args)
    tool = f"mcp__{era}__connect_account"
    with pytest.raises(mcpmux.UrlElicitationRequiredError) as raised:
        await pool.call_tool(tool)
    e = raised.value
    assert e.code == "url_elicitation_required"
    [asked] = e.elicitations
    assert isinstance(asked, mcpmux.UrlElicitation)
    assert asked.url == "https://example.test/connect?elicitation=connect-example-account"
    assert asked.elicitation_id == "connect-example-account"
    assert asked.message == "Connect your example.test account."
    assert asked.url in str(e)
    # The error survives pickling (e.g. across a process pool) with what it carries.
    copy = pickle.loads(pickle.dumps(e))
    assert copy.elicitations == e.elicitations and copy.code == e.code
    for _ in range(250):
        if completed:
            break
        await asyncio.sleep(0.02)
    assert [c["elicitation_id"] for c in completed] == ["connect-example-account"]
    assert (await pool.call_tool(tool)).text == "account connected"


@pytest.mark.parametrize(("era", "args"), ERAS)
async def test_sampling_with_tools_reaches_the_model_and_back(
    pool: mcpmux.Pool, test_server: str, fake_llm: Any, era: str, args: list[str]
) -> None:
    base_url = fake_llm([{"tools": [["get_weather", {"city": "Paris"}]]}])
    agent = mcpmux.Agent(pool, mcpmux.OpenAIProvider("m", base_url=base_url, api_key="k"))
    agent.handle_sampling()  # before connecting: servers learn it when they connect
    await pool.add_server(era, command=test_server, args=args)
    result = await pool.call_tool(f"mcp__{era}__sample_with_tools")
    assert result.text == 'stop=toolUse tool_use:get_weather({"city":"Paris"})'


@pytest.mark.parametrize(("era", "args"), ERAS)
async def test_a_host_sampling_handler_declares_tools_only_when_it_says(
    pool: mcpmux.Pool, test_server: str, era: str, args: list[str]
) -> None:
    asked: list[mcpmux.HostRequest] = []

    def sample(request: mcpmux.HostRequest) -> dict[str, Any]:
        asked.append(request)
        tool = request.params["tools"][0]["name"]
        return {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "c1", "name": tool, "input": {"city": "Oslo"}}],
            "model": "python-host",
            "stopReason": "toolUse",
        }

    pool.set_sampling_handler(sample, tools=True)
    await pool.add_server(era, command=test_server, args=args)
    result = await pool.call_tool(f"mcp__{era}__sample_with_tools")
    assert result.text == 'stop=toolUse tool_use:get_weather({"city":"Oslo"})'
    assert asked[0].params["toolChoice"] == {"mode": "required"}

    pool.set_sampling_handler(sample)  # no tools: servers must not send any
    await pool.disconnect(era)
    with pytest.raises(mcpmux.Error, match="sampling"):
        await pool.call_tool(f"mcp__{era}__sample_with_tools")
    assert len(asked) == 1


@pytest.mark.parametrize(("era", "args"), ERAS)
async def test_methods_without_a_verb_go_through_by_name(
    pool: mcpmux.Pool, test_server: str, era: str, args: list[str]
) -> None:
    got: list[mcpmux.Event] = []
    pool.on("notification", got.append)
    await pool.add_server(era, command=test_server, args=args)
    answer = await pool.request(era, "test/echo", {"x": 1})
    assert answer == {"method": "test/echo", "params": {"x": 1}}
    with pytest.raises(mcpmux.ProtocolError, match="test/nothing"):
        await pool.request(era, "test/nothing")
    await pool.notify(era, "test/ping", {"y": 2})
    for _ in range(250):
        if got:
            break
        await asyncio.sleep(0.02)
    assert got[0]["method"] == "test/pong" and got[0]["params"] == {"y": 2}
    assert got[0].server_id


async def test_prompt_arguments_complete(pool: mcpmux.Pool, everything_js: str) -> None:
    await pool.add_server("everything", command="node", args=[everything_js, "stdio"])
    found = await pool.complete("everything", "department", "S", prompt="completable-prompt")
    assert isinstance(found, mcpmux.Completion) and found.values == ["Sales", "Support"]
    names = await pool.complete(
        "everything",
        "name",
        "",
        prompt="completable-prompt",
        context={"department": "Marketing"},
    )
    assert names.values == ["Grace", "Henry", "Iris"]
    with pytest.raises(mcpmux.InvalidArgumentError, match="one of prompt= and resource="):
        await pool.complete("everything", "name", "", prompt="p", resource="r")


async def test_results_are_checked_against_the_output_schema(tpool: mcpmux.Pool) -> None:
    await tpool.list_tools("t")
    kept = await tpool.call_tool("mcp__t__structured")
    assert kept.structured_content and kept.structured_content["answer"] == 42
    with pytest.raises(mcpmux.InvalidResultError) as raised:
        await tpool.call_tool("mcp__t__mismatch")
    assert raised.value.code == "invalid_result"
    assert raised.value.problems[0].startswith("/answer: ")
    taken = await tpool.call_tool("mcp__t__mismatch", validate=False)
    assert taken.structured_content == {"answer": 42}


async def test_a_callers_meta_reaches_the_server_and_max_total_caps_a_call(
    tpool: mcpmux.Pool,
) -> None:
    trace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    seen = await tpool.call_tool("mcp__t__meta", meta={"traceparent": trace})
    assert json.loads(seen.text)["traceparent"] == trace
    with pytest.raises(mcpmux.TimeoutError, match="whole call"):
        await tpool.call_tool(
            "mcp__t__sleep",
            {"ms": 5000},
            timeout=0.3,
            max_total=0.6,
            on_progress=lambda p: None,
        )
    with pytest.raises(mcpmux.InvalidArgumentError):
        await tpool.call_tool("mcp__t__echo", {"text": "x"}, max_total=0)


async def test_a_tool_call_joins_the_current_opentelemetry_trace(tpool: mcpmux.Pool) -> None:
    from opentelemetry import trace

    context = trace.SpanContext(
        trace_id=0x4BF92F3577B34DA6A3CE929D0E0E4736,
        span_id=0x00F067AA0BA902B7,
        is_remote=False,
        trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED),
    )
    with trace.use_span(trace.NonRecordingSpan(context)):
        seen = json.loads((await tpool.call_tool("mcp__t__meta")).text)
        assert seen["traceparent"] == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        # A caller's own keys win.
        mine = await tpool.call_tool("mcp__t__meta", meta={"traceparent": "00-ab-cd-00"})
        assert json.loads(mine.text)["traceparent"] == "00-ab-cd-00"
    outside = json.loads((await tpool.call_tool("mcp__t__meta")).text)
    assert "traceparent" not in outside
