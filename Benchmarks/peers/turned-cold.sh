#!/usr/bin/env bash
# Geometry from the header, measured: cold imgproxy URLs that turn, flip or crop before their
# resize, side by side with the plain resize of the same photos, in one run (issue 39's goal:
# each >= 0.9x the plain row). Before the plan computed the decode scale through those steps,
# they decoded a 24 MP JPEG at full size for a 256 px answer.
#
#   Benchmarks/peers/turned-cold.sh      (needs a release build: swift build -c release --product easel)
#
# Corpus: COUNT photos of 6000x4000 (24 MP; default 12), made here with ffmpeg from Samples/*.jpg
# (each scaled to cover 6000x4000, cropped, light grain, a hue of its own, JPEG q85 4:2:0).
# Rows (imgproxy URLs, /imgproxy/insecure/OPTIONS/plain/local:///FILE@jpg, unsigned ad-hoc on):
#   plain     rs:fit:256:256
#   rotated   rot:90/rs:fit:256:256
#   flipped   fl:1/rs:fit:256:256
#   cropped   c:2000:1500/rs:fit:256:256
# Each pass: a fresh `easel serve` (empty cache, a free port, processingConcurrency JOBS), warmed
# with one request of another photo, then CLIENTS threads (cold_requests.py) GET every photo once
# for the row's URL; every answer must be 200 image/jpeg. Timed from the first request to the last
# answer. RUNS passes per row (default 3), interleaved; best kept. Prints images/s, the median
# latency, and each row / plain.
#
# Environment: RUNS=3 COUNT=12 CLIENTS=2 JOBS=2 EASEL=path (default .build/release/easel)
set -euo pipefail
# Like for like: the peers here write no line per request, so neither does easel serve (its
# access log is on by default; EASEL_ACCESS_LOG=1 measures it with the log).
export EASEL_ACCESS_LOG="${EASEL_ACCESS_LOG:-0}"
PEERS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$(dirname "$PEERS_DIR")")"
[ -z "${EASEL:-}" ] || EASEL="$(realpath -m "$EASEL")"
EASEL="${EASEL:-$ROOT/.build/release/easel}"
RUNS="${RUNS:-3}"; COUNT="${COUNT:-12}"; CLIENTS="${CLIENTS:-2}"; JOBS="${JOBS:-2}"
log() { echo "[turned-cold] $*" >&2; }
[ -x "$EASEL" ] || { log "no easel binary at $EASEL (swift build -c release --product easel)"; exit 1; }
command -v ffmpeg >/dev/null || { log "needs ffmpeg (apt-get install ffmpeg)"; exit 1; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/easel-turned-cold.XXXXXX")"
SERVER_PID=""
cleanup() { [ -z "$SERVER_PID" ] || kill "$SERVER_PID" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
mkdir -p "$WORK/origin"
mapfile -t samples < <(ls "$ROOT"/Samples/*.jpg)
log "making $COUNT photos of 6000x4000"
for n in $(seq 0 "$COUNT"); do
    sample="${samples[$((n % ${#samples[@]}))]}"
    name="p$(printf %03d "$n").jpg"; [ "$n" -lt "$COUNT" ] || name="warm.jpg"
    ffmpeg -loglevel error -y -i "$sample" \
        -vf "scale=6000:4000:force_original_aspect_ratio=increase,crop=6000:4000,format=yuv420p,noise=alls=6:allf=t,hue=h=$((n * 37))" \
        -frames:v 1 -q:v 4 "$WORK/origin/$name"
done

rows=(plain rotated flipped cropped)
declare -A options=([plain]="rs:fit:256:256" [rotated]="rot:90/rs:fit:256:256" [flipped]="fl:1/rs:fit:256:256"
                    [cropped]="c:2000:1500/rs:fit:256:256")
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# One cold pass of a row: prints "seconds median".
pass() {
    local row="$1" p cache
    p="$(port)"; cache="$(mktemp -d "$WORK/cache.XXXXXX")"
    printf '{"processingConcurrency": %s, "allowUnsignedAdHoc": true}\n' "$JOBS" > "$WORK/config.json"
    "$EASEL" serve --host 127.0.0.1 --port "$p" --origin "$WORK/origin" --cache-dir "$cache" --config "$WORK/config.json" >/dev/null 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$p/health" >/dev/null 2>&1 && break; sleep 0.05; done
    curl -sf -o /dev/null "http://127.0.0.1:$p/imgproxy/insecure/${options[$row]}/plain/local:///warm.jpg@jpg"
    for n in $(seq 0 $((COUNT - 1))); do
        echo "/imgproxy/insecure/${options[$row]}/plain/local:///p$(printf %03d "$n").jpg@jpg"
    done > "$WORK/paths"
    python3 "$PEERS_DIR/cold_requests.py" "127.0.0.1:$p" "$CLIENTS" "$WORK/paths" image/jpeg \
        | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["seconds"], r["median_request_seconds"])'
    kill -TERM "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""
    rm -rf "$cache"
}

declare -A best median
for run in $(seq 1 "$RUNS"); do
    for row in "${rows[@]}"; do
        read -r s m < <(pass "$row"); log "run $run $row: ${s}s (median ${m}s)"
        if [ -z "${best[$row]:-}" ] || python3 -c "import sys; sys.exit(0 if $s < ${best[$row]} else 1)"; then best[$row]="$s"; median[$row]="$m"; fi
    done
done
{
    echo "cold imgproxy URLs of $COUNT distinct 24 MP JPEGs (6000x4000 -> 256 px), $(nproc) CPUs, best of $RUNS:"
    printf '  %-10s %-30s %12s %10s %14s\n' row options images/s "median ms" "speed / plain"
    for row in "${rows[@]}"; do
        python3 -c "
count, s, m, plain = $COUNT, ${best[$row]}, ${median[$row]}, ${best[plain]}
print(f'  {\"$row\":<10} {\"${options[$row]}\":<30} {count / s:>12.2f} {m * 1000:>10.1f} {plain / s:>13.2f}x')"
    done
    echo "  goal: each row >= 0.90x plain"
}
