"""MCP Apps: the host's end of a rendered view (core's ``AppBridge``). The host carries the
messages between the view's frame and :meth:`AppBridge.handle`, and posts back what comes
out."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from . import _native
from .errors import InvalidArgumentError
from .types import AppBridgeOutput, AppView, CallToolResult


class AppBridge:
    """One rendered view's bridge (see :meth:`mcpmux.Pool.app_bridge`): it answers
    ``ui/initialize``, tells the view the tool's input and result once it is initialized, and
    sends its ``tools/call`` and ``resources/read`` through :meth:`~mcpmux.Pool.app_call` and
    :meth:`~mcpmux.Pool.app_read_resource`."""

    def __init__(self, native: _native.NativeAppBridge) -> None:
        """Internal: use :meth:`mcpmux.Pool.app_bridge`."""
        self._native = native

    @property
    def view(self) -> AppView:
        """The view this bridge serves."""
        return AppView.from_dict(json.loads(self._native.view()))

    async def handle(self, message: Mapping[str, Any]) -> AppBridgeOutput:
        """One message the view posted: the messages to post back (``post``, in order) and a
        message only the host can act on (``host``: ``ui/open-link``, ``ui/message``,
        ``ui/update-model-context``, ``ui/request-display-mode``, whose reply the host posts,
        e.g. made with :meth:`reply`; ``ui/notifications/size-changed``)."""
        if not isinstance(message, Mapping):
            raise InvalidArgumentError(
                f"message must be the mapping the view posted, not {type(message).__name__}"
            )
        text = await self._native.handle(json.dumps(dict(message)))
        return AppBridgeOutput.from_dict(json.loads(text))

    def tool_input(self, arguments: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The tool's arguments: the messages to post now (none before the view is
        initialized; :meth:`handle` gives them then)."""
        messages: list[dict[str, Any]] = json.loads(
            self._native.tool_input(json.dumps(dict(arguments)))
        )
        return messages

    def tool_result(self, result: CallToolResult | Mapping[str, Any]) -> list[dict[str, Any]]:
        """The tool's result: the messages to post now (after its input)."""
        raw = result.to_dict() if isinstance(result, CallToolResult) else dict(result)
        messages: list[dict[str, Any]] = json.loads(self._native.tool_result(json.dumps(raw)))
        return messages

    def tool_cancelled(self, reason: str) -> list[dict[str, Any]]:
        """The call did not finish: the messages to post now."""
        messages: list[dict[str, Any]] = json.loads(self._native.tool_cancelled(reason))
        return messages

    @staticmethod
    def reply(request_id: str | int, answer: Mapping[str, Any] | Exception) -> dict[str, Any]:
        """A reply to the view's request ``request_id`` (one :meth:`handle` gave the host): a
        result, or an exception whose message the view sees."""
        if isinstance(answer, Exception):
            text = _native.NativeAppBridge.reply(json.dumps(request_id), error=str(answer))
        else:
            text = _native.NativeAppBridge.reply(json.dumps(request_id), json.dumps(dict(answer)))
        reply: dict[str, Any] = json.loads(text)
        return reply
