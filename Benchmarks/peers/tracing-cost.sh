#!/usr/bin/env bash
# What traces cost, side by side in one run: `easel serve` with tracing off (the default), with
# tracing on (`--traces otlp`, spans exported to a real OTLP/HTTP receiver on loopback,
# scripts/otlp-receiver.py, which decodes each batch; swift-otel drops what its batch queue
# cannot hold when the export falls behind, and the table says how often it logged that), and optionally an older binary without
# tracing (EASEL_BEFORE: "off is no worse than before"), and tracing on with 1 % of new traces
# sampled (OTEL_TRACES_SAMPLER=parentbased_traceidratio, OTEL_TRACES_SAMPLER_ARG=0.01: what a busy
# site would run; a client's sampled traceparent is still followed).
#
#   Benchmarks/peers/tracing-cost.sh     (needs a release build: swift build -c release --product easel)
#
# Cold: serve-cold.sh's corpus (thumbnail_workload.py: each Samples/*.jpg as three photos of
#   1280x853 to 4000x3000, COPIES copies under other names), each server on a fresh cache,
#   CLIENTS clients GET /images/thumb/<file> once per file (cold_requests.py); seconds for all.
# Warm: the Samples/ thumbnails, cached, wrk -t2 -cCONNECTIONS for DURATION s, through the ready
#   answers (the default) and through the router ("readyAnswerLimit": 0).
# Runs interleaved, best of RUNS. The receiver shares the machine's cores with the server and
# the clients, as a collector on the same host would; before each run it is left to finish
# decoding what the previous one sent (the spans file stops growing; at most 30 s).
#
# Environment: RUNS=3 DURATION=10 CONNECTIONS=64 COPIES=6 CLIENTS=4 JOBS=2
#   EASEL=path (default .build/release/easel; never built here)  EASEL_BEFORE=path (optional)
set -euo pipefail
# Like for like: the peers here write no line per request, so neither does easel serve (its
# access log is on by default; EASEL_ACCESS_LOG=1 measures it with the log).
export EASEL_ACCESS_LOG="${EASEL_ACCESS_LOG:-0}"
PATHS_LUA="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/paths.lua"   # the wrk script: GET each of $PATHS in turn
PEERS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BENCH_DIR="$(dirname "$PEERS_DIR")"
ROOT="$(dirname "$BENCH_DIR")"
[ -z "${EASEL:-}" ] || EASEL="$(realpath -m "$EASEL")"
EASEL="${EASEL:-$ROOT/.build/release/easel}"
[ -z "${EASEL_BEFORE:-}" ] || EASEL_BEFORE="$(realpath -m "$EASEL_BEFORE")"
cd "$ROOT"
RUNS="${RUNS:-3}"; DURATION="${DURATION:-10}"; CONNECTIONS="${CONNECTIONS:-64}"
COPIES="${COPIES:-6}"; CLIENTS="${CLIENTS:-4}"; JOBS="${JOBS:-2}"
log() { echo "[tracing-cost] $*" >&2; }
[ -x "$EASEL" ] || { log "no easel binary at $EASEL (swift build -c release --product easel)"; exit 1; }
"$EASEL" serve --help | grep -q -- '--traces' || { log "$EASEL has no --traces"; exit 1; }
command -v wrk >/dev/null || { apt-get update -q >&2; DEBIAN_FRONTEND=noninteractive apt-get install -y -q wrk >&2; }

# ---------------------------------------------------------------- Python: Pillow, opentelemetry-proto
PYTHON="${PYTHON:-python3}"
PIL_VENV="$BENCH_DIR/.venv-thumb-pillow"   # serve-cold.sh's and thumbnail.sh's
if ! { [ -x "$PIL_VENV/bin/python" ] && "$PIL_VENV/bin/python" -c 'import PIL' >/dev/null 2>&1; }; then
    log "installing Pillow into $PIL_VENV"
    rm -rf "$PIL_VENV"; "$PYTHON" -m venv "$PIL_VENV" >&2
    "$PIL_VENV/bin/python" -m pip install --quiet --disable-pip-version-check Pillow >&2
fi
OTLP_VENV="$BENCH_DIR/.venv-otlp"
if ! { [ -x "$OTLP_VENV/bin/python" ] && "$OTLP_VENV/bin/python" -c 'import opentelemetry.proto' >/dev/null 2>&1; }; then
    log "installing opentelemetry-proto into $OTLP_VENV"
    rm -rf "$OTLP_VENV"; "$PYTHON" -m venv "$OTLP_VENV" >&2
    "$OTLP_VENV/bin/python" -m pip install --quiet --disable-pip-version-check "opentelemetry-proto==1.45.2" >&2
fi

# ---------------------------------------------------------------- work dir, receiver, cleanup
WORK="$(mktemp -d "${TMPDIR:-/tmp}/easel-tracing-cost.XXXXXX")"
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do
        for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
        kill -KILL "$pid" 2>/dev/null || true
    done
    exec 9>&- 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkfifo "$WORK/receiver-stdin"
"$OTLP_VENV/bin/python" "$ROOT/scripts/otlp-receiver.py" "$WORK/spans.jsonl" <"$WORK/receiver-stdin" >"$WORK/receiver.out" 2>&1 &
PIDS+=($!)
exec 9>"$WORK/receiver-stdin"   # the receiver runs until this closes
for _ in $(seq 100); do grep -q endpoint "$WORK/receiver.out" 2>/dev/null && break; sleep 0.1; done
OTLP="$(python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())["endpoint"])' "$WORK/receiver.out")"
log "receiver at $OTLP"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_up() { for _ in $(seq 150); do curl -sf --max-time 1 -o /dev/null "http://127.0.0.1:$1/health" && return 0; sleep 0.2; done; return 1; }
best_time() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a < b) ? a : b }'; }
best_rate() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a > b) ? a : b }'; }

MODES=(off on sampled)
[ -n "${EASEL_BEFORE:-}" ] && MODES=(before off on sampled)
binary() { [ "$1" = before ] && echo "$EASEL_BEFORE" || echo "$EASEL"; }
trace_flags() { case "$1" in on|sampled) echo "--traces otlp --otlp-endpoint $OTLP" ;; esac; }
# The environment a mode's server runs with (env's arguments).
trace_env() {
    if [ "$1" = sampled ]; then echo "OTEL_TRACES_SAMPLER=parentbased_traceidratio OTEL_TRACES_SAMPLER_ARG=0.01"; else echo "EASEL_TRACING_COST=1"; fi
}
settle() {  # until the receiver has written everything it was sent (bounded)
    local before=-1 now
    for _ in $(seq 60); do
        now=$(stat -c %s "$WORK/spans.jsonl" 2>/dev/null || echo 0)
        [ "$now" = "$before" ] && return 0
        before=$now; sleep 0.5
    done
}

# ---------------------------------------------------------------- cold
"$PIL_VENV/bin/python" "$PEERS_DIR/thumbnail_workload.py" corpus "$ROOT/Samples" "$WORK/source" >&2
mkdir -p "$WORK/corpus"
for k in $(seq "$COPIES"); do for f in "$WORK/source"/*.jpg; do cp "$f" "$WORK/corpus/c$k-$(basename "$f")"; done; done
(cd "$WORK/corpus" && ls -- *.jpg) | sed 's|^|/images/thumb/|' >"$WORK/paths"
N=$(wc -l <"$WORK/paths")

TOOK=""
cold_pass() {  # MODE RUN: sets TOOK (seconds); not in $(...), so that the cleanup sees the server
    local mode="$1" run="$2" port pid seconds
    port=$(free_port)
    printf '{"host": "127.0.0.1", "port": %d, "origin": "%s", "cacheDirectory": "%s", "processingConcurrency": %d}\n' \
        "$port" "$WORK/corpus" "$WORK/cache-cold-$mode-$run" "$JOBS" >"$WORK/cold-$mode.json"
    # shellcheck disable=SC2046
    env $(trace_env "$mode") "$(binary "$mode")" serve --config "$WORK/cold-$mode.json" $(trace_flags "$mode") >"$WORK/cold-$mode-$run.log" 2>&1 &
    pid=$!; PIDS+=("$pid")
    wait_up "$port" || { log "cold $mode did not start:"; tail -n 5 "$WORK/cold-$mode-$run.log" >&2; return 1; }
    seconds=$(python3 "$PEERS_DIR/cold_requests.py" "127.0.0.1:$port" "$CLIENTS" "$WORK/paths" image/jpeg \
        | python3 -c 'import json, sys; print(json.load(sys.stdin)["seconds"])')
    kill -TERM "$pid"; wait "$pid" || true
    rm -rf "$WORK/cache-cold-$mode-$run"
    TOOK="$seconds"
}
declare -A cold
for run in $(seq "$RUNS"); do
    for mode in "${MODES[@]}"; do
        settle
        cold_pass "$mode" "$run"; t="$TOOK"; cold[$mode]=$(best_time "$t" "${cold[$mode]:-}")
        log "cold run $run, tracing $mode: $t s for $N thumbnails"
    done
done
spans_cold=$(wc -l <"$WORK/spans.jsonl" 2>/dev/null || echo 0)

# ---------------------------------------------------------------- warm
names=$(ls Samples | grep -iE '\.(jpe?g|png)$')
declare -A port
for mode in "${MODES[@]}"; do
    for path in ready router; do
        p=$(free_port); port[$mode-$path]=$p
        limit=""; [ "$path" = router ] && limit=', "readyAnswerLimit": 0'
        printf '{"host": "127.0.0.1", "port": %d, "cacheDirectory": "%s"%s}\n' "$p" "$WORK/cache-warm-$mode-$path" "$limit" >"$WORK/warm-$mode-$path.json"
        # shellcheck disable=SC2046
        env $(trace_env "$mode") "$(binary "$mode")" serve --config "$WORK/warm-$mode-$path.json" $(trace_flags "$mode") >"$WORK/warm-$mode-$path.log" 2>&1 &
        PIDS+=($!)
        wait_up "$p" || { log "warm $mode $path did not start"; tail -n 5 "$WORK/warm-$mode-$path.log" >&2; exit 1; }
        for name in $names; do curl -sf -o /dev/null "http://127.0.0.1:$p/images/thumb/$name"; done
    done
done
wrk_paths=$(for n in $names; do printf '/images/thumb/%s,' "$n"; done)
declare -A warm
for run in $(seq "$RUNS"); do
    for path in ready router; do
        for mode in "${MODES[@]}"; do
            out="$WORK/wrk-$mode-$path-$run.txt"
            settle
            PATHS="$wrk_paths" wrk -t 2 -c "$CONNECTIONS" -d "${DURATION}s" -s "$PATHS_LUA" "http://127.0.0.1:${port[$mode-$path]}" >"$out"
            if grep -q "Non-2xx" "$out"; then log "error answers from $mode $path:"; cat "$out" >&2; exit 1; fi
            r=$(awk '/Requests\/sec/ { print $2 }' "$out"); warm[$mode-$path]=$(best_rate "$r" "${warm[$mode-$path]:-}")
            log "warm run $run, $path, tracing $mode: $r req/s"
        done
    done
done
spans_all=$(wc -l <"$WORK/spans.jsonl" 2>/dev/null || echo 0)
# swift-otel's batch processor keeps at most 2048 spans and drops the rest when the exporter
# falls behind: how often each server said so.
dropped=$(cat "$WORK"/warm-*.log "$WORK"/cold-*.log 2>/dev/null | grep -ci 'dropped' || true)

# ---------------------------------------------------------------- table
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
echo
echo "Tracing off and on (exported to an OTLP/HTTP receiver on loopback), nproc $(nproc), best of $RUNS runs"
echo "easel: $EASEL (git $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'))${EASEL_BEFORE:+; before: $EASEL_BEFORE}"
echo "spans received: $spans_cold in the cold runs, $spans_all in all; log lines about dropped spans: $dropped"
if [ -n "${EASEL_BEFORE:-}" ]; then
    echo "| path | before | tracing off | tracing on | on, 1 % sampled | off / before | on / off | sampled / off |"
    echo "|---|---|---|---|---|---|---|---|"
else
    echo "| path | tracing off | tracing on | on, 1 % sampled | on / off | sampled / off |"
    echo "|---|---|---|---|---|---|"
fi
row() {  # LABEL before off on sampled (rates: higher is faster)
    local label="$1" b="$2" off="$3" on="$4" sampled="$5"
    if [ -n "${EASEL_BEFORE:-}" ]; then
        echo "| $label | $b | $off | $on | $sampled | $(ratio "$off" "$b") | $(ratio "$on" "$off") | $(ratio "$sampled" "$off") |"
    else
        echo "| $label | $off | $on | $sampled | $(ratio "$on" "$off") | $(ratio "$sampled" "$off") |"
    fi
}
rate() { [ -n "$1" ] && awk -v n="$N" -v s="$1" 'BEGIN { printf "%.1f", n / s }' || true; }
row "cold: $N thumbnails, thumbnails/s" "$(rate "${cold[before]:-}")" "$(rate "${cold[off]}")" "$(rate "${cold[on]}")" "$(rate "${cold[sampled]}")"
row "warm, ready answers: requests/s" "${warm[before-ready]:-}" "${warm[off-ready]}" "${warm[on-ready]}" "${warm[sampled-ready]}"
row "warm, through the router: requests/s" "${warm[before-router]:-}" "${warm[off-router]}" "${warm[on-router]}" "${warm[sampled-router]}"
echo
echo "(ratios are speed ratios: 1.000 is the same speed; on / off below 0.90 on the cold path misses the goal)"
