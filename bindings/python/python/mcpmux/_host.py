"""Adapters between Python callables and the core: every function the core calls is an
``async def adapter(json_text[, extra]) -> json_text`` run on the event loop that registered it.

User functions may be sync or async; a sync one runs on the loop's thread (keep it quick, or
make it ``async def``). What they return is only made JSON here (a dataclass as a dict, a path
as a ``file://`` URI); the core reads it, the same way for every language (the table is
tests/contract/host_answers.json).
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
import os
import types
import typing
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from . import _native
from .errors import InvalidArgumentError
from .types import ApprovalRequest, AuthorizationPrompt, HostRequest, Model, camel

__all__ = [
    "answer_json",
    "approve_adapter",
    "config_json",
    "elicitation_adapter",
    "oauth_adapter",
    "oauth_json",
    "roots_adapter",
    "roots_json",
    "sampling_adapter",
    "schema_from_signature",
    "token_store_adapter",
    "tool_adapter",
]

Adapter = Callable[..., Awaitable[str]]


async def _maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


def _plain(value: Any) -> Any:
    if isinstance(value, Model):
        return value.to_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


def answer_json(value: Any) -> str:
    """What a callback returned, as the JSON text the core reads (see the module's doc)."""
    return json.dumps(_plain(value))


def _error_result(message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "isError": True}


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def tool_adapter(fn: Callable[..., Any], name: str) -> Adapter:
    """``fn(**arguments)``; an exception becomes an error result with its message."""

    async def adapter(arguments_json: str) -> str:
        arguments = json.loads(arguments_json)
        try:
            if isinstance(arguments, dict):
                value = await _maybe_await(fn(**arguments))
            else:
                value = await _maybe_await(fn(arguments))
            return answer_json(value)
        except (TypeError, ValueError) as exc:
            # Also a result that is not JSON: say which tool and why.
            return json.dumps(_error_result(f"host tool '{name}' failed: {_describe(exc)}"))
        except Exception as exc:
            return json.dumps(_error_result(_describe(exc)))

    return adapter


def _host_request(text: str) -> HostRequest:
    return HostRequest.from_dict(json.loads(text))


def sampling_adapter(fn: Callable[[HostRequest], Any]) -> Adapter:
    """``fn(request)`` answers a ``CreateMessageResult`` dict, or just the text (a ``str``).
    An exception refuses the request, with its message as the reason."""

    async def adapter(request_json: str) -> str:
        return answer_json(await _maybe_await(fn(_host_request(request_json))))

    return adapter


def elicitation_adapter(fn: Callable[[HostRequest], Any]) -> Adapter:
    """``fn(request)`` answers an ``ElicitResult`` dict (``{"action": "accept", "content":
    {...}}``), or the content alone (a dict without ``action``: accepted), or ``None``
    (declined). An exception fails the request with its message."""

    async def adapter(request_json: str) -> str:
        return answer_json(await _maybe_await(fn(_host_request(request_json))))

    return adapter


def approve_adapter(fn: Callable[[ApprovalRequest], Any]) -> Adapter:
    """``fn(request)`` answers ``True``/``"once"``/``"allow"``, ``"always"``, or
    ``False``/``"deny"``/``None``. An exception, or an answer that is none of these, goes to
    the loop's exception handler and fails the answer, which core takes as a denial
    (``host::answers::approval_or_deny``)."""

    async def adapter(request_json: str) -> str:
        request = ApprovalRequest.from_dict(json.loads(request_json))
        try:
            answer = answer_json(await _maybe_await(fn(request)))
            _native.read_host_answer("approval", answer)
        except Exception as exc:
            asyncio.get_running_loop().call_exception_handler(
                {"message": f"mcpmux approval callback {fn!r} failed; denied", "exception": exc}
            )
            raise
        return answer

    return adapter


def oauth_adapter(fn: Callable[[AuthorizationPrompt], Any]) -> Adapter:
    """``fn(prompt)`` answers the redirect URL (a ``str``); an exception fails the
    authorization with its message."""

    async def adapter(prompt_json: str) -> str:
        prompt = AuthorizationPrompt.from_dict(json.loads(prompt_json))
        url = await _maybe_await(fn(prompt))
        if not isinstance(url, str) or not url:
            raise TypeError(
                f"the OAuth handler must return the redirect URL (a str), not {type(url).__name__}"
            )
        return json.dumps(url)

    return adapter


def token_store_adapter(store: Any) -> Adapter:
    """``adapter(op, server_id, credentials_json)`` over ``store.load/save/clear`` (sync or
    async). Errors never quote the credentials."""
    for method in ("load", "save", "clear"):
        if not callable(getattr(store, method, None)):
            raise InvalidArgumentError(
                f"a token store needs load, save and clear methods; {store!r} has no {method}()"
            )

    async def adapter(op: str, server_id: str, credentials_json: str) -> str:
        if op == "load":
            value = await _maybe_await(store.load(server_id))
            if isinstance(value, (str, bytes)):
                value = json.loads(value)
            if value is not None and not isinstance(value, Mapping):
                raise TypeError(
                    f"the token store's load() must return a dict, JSON text or None, "
                    f"not {type(value).__name__}"
                )
            return json.dumps(None if value is None else dict(value))
        if op == "save":
            await _maybe_await(store.save(server_id, json.loads(credentials_json)))
        else:
            await _maybe_await(store.clear(server_id))
        return "null"

    return adapter


_OAUTH_KEYS = {
    "client_id",
    "client_secret",
    "client_metadata_url",
    "scopes",
    "grant",
    "private_key_pem",
    "signing_algorithm",
}

_IDP_KEYS = {
    "issuer",
    "token_endpoint",
    "client_id",
    "client_secret",
    "token_endpoint_auth_method",
    "id_token",
}


def _camel_keys(settings: Any, keys: set[str], what: str) -> dict[str, Any]:
    settings = _plain(settings)
    if not isinstance(settings, Mapping):
        raise InvalidArgumentError(
            f"{what} must be a dict of settings, not {type(settings).__name__}"
        )
    out: dict[str, Any] = {}
    for key, value in settings.items():
        name = camel(key) if key in keys else key
        if name in out:
            raise InvalidArgumentError(f"{what} setting {name!r} is given twice")
        out[name] = value
    return out


def oauth_resource_json(settings: Any) -> dict[str, Any]:
    """``serve_http``'s OAuth resource-server settings (snake_case or camelCase keys) as the
    core's camelCase object; the core rejects unknown keys."""
    out = _camel_keys(settings, {"jwks_uri"}, "oauth")
    if "scopes" in out and not isinstance(out["scopes"], str):
        out["scopes"] = list(out["scopes"])
    return out


def oauth_json(settings: Any) -> dict[str, Any]:
    """OAuth settings (snake_case or camelCase keys) as the core's camelCase object; the core
    rejects unknown keys."""
    out = _camel_keys(settings, _OAUTH_KEYS, "oauth")
    if "scopes" in out and not isinstance(out["scopes"], str):
        out["scopes"] = list(out["scopes"])
    if out.get("idp") is not None:
        out["idp"] = _camel_keys(out["idp"], _IDP_KEYS, "oauth idp")
    return out


def config_json(config: Any) -> dict[str, Any]:
    """A server's ``config`` as the core's JSON: ``strict_transport``, ``inherit_env`` and the
    ``oauth`` settings may be spelled in snake_case (``env`` and ``headers`` are left as they
    are)."""
    out = dict(_plain(config))
    for snake_key, camel_key in (
        ("strict_transport", "strictTransport"),
        ("inherit_env", "inheritEnv"),
    ):
        if snake_key in out:
            if camel_key in out:
                raise InvalidArgumentError(f"{snake_key} is given twice")
            out[camel_key] = out.pop(snake_key)
    if out.get("oauth") is not None:
        out["oauth"] = oauth_json(out["oauth"])
    if out.get("sandbox") is not None:
        out["sandbox"] = sandbox_json(out["sandbox"])
    return out


def sandbox_json(sandbox: Any) -> dict[str, Any]:
    """A sandbox (a :class:`Sandbox` or a dict, snake_case or camelCase keys) as the core's
    camelCase object; the core rejects unknown keys."""
    return _camel_keys(sandbox, {"memory_mb", "open_files"}, "sandbox")


_JSON_TYPES: dict[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    tuple: "array",
    dict: "object",
}


def _schema_of(annotation: Any) -> dict[str, Any]:
    if annotation is inspect.Parameter.empty or annotation is Any:
        return {}
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(options) == 1:
            return _schema_of(options[0])
        return {"anyOf": [_schema_of(a) for a in options]}
    if origin is typing.Literal:
        return {"enum": list(typing.get_args(annotation))}
    base = origin or annotation
    kind = _JSON_TYPES.get(base)
    if kind is None:
        return {}
    schema: dict[str, Any] = {"type": kind}
    args = typing.get_args(annotation)
    if kind == "array" and args and origin is list:
        schema["items"] = _schema_of(args[0])
    return schema


def schema_from_signature(fn: Callable[..., Any]) -> dict[str, Any]:
    """A JSON Schema for ``fn``'s keyword parameters, from their annotations (str, int, float,
    bool, list, dict, Optional, Literal); parameters without a default are required."""
    try:
        hints = typing.get_type_hints(fn)
    except Exception:
        hints = {}
    properties: dict[str, Any] = {}
    required: list[str] = []
    for p in inspect.signature(fn).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY):
            continue
        properties[p.name] = _schema_of(hints.get(p.name, p.annotation))
        if p.default is p.empty:
            required.append(p.name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def roots_adapter(fn: Callable[[HostRequest], Any]) -> Adapter:
    """``fn(request)`` answers a server's ``roots/list``: a list of roots as
    :meth:`mcpmux.Pool.set_roots` takes them (URIs, paths, ``{"uri", "name"}`` dicts), or
    ``None`` (no roots). An exception fails the request with its message."""

    async def adapter(request_json: str) -> str:
        value = await _maybe_await(fn(_host_request(request_json)))
        return "null" if value is None else roots_json(value)

    return adapter


def roots_json(roots: Any) -> str:
    """Roots as the core's JSON: each a URI string, a path (made a ``file://`` URI), or a
    dict with ``uri`` and optionally ``name``."""
    if isinstance(roots, (str, os.PathLike, Mapping)):
        raise InvalidArgumentError("roots must be a list (of URIs, paths or {'uri', 'name'} dicts)")
    out: list[dict[str, Any]] = []
    for root in roots:
        if isinstance(root, os.PathLike):
            out.append({"uri": Path(root).resolve().as_uri()})
        elif isinstance(root, str):
            out.append({"uri": root})
        elif isinstance(root, Mapping):
            out.append(dict(root))
        else:
            raise InvalidArgumentError(f"a root must be a URI, a path or a dict, not {root!r}")
    return json.dumps(out)
