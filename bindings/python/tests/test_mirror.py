"""The Python types mirror core's: the record types' fields in ``types.py`` are generated from
core's JSON Schemas (tests/tests/integration/mirrors fails CI when they drift); the error
classes, the events and ``Pool.open``'s options are written by hand. Each must have every
field, event and code that core has (``_native.MIRRORED``): a test here fails when core gains
one that the installed package lacks."""

from __future__ import annotations

import dataclasses
import inspect
import json
import typing
from typing import Any

import pytest

import mcpmux
import mcpmux.sync
from mcpmux import _native, errors
from mcpmux._pool import OPTION_NAMES
from mcpmux.types import _RENAMES, IdpSettings, OAuthResourceSettings, OAuthSettings, snake

MIRRORED: dict[str, Any] = json.loads(_native.MIRRORED)

DATACLASSES: dict[str, type] = {
    "ServerRecord": mcpmux.ServerRecord,
    "ServerConfig": mcpmux.ServerConfig,
    "Timeouts": mcpmux.Timeouts,
    "ImportResult": mcpmux.ImportResult,
    "ToolInfo": mcpmux.ToolInfo,
    "ServerStatus": mcpmux.ServerStatus,
    "SkillInfo": mcpmux.SkillInfo,
    "SkillFile": mcpmux.SkillFile,
    "LoadedSkill": mcpmux.LoadedSkill,
    "SkillFileContents": mcpmux.SkillFileContents,
    "AppView": mcpmux.AppView,
    "AppCsp": mcpmux.AppCsp,
    "AppPermissions": mcpmux.AppPermissions,
    "AppBridgeOutput": mcpmux.AppBridgeOutput,
    "ApprovalRequest": mcpmux.ApprovalRequest,
}


@pytest.mark.parametrize("name", sorted(DATACLASSES))
def test_each_record_type_has_every_field_of_core(name: str) -> None:
    have = {f.name for f in dataclasses.fields(DATACLASSES[name])}
    # Keys that are no Python name (`_meta`) are read into a renamed attribute.
    attribute = {key: attr for attr, key in _RENAMES.get(name, {}).items()}
    missing = [f for f in MIRRORED["types"][name] if attribute.get(f, snake(f)) not in have]
    assert not missing, f"mcpmux.{name} lacks {missing}"


@pytest.mark.parametrize(
    "name,typed",
    [
        ("OAuthSettings", OAuthSettings),
        ("IdpSettings", IdpSettings),
        ("OAuthResourceSettings", OAuthResourceSettings),
    ],
)
def test_each_settings_dict_takes_every_key_of_core(name: str, typed: type) -> None:
    keys = set(typed.__annotations__)
    missing = [f for f in MIRRORED["types"][name] if f not in keys or snake(f) not in keys]
    assert not missing, f"mcpmux.{name} lacks {missing} (camelCase and snake_case)"


def test_every_pool_option_is_a_keyword_of_open() -> None:
    core = {snake(o) for o in MIRRORED["types"]["PoolOptions"] if o != "configPath"}
    assert core == set(OPTION_NAMES)


@pytest.mark.parametrize("cls", [mcpmux.Pool, mcpmux.sync.Pool])
def test_every_serve_setting_is_a_keyword_of_serve_http(cls: type) -> None:
    params = inspect.signature(cls.serve_http).parameters.values()
    keywords = {p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}
    core = {snake(f) for f in MIRRORED["types"]["HttpServeSettings"]}
    assert core == keywords, f"{cls.__module__}.{cls.__qualname__}.serve_http differs"


def test_every_error_code_has_its_exception_class() -> None:
    assert sorted(MIRRORED["errorCodes"]) == sorted(errors._BY_CODE)
    for code in MIRRORED["errorCodes"]:
        assert errors._BY_CODE[code].__name__ in mcpmux.__all__, code


def test_every_event_core_emits_can_be_subscribed_to() -> None:
    assert sorted(MIRRORED["events"]) == sorted(mcpmux.EVENT_NAMES)


def test_the_provider_kinds_of_core_are_the_provider_config_literal() -> None:
    hints = typing.get_type_hints(mcpmux.types._ProviderConfigBase)
    assert sorted(typing.get_args(hints["type"])) == sorted(MIRRORED["providerTypes"])
