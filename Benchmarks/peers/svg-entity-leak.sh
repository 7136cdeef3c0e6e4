#!/usr/bin/env bash
# Measures whether librsvg keeps memory per SVG loaded, plain and with an internal DTD subset
# declaring entities (see svg-entity-leak/leak.c). Needs librsvg2-dev and gcc.
set -euo pipefail
PEERS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$PEERS/../../scripts/install-deps.sh" build
WORK="$(mktemp -d "${TMPDIR:-/tmp}/easel-svg-leak.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
gcc -O1 "$PEERS/svg-entity-leak/leak.c" -o "$WORK/leak" $(pkg-config --cflags --libs librsvg-2.0)
"$WORK/leak"
