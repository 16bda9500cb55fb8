"""The asyncio API: :class:`Pool`."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, overload

from . import _native
from ._apps import AppBridge
from ._host import (
    config_json,
    elicitation_adapter,
    oauth_adapter,
    oauth_json,
    oauth_resource_json,
    roots_adapter,
    roots_json,
    sampling_adapter,
    sandbox_json,
    schema_from_signature,
    token_store_adapter,
    tool_adapter,
)
from .errors import InvalidArgumentError
from .types import (
    AppView,
    AuthorizationPrompt,
    CallToolResult,
    Completion,
    DiscoverResult,
    Event,
    GetPromptResult,
    HostRequest,
    ImportResult,
    LoadedSkill,
    Model,
    OAuthResourceSettings,
    OAuthSettings,
    Progress,
    PromptInfo,
    ReadResourceResult,
    Recipe,
    ResourceInfo,
    ResourceTemplateInfo,
    Sandbox,
    SearchHit,
    ServerConfig,
    ServerRecord,
    ServerStatus,
    SkillFileContents,
    SkillInfo,
    TaskUpdate,
    TestResult,
    Timeouts,
    TokenStore,
    ToolInfo,
    ToolLayer,
    Unlisted,
    camel,
    snake,
)

if TYPE_CHECKING:
    from ._agent import Conversation

__all__ = [
    "EVENT_NAMES",
    "OPTION_NAMES",
    "EventStream",
    "HttpServer",
    "OAuthCallback",
    "Pool",
    "Subscription",
]

_M = TypeVar("_M", bound=Model)

#: The names ``Pool.on`` accepts, besides ``"*"`` (every event): the core's own list.
EVENT_NAMES = frozenset(_native.EVENT_NAMES)

EventCallback = Callable[[Event], Any]
ToolFunction = Callable[..., Any]
_F = TypeVar("_F", bound=Callable[..., Any])
HostHandler = Callable[[HostRequest], Any]
#: ``authorize(prompt)`` -> the redirect URL (sync or async).
OAuthCallback = Callable[[AuthorizationPrompt], Any]
ProgressCallback = Callable[[Progress], Any]
TaskCallback = Callable[[TaskUpdate], Any]

_DEFAULT_OPTIONS: dict[str, Any] = json.loads(_native.default_options())
_native._register_result_types(CallToolResult)
#: Keyword options of ``Pool.open`` (snake_case) -> the core's ``PoolOptions`` keys.
OPTION_NAMES: dict[str, str] = {snake(k): k for k in _DEFAULT_OPTIONS if k != "configPath"}


try:  # OpenTelemetry is optional: with its API installed, tool calls join the current trace.
    from opentelemetry import trace as _otel_trace
except ImportError:  # pragma: no cover - depends on what the host installed
    _otel_trace = None  # type: ignore[assignment]


def _trace_meta() -> dict[str, str] | None:
    """The W3C trace context (``traceparent``, ``tracestate``) of the current OpenTelemetry
    span, for a request's ``_meta``; ``None`` outside a trace or without OpenTelemetry."""
    if _otel_trace is None:
        return None
    current = _otel_trace.get_current_span()
    # Outside any span this is the API's one invalid span: spares every call the context's
    # validity check, which is most of this function's cost.
    if current is _otel_trace.INVALID_SPAN:
        return None
    span = current.get_span_context()
    if not span.is_valid:
        return None
    meta = {"traceparent": f"00-{span.trace_id:032x}-{span.span_id:016x}-{span.trace_flags:02x}"}
    state = span.trace_state.to_header()
    if state:
        meta["tracestate"] = state
    return meta


def _one(cls: type[_M], text: str) -> _M:
    return cls.from_dict(json.loads(text))


def _many(cls: type[_M], text: str) -> list[_M]:
    return [cls.from_dict(d) for d in json.loads(text)]


def _plain(value: Any) -> Any:
    """Models become their JSON objects; everything else is left as it is."""
    if isinstance(value, Model):
        return value.to_dict()
    return value


def _listed(values: Sequence[str] | None) -> list[str] | str | None:
    """A sequence as a JSON list; ``None`` and a lone string as they are."""
    if values is None or isinstance(values, str):
        return values
    return list(values)


def _server_fields(
    *,
    config: ServerConfig | Mapping[str, Any] | None,
    command: str | None,
    args: list[str] | None,
    env: Mapping[str, str] | None,
    cwd: str | os.PathLike[str] | None,
    url: str | None,
    headers: Mapping[str, str] | None,
    timeouts: Timeouts | Mapping[str, Any] | None,
    strict_transport: bool | None = None,
    oauth: OAuthSettings | Mapping[str, Any] | None = None,
    inherit_env: bool | None = None,
    sandbox: Sandbox | Mapping[str, Any] | None = None,
    **rest: Any,
) -> dict[str, Any]:
    """The core's camelCase server JSON from keyword arguments (``None`` = not given)."""
    out: dict[str, Any] = {}
    flat: dict[str, Any] = {
        "command": command,
        "args": args,
        "env": env,
        "inheritEnv": inherit_env,
        "cwd": os.fspath(cwd) if cwd is not None else None,
        "url": url,
        "headers": headers,
        "strictTransport": strict_transport,
        "oauth": oauth_json(oauth) if oauth is not None else None,
        "sandbox": sandbox_json(sandbox) if sandbox is not None else None,
    }
    given = {k: v for k, v in flat.items() if v is not None}
    if config is not None:
        if given:
            raise InvalidArgumentError(
                f"pass either config= or {', '.join(sorted(snake(k) for k in given))}=, not both"
            )
        out["config"] = config_json(config)
    elif given:
        out["config"] = {k: dict(v) if isinstance(v, Mapping) else v for k, v in given.items()}
    if timeouts is not None:
        t = _plain(timeouts)
        out["timeouts"] = {camel(k): v for k, v in dict(t).items()}
    for key, value in rest.items():
        if value is not None:
            out["type" if key == "type" else camel(key)] = value
    return out


# The tasks of coroutine listeners still running: the loop keeps only weak references to
# tasks, so without these one could be collected before it finishes.
_listener_tasks: set[asyncio.Future[Any]] = set()


def _call_args(args: Any) -> Any:
    """A call's arguments for the native side: a dict (``None`` is ``{}``); anything but a
    mapping goes to the core as it is, which explains what it wants."""
    if args is None:
        return {}
    if isinstance(args, Mapping) and type(args) is not dict:
        return dict(args)
    return args


def _call_extras(
    trace: dict[str, str] | None,
    validate: bool,
    meta: Mapping[str, Any] | None,
    max_total: float | None,
    on_progress: ProgressCallback | None,
    on_task: TaskCallback | None,
) -> tuple[str | None, Callable[..., None] | None, Callable[..., None] | None]:
    """A tool call's options beyond its arguments, as the native call takes them: the settings'
    JSON, and the progress and task callbacks that hand updates to this loop's thread."""
    if trace is not None:
        meta = {**trace, **meta} if meta is not None else trace
    options: str | None = None
    if not validate or meta is not None or max_total is not None:
        settings: dict[str, Any] = {}
        if not validate:
            settings["validate"] = False
        if meta is not None:
            settings["meta"] = dict(meta)
        if max_total is not None:
            if not max_total > 0:
                raise InvalidArgumentError(f"max_total must be positive, not {max_total!r}")
            settings["maxTotalMs"] = max(1, round(max_total * 1000))
        options = json.dumps(settings)
    callback: Callable[..., None] | None = None
    if on_progress is not None:
        loop = asyncio.get_running_loop()
        user = on_progress

        def callback(progress: float, total: float | None, message: str | None) -> None:
            _deliver(loop, user, Progress(progress, total, message))

    told: Callable[..., None] | None = None
    if on_task is not None:
        task_loop = asyncio.get_running_loop()
        hears = on_task

        def told(task_id: str, status: str, message: str | None) -> None:
            _deliver(task_loop, hears, TaskUpdate(task_id, status, message))

    return options, callback, told


def _deliver(loop: asyncio.AbstractEventLoop, callback: Callable[..., Any], *args: Any) -> None:
    """Runs a user callback on the loop; a coroutine it returns becomes a task. Its
    exceptions go to the loop's exception handler instead of stopping delivery."""
    try:
        result = callback(*args)
        if inspect.isawaitable(result):
            task = asyncio.ensure_future(result, loop=loop)
            _listener_tasks.add(task)
            task.add_done_callback(_listener_tasks.discard)
    except Exception as exc:  # a listener's bug must not stop other listeners
        loop.call_exception_handler(
            {"message": f"mcpmux callback {callback!r} raised", "exception": exc}
        )


class Subscription:
    """What :meth:`Pool.on` returns: call it (or ``unsubscribe()``) to stop the callback."""

    def __init__(self, pool: Pool, name: str, callback: EventCallback) -> None:
        self._pool = pool
        self._name = name
        self._callback = callback
        self._active = True

    @property
    def active(self) -> bool:
        """Whether the callback still receives events."""
        return self._active

    def unsubscribe(self) -> None:
        """Stops the callback; calling it again does nothing."""
        if self._active:
            self._active = False
            self._pool._remove_listener(self)

    def __call__(self) -> None:
        self.unsubscribe()


class EventStream:
    """``async for event in pool.events()``: every event from now on, until the pool closes
    or ``aclose()`` is called."""

    def __init__(self, native: _native.NativeEvents) -> None:
        self._native = native

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> Event:
        text = await self._native.recv()
        if text is None:
            raise StopAsyncIteration
        return _one(Event, text)

    async def aclose(self) -> None:
        """Ends the stream."""
        self._native.close()

    async def __aenter__(self) -> EventStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class TaskRun:
    """A tool call started with :meth:`Pool.start_task`: the status of the task its server
    runs it as (``None`` until the server announces one, and for a call answered at once),
    :meth:`changed` to wait for the next, :meth:`cancel` (the task at the server too) and
    :meth:`result`. The following is core's (``TaskRun``); this class gives it Python's
    types."""

    def __init__(self, native: _native.NativeTaskRun) -> None:
        """Internal: use :meth:`Pool.start_task`."""
        self._native = native
        self._result: asyncio.Future[CallToolResult] | None = None

    @property
    def status(self) -> TaskUpdate | None:
        """The task's last status, if the server announced one."""
        status = self._native.status()
        return None if status is None else TaskUpdate(*status)

    async def changed(self) -> TaskUpdate | None:
        """Waits for the next status; ``None`` once the call has ended (after its last
        status)."""
        status = await self._native.changed()
        return None if status is None else TaskUpdate(*status)

    def cancel(self) -> None:
        """Cancels the call, and the task at the server; :meth:`result` then raises
        :class:`mcpmux.CancelledError` (an :class:`asyncio.CancelledError`)."""
        self._native.cancel()

    async def result(self) -> CallToolResult:
        """The call's result, as :meth:`Pool.call_tool` gives it (as often as asked)."""
        if self._result is None:
            self._result = asyncio.ensure_future(self._native.result())
        return await asyncio.shield(self._result)


class HttpServer:
    """A pool served as one MCP server over Streamable HTTP (what :meth:`Pool.serve_http`
    returns): MCP clients connect to :attr:`url`, sending ``Authorization: Bearer <token>``.

    It serves until :meth:`stop` is awaited, the pool closes, or it is garbage-collected;
    ``async with await pool.serve_http() as server:`` stops it at the end of the block.
    """

    def __init__(self, native: _native.NativeHttpServer) -> None:
        """Internal: use :meth:`Pool.serve_http`."""
        self._native = native

    @property
    def url(self) -> str:
        """The URL MCP clients connect to (``http://127.0.0.1:<port>/mcp``)."""
        return self._native.url()

    @property
    def token(self) -> str | None:
        """The bearer token clients send (the one given, or a new random one), or ``None``
        when serving with ``no_auth=True`` or ``oauth``."""
        return self._native.token()

    async def stop(self) -> None:
        """Stops accepting connections, ends open sessions and closes the port. Idempotent."""
        await self._native.stop()

    async def __aenter__(self) -> HttpServer:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    def __repr__(self) -> str:
        # The token stays out: a repr ends up in logs.
        return f"<mcpmux.HttpServer {self.url!r}>"


class _Opening:
    """The result of :meth:`Pool.open`: await it, or use it with ``async with``."""

    def __init__(self, coro: Awaitable[Pool]) -> None:
        self._coro = coro
        self._pool: Pool | None = None

    def __await__(self) -> Generator[Any, None, Pool]:
        return self._coro.__await__()

    async def __aenter__(self) -> Pool:
        self._pool = await self._coro
        return self._pool

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._pool is not None:
            await self._pool.close()


class Pool:
    """A pool of MCP server connections over one config file.

    Open it with ``pool = await Pool.open()`` or ``async with Pool.open() as pool:``. Servers
    connect lazily, on first use. Every method that talks to a server is a coroutine;
    cancelling it cancels the request in the core (the server is told).
    """

    def __init__(self, native: _native.NativePool) -> None:
        """Internal: use :meth:`Pool.open`."""
        self._native = native
        self._listeners: dict[str, list[Subscription]] = {}
        self._subscription: _native.NativeSubscription | None = None
        self._closed = False

    @staticmethod
    def open(config_path: str | os.PathLike[str] | None = None, **options: Any) -> _Opening:
        """Opens a pool (nothing connects yet).

        ``config_path`` defaults to ``$MCPMUX_CONFIG`` or the platform's default. ``options``
        are the core's pool options in snake_case, e.g. ``request_timeout_ms=5000``,
        ``auto_reconnect=False``; see ``mcpmux.OPTION_NAMES``.
        """
        return _Opening(Pool._open(config_path, options))

    @staticmethod
    async def _open(config_path: str | os.PathLike[str] | None, options: dict[str, Any]) -> Pool:
        body: dict[str, Any] = {}
        unknown = sorted(k for k in options if k not in OPTION_NAMES)
        if unknown:
            raise InvalidArgumentError(
                f"unknown pool option(s) {', '.join(unknown)}; "
                f"known options: {', '.join(sorted(OPTION_NAMES))}"
            )
        for key, value in options.items():
            body[OPTION_NAMES[key]] = value
        if config_path is not None:
            body["configPath"] = os.fspath(config_path)
        native = await _native.open_pool(json.dumps(body))
        return Pool(native)

    async def __aenter__(self) -> Pool:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<mcpmux.Pool {self.config_path!r} {state}>"

    # --- the pool ----------------------------------------------------------------------

    @property
    def config_path(self) -> str:
        """The config file's path."""
        return self._native.config_path()

    @property
    def options(self) -> dict[str, Any]:
        """The pool's options (the core's camelCase keys)."""
        result: dict[str, Any] = json.loads(self._native.options())
        return result

    @property
    def in_flight(self) -> int:
        """Calls in flight right now."""
        return self._native.in_flight()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def server_states(self) -> list[ServerStatus]:
        """Connection state of every visible server."""
        return _many(ServerStatus, self._native.server_states())

    async def close(self) -> None:
        """Refuses new calls, lets calls in flight finish (up to ``shutdown_timeout_ms``), then
        closes every connection and stops every server process. Idempotent."""
        self._closed = True
        await self._native.close()
        # The native subscription ends by itself once the events sent before the close (the
        # connections closing) are delivered to the listeners.
        self._subscription = None

    # --- servers -----------------------------------------------------------------------

    async def list_servers(self) -> list[ServerRecord]:
        """Every server this pool sees, re-read from the config file."""
        return _many(ServerRecord, await self._native.list_servers())

    async def get_server(self, server: str) -> ServerRecord:
        """One server, by id or name."""
        return _one(ServerRecord, await self._native.get_server(server))

    async def add_server(
        self,
        name: str,
        *,
        command: str | None = None,
        args: list[str] | None = None,
        env: Mapping[str, str] | None = None,
        inherit_env: bool | None = None,
        cwd: str | os.PathLike[str] | None = None,
        url: str | None = None,
        headers: Mapping[str, str] | None = None,
        strict_transport: bool | None = None,
        oauth: OAuthSettings | Mapping[str, Any] | None = None,
        sandbox: Sandbox | Mapping[str, Any] | None = None,
        config: ServerConfig | Mapping[str, Any] | None = None,
        type: str | None = None,
        scope: str | None = None,
        is_active: bool | None = None,
        is_trusted: bool | None = None,
        disabled_tools: list[str] | None = None,
        disabled_auto_approve_tools: list[str] | None = None,
        install_source: str | None = None,
        project_path: str | None = None,
        timeouts: Timeouts | Mapping[str, Any] | None = None,
        log_level: str | None = None,
        session_scope: str | None = None,
        max_clients: int | None = None,
    ) -> ServerRecord:
        """Adds a server: ``command`` (+ ``args``, ``env``, ``cwd``; a server gets HOME, PATH,
        the locale and the like of this process's environment, and ``env``: ``inherit_env=True``
        gives it the whole environment, never mcpmux's own secrets) for stdio, or ``url``
        (+ ``headers``, ``strict_transport``, ``oauth``: :class:`OAuthSettings`) for
        Streamable HTTP; or all that as ``config`` (a :class:`ServerConfig` or a dict). ``type``
        is inferred when not given. ``log_level`` (``"debug"`` … ``"emergency"``) asks this
        server for its log messages from that level up, over the pool's ``log_level``.
        ``session_scope="perClient"`` marks a server that keeps state for its client (a
        browser, a REPL, a login): when the pool is served, each client gets a connection (a
        process) of its own, at most ``max_clients`` at once (default 8).

        A server already saved under ``name`` as given is answered as it is, with the fields
        left out here as they are saved (a script can run again after its user disabled or
        trusted the server); one that differs in what is given raises
        :class:`InvalidArgumentError` naming the fields that differ."""
        body = _server_fields(
            config=config, command=command, args=args, env=env, inherit_env=inherit_env,
            cwd=cwd, url=url,
            headers=headers, strict_transport=strict_transport, oauth=oauth, sandbox=sandbox,
            timeouts=timeouts, type=type, scope=scope, is_active=is_active,
            is_trusted=is_trusted, disabled_tools=disabled_tools,
            disabled_auto_approve_tools=disabled_auto_approve_tools,
            install_source=install_source, project_path=project_path, log_level=log_level,
            session_scope=session_scope, max_clients=max_clients,
        )  # fmt: skip
        body["name"] = name
        body.setdefault("config", {})
        return _one(ServerRecord, await self._native.add_server(json.dumps(body)))

    async def add_json(self, text: str | Mapping[str, Any]) -> list[ImportResult]:
        """Adds the servers of a JSON snippet (``{"mcpServers": {...}}``, one server, ...);
        each entry succeeds or fails on its own."""
        if not isinstance(text, str):
            text = json.dumps(dict(text))
        return _many(ImportResult, await self._native.add_json(text))

    async def update_server(
        self,
        server: str,
        *,
        name: str | None = None,
        config: ServerConfig | Mapping[str, Any] | None = None,
        type: str | None = None,
        scope: str | None = None,
        is_active: bool | None = None,
        is_trusted: bool | None = None,
        disabled_tools: list[str] | None = None,
        disabled_auto_approve_tools: list[str] | None = None,
        install_source: str | None = None,
        project_path: str | None = None,
        timeouts: Timeouts | Mapping[str, Any] | None = None,
        log_level: str | None = None,
        session_scope: str | None = None,
        max_clients: int | None = None,
    ) -> ServerRecord:
        """Changes the given fields of a server (``config`` is replaced whole); a changed
        connection reconnects."""
        body = _server_fields(
            config=config, command=None, args=None, env=None, cwd=None, url=None, headers=None,
            timeouts=timeouts, name=name, type=type, scope=scope, is_active=is_active,
            is_trusted=is_trusted, disabled_tools=disabled_tools,
            disabled_auto_approve_tools=disabled_auto_approve_tools,
            install_source=install_source, project_path=project_path, log_level=log_level,
            session_scope=session_scope, max_clients=max_clients,
        )  # fmt: skip
        return _one(ServerRecord, await self._native.update_server(server, json.dumps(body)))

    async def approve_server(self, server: str) -> ServerRecord:
        """Approves a server imported from another host's file (``pending``): it may run from
        now on, and is connected and listed. Show the user its ``"server:pending"`` event's
        ``consent`` (what it runs, the names of what it is given, its sandbox) first."""
        return _one(ServerRecord, await self._native.approve_server(server))

    async def remove_server(self, server: str) -> ServerRecord:
        """Removes a server (disconnecting it); returns its record."""
        return _one(ServerRecord, await self._native.remove_server(server))

    async def test_server(self, server: str) -> TestResult:
        """Connects to a server on a fresh connection and lists its tools."""
        return _one(TestResult, await self._native.test_server(server))

    async def test_config(
        self,
        name: str = "test",
        *,
        command: str | None = None,
        args: list[str] | None = None,
        env: Mapping[str, str] | None = None,
        inherit_env: bool | None = None,
        cwd: str | os.PathLike[str] | None = None,
        url: str | None = None,
        headers: Mapping[str, str] | None = None,
        strict_transport: bool | None = None,
        oauth: OAuthSettings | Mapping[str, Any] | None = None,
        sandbox: Sandbox | Mapping[str, Any] | None = None,
        config: ServerConfig | Mapping[str, Any] | None = None,
        type: str | None = None,
        timeouts: Timeouts | Mapping[str, Any] | None = None,
    ) -> TestResult:
        """Like :meth:`test_server`, for a server that is not added."""
        body = _server_fields(
            config=config, command=command, args=args, env=env, inherit_env=inherit_env,
            cwd=cwd, url=url,
            headers=headers, strict_transport=strict_transport, oauth=oauth, sandbox=sandbox,
            timeouts=timeouts, type=type,
        )  # fmt: skip
        body["name"] = name
        body.setdefault("config", {})
        return _one(TestResult, await self._native.test_config(json.dumps(body)))

    async def discover(self, server: str) -> DiscoverResult:
        """Everything a server offers: tools, prompts, resources."""
        return _one(DiscoverResult, await self._native.discover(server))

    async def connect(self, server: str) -> ServerStatus:
        """Connects a server now instead of on first use."""
        return _one(ServerStatus, await self._native.connect(server))

    async def connect_all(self) -> list[ServerStatus]:
        """Connects every active server; each outcome is in the returned states."""
        return _many(ServerStatus, await self._native.connect_all())

    async def disconnect(self, server: str) -> None:
        """Closes a server's connection; it reconnects on next use."""
        await self._native.disconnect(server)

    # --- tools -------------------------------------------------------------------------

    async def search_tools(self, query: str, limit: int | None = None) -> list[SearchHit]:
        """Ranked tools for ``query`` (names, titles, descriptions, parameter names), best
        first. Answers from the tools already known, live or from the catalog saved beside
        the config; a server whose tools are not known for its current config (never listed,
        or its config changed) is listed first (see :meth:`ensure_catalog`). Servers whose
        tools are known are not started. ``limit``: at most this many (10 when left out)."""
        return _many(SearchHit, await self._native.search_tools(query, limit))

    async def ensure_catalog(
        self, servers: Sequence[str] | Mapping[str, Any] | None = None
    ) -> list[Unlisted]:
        """Lists, once, every active server (or those ``servers`` names, as for
        :meth:`conversation`) whose tools the catalog does not know for its current config,
        concurrently, each within its connect timeout. Returns the servers that could not be
        listed, with why; servers whose tools are known are not started."""
        from ._agent import servers_filter

        filt = servers_filter(servers)
        native = self._native.ensure_catalog(None if filt is None else json.dumps(filt))
        return _many(Unlisted, await native)

    def known_tools(self) -> list[ToolInfo]:
        """Every tool known without connecting anything (live lists, else the catalog)."""
        return _many(ToolInfo, self._native.known_tools())

    async def list_tools(
        self, server: str | None = None, *, refresh: bool = False
    ) -> list[ToolInfo]:
        """Tools of every active server, or of one, with pool-unique ids. With ``refresh``,
        the servers are asked again past every cache (for a server that changed its tools
        without saying so); the caches then hold the new lists."""
        return _many(ToolInfo, await self._native.list_tools(server, refresh))

    async def call_tool(
        self,
        tool_id: str,
        args: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        validate: bool = True,
        meta: Mapping[str, Any] | None = None,
        max_total: float | None = None,
        on_task: TaskCallback | None = None,
    ) -> CallToolResult:
        """Calls a tool by its pool id (see :meth:`list_tools`).

        ``timeout`` (seconds) overrides the server's and pool's request timeout; progress
        notifications reset it. ``max_total`` (seconds) caps the whole call however much
        progress comes. ``on_progress`` gets each :class:`Progress` on this event loop's
        thread. A result that does not match the tool's ``outputSchema`` raises
        :class:`InvalidResultError` unless ``validate=False``. ``meta`` adds keys to the
        request's ``_meta`` (keys of your own); with the OpenTelemetry API installed, the
        current span's W3C ``traceparent`` and ``tracestate`` go there too, so the server's
        spans join the trace. Cancelling the task cancels the call (the server is notified).
        ``on_task`` gets each :class:`TaskUpdate` of the task the server runs the call as, if
        it does (see :meth:`start_task`).
        """
        # The native side converts the arguments directly (json.dumps for what it does not
        # cover) and answers a CallToolResult built on this loop's thread.
        if type(args) is not dict:
            args = _call_args(args)
        trace = _trace_meta()
        if (
            trace is None
            and meta is None
            and max_total is None
            and validate
            and on_progress is None
            and on_task is None
        ):
            # Most calls: nothing to marshal but the arguments (this path is a measurable
            # share of a call's cost on the event loop).
            plain: CallToolResult = await self._native.call_tool(
                tool_id, args, timeout, None, None, None
            )
            return plain
        options, callback, told = _call_extras(
            trace, validate, meta, max_total, on_progress, on_task
        )
        result: CallToolResult = await self._native.call_tool(
            tool_id, args, timeout, callback, options, told
        )
        return result

    def start_task(
        self, tool_id: str, args: Mapping[str, Any] | None = None, **options: Any
    ) -> TaskRun:
        """Starts a tool call in the background and returns a :class:`TaskRun` to follow it:
        for tools that run long (a server's tasks), where the host shows the status as it
        changes and lets the user cancel. ``options`` are :meth:`call_tool`'s."""
        return TaskRun(self._start_task(tool_id, args, **options))

    def _start_task(
        self,
        tool_id: str,
        args: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        validate: bool = True,
        meta: Mapping[str, Any] | None = None,
        max_total: float | None = None,
    ) -> _native.NativeTaskRun:
        """The native run of :meth:`start_task`, with :meth:`call_tool`'s options."""
        args = _call_args(args)
        options, callback, _ = _call_extras(
            _trace_meta(), validate, meta, max_total, on_progress, None
        )
        return self._native.start_task(tool_id, args, timeout, callback, options)

    # --- resources ---------------------------------------------------------------------

    async def list_resources(
        self, server: str | None = None, *, refresh: bool = False
    ) -> list[ResourceInfo]:
        """Resources of every server that has them, or of one (``refresh``: as for
        :meth:`list_tools`)."""
        return _many(ResourceInfo, await self._native.list_resources(server, refresh))

    async def list_resource_templates(
        self, server: str | None = None, *, refresh: bool = False
    ) -> list[ResourceTemplateInfo]:
        """Resource templates of every server that has them, or of one (``refresh``: as for
        :meth:`list_tools`)."""
        listed = await self._native.list_resource_templates(server, refresh)
        return _many(ResourceTemplateInfo, listed)

    async def read_resource(self, server: str, uri: str) -> ReadResourceResult:
        """Reads one resource of one server."""
        return _one(ReadResourceResult, await self._native.read_resource(server, uri))

    async def app_view(self, tool_id: str) -> AppView:
        """The MCP App view of a tool (its ``_meta.ui.resourceUri``), read from its server and
        checked, with the policy to load it under. Needs the pool option ``apps`` (e.g.
        ``apps={}``); a tool without a view raises :class:`InvalidArgumentError`."""
        return _one(AppView, await self._native.app_view(tool_id))

    async def app_call(
        self, view: AppView, name: str, args: Mapping[str, Any] | None = None
    ) -> CallToolResult:
        """A call the view makes: ``name`` is the tool's own name on the view's server (a
        view reaches no other), and the tool must be visible to apps
        (``_meta.ui.visibility``), else :class:`InvalidArgumentError` /
        :class:`NotFoundError`."""
        return _one(
            CallToolResult,
            await self._native.app_call(
                json.dumps(view.to_dict()), name, json.dumps(dict(args or {}))
            ),
        )

    async def app_read_resource(self, view: AppView, uri: str) -> ReadResourceResult:
        """A resource the view reads, from its own server."""
        return _one(
            ReadResourceResult,
            await self._native.app_read_resource(json.dumps(view.to_dict()), uri),
        )

    def app_bridge(self, view: AppView, host_context: Mapping[str, Any] | None = None) -> AppBridge:
        """The bridge of a view being rendered (see :class:`AppBridge`); ``host_context`` is
        what views learn of the host in ``ui/initialize`` (``theme``, ``displayMode``,
        ``containerDimensions``, ``locale``, ...)."""
        native = self._native.app_bridge(
            json.dumps(view.to_dict()), json.dumps(dict(host_context or {}))
        )
        return AppBridge(native)

    async def list_skills(self, server: str | None = None) -> list[SkillInfo]:
        """The skills of one server, or of every server that offers any (the Skills
        extension), without reading a file of them. The pool keeps this listing: loads and
        reads are checked against it, so list again to take a server's changes."""
        return _many(SkillInfo, await self._native.list_skills(server))

    async def load_skill(self, server: str, skill: str) -> LoadedSkill:
        """Loads a skill by its name (or its ``SKILL.md`` URI): its instructions, once the
        file's size, digest and front matter are the listing's. A mismatch raises
        :class:`ProtocolError` saying what differs; an unknown skill :class:`NotFoundError`."""
        return _one(LoadedSkill, await self._native.load_skill(server, skill))

    async def read_skill_file(self, server: str, skill: str, uri: str) -> SkillFileContents:
        """Reads one file of a skill (a URI its listing names), checked like
        :meth:`load_skill`."""
        return _one(SkillFileContents, await self._native.read_skill_file(server, skill, uri))

    async def complete(
        self,
        server: str,
        argument: str,
        value: str,
        *,
        prompt: str | None = None,
        resource: str | None = None,
        context: Mapping[str, str] | None = None,
    ) -> Completion:
        """Completion values for ``argument`` of a ``prompt`` (its name) or of a ``resource``
        template (its URI template), given what was typed so far (``value``) and the
        arguments already chosen (``context``), as a form autocompletes. A server without
        completions raises :class:`ProtocolError`."""
        if (prompt is None) == (resource is None):
            raise InvalidArgumentError("complete() takes one of prompt= and resource=")
        ref = (
            {"type": "ref/prompt", "name": prompt}
            if prompt is not None
            else {"type": "ref/resource", "uri": resource}
        )
        params: dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": dict(context)}
        return _one(Completion, await self._native.complete(server, json.dumps(params)))

    async def request(
        self, server: str, method: str, params: Mapping[str, Any] | None = None
    ) -> Any:
        """Sends the request ``method`` (one mcpmux has no verb for, e.g. an extension's) to
        one server and returns its result (JSON as Python values). An error the server answers
        raises :class:`ProtocolError`."""
        text = json.dumps(dict(params)) if params is not None else None
        return json.loads(await self._native.request(server, method, text))

    async def notify(
        self, server: str, method: str, params: Mapping[str, Any] | None = None
    ) -> None:
        """Sends the notification ``method`` to one server. Notifications a server sends that
        mcpmux has no meaning for arrive as ``notification`` events."""
        text = json.dumps(dict(params)) if params is not None else None
        await self._native.notify(server, method, text)

    async def subscribe_resource(self, server: str, uri: str) -> None:
        """Subscribes to a resource; changes arrive as ``resource:updated`` events.

        The subscription holds over reconnects until :meth:`unsubscribe_resource`. Raises
        :class:`ProtocolError` (naming the resource) when the server refuses it.
        """
        await self._native.subscribe_resource(server, uri)

    async def unsubscribe_resource(self, server: str, uri: str) -> None:
        """Ends a subscription made with :meth:`subscribe_resource`."""
        await self._native.unsubscribe_resource(server, uri)

    # --- prompts -----------------------------------------------------------------------

    async def list_prompts(
        self, server: str | None = None, *, refresh: bool = False
    ) -> list[PromptInfo]:
        """Prompts of every server that has them, or of one (``refresh``: as for
        :meth:`list_tools`)."""
        return _many(PromptInfo, await self._native.list_prompts(server, refresh))

    async def get_prompt(
        self, server: str, name: str, arguments: Mapping[str, Any] | None = None
    ) -> GetPromptResult:
        """One prompt of one server, filled with ``arguments``."""
        args = json.dumps(dict(arguments)) if arguments is not None else None
        return _one(GetPromptResult, await self._native.get_prompt(server, name, args))

    # --- host tools ----------------------------------------------------------------------

    def register_tool(
        self,
        name: str,
        schema: Mapping[str, Any] | None,
        fn: ToolFunction,
        *,
        description: str | None = None,
    ) -> ToolInfo:
        """Offers the Python function ``fn`` as a tool named ``name`` (listed under server
        ``local``, called with ``call_tool(name, ...)`` and by agents).

        ``schema`` is the JSON Schema of the arguments (an object schema; ``None`` derives one
        from ``fn``'s annotations); the core checks arguments against it first. ``fn`` is
        called as ``fn(**arguments)``, sync or async, on this event loop's thread. It returns a
        ``str`` (text), a dict or other JSON value (JSON text, and ``structuredContent`` for an
        object), or a CallToolResult-like dict (``{"content": [...], "isError": ...}``). An
        exception becomes an error result with its message. Registering a name again
        replaces the tool.
        """
        if not callable(fn):
            raise InvalidArgumentError(f"a host tool needs a function, not {fn!r}")
        loop = self._loop("register_tool()")
        schema = dict(schema) if schema is not None else schema_from_signature(fn)
        text = inspect.getdoc(fn) or ""
        info = self._native.register_tool(
            name,
            description if description is not None else text,
            json.dumps(schema),
            loop,
            tool_adapter(fn, name),
        )
        return _one(ToolInfo, info)

    @overload
    def tool(self, fn: _F, /) -> _F: ...

    @overload
    def tool(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        schema: Mapping[str, Any] | None = None,
        description: str | None = None,
    ) -> Callable[[_F], _F]: ...

    def tool(
        self,
        fn: _F | None = None,
        /,
        *,
        name: str | None = None,
        schema: Mapping[str, Any] | None = None,
        description: str | None = None,
    ) -> _F | Callable[[_F], _F]:
        """Decorator: ``@pool.tool`` or ``@pool.tool(name=..., schema=..., description=...)``
        registers the function (see :meth:`register_tool`; the name defaults to the
        function's, the description to its docstring) and returns it unchanged."""

        def register(f: _F) -> _F:
            self.register_tool(name or f.__name__, schema, f, description=description)
            return f

        if fn is not None:
            return register(fn)
        return register

    def unregister_tool(self, name: str) -> bool:
        """Removes a host tool; whether it was there."""
        return self._native.unregister_tool(name)

    # --- host requests ---------------------------------------------------------------

    def set_sampling_handler(self, handler: HostHandler | None, *, tools: bool = False) -> None:
        """Answers servers' ``sampling/createMessage`` with ``handler(request)`` (sync or
        async, on this event loop's thread): a ``CreateMessageResult`` dict (``{"role":
        "assistant", "content": {"type": "text", "text": ...}, "model": ...}``) or just the
        text. An exception refuses the request, with its message. ``None`` removes it (requests
        are refused). With ``tools=True`` the handler takes the request's ``tools`` and
        ``toolChoice`` and may answer ``tool_use`` content (``{"type": "tool_use", "id", "name",
        "input"}``, ``"stopReason": "toolUse"``); servers send tools only to such a handler.
        Servers learn about sampling when they connect: set it before."""
        if handler is None:
            self._native.set_sampling_handler(None, None)
        else:
            loop = self._loop("set_sampling_handler()")
            self._native.set_sampling_handler(loop, sampling_adapter(handler), tools)

    def set_elicitation_handler(self, handler: HostHandler | None) -> None:
        """Answers servers' ``elicitation/create`` (form and URL modes) with
        ``handler(request)``: an ``ElicitResult`` dict (``{"action": "accept", "content":
        {...}}``, ``"decline"``, ``"cancel"``), the content alone (accepted), or ``None``
        (declined). ``None`` removes it (requests are declined). Set it before connecting."""
        if handler is None:
            self._native.set_elicitation_handler(None, None)
        else:
            loop = self._loop("set_elicitation_handler()")
            self._native.set_elicitation_handler(loop, elicitation_adapter(handler))

    # --- OAuth -------------------------------------------------------------------------

    def set_oauth_handler(
        self, authorize: OAuthCallback | None, *, redirect_uri: str | None = None
    ) -> None:
        """How users authorize OAuth-protected HTTP servers: ``authorize(prompt)`` (sync or
        async, on this event loop's thread) gets an :class:`AuthorizationPrompt`, takes the
        user to ``prompt.authorization_url`` and returns the full URL the authorization server
        redirected to (with ``code`` and ``state``). An exception fails the connection with its
        message. ``redirect_uri`` (required with a handler) is registered with the
        authorization server. ``None`` restores the default: the system browser and a one-shot
        listener on 127.0.0.1."""
        if authorize is None:
            self._native.set_oauth_handler(None, None, None)
            return
        if not callable(authorize):
            raise InvalidArgumentError(f"the OAuth handler must be callable, not {authorize!r}")
        if not redirect_uri:
            raise InvalidArgumentError("set_oauth_handler(authorize) needs redirect_uri=")
        loop = self._loop("set_oauth_handler()")
        self._native.set_oauth_handler(loop, oauth_adapter(authorize), redirect_uri)

    def set_token_store(self, store: TokenStore | str | os.PathLike[str]) -> None:
        """Where OAuth tokens live: an object with ``load``/``save``/``clear`` methods (a
        :class:`TokenStore`, sync or async, run on this event loop's thread), a path (a JSON
        file, mode 0600), or ``"memory"`` (this process only). The default is
        ``<config>.tokens.json`` next to the config file."""
        if isinstance(store, str) and store == "memory":
            self._native.set_memory_token_store()
        elif isinstance(store, (str, os.PathLike)):
            self._native.set_file_token_store(os.path.abspath(os.fspath(store)))
        else:
            adapter = token_store_adapter(store)
            loop = self._loop("set_token_store()")
            self._native.set_token_store(loop, adapter)

    async def logout(self, server: str) -> None:
        """Forgets a server's OAuth tokens (in the token store) and disconnects it: its next
        use authorizes again."""
        await self._native.logout(server)

    @property
    def roots(self) -> list[dict[str, Any]]:
        """The roots every server sees unless it has its own (``{"uri", "name"?}`` dicts)."""
        result: list[dict[str, Any]] = json.loads(self._native.roots())
        return result

    async def set_roots(self, roots: list[Any]) -> None:
        """Replaces the pool's roots (URIs, paths, or ``{"uri", "name"}`` dicts); connected
        servers are told that the list changed."""
        await self._native.set_roots(roots_json(roots))

    async def set_server_roots(self, server: str, roots: list[Any] | None) -> None:
        """Gives one server its own roots; ``None`` returns it to the pool's."""
        await self._native.set_server_roots(server, None if roots is None else roots_json(roots))

    def set_roots_handler(self, handler: HostHandler | None) -> None:
        """Answers servers' ``roots/list`` with ``handler(request)`` (sync or async, on this
        event loop's thread; ``request.server_name`` says which server asks), asked each time
        a server wants its roots: a list of roots as :meth:`set_roots` takes them (URIs,
        paths, ``{"uri", "name"}`` dicts). An exception fails the server's request with its
        message. ``None`` removes it: the lists of :meth:`set_roots` and
        :meth:`set_server_roots` answer again. Call :meth:`notify_roots_changed` when its
        answer changes."""
        if handler is None:
            self._native.set_roots_handler(None, None)
            return
        if not callable(handler):
            raise InvalidArgumentError(f"the roots handler must be callable, not {handler!r}")
        loop = self._loop("set_roots_handler()")
        self._native.set_roots_handler(loop, roots_adapter(handler))

    async def notify_roots_changed(self) -> None:
        """Tells every connected server that the roots changed: they ask again (of the
        roots handler, or the lists)."""
        await self._native.notify_roots_changed()

    # --- recipes, layers, conversations ------------------------------------------------

    def register_recipe(self, markdown: str) -> Recipe:
        """Adds a recipe (markdown with YAML front matter: ``widget`` or ``name``,
        ``description``, ``schema``); also offers the host tools ``widget_display`` and
        ``canvas``."""
        return _one(Recipe, self._native.register_recipe(markdown))

    def list_recipes(self) -> list[dict[str, str]]:
        """Name and description of every recipe."""
        result: list[dict[str, str]] = json.loads(self._native.list_recipes())
        return result

    def get_recipe(self, name: str) -> Recipe | None:
        """One recipe in full, or ``None``."""
        text = self._native.get_recipe(name)
        return None if text is None else _one(Recipe, text)

    def search_recipes(self, query: str, limit: int | None = None) -> list[dict[str, Any]]:
        """Recipes ranked for ``query``, best first (at most ``limit``, 10 when left out)."""
        result: list[dict[str, Any]] = json.loads(self._native.search_recipes(query, limit))
        return result

    def canvas(self) -> dict[str, Any]:
        """The canvas's widgets (what ``widget_display`` and ``canvas`` changed), as JSON."""
        result: dict[str, Any] = json.loads(self._native.canvas())
        return result

    async def layers(self) -> list[ToolLayer]:
        """One layer per server (and ``local`` for host tools), after listing the servers
        whose tools are not known yet; a server that could not be listed has its ``error``."""
        return _many(ToolLayer, await self._native.layers())

    def known_layers(self) -> list[ToolLayer]:
        """The layers as known now, without connecting anything."""
        return _many(ToolLayer, self._native.known_layers())

    def conversation(self, servers: list[str] | Mapping[str, Any] | None = None) -> Conversation:
        """A conversation for an agent loop of your own: discovery tools first, a server's
        tools once it is used. ``servers`` limits it (names or ids, or ``{"enabled": [...],
        "disabled": [...]}``)."""
        from ._agent import Conversation, servers_filter

        filt = servers_filter(servers)
        return Conversation(self._native.conversation(None if filt is None else json.dumps(filt)))

    # --- serving -----------------------------------------------------------------------

    async def serve_http(
        self,
        *,
        addr: str | None = None,
        token: str | None = None,
        no_auth: bool = False,
        allowed_origins: Sequence[str] | None = None,
        allowed_hosts: Sequence[str] | None = None,
        mode: str | None = None,
        auto_limit: int | None = None,
        name_budget: int | None = None,
        server_name: str | None = None,
        session_key: str | None = None,
        audit_log: str | os.PathLike[str] | None = None,
        legacy_sse: bool = False,
        oauth: OAuthResourceSettings | Mapping[str, Any] | None = None,
        max_connections: int | None = None,
        max_connections_per_peer: int | None = None,
    ) -> HttpServer:
        """Serves this pool as one MCP server over Streamable HTTP, for MCP clients that
        want a single server in front of the fleet (Claude Desktop, Cursor, an agent in
        another process). Tools are served as ``<server>__<tool>``; calls go through this
        pool, on its shared connections.

        ``addr`` is where to listen (``"127.0.0.1:0"`` when left out: loopback, any free
        port; see :attr:`HttpServer.url`). Clients send ``Authorization: Bearer <token>``:
        ``token`` sets it (a new random one when left out, see :attr:`HttpServer.token`);
        ``no_auth=True`` serves without one, on loopback only. ``allowed_origins`` are the
        browser origins allowed to call (e.g. ``"http://localhost:5173"``), ``allowed_hosts``
        the host names answered besides the loopback names. ``mode`` is ``"direct"`` (every
        tool), ``"search"`` (search tools only) or ``"auto"`` (the default: every tool up to
        ``auto_limit``, 40, the search tools past it). ``name_budget`` is how many characters
        the client puts before each tool name (names are cut to fit 64); ``server_name`` the
        ``serverInfo.name`` clients see (``"mcpmux"``). ``session_key`` is a secret (16
        characters or more) that replicas behind one load balancer share, so that any of
        them serves any session (left out, sessions stay with this server). ``audit_log`` is
        a file that gets one JSON line per tool call (time, client, profile, server, tool,
        duration, outcome). ``legacy_sse=True`` also serves the HTTP+SSE transport of
        protocol 2024-11-05 (``GET /sse``, ``POST /messages``) for clients that predate
        Streamable HTTP. ``oauth`` (:class:`OAuthResourceSettings`, e.g. ``{"issuer":
        "https://auth.example.com", "scopes": ["mcp"]}``) replaces the token: clients bring
        access tokens that issuer gave them for this server, and find it in the server's
        ``/.well-known/oauth-protected-resource/mcp``; the issuer's metadata and keys are read
        first (an issuer that cannot be reached raises :class:`ConnectionError`).
        ``max_connections`` (512) and ``max_connections_per_peer`` (256) cap the connections
        served at once, in all and from one address; past a cap a request is answered 503.
        A setting the core refuses raises :class:`InvalidArgumentError` saying what to change.
        """
        settings: dict[str, Any] = {
            "addr": addr,
            "token": token,
            "no_auth": no_auth,
            # A lone string goes as it is: the core says it wants a list.
            "allowed_origins": _listed(allowed_origins),
            "allowed_hosts": _listed(allowed_hosts),
            "mode": mode,
            "auto_limit": auto_limit,
            "name_budget": name_budget,
            "server_name": server_name,
            "session_key": session_key,
            "audit_log": None if audit_log is None else os.fspath(audit_log),
            "legacy_sse": legacy_sse,
            "oauth": None if oauth is None else oauth_resource_json(oauth),
            "max_connections": max_connections,
            "max_connections_per_peer": max_connections_per_peer,
        }
        body = {camel(k): v for k, v in settings.items() if v is not None}
        return HttpServer(await self._native.serve_http(json.dumps(body)))

    def _loop(self, what: str) -> asyncio.AbstractEventLoop:
        try:
            return asyncio.get_running_loop()
        except RuntimeError:
            raise InvalidArgumentError(
                f"{what} needs a running event loop (the Python function runs there); from "
                "synchronous code use mcpmux.sync.Pool"
            ) from None

    # --- events ------------------------------------------------------------------------

    def events(self) -> EventStream:
        """Every event from now on: ``async for event in pool.events():``. The stream ends
        when the pool closes."""
        return EventStream(self._native.events())

    def on(self, event: str, callback: EventCallback) -> Subscription:
        """Calls ``callback(event)`` for each event named ``event`` (or ``"*"`` for all), on
        the thread of the event loop running now. A coroutine it returns becomes a task.
        Returns the handle that unsubscribes."""
        if event != "*" and event not in EVENT_NAMES:
            raise InvalidArgumentError(
                f"unknown event {event!r}; known events: {', '.join(sorted(EVENT_NAMES))}, or '*'"
            )
        if not callable(callback):
            raise InvalidArgumentError(f"callback must be callable, not {callback!r}")
        if self._closed:
            from .errors import ShuttingDownError

            raise ShuttingDownError("the pool is closed", "shutting_down")
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise InvalidArgumentError(
                "pool.on() needs a running event loop; from synchronous code use mcpmux.sync.Pool"
            ) from None
        handle = Subscription(self, event, callback)
        self._listeners.setdefault(event, []).append(handle)
        if self._subscription is None:
            self._subscription = self._native.subscribe(
                loop, lambda text: self._dispatch(loop, text)
            )
        return handle

    def _dispatch(self, loop: asyncio.AbstractEventLoop, text: str) -> None:
        event = _one(Event, text)
        for handle in [*self._listeners.get(event.type, ()), *self._listeners.get("*", ())]:
            if handle.active:
                _deliver(loop, handle._callback, event)

    def _remove_listener(self, handle: Subscription) -> None:
        handles = self._listeners.get(handle._name, [])
        if handle in handles:
            handles.remove(handle)
        if not any(self._listeners.values()) and self._subscription is not None:
            self._subscription.cancel()
            self._subscription = None
