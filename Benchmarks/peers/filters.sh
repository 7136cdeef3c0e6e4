#!/usr/bin/env bash
# What each thumbor/imgproxy filter adds to a 256 px thumbnail: the sample photos decoded (shrunk
# on load), resized to fit 256×256, the filter, JPEG at 80 — against the same without a filter,
# in one run, one core (taskset), release build (goal, issue 30: at most +20 %, except noise,
# convolution and curve, which state theirs).
#
#   SKIP_BUILD=1 REPS=5 CPU=0 Benchmarks/peers/filters.sh
set -euo pipefail
PEERS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BENCH="$(dirname "$PEERS")"
ROOT="$(dirname "$BENCH")"
REPS="${REPS:-5}"
CPU="${CPU:-0}"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  "$ROOT/scripts/install-deps.sh" build
  nice -n 19 swift build --package-path "$BENCH" -c release --product ColorFormatsWorkload -j 1 >/dev/null
fi
out=$(taskset -c "$CPU" "$BENCH/.build/release/ColorFormatsWorkload" filters "$REPS" "$ROOT"/Samples/*.jpg)
python3 - "$out" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
results = d["results"]
base = results[0]["totalS"]
print(f"## What each filter adds to a 256 px thumbnail ({d['thumbnails']} thumbnails each, one core)")
print("| filter | median ms | total s | against none |")
print("|---|---|---|---|")
for r in results:
    print(f"| {r['filter']} | {r['medianMs']:.2f} | {r['totalS']:.3f} | {'+' if r['totalS'] >= base else ''}{(r['totalS'] / base - 1) * 100:.1f} % |")
PY
