#!/usr/bin/env bash
# Kills a DiskCache writer process at random moments ROUNDS times (default 200) over one cache
# directory and checks after every kill that each read is a miss or exactly a completed value.
# Usage: scripts/crash-test.sh [ROUNDS] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
export EASEL_CRASH_ROUNDS="${1:-200}"
[ -n "${2:-}" ] && export EASEL_CRASH_SEED="$2"
scripts/install-deps.sh
swift build --build-tests
swift test --skip-build --filter killedWritersNeverLeaveAPartialValue
