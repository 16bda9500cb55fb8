"""What an installed package must carry: one version everywhere, the typing files, and a
native module built for the stable ABI (one wheel for every CPython from 3.10)."""

from __future__ import annotations

import importlib.metadata
import re
from importlib import resources
from pathlib import Path

import mcpmux
from conftest import REPO
from mcpmux import _native


def test_one_version_in_the_module_the_metadata_and_the_workspace() -> None:
    # The first `version = "..."` of the root manifest is [workspace.package]'s.
    match = re.search(r'^version = "([^"]+)"$', (REPO / "Cargo.toml").read_text(), re.M)
    assert match, "the root Cargo.toml states the version"
    assert mcpmux.__version__ == match.group(1)
    assert importlib.metadata.version("mcpmux") == mcpmux.__version__


def test_typing_files_are_installed_beside_the_package() -> None:
    package = resources.files("mcpmux")
    assert package.joinpath("py.typed").is_file()
    assert package.joinpath("_native.pyi").is_file()


def test_the_native_module_uses_the_stable_abi() -> None:
    assert Path(_native.__file__).name.endswith(".abi3.so")
