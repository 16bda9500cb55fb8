"""The agent and its providers (core's ``mcpmux::agent``), and conversations."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from . import _native
from ._host import answer_json, approve_adapter
from .errors import InvalidArgumentError
from .types import (
    AgentResult,
    ApprovalRequest,
    CallToolResult,
    ChatRequest,
    Message,
    ToolDef,
    camel,
)

if TYPE_CHECKING:
    from ._pool import Pool

__all__ = [
    "Agent",
    "AnthropicProvider",
    "ChatProvider",
    "Conversation",
    "OllamaProvider",
    "OpenAIProvider",
    "Provider",
    "PythonProvider",
    "RemoteProvider",
    "servers_filter",
]

TokenCallback = Callable[[str], Any]
ApproveCallback = Callable[[ApprovalRequest], Any]


class ChatProvider(Protocol):
    """A provider implemented in Python: ``chat(request)`` or ``chat(request, on_token)``,
    sync or async, answering a :class:`mcpmux.types.ChatResponse` dict (or just text)."""

    def chat(self, request: ChatRequest, /, *args: Any) -> Any: ...


def servers_filter(servers: Sequence[str] | Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``["a", "b"]`` (only these servers) or ``{"enabled": [...], "disabled": [...]}`` as
    core's server filter."""
    if servers is None:
        return None
    if isinstance(servers, str):
        raise InvalidArgumentError("servers must be a list of server names or ids, not a string")
    if isinstance(servers, Mapping):
        unknown = sorted(set(servers) - {"enabled", "disabled"})
        if unknown:
            raise InvalidArgumentError(
                f"unknown server filter key(s) {', '.join(unknown)}; use 'enabled' and 'disabled'"
            )
        return {k: list(v) for k, v in servers.items() if v is not None}
    return {"enabled": list(servers)}


class Provider:
    """A model provider of the core: OpenAI-compatible, a key-adding proxy, Anthropic, Ollama
    (all streaming, retrying 429/5xx), or one implemented in Python (:class:`PythonProvider`).

    ``Provider.from_config({"type": "openai", "model": "gpt-4o-mini", "apiKey": ...})``.
    """

    def __init__(self, native: _native.NativeProvider) -> None:
        """Internal: use :meth:`from_config` or a subclass."""
        self._native = native

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Provider:
        """A provider from a config dict (camelCase or snake_case keys): ``type`` (``openai``,
        ``remote``, ``anthropic``, ``ollama``), ``model``, ``baseUrl``, ``apiKey``,
        ``headers``, ``proxyUrl``."""
        body = {camel(k): v for k, v in config.items()}
        return Provider(_native.create_provider(json.dumps(body)))

    @property
    def name(self) -> str:
        """A short name (``openai``, ``anthropic``, ...)."""
        return self._native.name()

    @property
    def model(self) -> str:
        """The model requests go to."""
        return self._native.model()

    def set_model(self, model: str) -> None:
        """Switches the model for later requests."""
        self._native.set_model(model)

    def __repr__(self) -> str:
        return f"<mcpmux.Provider {self.name} {self.model!r}>"


def _config(kind: str, model: str, **fields: Any) -> str:
    body: dict[str, Any] = {"type": kind, "model": model}
    body.update({camel(k): v for k, v in fields.items() if v is not None})
    return json.dumps(body)


class OpenAIProvider(Provider):
    """Any OpenAI-compatible Chat Completions API (OpenAI, Mistral, vLLM, LM Studio, ...)."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        hdrs = dict(headers) if headers is not None else None
        super().__init__(
            _native.create_provider(
                _config("openai", model, base_url=base_url, api_key=api_key, headers=hdrs)
            )
        )


class RemoteProvider(Provider):
    """An OpenAI-compatible proxy that adds the key itself."""

    def __init__(self, model: str, *, proxy_url: str) -> None:
        super().__init__(_native.create_provider(_config("remote", model, proxy_url=proxy_url)))


class AnthropicProvider(Provider):
    """Anthropic's Messages API."""

    def __init__(
        self, model: str, *, base_url: str | None = None, api_key: str | None = None
    ) -> None:
        super().__init__(
            _native.create_provider(_config("anthropic", model, base_url=base_url, api_key=api_key))
        )


class OllamaProvider(Provider):
    """Ollama's ``/api/chat``."""

    def __init__(self, model: str, *, base_url: str | None = None) -> None:
        super().__init__(_native.create_provider(_config("ollama", model, base_url=base_url)))


def _wants_on_token(fn: Callable[..., Any]) -> bool:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return True
    if any(p.name == "on_token" or p.kind == p.VAR_KEYWORD for p in params):
        return True
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in params)


class PythonProvider(Provider):
    """A provider implemented in Python: ``chat`` is an object's ``chat`` method or a plain
    callable, ``chat(request)`` or ``chat(request, on_token)``, sync or async.

    ``request`` is a :class:`mcpmux.types.ChatRequest` dict; the answer a
    :class:`mcpmux.types.ChatResponse` dict (or just the text). ``on_token(text)`` streams
    text to the run's ``on_token``. An exception fails the run with its message; when the run
    is cancelled, the ``chat`` task is cancelled. It runs on the event loop that made the
    provider (created with a running loop).
    """

    def __init__(
        self,
        chat: ChatProvider | Callable[..., Any],
        *,
        model: str | None = None,
        name: str | None = None,
    ) -> None:
        fn: Callable[..., Any] | None = getattr(chat, "chat", None)
        if fn is None or not callable(fn):
            if not callable(chat):
                raise InvalidArgumentError(
                    f"a Python provider needs a chat(request) method or a callable, not {chat!r}"
                )
            fn = chat
        model = model if model is not None else str(getattr(chat, "model", "python"))
        if name is None:
            name = str(getattr(chat, "name", "")) or (
                getattr(chat, "__name__", "") or type(chat).__name__
            )
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise InvalidArgumentError(
                "a Python provider is made with a running event loop (its chat runs there)"
            ) from None
        self.chat = fn
        with_tokens = _wants_on_token(fn)
        user = fn

        async def adapter(request_json: str, on_token: Callable[[str], None]) -> str:
            request = json.loads(request_json)
            value = user(request, on_token) if with_tokens else user(request)
            if inspect.isawaitable(value):
                value = await value
            return answer_json(value)

        super().__init__(_native.host_provider(name, model, loop, adapter))


ProviderLike = Provider | Mapping[str, Any] | ChatProvider | Callable[..., Any]


def _provider(value: ProviderLike) -> Provider:
    if isinstance(value, Provider):
        return value
    if isinstance(value, Mapping):
        return Provider.from_config(value)
    return PythonProvider(value)


#: Agent options (snake_case) -> core's AgentOptions keys.
AGENT_OPTIONS = {
    "max_iterations": "maxIterations",
    "instructions": "instructions",
    "max_tokens": "maxTokens",
    "temperature": "temperature",
    "keep_recent_turns": "keepRecentTurns",
    "compress_over_chars": "compressOverChars",
    "preview_chars": "previewChars",
    "context_budget_tokens": "contextBudgetTokens",
    "server_instructions_chars": "serverInstructionsChars",
    "approval_policy": "approvalPolicy",
    "ask_destructive": "askDestructive",
    "tool_timeout_ms": "toolTimeoutMs",
    "tool_max_total_ms": "toolMaxTotalMs",
}


def _token_callback(loop: asyncio.AbstractEventLoop, fn: TokenCallback) -> Callable[[str], None]:
    from ._pool import _deliver

    def deliver(text: str) -> None:
        _deliver(loop, fn, text)

    return deliver


class Agent:
    """An agent over a pool's servers and a provider (WebMCP Auto-UI's agent loop).

    ``provider`` is a :class:`Provider`, a config dict (``{"type": "openai", ...}``), or a
    Python provider (an object with ``chat`` or a callable; see :class:`PythonProvider`).
    ``options``: ``max_iterations`` (10), ``instructions``, ``max_tokens``, ``temperature``,
    ``keep_recent_turns``, ``compress_over_chars``, ``preview_chars``,
    ``context_budget_tokens``, ``server_instructions_chars`` (the most of each server's
    ``instructions`` the system prompt takes, 2000; 0 leaves them out), ``approval_policy``
    (which tools ``approve`` is asked about: ``"trusted"``, the default, asks for untrusted
    servers' tools, tools in ``disabledAutoApproveTools`` and tools that say they destroy;
    ``"read_only"`` lets only trusted servers' read-only tools run unasked; ``"always"``) and
    ``ask_destructive`` (``False``: under ``"trusted"``, destructive tools run unasked),
    ``tool_timeout_ms`` (how long a tool call may go without progress) and
    ``tool_max_total_ms`` (the most a tool call may take in all).
    """

    def __init__(self, pool: Pool, provider: ProviderLike, **options: Any) -> None:
        unknown = sorted(k for k in options if k not in AGENT_OPTIONS)
        if unknown:
            raise InvalidArgumentError(
                f"unknown agent option(s) {', '.join(unknown)}; "
                f"known options: {', '.join(sorted(AGENT_OPTIONS))}"
            )
        self.pool = pool
        self.provider = _provider(provider)
        body = {AGENT_OPTIONS[k]: v for k, v in options.items() if v is not None}
        self._native = _native.NativeAgent(pool._native, self.provider._native, json.dumps(body))

    @property
    def model(self) -> str:
        """The provider's model."""
        return self._native.model()

    def set_model(self, model: str) -> None:
        """Switches the provider's model for later requests."""
        self._native.set_model(model)

    @property
    def system_prompt(self) -> str:
        """The system prompt the next run sends (it lists the pool's servers)."""
        return self._native.system_prompt()

    async def run(
        self,
        prompt: str,
        *,
        history: Sequence[Message] | AgentResult | None = None,
        attachments: Sequence[Mapping[str, str] | tuple[str, str]] | None = None,
        servers: Sequence[str] | Mapping[str, Any] | None = None,
        on_token: TokenCallback | None = None,
        approve: ApproveCallback | None = None,
    ) -> AgentResult:
        """Runs the loop for one prompt until the model answers, ``max_iterations`` model
        requests were made, or the task is cancelled (which cancels the calls in flight).

        ``history``: earlier messages (a previous result, or its ``transcript``).
        ``attachments``: resources sent with the prompt, ``{"server": ..., "uri": ...}`` or
        ``(server, uri)``. ``servers``: the servers this run may use (names or ids, or
        ``{"enabled": [...], "disabled": [...]}``). ``on_token(text)``: streamed text, on this
        loop's thread, all of it before the result. ``approve(request)``: asked before tools of
        untrusted servers run; answers ``True``/``"once"``, ``"always"``, ``False``/``"deny"``
        (without it such tools are denied, and the model is told).
        """
        loop = asyncio.get_running_loop()
        params: dict[str, Any] = {}
        if history is not None:
            params["history"] = list(
                history.transcript if isinstance(history, AgentResult) else history
            )
        if attachments is not None:
            params["attachments"] = [
                {"server": a[0], "uri": a[1]} if isinstance(a, tuple) else dict(a)
                for a in attachments
            ]
        filt = servers_filter(servers)
        if filt is not None:
            params["servers"] = filt
        text = await self._native.run(
            prompt,
            json.dumps(params),
            loop,
            _token_callback(loop, on_token) if on_token is not None else None,
            approve_adapter(approve) if approve is not None else None,
        )
        return AgentResult.from_dict(json.loads(text))

    def handle_sampling(self, approve: ApproveCallback | None = None) -> None:
        """Answers servers' sampling requests with this agent's provider (replacing the pool's
        sampling handler), tools included: a request's tools go to the model, and its tool
        calls back to the server. With ``approve``, each request is shown to it first (as an
        :class:`ApprovalRequest` with ``tool_id == "sampling/createMessage"``). Servers learn
        about sampling when they connect: call it before."""
        if approve is None:
            self._native.handle_sampling(None, None)
        else:
            self._native.handle_sampling(asyncio.get_running_loop(), approve_adapter(approve))

    def __repr__(self) -> str:
        return f"<mcpmux.Agent {self.provider.name} {self.model!r}>"


class Conversation:
    """What one agent conversation may call: discovery tools first (``search_tools``,
    ``{server}_mcp_list_tools``, ...), then every tool of the servers it has used."""

    def __init__(self, native: _native.NativeConversation) -> None:
        """Internal: use :meth:`mcpmux.Pool.conversation`."""
        self._native = native

    def tools(self) -> list[ToolDef]:
        """The functions to offer a model now."""
        return [ToolDef.from_dict(d) for d in json.loads(self._native.tools())]

    def activated(self) -> list[str]:
        """Ids of the servers activated so far."""
        result: list[str] = json.loads(self._native.activated())
        return result

    async def call(
        self, name: str, args: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> CallToolResult:
        """Calls a function of this conversation; a real tool activates its server."""
        try:
            arguments = json.dumps(dict(args) if args is not None else {})
        except (TypeError, ValueError) as e:
            raise InvalidArgumentError(f"tool arguments are not JSON: {e}") from None
        text = await self._native.call(name, arguments, timeout)
        return CallToolResult.from_dict(json.loads(text))
