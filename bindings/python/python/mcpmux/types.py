"""Typed results of mcpmux: frozen dataclasses built from the core's JSON.

Each has ``to_dict()``, which gives back the core's JSON object (camelCase keys) unchanged,
so nothing the server sent is lost even where no attribute names it.
"""

from __future__ import annotations

import builtins
import copy
import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = [
    "ServerConfig",
    "Timeouts",
    "ServerRecord",
    "ImportResult",
    "TestResult",
    "DiscoverResult",
    "ServerStatus",
    "ToolInfo",
    "CallToolResult",
    "ResourceInfo",
    "ResourceTemplateInfo",
    "ReadResourceResult",
    "PromptInfo",
    "GetPromptResult",
    "Progress",
    "Event",
]

_M = TypeVar("_M", bound="Model")


def camel(name: str) -> str:
    """``request_timeout_ms`` -> ``requestTimeoutMs``."""
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def snake(name: str) -> str:
    """``requestTimeoutMs`` -> ``request_timeout_ms``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@dataclass(frozen=True, kw_only=True)
class Model:
    """Base of every result type."""

    _raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The core's JSON object, camelCase keys, as a fresh copy."""
        return copy.deepcopy(self._raw)

    @classmethod
    def from_dict(cls: type[_M], data: dict[str, Any]) -> _M:
        """Builds the dataclass from the core's JSON object."""
        renames = _RENAMES.get(cls.__name__, {})
        nested = _NESTED.get(cls.__name__, {})
        kwargs: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            if f.name.startswith("_") or not f.init:
                continue
            key = renames.get(f.name, camel(f.name))
            if key not in data:
                continue
            value = data[key]
            sub = nested.get(f.name)
            if sub is not None and value is not None:
                if isinstance(value, list):
                    value = [sub.from_dict(v) for v in value]
                else:
                    value = sub.from_dict(value)
            kwargs[f.name] = value
        return cls(_raw=data, **kwargs)


@dataclass(frozen=True, kw_only=True)
class ServerConfig(Model):
    """How to reach a server: ``command``/``args``/``env``/``cwd`` (stdio) or ``url``/``headers``."""

    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Timeouts(Model):
    """Per-server time limits in milliseconds; ``None`` uses the pool's."""

    connect_ms: int | None = None
    request_ms: int | None = None


@dataclass(frozen=True, kw_only=True)
class ServerRecord(Model):
    """One server as stored in the config file."""

    id: str = ""
    name: str = ""
    type: str = ""
    scope: str = "user"
    config: ServerConfig = field(default_factory=ServerConfig)
    is_active: bool = True
    is_trusted: bool = False
    disabled_tools: list[str] = field(default_factory=list)
    disabled_auto_approve_tools: list[str] = field(default_factory=list)
    install_source: str = "manual"
    project_path: str | None = None
    created_at: int = 0
    updated_at: int | None = None
    timeouts: Timeouts = field(default_factory=Timeouts)


@dataclass(frozen=True, kw_only=True)
class ImportResult(Model):
    """The outcome of one entry of ``add_json``."""

    name: str = ""
    success: bool = False
    record: ServerRecord | None = None
    error: str | None = None


@dataclass(frozen=True, kw_only=True)
class TestResult(Model):
    """Whether a server connects, and its tool names if so."""

    __test__ = False  # not a pytest test class

    success: bool = False
    tools: list[str] = field(default_factory=list)
    error: str | None = None
    protocol_version: str | None = None
    duration_ms: int = 0


@dataclass(frozen=True, kw_only=True)
class DiscoverResult(Model):
    """Everything a server offers (MCP objects as dicts); prompts and resources may fail alone."""

    tools: list[dict[str, Any]] = field(default_factory=list)
    prompts: list[dict[str, Any]] = field(default_factory=list)
    resources: list[dict[str, Any]] = field(default_factory=list)
    prompts_error: str | None = None
    resources_error: str | None = None


@dataclass(frozen=True, kw_only=True)
class ServerStatus(Model):
    """A snapshot of one server's connection."""

    id: str = ""
    name: str = ""
    state: str = "disconnected"
    error: str | None = None
    protocol_version: str | None = None
    pid: int | None = None


@dataclass(frozen=True, kw_only=True)
class ToolInfo(Model):
    """A tool, with its pool-unique ``id`` (what ``call_tool`` takes)."""

    id: str = ""
    server_id: str = ""
    server_name: str = ""
    name: str = ""
    title: str | None = None
    description: str | None = None
    input_schema: dict[str, Any] = field(default_factory=dict)
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class SearchHit(Model):
    """A ranked result of ``search_tools``."""

    id: str = ""
    score: float = 0.0
    server_name: str = ""
    name: str = ""
    description: str = ""


def _texts(items: list[dict[str, Any]]) -> str:
    return "\n".join(i["text"] for i in items if isinstance(i.get("text"), str))


@dataclass(frozen=True, kw_only=True)
class CallToolResult(Model):
    """A tool's answer. ``is_error`` is the tool saying it failed (not an exception)."""

    content: list[dict[str, Any]] = field(default_factory=list)
    structured_content: Any = None
    is_error: bool | None = None
    meta: dict[str, Any] | None = None

    @property
    def text(self) -> str:
        """The text parts of ``content``, joined by newlines."""
        return _texts(self.content)


@dataclass(frozen=True, kw_only=True)
class ResourceInfo(Model):
    """A resource, with the server it comes from."""

    server_id: str = ""
    server_name: str = ""
    uri: str = ""
    name: str = ""
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None


@dataclass(frozen=True, kw_only=True)
class ResourceTemplateInfo(Model):
    """A resource template, with the server it comes from."""

    server_id: str = ""
    server_name: str = ""
    uri_template: str = ""
    name: str = ""
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None


@dataclass(frozen=True, kw_only=True)
class ReadResourceResult(Model):
    """The contents of a resource (each a dict with ``uri`` and ``text`` or ``blob``)."""

    contents: list[dict[str, Any]] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The text contents, joined by newlines."""
        return _texts(self.contents)


@dataclass(frozen=True, kw_only=True)
class PromptInfo(Model):
    """A prompt, with the server it comes from."""

    server_id: str = ""
    server_name: str = ""
    name: str = ""
    title: str | None = None
    description: str | None = None
    arguments: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class GetPromptResult(Model):
    """A prompt filled with arguments: its messages (dicts with ``role`` and ``content``)."""

    description: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Progress:
    """A progress notification of a tool call."""

    progress: float
    total: float | None = None
    message: str | None = None


@dataclass(frozen=True, kw_only=True)
class Event(Model):
    """Something that happened in the pool.

    ``type`` is the event name (``"server:connected"``, ``"connection:state"``,
    ``"servers:changed"``, ``"tool:called"``, ``"tools:changed"``, ``"resource:updated"``,
    ``"progress"``, ``"log"``); ``data`` holds its other fields with snake_case keys.
    """

    type: str = ""
    server_id: str | None = None
    data: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls: builtins.type[_M], data: dict[str, Any]) -> _M:
        """Builds the event from the core's JSON (``type`` tag, camelCase fields)."""
        fields = {snake(k): v for k, v in data.items() if k != "type"}
        kwargs = {"type": data.get("type", ""), "server_id": data.get("serverId"), "data": fields}
        return cls(_raw=data, **kwargs)

    def __getitem__(self, key: str) -> Any:
        """A field of ``data``: ``event["tool_id"]``."""
        return self.data[key]


# JSON keys that are not the camelCase of the attribute name.
_RENAMES: dict[str, dict[str, str]] = {
    "CallToolResult": {"meta": "_meta"},
}

# Attributes holding another model (or a list of them).
_NESTED: dict[str, dict[str, type[Model]]] = {
    "ServerRecord": {"config": ServerConfig, "timeouts": Timeouts},
    "ImportResult": {"record": ServerRecord},
}
