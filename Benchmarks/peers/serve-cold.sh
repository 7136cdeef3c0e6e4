#!/usr/bin/env bash
# Cold serving next to the batch command, same files, same machine, one run: thumbnails/s from
# `easel serve` with nothing cached against `easel thumbnail` over the very same files.
#
#   Benchmarks/peers/serve-cold.sh       (needs a release build: swift build -c release --product easel;
#                                         the first run also makes Benchmarks/.venv-thumb-pillow, ~30 s)
#
# Corpus: thumbnail.sh's mixed corpus (thumbnail_workload.py corpus Samples/ DIR, in the same
# Pillow venv): each Samples/*.jpg cover-cropped to three of 1280x853, 1920x1080, 2048x1536,
# 2560x1600, 3000x2000 and 4000x3000, light grain, JPEG q85 4:2:0, every third file progressive;
# 10 samples give 30 files. COPIES copies of each under other names (c1-…, c2-…; default 3, so
# 90 files): distinct sources, each cold once per pass. All in a fresh temporary directory.
#
# Rows, RUNS times each (default 2), interleaved, best kept:
#   thumbnail      easel thumbnail FILES --size 256x256 --fit contain --format jpeg --quality 82
#                  --jobs JOBS --output-dir DIR: wall time of the process
#   serve          easel serve --config FILE (origin: the corpus; a fresh empty cacheDirectory per
#                  pass; 127.0.0.1 and a free port; processingConcurrency JOBS; the default formats,
#                  thumb = fit 256x256 JPEG q82, in one family with small and square). Once GET
#                  /health answers, CLIENTS client threads (cold_requests.py, one keep-alive
#                  connection each, the file list split among them) GET /images/thumb/<file> once
#                  per file with Accept: image/jpeg; every answer must be 200 image/jpeg. Timed
#                  from the first request to the last answer; then SIGTERM and a bounded wait.
#   serve, family off   the same with "familyInBackground": false (a thumb request makes the
#                  thumb alone, not the family's other formats in the background)
# Prints the table (thumbnails/s) and serve/thumbnail (goal >= 0.9), with the CPU count.
#
# Environment: RUNS=2 COPIES=3 CLIENTS=4 JOBS=2 FAMILY_OFF=1 (0: no family-off row)
#   EASEL=path          the easel binary (default .build/release/easel; it is never built here)
#   EASEL_BEFORE=path   another easel binary (e.g. a build of the commit before a change), served
#                       cold in the same runs as one more row, with its own default settings
#   WORK_DIR=dir        where the temporary directory is made (default ${TMPDIR:-/tmp})
set -euo pipefail
# Like for like: the peers here write no line per request, so neither does easel serve (its
# access log is on by default; EASEL_ACCESS_LOG=1 measures it with the log).
export EASEL_ACCESS_LOG="${EASEL_ACCESS_LOG:-0}"
PEERS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BENCH_DIR="$(dirname "$PEERS_DIR")"
ROOT="$(dirname "$BENCH_DIR")"
[ -z "${EASEL:-}" ] || EASEL="$(realpath -m "$EASEL")"   # relative to where it was run from
EASEL="${EASEL:-$ROOT/.build/release/easel}"
[ -z "${EASEL_BEFORE:-}" ] || EASEL_BEFORE="$(realpath -m "$EASEL_BEFORE")"
cd "$ROOT"
RUNS="${RUNS:-2}"; COPIES="${COPIES:-3}"; CLIENTS="${CLIENTS:-4}"; JOBS="${JOBS:-2}"; FAMILY_OFF="${FAMILY_OFF:-1}"
QUALITY=82   # the server's default quality for named formats; the command is given the same
log() { echo "[serve-cold] $*" >&2; }

if [ ! -x "$EASEL" ]; then
    log "no easel binary at $EASEL"
    log "build it first:  swift build -c release --product easel   (or set EASEL=path/to/easel)"
    exit 1
fi

# ---------------------------------------------------------------- Pillow venv (thumbnail.sh's)
PYTHON="${PYTHON:-python3}"
PIL_VENV="$BENCH_DIR/.venv-thumb-pillow"
if ! { [ -x "$PIL_VENV/bin/python" ] && "$PIL_VENV/bin/python" -c 'import PIL' >/dev/null 2>&1; }; then
    log "installing Pillow into $PIL_VENV"
    rm -rf "$PIL_VENV"
    "$PYTHON" -m venv "$PIL_VENV" >&2
    "$PIL_VENV/bin/python" -m pip install --quiet --disable-pip-version-check Pillow >&2
fi

# ---------------------------------------------------------------- work dir, cleanup
if [ -n "${WORK_DIR:-}" ]; then mkdir -p "$WORK_DIR"; fi
WORK="$(mktemp -d "${WORK_DIR:-${TMPDIR:-/tmp}}/easel-serve-cold.XXXXXX")"
SERVER_PID=""
stop_server() {  # SIGTERM, then at most 30 s for it to finish, then SIGKILL
    [ -n "$SERVER_PID" ] || return 0
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 150); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.2; done
    if kill -0 "$SERVER_PID" 2>/dev/null; then
        log "server $SERVER_PID still running 30 s after SIGTERM: SIGKILL"
        kill -KILL "$SERVER_PID" 2>/dev/null || true
    fi
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
}
trap 'stop_server; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- corpus
"$PIL_VENV/bin/python" "$PEERS_DIR/thumbnail_workload.py" corpus "$ROOT/Samples" "$WORK/source" >&2
ORIGIN="$WORK/corpus"
mkdir -p "$ORIGIN"
for k in $(seq "$COPIES"); do
    for f in "$WORK/source"/*.jpg; do cp "$f" "$ORIGIN/c$k-$(basename "$f")"; done
done
mapfile -t NAMES < <(cd "$ORIGIN" && ls -- *.jpg)
N=${#NAMES[@]}
[ "$N" -gt 0 ] || { log "empty corpus"; exit 1; }
FILES=("${NAMES[@]/#/$ORIGIN/}")
for name in "${NAMES[@]}"; do printf '/images/thumb/%s\n' "$name"; done >"$WORK/paths"
SIZES="$(printf '%s\n' "${NAMES[@]}" | grep -o '[0-9]\+x[0-9]\+' | sort -t x -k1,1n -k2,2n -u | paste -sd ' ')"
PROGRESSIVE=$(printf '%s\n' "${NAMES[@]}" | grep -c -- '-prog\.jpg$' || true)

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
now() { date +%s.%N; }
best() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a < b) ? a : b }'; }

# ---------------------------------------------------------------- one timed pass of each
# Each sets TOOK (seconds) or returns 1. Not run in $(…): the server's pid must stay in this
# shell for the EXIT trap.
TOOK=""
thumbnail_pass() {
    local out="$WORK/out" t0 t1 made
    rm -rf "$out"; mkdir -p "$out"
    t0=$(now)
    "$EASEL" thumbnail "${FILES[@]}" --size 256x256 --fit contain --format jpeg --quality "$QUALITY" \
        --jobs "$JOBS" --output-dir "$out" >"$WORK/thumbnail.log" 2>&1 \
        || { log "easel thumbnail failed:"; tail -n 5 "$WORK/thumbnail.log" >&2; return 1; }
    t1=$(now)
    made=$(find "$out" -type f -name '*.jpg' | wc -l)
    [ "$made" -eq "$N" ] || { log "easel thumbnail made $made files, not $N"; return 1; }
    TOOK=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
}

serve_pass() {  # MODE (family | family-off | before) RUN
    local mode="$1" run="$2" port family=true result up=0 log_file="$WORK/serve-$1-$2.log" binary="$EASEL"
    [ "$mode" = family-off ] && family=false
    [ "$mode" = before ] && binary="$EASEL_BEFORE"
    port=$(free_port)
    python3 - "$WORK/$mode.json" "$ORIGIN" "$WORK/cache-$mode-$run" "$port" "$JOBS" "$family" <<'PY'
import json, sys
path, origin, cache, port, jobs, family = sys.argv[1:]
settings = {"host": "127.0.0.1", "port": int(port), "origin": origin, "cacheDirectory": cache,
            "processingConcurrency": int(jobs)}
if family == "false":
    settings["familyInBackground"] = False
json.dump(settings, open(path, "w"))
PY
    "$binary" serve --config "$WORK/$mode.json" >"$log_file" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 150); do   # at most ~30 s
        kill -0 "$SERVER_PID" 2>/dev/null || break
        if curl -sf --max-time 1 -o /dev/null "http://127.0.0.1:$port/health"; then up=1; break; fi
        sleep 0.2
    done
    if [ "$up" != 1 ]; then
        log "easel serve ($mode) did not answer /health on 127.0.0.1:$port:"; tail -n 10 "$log_file" >&2
        stop_server; return 1
    fi
    if ! result=$(python3 "$PEERS_DIR/cold_requests.py" "127.0.0.1:$port" "$CLIENTS" "$WORK/paths" image/jpeg); then
        log "easel serve ($mode): a request failed; server log:"; tail -n 10 "$log_file" >&2
        stop_server; return 1
    fi
    stop_server
    rm -rf "$WORK/cache-$mode-$run"
    log "serve ($mode) run $run: $result"
    TOOK=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["seconds"])' "$result")
}

MODES=(family)
[ "$FAMILY_OFF" = 1 ] && MODES+=(family-off)
[ -n "${EASEL_BEFORE:-}" ] && MODES+=(before)
best_thumbnail=""
declare -A best_serve
for run in $(seq "$RUNS"); do
    thumbnail_pass; best_thumbnail=$(best "$TOOK" "$best_thumbnail")
    line="run $run of $RUNS: thumbnail $TOOK s"
    for mode in "${MODES[@]}"; do
        serve_pass "$mode" "$run"; best_serve[$mode]=$(best "$TOOK" "${best_serve[$mode]:-}")
        line="$line, serve ($mode) $TOOK s"
    done
    log "$line"
done

# ---------------------------------------------------------------- table
rate() { awk -v n="$N" -v s="$1" 'BEGIN { printf "%.1f", n / s }'; }
ratio() { awk -v t="$best_thumbnail" -v s="$1" 'BEGIN { printf "%.2f", t / s }'; }
echo
echo "Cold thumbnails, $N JPEGs ($((N / COPIES)) files x $COPIES copies, $PROGRESSIVE of them progressive; $SIZES), fit 256x256, JPEG q$QUALITY"
echo "nproc $(nproc) ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')); --jobs $JOBS / processingConcurrency $JOBS; $CLIENTS clients; best of $RUNS runs"
echo "easel: $EASEL (git $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'))"
echo "| tool | thumbnails/s | serve/thumbnail |"
echo "|---|---|---|"
echo "| easel thumbnail --jobs $JOBS | $(rate "$best_thumbnail") | 1.00 |"
echo "| easel serve, cold (family in background) | $(rate "${best_serve[family]}") | $(ratio "${best_serve[family]}") |"
if [ "$FAMILY_OFF" = 1 ]; then
    echo "| easel serve, cold, familyInBackground false | $(rate "${best_serve[family-off]}") | $(ratio "${best_serve[family-off]}") |"
fi
if [ -n "${EASEL_BEFORE:-}" ]; then
    echo "| easel serve, cold, before ($EASEL_BEFORE) | $(rate "${best_serve[before]}") | $(ratio "${best_serve[before]}") |"
fi
echo
r=$(ratio "${best_serve[family]}")
verdict=$(awk -v r="$r" 'BEGIN { print (r >= 0.9) ? "meets" : "below" }')
echo "serve/thumbnail: $r ($verdict the goal of >= 0.9)"
if [ "$FAMILY_OFF" = 1 ]; then echo "serve (family off)/thumbnail: $(ratio "${best_serve[family-off]}")"; fi
if [ -n "${EASEL_BEFORE:-}" ]; then
    echo "serve after/before: $(awk -v a="${best_serve[family]}" -v b="${best_serve[before]}" 'BEGIN { printf "%.2f", b / a }')"
fi
