#!/usr/bin/env bash
# The linker flag that makes the program's GNU build ID name the commit it is built from
# (read back by EaselSupport's BuildInfo for `easel --version`): the commit's 20 bytes, a byte
# that is 1 when the tree has uncommitted changes to tracked files, and the tag "easl". Prints
# nothing outside a git checkout (the linker's own hash stays; --version says "unknown").
# A linker flag only: a new commit relinks the programs, it recompiles nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
commit=$(git rev-parse --verify --quiet HEAD 2>/dev/null) || exit 0
dirty=00
git diff --quiet HEAD -- 2>/dev/null || dirty=01
printf -- '-Xlinker --build-id=0x%s%s6561736c\n' "$commit" "$dirty"
