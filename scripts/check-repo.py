#!/usr/bin/env python3
"""Checks the repository's own habits, which no compiler sees:

- one version: every manifest says the version of the root workspace;
- one license: every manifest says the license the LICENSE file holds;
- words a reader can follow: the text names designs ("as the llama.cpp web UI does"), never
  the design documents' file numbers or issue numbers, which the repository does not define;
- one release build of the core: the C library, the wheel and the addon (scripts/dist.sh)
  resolve the core's dependencies with the same features, so it compiles once for the three;
- the security table names tests that exist: each `path::name` in docs/security.md is a file
  holding that name, so a renamed or removed test cannot leave a claim looking backed.

Prints what is wrong, with the file to change, and exits 1; prints one line and exits 0 when
all is well. Standard library only (Python 3.11+, for tomllib).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent

# Manifests that state a version and a license of their own; every other crate inherits both
# from the root workspace (`version.workspace = true`).
OWN_VERSION = [
    "bindings/node/package.json",
]
# The design documents were numbered 000, 002, 003 where they were kept; issues by number.
CITATION = re.compile(r"\bseeds? ?0\d\d\b|\bissues? #?\d+\b", re.IGNORECASE)
# The changelog records history, where an old wording may be quoted.
CITATION_ALLOWED = {"CHANGELOG.md", "scripts/check-repo.py"}


def toml(path: str) -> dict:
    return tomllib.loads((ROOT / path).read_text())


def tracked_files() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    return [p for p in out.split("\0") if p]


def version_and_license(path: str) -> tuple[str | None, str | None]:
    if path.endswith("package.json"):
        data = json.loads((ROOT / path).read_text())
        return data.get("version"), data.get("license")
    package = toml(path).get("package", {})
    return package.get("version"), package.get("license")


def check_versions(problems: list[str]) -> str:
    root = toml("Cargo.toml")["workspace"]["package"]
    version, license_ = root["version"], root["license"]
    for path in OWN_VERSION:
        v, lic = version_and_license(path)
        if v != version:
            problems.append(f"{path}: version {v!r}, but Cargo.toml's workspace says {version!r}")
        if lic != license_:
            problems.append(
                f"{path}: license {lic!r}, but Cargo.toml's workspace says {license_!r}"
            )
    for member in toml("Cargo.toml")["workspace"]["members"]:
        package = toml(f"{member}/Cargo.toml")["package"]
        for key in ("version", "license"):
            if package.get(key) != {"workspace": True}:
                problems.append(f"{member}/Cargo.toml: set `{key}.workspace = true`")
        if toml(f"{member}/Cargo.toml").get("lints") != {"workspace": True}:
            problems.append(
                f"{member}/Cargo.toml: take the workspace's lints (`[lints] workspace = true`)"
            )
    pyproject = toml("bindings/python/pyproject.toml")["project"]
    if "version" in pyproject or "version" not in pyproject.get("dynamic", []):
        problems.append(
            "bindings/python/pyproject.toml: the version comes from Cargo.toml "
            '(`dynamic = ["version"]`), not a second copy'
        )
    if pyproject.get("license") != license_:
        problems.append(f"bindings/python/pyproject.toml: license should be {license_!r}")
    licence_text = (ROOT / "LICENSE").read_text() if (ROOT / "LICENSE").exists() else ""
    if license_ == "Apache-2.0" and "Apache License" not in licence_text:
        problems.append("LICENSE: missing, or not the Apache License 2.0 the manifests name")
    return version


def check_citations(problems: list[str]) -> None:
    for path in tracked_files():
        if path in CITATION_ALLOWED or path.endswith((".lock", "package-lock.json")):
            continue
        try:
            text = (ROOT / path).read_text()
        except (UnicodeDecodeError, FileNotFoundError):
            continue
        for number, line in enumerate(text.splitlines(), 1):
            m = CITATION.search(line)
            if m:
                problems.append(
                    f"{path}:{number}: cites {m.group(0)!r}; name the design or the behaviour "
                    "instead (docs/design.md says what each design is)"
                )


# A test as docs/security.md names it: `path::module::name`, `path::"a JS test's title"` or
# `path::test_name[param]`.
SECURITY_TABLE = "docs/security.md"
NAMED_TEST = re.compile(r"`([\w./-]+\.(?:rs|py|js|mjs|c))::([^`]+)`")


def check_security_table(problems: list[str]) -> None:
    text = (ROOT / SECURITY_TABLE).read_text()
    for path, name in NAMED_TEST.findall(text):
        leaf = name.split("::")[-1].split("[")[0].strip('"')
        source = ROOT / path
        if not source.is_file():
            problems.append(f"{SECURITY_TABLE}: names {path}, which does not exist")
        elif not leaf.endswith("*") and leaf not in source.read_text():
            problems.append(
                f"{SECURITY_TABLE}: names {path}::{name}, which {path} does not hold: "
                "point the row at the test that backs it, or move the claim to the list of "
                "what no test checks yet"
            )


# What scripts/dist.sh builds, and for which target.
DIST_PACKAGES = ["mcpmux-ffi", "mcpmux-python", "mcpmux-node"]
DIST_TARGET = "x86_64-unknown-linux-gnu"


def resolved(package: str) -> set[str]:
    """Every crate of `package`'s build (proc macros and build scripts too) with its features."""
    command = "cargo tree --quiet --locked -e normal,build --prefix none".split()
    command += ["-p", package, "--target", DIST_TARGET, "-f", "{p} [{f}]"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"check-repo: `{' '.join(command)}` failed:\n{done.stderr}")
    return {line.removesuffix(" (*)") for line in done.stdout.splitlines() if line}


def check_one_core_build(problems: list[str]) -> None:
    # A feature one artifact turns on below the core (e.g. syn's `fold`, through a build
    # dependency) gives the core another hash in that build, and the core with every crate
    # between it and that feature compiles again: minutes of CI.
    builds = {package: resolved(package) for package in DIST_PACKAGES}
    core_crates = {line.split(" [")[0] for line in resolved("mcpmux")}
    shared = {
        package: {line for line in lines if line.split(" [")[0] in core_crates}
        for package, lines in builds.items()
    }
    first, *others = DIST_PACKAGES
    for other in others:
        for line in sorted(shared[first] ^ shared[other]):
            whose = first if line in shared[first] else other
            problems.append(
                f"{whose}: builds the core's dependency {line} and the other does not "
                f"({first} vs {other}): give both the same features, or the core compiles twice "
                "in scripts/dist.sh"
            )


# The shape of the core, as docs/architecture.md describes it: a newcomer finds a behaviour
# from the tree. Generated files and tests are not held to it.
MAX_FILE_LINES = 900
MAX_FN_LINES = 120
MAX_FOLDER_ENTRIES = {"core/src/pool": 12, "core/src/serve": 12}


def rust_code(text: str) -> str:
    """`text` with comments, strings and character literals blanked (newlines kept), so that
    braces are the code's own."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:]) and not re.match(r"\w", text[i - 1 : i]):
            hashes = re.match(r"r(#*)\"", text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            end = n if end < 0 else end + 1 + len(hashes)
            out.append("\n" * text.count("\n", i, end))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append("\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.[^']*|[^\\'])'", text[i:]):
            i += len(re.match(r"'(\\.[^']*|[^\\'])'", text[i:]).group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def long_functions(code: str) -> list[tuple[int, str, int]]:
    """(line, name, lines) of every `fn` over MAX_FN_LINES, outside `mod tests`."""
    lines = code.split("\n")
    found, i = [], 0
    while i < len(lines):
        if re.match(r"#\[cfg\(test\)\]", lines[i].strip()) and i + 1 < len(lines):
            if re.match(r"\s*mod \w+", lines[i + 1]):
                break
        m = re.match(
            r"\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?"
            r"(extern \"C\"\s+)?fn\s+(\w+)",
            lines[i],
        )
        if not m:
            i += 1
            continue
        depth, started, j = 0, False, i
        while j < len(lines):
            for ch in lines[j]:
                if ch == "{":
                    depth, started = depth + 1, True
                elif ch == "}":
                    depth -= 1
            if (started and depth <= 0) or (not started and lines[j].rstrip().endswith(";")):
                break
            j += 1
        if j - i + 1 > MAX_FN_LINES:
            found.append((i + 1, m.group(7), j - i + 1))
        i = j + 1 if started else i + 1
    return found


def check_core_shape(problems: list[str]) -> None:
    for path in tracked_files():
        if not (path.startswith("core/src/") and path.endswith(".rs")) or not os.path.exists(path):
            continue
        text = open(path, encoding="utf-8").read()
        count = text.count("\n")
        if count > MAX_FILE_LINES:
            problems.append(
                f"{path}: {count} lines, over {MAX_FILE_LINES}: split it by concept (a folder "
                "with a file per part, its tests in tests.rs)"
            )
        if path.endswith("/tests.rs"):
            continue
        for line, name, length in long_functions(rust_code(text)):
            problems.append(
                f"{path}:{line}: fn {name} is {length} lines, over {MAX_FN_LINES}: give its "
                "steps names of their own"
            )
    for folder, most in MAX_FOLDER_ENTRIES.items():
        entries = sorted(os.listdir(folder))
        if len(entries) > most:
            problems.append(
                f"{folder}: {len(entries)} entries at its top, over {most}: nest them by concept"
            )


def main() -> int:
    problems: list[str] = []
    version = check_versions(problems)
    check_citations(problems)
    check_one_core_build(problems)
    check_security_table(problems)
    check_core_shape(problems)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        print(f"check-repo: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(
        f"check-repo: one version ({version}), one license, no unexplained citations, "
        "one build of the core for the C library, wheel and addon, every test the security "
        "table names exists, core's files and functions within their sizes"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
