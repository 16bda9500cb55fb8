#!/usr/bin/env bash
# Installs the Debian packages of the given commands that are not on PATH yet (the command
# and its package share a name for every tool the tests use). CI starts on a clean machine:
# each test script asks for its own tools here instead of relying on a prepared image.
#
#   bash scripts/apt-install.sh gcc g++ valgrind
set -euo pipefail
missing=()
for tool in "$@"; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
((${#missing[@]})) || exit 0
echo "== installing ${missing[*]}"
sudo_cmd=()
[[ $(id -u) == 0 ]] || sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
