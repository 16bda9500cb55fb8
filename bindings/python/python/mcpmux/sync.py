"""The blocking API: :class:`Pool` runs :class:`mcpmux.Pool` on a background event loop.

It works from plain scripts and from code that already runs an event loop (Jupyter), since it
never touches the caller's loop. Callbacks (``on``, ``on_progress``) run on the background
loop's thread. The thread starts with the first open pool and stops when the last one closes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
from collections.abc import Callable, Coroutine, Mapping, Sequence
from types import TracebackType
from typing import Any, TypeVar

from . import _agent, _apps, _pool
from .errors import InvalidArgumentError, ShuttingDownError
from .types import (
    AgentResult,
    AppBridgeOutput,
    AppView,
    CallToolResult,
    Completion,
    DiscoverResult,
    Event,
    GetPromptResult,
    ImportResult,
    LoadedSkill,
    OAuthSettings,
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
    ToolDef,
    ToolInfo,
    ToolLayer,
    Unlisted,
)

__all__ = [
    "Agent",
    "AppBridge",
    "Conversation",
    "EventIterator",
    "HttpServer",
    "Pool",
    "Subscription",
    "TaskRun",
]

_T = TypeVar("_T")
_F = TypeVar("_F", bound=Callable[..., Any])

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None
_users = 0


def _acquire() -> asyncio.AbstractEventLoop:
    """The background loop, started if needed; counts one more user."""
    global _loop, _thread, _users
    with _lock:
        if _loop is None:
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def run() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()
                loop.close()

            thread = threading.Thread(target=run, name="mcpmux-sync-loop", daemon=True)
            thread.start()
            ready.wait()
            _loop, _thread = loop, thread
        _users += 1
        return _loop


def _release() -> None:
    """Counts one user less; the last one stops the loop and joins its thread."""
    global _loop, _thread, _users
    with _lock:
        _users -= 1
        if _users > 0 or _loop is None:
            return
        loop, thread = _loop, _thread
        _loop, _thread = None, None
    loop.call_soon_threadsafe(loop.stop)
    if thread is not None and thread is not threading.current_thread():
        thread.join()


def _after_fork_in_child() -> None:
    # The loop thread does not exist in a forked child: the next pool starts a new one.
    global _loop, _thread, _users, _lock
    _lock = threading.Lock()
    _loop, _thread, _users = None, None, 0


os.register_at_fork(after_in_child=_after_fork_in_child)


def _run(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, _T]) -> _T:
    """Runs ``coro`` on the background loop and waits for it; Ctrl-C cancels it."""
    if threading.current_thread() is _thread:
        coro.close()
        raise InvalidArgumentError(
            "a blocking mcpmux.sync method was called from one of its own callbacks, which "
            "would wait forever; use the async mcpmux.Pool inside callbacks"
        )
    future = asyncio.run_coroutine_threadsafe(coro, loop)
    try:
        return future.result()
    except concurrent.futures.CancelledError:
        raise asyncio.CancelledError() from None
    except KeyboardInterrupt:
        future.cancel()
        raise


class Subscription:
    """What :meth:`Pool.on` returns: call it (or ``unsubscribe()``) to stop the callback."""

    def __init__(self, loop: asyncio.AbstractEventLoop, inner: _pool.Subscription) -> None:
        self._loop = loop
        self._inner = inner

    @property
    def active(self) -> bool:
        """Whether the callback still receives events."""
        return self._inner.active

    def unsubscribe(self) -> None:
        """Stops the callback; calling it again does nothing."""

        async def stop() -> None:
            self._inner.unsubscribe()

        if self._inner.active:
            _run(self._loop, stop())

    def __call__(self) -> None:
        self.unsubscribe()


class EventIterator:
    """``for event in pool.events():`` blocking iteration over events; ends when the pool
    closes or ``close()`` is called. It keeps the background loop running until it ends, so
    the events sent before the pool closed can still be read after ``pool.close()``."""

    def __init__(self, stream: _pool.EventStream) -> None:
        self._loop = _acquire()
        self._stream = stream
        self._done = False

    def __iter__(self) -> EventIterator:
        return self

    def __next__(self) -> Event:
        if self._done:
            raise StopIteration
        try:
            return _run(self._loop, self._stream.__anext__())
        except StopAsyncIteration:
            self._finish()
            raise StopIteration from None

    def _finish(self) -> None:
        if not self._done:
            self._done = True
            _release()

    def close(self) -> None:
        """Ends the iteration."""
        if not self._done:
            try:
                _run(self._loop, self._stream.aclose())
            finally:
                self._finish()


class Pool:
    """The blocking twin of :class:`mcpmux.Pool`: same methods, same arguments, no ``await``.

    ``with mcpmux.sync.Pool(config_path, **options) as pool:`` closes it at the end.
    """

    def __init__(self, config_path: str | os.PathLike[str] | None = None, **options: Any) -> None:
        self._pid = os.getpid()
        self._loop = _acquire()
        self._released = False
        try:
            self._pool: _pool.Pool = _run(self._loop, _pool.Pool._open(config_path, options))
        except BaseException:
            self._release()
            raise

    @classmethod
    def open(cls, config_path: str | os.PathLike[str] | None = None, **options: Any) -> Pool:
        """Same as ``Pool(config_path, **options)``."""
        return cls(config_path, **options)

    def _release(self) -> None:
        if not self._released:
            self._released = True
            _release()

    def _check_process(self) -> None:
        if os.getpid() != self._pid:
            raise InvalidArgumentError(
                f"this pool was opened in process {self._pid} before a fork; open a new pool "
                "in this process"
            )

    def _call(self, coro: Coroutine[Any, Any, _T]) -> _T:
        try:
            self._check_process()
        except InvalidArgumentError:
            coro.close()
            raise
        if self._released:
            coro.close()
            raise ShuttingDownError("the pool is closed", "shutting_down")
        return _run(self._loop, coro)

    def __enter__(self) -> Pool:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<mcpmux.sync.Pool {self.config_path!r}>"

    @property
    def async_pool(self) -> _pool.Pool:
        """The :class:`mcpmux.Pool` underneath (bound to the background loop)."""
        return self._pool

    @property
    def config_path(self) -> str:
        """The config file's path."""
        return self._pool.config_path

    @property
    def options(self) -> dict[str, Any]:
        """The pool's options (the core's camelCase keys)."""
        return self._pool.options

    @property
    def in_flight(self) -> int:
        """Calls in flight right now."""
        return self._pool.in_flight

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._released

    def server_states(self) -> list[ServerStatus]:
        """Connection state of every visible server."""
        return self._pool.server_states()

    def close(self) -> None:
        """Closes the pool (see :meth:`mcpmux.Pool.close`). Idempotent."""
        if self._released:
            return
        self._check_process()
        if threading.current_thread() is _thread:
            raise InvalidArgumentError(
                "mcpmux.sync.Pool.close() was called from one of its own callbacks, which "
                "would wait forever; close it from another thread"
            )
        try:
            _run(self._loop, self._pool.close())
        finally:
            self._release()

    def list_servers(self) -> list[ServerRecord]:
        """Every server this pool sees, re-read from the config file."""
        return self._call(self._pool.list_servers())

    def get_server(self, server: str) -> ServerRecord:
        """One server, by id or name."""
        return self._call(self._pool.get_server(server))

    def add_server(
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
        """Adds a server (see :meth:`mcpmux.Pool.add_server`)."""
        return self._call(
            self._pool.add_server(
                name, command=command, args=args, env=env, inherit_env=inherit_env, cwd=cwd,
                url=url, headers=headers,
                strict_transport=strict_transport, oauth=oauth, sandbox=sandbox, config=config,
                type=type,
                scope=scope, is_active=is_active,
                is_trusted=is_trusted, disabled_tools=disabled_tools,
                disabled_auto_approve_tools=disabled_auto_approve_tools,
                install_source=install_source, project_path=project_path, timeouts=timeouts,
                log_level=log_level, session_scope=session_scope, max_clients=max_clients,
            )
        )  # fmt: skip

    def add_json(self, text: str | Mapping[str, Any]) -> list[ImportResult]:
        """Adds the servers of a JSON snippet."""
        return self._call(self._pool.add_json(text))

    def update_server(
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
        """Changes the given fields of a server."""
        return self._call(
            self._pool.update_server(
                server, name=name, config=config, type=type, scope=scope, is_active=is_active,
                is_trusted=is_trusted, disabled_tools=disabled_tools,
                disabled_auto_approve_tools=disabled_auto_approve_tools,
                install_source=install_source, project_path=project_path, timeouts=timeouts,
                log_level=log_level, session_scope=session_scope, max_clients=max_clients,
            )
        )  # fmt: skip

    def approve_server(self, server: str) -> ServerRecord:
        """Approves a server waiting for approval (see :meth:`mcpmux.Pool.approve_server`)."""
        return self._call(self._pool.approve_server(server))

    def remove_server(self, server: str) -> ServerRecord:
        """Removes a server; returns its record."""
        return self._call(self._pool.remove_server(server))

    def test_server(self, server: str) -> TestResult:
        """Connects to a server on a fresh connection and lists its tools."""
        return self._call(self._pool.test_server(server))

    def test_config(
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
        return self._call(
            self._pool.test_config(
                name, command=command, args=args, env=env, inherit_env=inherit_env, cwd=cwd,
                url=url, headers=headers,
                strict_transport=strict_transport, oauth=oauth, sandbox=sandbox, config=config,
                type=type,
                timeouts=timeouts,
            )
        )  # fmt: skip

    def discover(self, server: str) -> DiscoverResult:
        """Everything a server offers."""
        return self._call(self._pool.discover(server))

    def connect(self, server: str) -> ServerStatus:
        """Connects a server now."""
        return self._call(self._pool.connect(server))

    def connect_all(self) -> list[ServerStatus]:
        """Connects every active server."""
        return self._call(self._pool.connect_all())

    def disconnect(self, server: str) -> None:
        """Closes a server's connection."""
        return self._call(self._pool.disconnect(server))

    def search_tools(self, query: str, limit: int | None = None) -> list[SearchHit]:
        """See :meth:`mcpmux.Pool.search_tools`."""
        return self._call(self._pool.search_tools(query, limit))

    def ensure_catalog(
        self, servers: list[str] | Mapping[str, Any] | None = None
    ) -> list[Unlisted]:
        """See :meth:`mcpmux.Pool.ensure_catalog`."""
        return self._call(self._pool.ensure_catalog(servers))

    def known_tools(self) -> list[ToolInfo]:
        """See :meth:`mcpmux.Pool.known_tools`."""
        return self._pool.known_tools()

    def list_tools(self, server: str | None = None, *, refresh: bool = False) -> list[ToolInfo]:
        """Tools of every active server, or of one.
        ``refresh``: ask the servers again past every cache."""
        return self._call(self._pool.list_tools(server, refresh=refresh))

    def call_tool(
        self,
        tool_id: str,
        args: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: _pool.ProgressCallback | None = None,
        validate: bool = True,
        meta: Mapping[str, Any] | None = None,
        max_total: float | None = None,
        on_task: _pool.TaskCallback | None = None,
    ) -> CallToolResult:
        """Calls a tool (see :meth:`mcpmux.Pool.call_tool`); ``on_progress`` and ``on_task``
        run on the background loop's thread."""
        return self._call(
            self._pool.call_tool(
                tool_id,
                args,
                timeout=timeout,
                on_progress=on_progress,
                validate=validate,
                meta=meta,
                max_total=max_total,
                on_task=on_task,
            )
        )

    def start_task(
        self, tool_id: str, args: Mapping[str, Any] | None = None, **options: Any
    ) -> TaskRun:
        """Starts a tool call in the background and returns a :class:`TaskRun` to follow it
        (see :meth:`mcpmux.Pool.start_task`); ``options`` are :meth:`call_tool`'s."""

        async def start() -> _pool.TaskRun:
            return self._pool.start_task(tool_id, args, **options)

        return TaskRun(self, self._call(start()))

    def list_resources(
        self, server: str | None = None, *, refresh: bool = False
    ) -> list[ResourceInfo]:
        """Resources of every server that has them, or of one.
        ``refresh``: ask the servers again past every cache."""
        return self._call(self._pool.list_resources(server, refresh=refresh))

    def list_resource_templates(
        self, server: str | None = None, *, refresh: bool = False
    ) -> list[ResourceTemplateInfo]:
        """Resource templates of every server that has them, or of one.
        ``refresh``: ask the servers again past every cache."""
        return self._call(self._pool.list_resource_templates(server, refresh=refresh))

    def read_resource(self, server: str, uri: str) -> ReadResourceResult:
        """Reads one resource of one server."""
        return self._call(self._pool.read_resource(server, uri))

    def app_view(self, tool_id: str) -> AppView:
        """The MCP App view of a tool, read and checked (see :meth:`mcpmux.Pool.app_view`)."""
        return self._call(self._pool.app_view(tool_id))

    def app_call(
        self, view: AppView, name: str, args: Mapping[str, Any] | None = None
    ) -> CallToolResult:
        """A call the view makes, to its own server's tools for apps (see
        :meth:`mcpmux.Pool.app_call`)."""
        return self._call(self._pool.app_call(view, name, args))

    def app_read_resource(self, view: AppView, uri: str) -> ReadResourceResult:
        """A resource the view reads, from its own server."""
        return self._call(self._pool.app_read_resource(view, uri))

    def app_bridge(self, view: AppView, host_context: Mapping[str, Any] | None = None) -> AppBridge:
        """The bridge of a view being rendered, with a blocking ``handle`` (see
        :meth:`mcpmux.Pool.app_bridge`)."""
        return AppBridge(self, self._pool.app_bridge(view, host_context))

    def list_skills(self, server: str | None = None) -> list[SkillInfo]:
        """The skills of one server, or of every server that offers any, without reading a
        file of them (see :meth:`mcpmux.Pool.list_skills`)."""
        return self._call(self._pool.list_skills(server))

    def load_skill(self, server: str, skill: str) -> LoadedSkill:
        """Loads a skill, checked against the listing (see :meth:`mcpmux.Pool.load_skill`)."""
        return self._call(self._pool.load_skill(server, skill))

    def read_skill_file(self, server: str, skill: str, uri: str) -> SkillFileContents:
        """Reads one file of a skill, checked against the listing."""
        return self._call(self._pool.read_skill_file(server, skill, uri))

    def complete(
        self,
        server: str,
        argument: str,
        value: str,
        *,
        prompt: str | None = None,
        resource: str | None = None,
        context: Mapping[str, str] | None = None,
    ) -> Completion:
        """See :meth:`mcpmux.Pool.complete`."""
        return self._call(
            self._pool.complete(
                server, argument, value, prompt=prompt, resource=resource, context=context
            )
        )

    def request(self, server: str, method: str, params: Mapping[str, Any] | None = None) -> Any:
        """See :meth:`mcpmux.Pool.request`."""
        return self._call(self._pool.request(server, method, params))

    def notify(self, server: str, method: str, params: Mapping[str, Any] | None = None) -> None:
        """See :meth:`mcpmux.Pool.notify`."""
        return self._call(self._pool.notify(server, method, params))

    def subscribe_resource(self, server: str, uri: str) -> None:
        """Subscribes to a resource's changes (``resource:updated`` events)."""
        return self._call(self._pool.subscribe_resource(server, uri))

    def unsubscribe_resource(self, server: str, uri: str) -> None:
        """Ends a resource subscription."""
        return self._call(self._pool.unsubscribe_resource(server, uri))

    def list_prompts(self, server: str | None = None, *, refresh: bool = False) -> list[PromptInfo]:
        """Prompts of every server that has them, or of one.
        ``refresh``: ask the servers again past every cache."""
        return self._call(self._pool.list_prompts(server, refresh=refresh))

    def get_prompt(
        self, server: str, name: str, arguments: Mapping[str, Any] | None = None
    ) -> GetPromptResult:
        """One prompt of one server, filled with ``arguments``."""
        return self._call(self._pool.get_prompt(server, name, arguments))

    def events(self) -> EventIterator:
        """Every event from now on, as a blocking iterator."""

        async def make() -> _pool.EventStream:
            return self._pool.events()

        return EventIterator(self._call(make()))

    # --- host tools, host requests, recipes ------------------------------------------

    def _on_loop(self, fn: Callable[[], _T]) -> _T:
        """Runs ``fn`` on the background loop's thread (where Python callbacks run)."""

        async def call() -> _T:
            return fn()

        return self._call(call())

    def register_tool(
        self,
        name: str,
        schema: Mapping[str, Any] | None,
        fn: _pool.ToolFunction,
        *,
        description: str | None = None,
    ) -> ToolInfo:
        """See :meth:`mcpmux.Pool.register_tool`; ``fn`` runs on the background loop's thread."""
        return self._on_loop(
            lambda: self._pool.register_tool(name, schema, fn, description=description)
        )

    def tool(
        self,
        fn: _F | None = None,
        /,
        *,
        name: str | None = None,
        schema: Mapping[str, Any] | None = None,
        description: str | None = None,
    ) -> Any:
        """Decorator: see :meth:`mcpmux.Pool.tool`."""

        def register(f: _F) -> _F:
            self.register_tool(name or f.__name__, schema, f, description=description)
            return f

        return register(fn) if fn is not None else register

    def unregister_tool(self, name: str) -> bool:
        """Removes a host tool; whether it was there."""
        return self._pool.unregister_tool(name)

    def set_sampling_handler(
        self, handler: _pool.HostHandler | None, *, tools: bool = False
    ) -> None:
        """See :meth:`mcpmux.Pool.set_sampling_handler` (runs on the background loop)."""
        self._on_loop(lambda: self._pool.set_sampling_handler(handler, tools=tools))

    def set_elicitation_handler(self, handler: _pool.HostHandler | None) -> None:
        """See :meth:`mcpmux.Pool.set_elicitation_handler` (runs on the background loop)."""
        self._on_loop(lambda: self._pool.set_elicitation_handler(handler))

    def set_oauth_handler(
        self, authorize: _pool.OAuthCallback | None, *, redirect_uri: str | None = None
    ) -> None:
        """See :meth:`mcpmux.Pool.set_oauth_handler` (``authorize`` runs on the background
        loop's thread: a slow synchronous one holds up other callbacks, not the caller)."""
        self._on_loop(lambda: self._pool.set_oauth_handler(authorize, redirect_uri=redirect_uri))

    def set_token_store(self, store: TokenStore | str | os.PathLike[str]) -> None:
        """See :meth:`mcpmux.Pool.set_token_store` (a Python store runs on the background
        loop's thread)."""
        self._on_loop(lambda: self._pool.set_token_store(store))

    def logout(self, server: str) -> None:
        """See :meth:`mcpmux.Pool.logout`."""
        self._call(self._pool.logout(server))

    @property
    def roots(self) -> list[dict[str, Any]]:
        """The pool's roots."""
        return self._pool.roots

    def set_roots(self, roots: list[Any]) -> None:
        """See :meth:`mcpmux.Pool.set_roots`."""
        self._call(self._pool.set_roots(roots))

    def set_server_roots(self, server: str, roots: list[Any] | None) -> None:
        """See :meth:`mcpmux.Pool.set_server_roots`."""
        self._call(self._pool.set_server_roots(server, roots))

    def set_roots_handler(self, handler: _pool.HostHandler | None) -> None:
        """See :meth:`mcpmux.Pool.set_roots_handler` (``handler`` runs on the background
        loop's thread)."""
        self._on_loop(lambda: self._pool.set_roots_handler(handler))

    def notify_roots_changed(self) -> None:
        """See :meth:`mcpmux.Pool.notify_roots_changed`."""
        self._call(self._pool.notify_roots_changed())

    def conversation(self, servers: list[str] | Mapping[str, Any] | None = None) -> Conversation:
        """See :meth:`mcpmux.Pool.conversation`: the same conversation, with a blocking
        ``call``."""
        return Conversation(self, self._pool.conversation(servers))

    def register_recipe(self, markdown: str) -> Recipe:
        """See :meth:`mcpmux.Pool.register_recipe`."""
        return self._pool.register_recipe(markdown)

    def list_recipes(self) -> list[dict[str, str]]:
        return self._pool.list_recipes()

    def get_recipe(self, name: str) -> Recipe | None:
        return self._pool.get_recipe(name)

    def search_recipes(self, query: str, limit: int | None = None) -> list[dict[str, Any]]:
        return self._pool.search_recipes(query, limit)

    def layers(self) -> list[ToolLayer]:
        """See :meth:`mcpmux.Pool.layers`."""
        return self._call(self._pool.layers())

    def known_layers(self) -> list[ToolLayer]:
        return self._pool.known_layers()

    def serve_http(
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
        oauth: Mapping[str, Any] | None = None,
        max_connections: int | None = None,
        max_connections_per_peer: int | None = None,
    ) -> HttpServer:
        """Serves this pool as one MCP server over Streamable HTTP (see
        :meth:`mcpmux.Pool.serve_http`); it serves from the background loop until stopped or
        the pool closes."""
        inner = self._call(
            self._pool.serve_http(
                addr=addr, token=token, no_auth=no_auth, allowed_origins=allowed_origins,
                allowed_hosts=allowed_hosts, mode=mode, auto_limit=auto_limit,
                name_budget=name_budget, server_name=server_name,
                session_key=session_key, audit_log=audit_log, legacy_sse=legacy_sse,
                oauth=oauth, max_connections=max_connections,
                max_connections_per_peer=max_connections_per_peer,
            )
        )  # fmt: skip
        return HttpServer(self, inner)

    def on(self, event: str, callback: _pool.EventCallback) -> Subscription:
        """Calls ``callback(event)`` on the background loop's thread for each event named
        ``event`` (or ``"*"``). Returns the handle that unsubscribes."""

        async def subscribe() -> _pool.Subscription:
            return self._pool.on(event, callback)

        return Subscription(self._loop, self._call(subscribe()))


class HttpServer:
    """The blocking twin of :class:`mcpmux.HttpServer` (see :meth:`Pool.serve_http`):
    ``with pool.serve_http() as server:`` stops it at the end of the block."""

    def __init__(self, pool: Pool, inner: _pool.HttpServer) -> None:
        """Internal: use :meth:`Pool.serve_http`."""
        self._pool = pool
        self._inner = inner

    @property
    def async_server(self) -> _pool.HttpServer:
        """The :class:`mcpmux.HttpServer` underneath."""
        return self._inner

    @property
    def url(self) -> str:
        """The URL MCP clients connect to."""
        return self._inner.url

    @property
    def token(self) -> str | None:
        """The bearer token clients send, or ``None`` when serving with ``no_auth=True`` or
        ``oauth``."""
        return self._inner.token

    def stop(self) -> None:
        """Stops serving and closes the port (see :meth:`mcpmux.HttpServer.stop`).
        Idempotent; closing the pool stops it too."""
        if self._pool.closed:
            return  # the pool's close stopped it, and took the background loop with it
        self._pool._call(self._inner.stop())

    def __enter__(self) -> HttpServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<mcpmux.sync.HttpServer {self.url!r}>"


class TaskRun:
    """The blocking twin of :class:`mcpmux.TaskRun` (see :meth:`Pool.start_task`)."""

    def __init__(self, pool: Pool, inner: _pool.TaskRun) -> None:
        """Internal: use :meth:`Pool.start_task`."""
        self._pool = pool
        self._inner = inner

    @property
    def status(self) -> TaskUpdate | None:
        """The task's last status, if the server announced one."""
        return self._inner.status

    def changed(self) -> TaskUpdate | None:
        """Waits for the next status; ``None`` once the call has ended."""
        return self._pool._call(self._inner.changed())

    def cancel(self) -> None:
        """Cancels the call, and the task at the server; :meth:`result` then raises
        :class:`asyncio.CancelledError`."""
        self._pool._loop.call_soon_threadsafe(self._inner.cancel)

    def result(self) -> CallToolResult:
        """The call's result, as :meth:`Pool.call_tool` gives it."""
        return self._pool._call(self._inner.result())


class AppBridge:
    """The blocking twin of :class:`mcpmux.AppBridge` (see :meth:`Pool.app_bridge`)."""

    def __init__(self, pool: Pool, inner: _apps.AppBridge) -> None:
        """Internal: use :meth:`Pool.app_bridge`."""
        self._pool = pool
        self._inner = inner

    @property
    def view(self) -> AppView:
        """The view this bridge serves."""
        return self._inner.view

    def handle(self, message: Mapping[str, Any]) -> AppBridgeOutput:
        """One message the view posted: what to post back, and what only the host decides."""
        return self._pool._call(self._inner.handle(message))

    def tool_input(self, arguments: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The tool's arguments: the messages to post now."""
        return self._inner.tool_input(arguments)

    def tool_result(self, result: CallToolResult | Mapping[str, Any]) -> list[dict[str, Any]]:
        """The tool's result: the messages to post now."""
        return self._inner.tool_result(result)

    def tool_cancelled(self, reason: str) -> list[dict[str, Any]]:
        """The call did not finish: the messages to post now."""
        return self._inner.tool_cancelled(reason)

    @staticmethod
    def reply(request_id: str | int, answer: Mapping[str, Any] | Exception) -> dict[str, Any]:
        """A reply to the view's request ``request_id`` (see :meth:`mcpmux.AppBridge.reply`)."""
        return _apps.AppBridge.reply(request_id, answer)


class Conversation:
    """The blocking twin of :class:`mcpmux.Conversation` (see :meth:`Pool.conversation`)."""

    def __init__(self, pool: Pool, inner: _agent.Conversation) -> None:
        """Internal: use :meth:`Pool.conversation`."""
        self._pool = pool
        self._inner = inner

    @property
    def async_conversation(self) -> _agent.Conversation:
        """The :class:`mcpmux.Conversation` underneath."""
        return self._inner

    def tools(self) -> list[ToolDef]:
        """The functions to offer a model now."""
        return self._inner.tools()

    def activated(self) -> list[str]:
        """Ids of the servers activated so far."""
        return self._inner.activated()

    def call(
        self, name: str, args: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> CallToolResult:
        """Calls a function of this conversation; a real tool activates its server. Ctrl-C
        cancels the call."""
        return self._pool._call(self._inner.call(name, args, timeout=timeout))


class Agent:
    """The blocking twin of :class:`mcpmux.Agent` over a :class:`Pool`; Python providers and
    callbacks run on the background loop's thread."""

    def __init__(self, pool: Pool, provider: _agent.ProviderLike, **options: Any) -> None:
        self._pool = pool
        self._agent: _agent.Agent = pool._on_loop(
            lambda: _agent.Agent(pool.async_pool, provider, **options)
        )

    @property
    def model(self) -> str:
        return self._agent.model

    def set_model(self, model: str) -> None:
        self._agent.set_model(model)

    @property
    def system_prompt(self) -> str:
        return self._agent.system_prompt

    def run(self, prompt: str, **kwargs: Any) -> AgentResult:
        """See :meth:`mcpmux.Agent.run` (same keyword arguments); Ctrl-C cancels the run."""
        return self._pool._call(self._agent.run(prompt, **kwargs))

    def handle_sampling(self, approve: _agent.ApproveCallback | None = None) -> None:
        self._pool._on_loop(lambda: self._agent.handle_sampling(approve))
