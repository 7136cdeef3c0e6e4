#!/usr/bin/env bash
# Kills a DiskCache writer process at random moments ROUNDS times (default 200) over one cache
# directory and checks after every kill that each read is a miss or exactly a completed value;
# then does the same to an image table writer (every entry valid by checksum and pixels, or missing).
# Usage: scripts/crash-test.sh [ROUNDS] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
export EASEL_CRASH_ROUNDS="${1:-200}"
export EASEL_TABLE_CRASH_ROUNDS="$EASEL_CRASH_ROUNDS"
[ -n "${2:-}" ] && export EASEL_CRASH_SEED="$2"
scripts/install-deps.sh build test
# shellcheck disable=SC2046  # (the build ID's flag, as make test builds: nothing relinked)
swift build --build-tests $(scripts/build-id.sh)
swift test --skip-build --filter 'killedWritersNeverLeaveAPartialValue|killedWritersLeaveValidEntriesOrNone'

