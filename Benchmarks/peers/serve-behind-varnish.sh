#!/usr/bin/env bash
# Warm path through Varnish (Debian's package, docs/varnish.vcl) against easel serve directly:
# the same cached thumbnails, the same client (wrk, 2 threads, CONNECTIONS connections,
# DURATION s), runs interleaved, best of RUNS each. easel, Varnish and wrk share the cores.
#
#   Benchmarks/peers/serve-behind-varnish.sh     (SKIP_BUILD=1 to use an existing release build)
#
# Environment: RUNS=3 DURATION=10 CONNECTIONS=64 SKIP_BUILD=1
set -euo pipefail
# Like for like: the peers here write no line per request, so neither does easel serve (its
# access log is on by default; EASEL_ACCESS_LOG=1 measures it with the log).
export EASEL_ACCESS_LOG="${EASEL_ACCESS_LOG:-0}"
PATHS_LUA="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/paths.lua"   # the wrk script: GET each of $PATHS in turn
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
RUNS="${RUNS:-3}"; DURATION="${DURATION:-10}"; CONNECTIONS="${CONNECTIONS:-64}"
for tool in varnishd wrk; do
    command -v $tool >/dev/null || { apt-get update -q >&2; DEBIAN_FRONTEND=noninteractive apt-get install -y -q varnish wrk >&2; }
done
[ "${SKIP_BUILD:-}" = 1 ] || swift build -c release --product easel >&2
work="$(mktemp -d)"
pids=()
trap 'for p in "${pids[@]}"; do kill $p 2>/dev/null || true; done; rm -rf "$work"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
easel_port=$(free_port); varnish_port=$(free_port)
.build/release/easel serve --port "$easel_port" --cache-dir "$work/cache" > "$work/easel.log" 2>&1 &
pids+=($!)
sed "s/\.port = \"8080\"/.port = \"$easel_port\"/" docs/varnish.vcl > "$work/easel.vcl"
varnishd -F -j none -n "$work/varnish" -a "127.0.0.1:$varnish_port" -f "$work/easel.vcl" -s malloc,256m > "$work/varnish.log" 2>&1 &
pids+=($!)
for port in $easel_port $varnish_port; do
    for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/health" && break; sleep 0.2; done
done
names=$(ls Samples | grep -iE '\.(jpe?g|png)$')
for name in $names; do  # warm both caches
    curl -sf -o /dev/null "http://127.0.0.1:$easel_port/images/thumb/$name"
    curl -sf -o /dev/null "http://127.0.0.1:$varnish_port/images/thumb/$name"
done
paths=$(for n in $names; do printf '/images/thumb/%s,' "$n"; done)
rps() { grep 'Requests/sec' "$1" | awk '{print $2}'; }
best_direct=0; best_varnish=0
for run in $(seq "$RUNS"); do
    PATHS="$paths" wrk --latency -t 2 -c "$CONNECTIONS" -d "${DURATION}s" -s "$PATHS_LUA" "http://127.0.0.1:$easel_port" > "$work/direct-$run.txt"
    PATHS="$paths" wrk --latency -t 2 -c "$CONNECTIONS" -d "${DURATION}s" -s "$PATHS_LUA" "http://127.0.0.1:$varnish_port" > "$work/varnish-$run.txt"
    d=$(rps "$work/direct-$run.txt"); v=$(rps "$work/varnish-$run.txt")
    echo "run $run: easel direct $d req/s, through Varnish $v req/s" >&2
    best_direct=$(echo "if ($d > $best_direct) $d else $best_direct" | bc -l)
    best_varnish=$(echo "if ($v > $best_varnish) $v else $best_varnish" | bc -l)
done
if grep -q "Non-2xx" "$work"/direct-*.txt "$work"/varnish-*.txt; then
    echo "FAIL: error answers; the comparison would be meaningless" >&2; exit 1
fi
echo
echo "Warm thumbnails ($(echo $names | wc -w) files, 256 px JPEG), wrk -t2 -c$CONNECTIONS ${DURATION}s, best of $RUNS"
echo "| path | requests/s | p50 latency (last run) |"
echo "|---|---|---|"
echo "| easel serve directly | $best_direct | $(grep -E '^ +50%' "$work/direct-$RUNS.txt" | awk '{print $2}') |"
echo "| through Varnish $(varnishd -V 2>&1 | head -1 | sed 's/.*varnish-\([0-9.]*\).*/\1/') (cache hits) | $best_varnish | $(grep -E '^ +50%' "$work/varnish-$RUNS.txt" | awk '{print $2}') |"
echo "through Varnish / direct: $(echo "scale=2; $best_varnish / $best_direct" | bc -l)"
# shellcheck source=Benchmarks/peers/figure.sh
. "$ROOT/Benchmarks/peers/figure.sh"
figure "Serving warm" "warm 256 px thumbnails, wrk -c$CONNECTIONS, requests/s" "Varnish $(varnishd -V 2>&1 | head -1 | sed 's/.*varnish-\([0-9.]*\).*/\1/') (cache hits, docs/varnish.vcl)" "$best_direct" "$best_varnish" "requests/s" higher
