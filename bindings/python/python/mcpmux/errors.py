"""The exceptions of mcpmux: one class per error kind of the Rust core.

Every exception is an :class:`Error` with the core's message and a stable ``code``; each also
derives from the built-in exception a Python caller would naturally catch (``TimeoutError``,
``LookupError``, ``ValueError``, ``asyncio.CancelledError``...).
"""

from __future__ import annotations

import asyncio
import builtins
from typing import Any

from . import _native
from .types import UrlElicitation

__all__ = [
    "CancelledError",
    "ConfigError",
    "ConnectionError",
    "Error",
    "InvalidArgumentError",
    "InvalidResultError",
    "IoError",
    "MessageTooLargeError",
    "NotFoundError",
    "ProtocolError",
    "ShuttingDownError",
    "TimeoutError",
    "ToolError",
    "UrlElicitationRequiredError",
]


class Error(Exception):
    """Base class of every mcpmux error.

    ``code`` is the core's stable snake_case error code; ``message`` the core's message;
    ``data`` what the error carries besides, for the kinds that carry something (else
    ``None``).
    """

    code: str = "error"

    def __init__(self, message: str, code: str | None = None, data: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data
        if code is not None:
            self.code = code

    def __reduce__(self) -> tuple[type[Error], tuple[str, str, Any]]:
        return (type(self), (self.message, self.code, self.data))


class ConfigError(Error):
    """The config file exists but cannot be used; it was left untouched. Fix or move it."""

    code = "invalid_config"


class InvalidArgumentError(Error, ValueError):
    """An argument cannot be used (bad JSON, duplicate name, unknown option, disabled tool...)."""

    code = "invalid_argument"


class NotFoundError(Error, LookupError):
    """No server, tool, resource or prompt of that name or id."""

    code = "not_found"


class ConnectionError(Error, builtins.ConnectionError):
    """The server could not be reached, or its connection died."""

    code = "connection"


class TimeoutError(Error, builtins.TimeoutError):
    """No answer in time; pass a longer ``timeout`` or raise the pool's ``request_timeout_ms``."""

    code = "timeout"


class CancelledError(Error, asyncio.CancelledError):
    """The operation was cancelled (also an :class:`asyncio.CancelledError`)."""

    code = "cancelled"


class ProtocolError(Error):
    """The server broke the protocol or answered with a JSON-RPC error."""

    code = "protocol"


class ToolError(Error):
    """A tool call was answered with a JSON-RPC error (a result with ``is_error`` is not one)."""

    code = "tool"


class MessageTooLargeError(Error):
    """A server sent a message larger than the pool accepts; raise ``max_message_bytes``
    (16 MiB by default) to accept it. Its connection was closed and reopens on next use."""

    code = "message_too_large"


class UrlElicitationRequiredError(Error):
    """A server needs the user to open a URL first (URL mode elicitation, error -32042), e.g.
    to connect an account. Show each of :attr:`elicitations` to the user, open its ``url`` if
    they agree, and retry once the ``elicitation:complete`` event names its
    ``elicitation_id``."""

    code = "url_elicitation_required"

    @property
    def elicitations(self) -> list[UrlElicitation]:
        """The URLs the server asks the user to open."""
        entries = self.data.get("elicitations", []) if isinstance(self.data, dict) else []
        return [UrlElicitation.from_dict(e) for e in entries]


class InvalidResultError(Error):
    """A tool's result does not match the tool's ``outputSchema``: its structured content is
    missing or does not validate. :attr:`problems` says what is wrong, each led by the JSON
    pointer of the value at fault; ``call_tool(..., validate=False)`` takes such results."""

    code = "invalid_result"

    @property
    def problems(self) -> list[str]:
        """What is wrong, one entry a problem."""
        found = self.data.get("problems", []) if isinstance(self.data, dict) else []
        return [str(p) for p in found]


class ShuttingDownError(Error):
    """The pool is closing or closed and takes no new work: open a new pool."""

    code = "shutting_down"


class IoError(Error):
    """A file or process operation failed."""

    code = "io"


# Every kind of error is a direct subclass of Error with its own code: defining one registers it.
_BY_CODE: dict[str, type[Error]] = {cls.code: cls for cls in Error.__subclasses__()}

# The native layer raises these classes directly, by the core's error code.
_native._register_errors(_BY_CODE)
