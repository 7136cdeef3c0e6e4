#!/usr/bin/env bash
# Cold pipeline throughput next to `easel thumbnail`, on the same files, same machine, one run:
#
#   Benchmarks/peers/pipeline-throughput.sh
#
# Corpus: the thumbnail corpus (Samples cover-cropped to 1920x1080 and 2560x1600, JPEG q85, made
# with Pillow by thumbnail_workload.py; 20 files). Every tool uses both cores:
#   thumbnail   easel thumbnail FILES x PASSES --size 256x256 --fit contain --format jpeg --quality 80 --jobs 2
#   file        PipelineThroughput file: a fresh pipeline and cache per pass, FileFetcher, 2 at a time,
#               format "thumb" (fit 256x256, stored in an image table; the original is stored too)
#   http        the same through HTTPFetcher from `python3 -m http.server` on 127.0.0.1 (which shares
#               the two cores)
# Wall time of each, RUNS times interleaved (default 3), best kept; the table gives images/s and
# pipeline/thumbnail (goal: >= 1/1.2 = 0.83).
#
# Environment: RUNS=3 PASSES=5 SKIP_BUILD=1 (use existing release builds) WORK_DIR=dir
set -euo pipefail
PEERS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BENCH_DIR="$(dirname "$PEERS_DIR")"
ROOT="$(dirname "$BENCH_DIR")"
RUNS="${RUNS:-3}"
PASSES="${PASSES:-5}"
WORK="$(mktemp -d "${WORK_DIR:-${TMPDIR:-/tmp}}/easel-pipeline-throughput.XXXXXX")"
SERVER_PID=""
trap '[ -n "$SERVER_PID" ] && kill $SERVER_PID 2>/dev/null || true; rm -rf "$WORK"' EXIT

if [ "${SKIP_BUILD:-}" != 1 ]; then
    (cd "$ROOT" && nice -n 19 swift build -c release --product easel >&2)
    (cd "$BENCH_DIR" && nice -n 19 swift build -c release --product PipelineThroughput >&2)
fi
EASEL="$ROOT/.build/release/easel"
THROUGHPUT="$BENCH_DIR/.build/release/PipelineThroughput"

PIL_VENV="$BENCH_DIR/.venv-thumb-pillow"
if [ ! -x "$PIL_VENV/bin/python" ]; then
    python3 -m venv "$PIL_VENV" >&2
    "$PIL_VENV/bin/pip" install --quiet pillow >&2
fi
CORPUS="$WORK/corpus"
"$PIL_VENV/bin/python" "$PEERS_DIR/thumbnail_workload.py" corpus "$ROOT/Samples" "$CORPUS" >&2
mapfile -t FILES < <(ls "$CORPUS"/*.jpg)
N=$(( ${#FILES[@]} * PASSES ))
LIST=()
for _ in $(seq "$PASSES"); do LIST+=("${FILES[@]}"); done

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$CORPUS" && exec python3 -m http.server --bind 127.0.0.1 "$PORT" >/dev/null 2>&1) &
SERVER_PID=$!
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break; python3 -c 'import time; time.sleep(0.1)'; done

now() { date +%s.%N; }
best_thumbnail=999999; best_file=999999; best_http=999999
for run in $(seq "$RUNS"); do
    rm -rf "$WORK/out"
    t0=$(now); "$EASEL" thumbnail "${LIST[@]}" --size 256x256 --fit contain --format jpeg --quality 80 --jobs 2 --output-dir "$WORK/out" >/dev/null; t1=$(now)
    s=$(echo "$t1 - $t0" | bc -l); best_thumbnail=$(echo "if ($s < $best_thumbnail) $s else $best_thumbnail" | bc -l)
    t0=$(now); "$THROUGHPUT" file "$PASSES" 2 "${FILES[@]}" >&2; t1=$(now)
    s=$(echo "$t1 - $t0" | bc -l); best_file=$(echo "if ($s < $best_file) $s else $best_file" | bc -l)
    t0=$(now); "$THROUGHPUT" "http://127.0.0.1:$PORT" "$PASSES" 2 "${FILES[@]}" >&2; t1=$(now)
    s=$(echo "$t1 - $t0" | bc -l); best_http=$(echo "if ($s < $best_http) $s else $best_http" | bc -l)
done
rate() { echo "scale=1; $N / $1" | bc -l; }
ratio() { echo "scale=2; $2 / $1" | bc -l; }
echo
echo "Cold throughput, $N thumbnails (${#FILES[@]} files x $PASSES passes), 2 cores, best of $RUNS runs (process wall time)"
echo "| tool | images/s | vs easel thumbnail |"
echo "|---|---|---|"
echo "| easel thumbnail --jobs 2 | $(rate "$best_thumbnail") | 1.00 |"
echo "| pipeline, file origin | $(rate "$best_file") | $(ratio "$best_file" "$best_thumbnail") |"
echo "| pipeline, HTTP origin (python http.server) | $(rate "$best_http") | $(ratio "$best_http" "$best_thumbnail") |"
