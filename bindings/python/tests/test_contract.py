"""The host contract (tests/contract/host_answers.json): each answer a Python callback returns
gives what the table says, the same as in C and JS. The answer goes through the binding's own
marshalling (``_host.answer_json``) and core's reader; host tools are called for real."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

import mcpmux
from conftest import REPO
from mcpmux import _host, _native

TABLE: list[dict[str, Any]] = json.loads((REPO / "tests/contract/host_answers.json").read_text())[
    "cases"
]


def _id(case: dict[str, Any]) -> str:
    return f"{case['kind']}: {case['about']}"


@pytest.mark.parametrize("case", TABLE, ids=_id)
def test_each_answer_gives_what_the_table_says(case: dict[str, Any]) -> None:
    text = _host.answer_json(case["answer"])
    if "refused" in case:
        with pytest.raises(mcpmux.Error) as e:
            _native.read_host_answer(case["kind"], text)
        assert e.value.code == case["refused"]
        assert case["says"] in str(e.value)
    else:
        assert json.loads(_native.read_host_answer(case["kind"], text)) == case["accepted"]


async def test_host_tools_answer_as_the_table_says(pool: mcpmux.Pool) -> None:
    rows = [c for c in TABLE if c["kind"] == "tool_result"]
    assert len(rows) >= 8
    for n, case in enumerate(rows):
        name = f"py_contract_{n}"
        answer = case["answer"]
        pool.register_tool(name, {"type": "object"}, lambda answer=answer: answer)
        result = await pool.call_tool(name, {})
        if "refused" in case:
            assert result.is_error and case["says"] in result.text, (case, result)
        else:
            assert result.to_dict() == case["accepted"], case


@dataclasses.dataclass
class Found:
    name: str


def test_python_values_are_made_json_first() -> None:
    # Language sugar stays in the binding: a dataclass is its dict, a result type its JSON.
    assert json.loads(_host.answer_json(Found("Ada"))) == {"name": "Ada"}
    result = mcpmux.CallToolResult.from_dict({"content": [{"type": "text", "text": "t"}]})
    read = _native.read_host_answer("tool_result", _host.answer_json(result))
    assert json.loads(read)["content"] == [{"type": "text", "text": "t"}]
    assert json.loads(_native.read_host_answer("approval", _host.answer_json(True))) == "once"
    with pytest.raises(mcpmux.InvalidArgumentError):
        _native.read_host_answer("guess", "1")
