#!/usr/bin/env bash
# What rendering SVGs in worker processes costs, side by side with rendering them in the server's
# own process, in one run: cold SVG thumbnails from `easel serve` with render workers (the
# default) and with EASEL_RENDER_WORKERS=0.
#
#   Benchmarks/peers/svg-workers.sh      (needs a release build: swift build -c release --product easel)
#
# Corpus: COUNT small SVG drawings (default 120; 400×300, a gradient, 40 shapes and a line of
# text each, ~4 KB), all different, made here. Each pass: a fresh `easel serve` (empty cache, a
# free port, processingConcurrency JOBS), warmed with 4 other drawings (a running server's
# workers are started, as its codecs are loaded), then CLIENTS threads (cold_requests.py) GET
# /images/thumb/<file> once per file, Accept: image/jpeg; every answer must be 200. Timed from the
# first request to the last answer. RUNS passes per row (default 3), interleaved; best kept.
# Prints thumbnails/s and the median latency per row, and workers/in-process.
#
# Environment: RUNS=3 COUNT=120 CLIENTS=2 JOBS=2 EASEL=path (default .build/release/easel)
set -euo pipefail
# Like for like: the peers here write no line per request, so neither does easel serve (its
# access log is on by default; EASEL_ACCESS_LOG=1 measures it with the log).
export EASEL_ACCESS_LOG="${EASEL_ACCESS_LOG:-0}"
PEERS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$(dirname "$PEERS_DIR")")"
[ -z "${EASEL:-}" ] || EASEL="$(realpath -m "$EASEL")"
EASEL="${EASEL:-$ROOT/.build/release/easel}"
RUNS="${RUNS:-3}"; COUNT="${COUNT:-120}"; CLIENTS="${CLIENTS:-2}"; JOBS="${JOBS:-2}"
log() { echo "[svg-workers] $*" >&2; }
[ -x "$EASEL" ] || { log "no easel binary at $EASEL (swift build -c release --product easel)"; exit 1; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/easel-svg-workers.XXXXXX")"
SERVER_PID=""
cleanup() { [ -z "$SERVER_PID" ] || kill "$SERVER_PID" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
mkdir -p "$WORK/origin"
python3 - "$WORK/origin" "$COUNT" <<'PY'
import random, sys
out, count = sys.argv[1], int(sys.argv[2])
for n in range(count):
    r = random.Random(n)
    shapes = "".join(
        f'<circle cx="{r.randint(0,400)}" cy="{r.randint(0,300)}" r="{r.randint(5,60)}" fill="#{r.randint(0,0xFFFFFF):06x}" opacity="0.7"/>'
        if i % 2 else
        f'<rect x="{r.randint(0,350)}" y="{r.randint(0,250)}" width="{r.randint(10,120)}" height="{r.randint(10,90)}" fill="#{r.randint(0,0xFFFFFF):06x}"/>'
        for i in range(40))
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="400" height="300"><defs><linearGradient id="g">'
           f'<stop offset="0" stop-color="#{r.randint(0,0xFFFFFF):06x}"/><stop offset="1" stop-color="#{r.randint(0,0xFFFFFF):06x}"/>'
           f'</linearGradient></defs><rect width="400" height="300" fill="url(#g)"/>{shapes}'
           f'<text x="20" y="280" font-size="24" font-family="sans-serif">Drawing {n}</text></svg>')
    open(f"{out}/d{n:04d}.svg", "w").write(svg)
PY
ls "$WORK/origin" | sed 's|^|/images/thumb/|' > "$WORK/paths"
for w in 0 1; do for x in a b; do cp "$WORK/origin/d0000.svg" "$WORK/origin/warm$w-$x.svg"; done; done

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# One cold pass: prints "seconds median".
pass() {
    local workers="$1" p cache
    p="$(port)"; cache="$(mktemp -d "$WORK/cache.XXXXXX")"
    printf '{"processingConcurrency": %s}\n' "$JOBS" > "$WORK/config.json"
    EASEL_RENDER_WORKERS="$workers" "$EASEL" serve --host 127.0.0.1 --port "$p" --origin "$WORK/origin" --cache-dir "$cache" \
        --config "$WORK/config.json" >/dev/null 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$p/health" >/dev/null 2>&1 && break; sleep 0.05; done
    # Warm-up outside the timing (4 drawings not in the timed set, two at a time): a running
    # server's workers are up, as its codecs are loaded; both rows get the same.
    for w in 0 1; do
        curl -sf -o /dev/null "http://127.0.0.1:$p/images/thumb/warm$w-a.svg" & local first=$!
        curl -sf -o /dev/null "http://127.0.0.1:$p/images/thumb/warm$w-b.svg"; wait "$first"
    done
    python3 "$PEERS_DIR/cold_requests.py" "127.0.0.1:$p" "$CLIENTS" "$WORK/paths" image/jpeg \
        | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["seconds"], r["median_request_seconds"])'
    kill -TERM "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""
    rm -rf "$cache"
}

best_on=""; best_off=""; median_on=""; median_off=""
for run in $(seq 1 "$RUNS"); do
    read -r s m < <(pass 1); log "run $run workers: ${s}s (median ${m}s)"
    if [ -z "$best_on" ] || python3 -c "import sys; sys.exit(0 if $s < $best_on else 1)"; then best_on="$s"; median_on="$m"; fi
    read -r s m < <(pass 0); log "run $run in process: ${s}s (median ${m}s)"
    if [ -z "$best_off" ] || python3 -c "import sys; sys.exit(0 if $s < $best_off else 1)"; then best_off="$s"; median_off="$m"; fi
done
python3 - "$COUNT" "$best_on" "$median_on" "$best_off" "$median_off" "$(nproc)" <<'PY'
import sys
count, on, mon, off, moff, cpus = int(sys.argv[1]), *map(float, sys.argv[2:6]), sys.argv[6]
print(f"cold SVG thumbnails ({count} distinct 400x300 drawings, /images/thumb/, {cpus} CPUs), best of runs:")
print(f"  {'row':<22}{'thumbnails/s':>14}{'median ms':>12}")
print(f"  {'render workers':<22}{count/on:>14.1f}{mon*1000:>12.1f}")
print(f"  {'in process':<22}{count/off:>14.1f}{moff*1000:>12.1f}")
print(f"  time, workers / in process: {on/off:.2f}x (goal <= 1.2)")
PY
