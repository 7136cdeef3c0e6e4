#!/usr/bin/env bash
# Load test of `easel serve` (release build) on the bundled samples: wrk (Debian's package,
# installed when missing), DURATION seconds (default 60) at CONNECTIONS (default 64) connections,
# 80 % named formats (cached after the first request) and 20 % random ad-hoc sizes (uncached;
# the server runs with --allow-unsigned-ad-hoc for this). Fails on any 5xx, on a crash, or when
# the server's peak anonymous resident memory (its heap: RssAnon) passes LIMIT_MB (default 640:
# the 256 MiB of caches the configuration allows, plus 384 MiB for the runtime, the requests in
# flight and allocator slack). File-backed pages (the image tables and the disk cache index,
# which are mapped) are reported but not counted: the kernel drops them under pressure.
# While wrk runs, a second client holds IDLE (default 3000) idle connections open, and /health
# is probed every second: it must answer every time, with a median under 100 ms and none over
# 1 s. Socket errors and 5xx fail the run.
# Prints throughput, latency, statuses, socket errors, /health latencies and peak memory.
set -euo pipefail
# The load figures are the serving path's: no access line per request (on by default in easel serve).
# BIG_SIDE=7000 serves big photos instead (issue 40's mixed load): four samples enlarged to
# BIG_SIDE² by `easel thumbnail --fit stretch` (49 MP at 7000), as JPEG q90 and PNG, with the source
# limits raised to take them (64 MB a file), a memory budget of 200 MiB (what an operator serving
# such photos on a small machine sets: a progressive 49 MP JPEG alone needs ~150 MB to decode) and
# LIMIT_MB 400 unless set; the peak total resident memory is then held to LIMIT_MB too.
export EASEL_ACCESS_LOG="${EASEL_ACCESS_LOG:-0}"
cd "$(dirname "$0")/.."
DURATION="${DURATION:-60}"
CONNECTIONS="${CONNECTIONS:-64}"
BIG_SIDE="${BIG_SIDE:-0}"
if [ "$BIG_SIDE" != 0 ]; then LIMIT_MB="${LIMIT_MB:-400}"; else LIMIT_MB="${LIMIT_MB:-640}"; fi
IDLE="${IDLE:-3000}"
scripts/install-deps.sh build
if ! command -v wrk >/dev/null; then
    apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q wrk >&2
fi
[ "${SKIP_BUILD:-}" = 1 ] || swift build -c release --product easel >&2
easel=.build/release/easel
work="$(mktemp -d)"
server=""
trap '[ -z "$server" ] || kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
origin=Samples
if [ "$BIG_SIDE" != 0 ]; then
    origin="$work/big"
    mkdir -p "$origin"
    samples=$(ls Samples | grep -iE '\.jpe?g$' | head -4 | sed 's|^|Samples/|' || true)
    [ -n "$samples" ] || { echo "FAIL: no JPEG in Samples/ to enlarge" >&2; exit 1; }
    # shellcheck disable=SC2086
    "$easel" thumbnail $samples --size "${BIG_SIDE}x${BIG_SIDE}" --fit stretch --format jpeg --quality 90 --output-dir "$origin" >&2
    # shellcheck disable=SC2086
    "$easel" thumbnail $samples --size "${BIG_SIDE}x${BIG_SIDE}" --fit stretch --format png --output-dir "$origin" >&2
    echo '{"memoryLimit": 268435456, "maxSourceBytes": 67108864, "memoryBudget": 209715200}' > "$work/config.json"
else
    echo '{"memoryLimit": 268435456}' > "$work/config.json"
fi
"$easel" serve --port "$port" --cache-dir "$work/cache" --config "$work/config.json" --origin "$origin" --allow-unsigned-ad-hoc > "$work/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.2; done
# Peak resident memory (anonymous, file-backed, total), sampled every 0.5 s while wrk runs.
( anon=0; file=0; total=0; while kill -0 $server 2>/dev/null; do
      read -r a f t < <(awk '/RssAnon/ {a=$2} /RssFile/ {f=$2} /VmRSS/ {t=$2} END {print a+0, f+0, t+0}' /proc/$server/status 2>/dev/null || echo "0 0 0")
      [ "$a" -gt "$anon" ] && anon=$a; [ "$f" -gt "$file" ] && file=$f; [ "$t" -gt "$total" ] && total=$t
      echo "$anon $file $total" > "$work/peak"
      sleep 0.5
  done ) &
sampler=$!
export EASEL_LOAD_NAMES=$(ls "$origin" | grep -iE '\.(jpe?g|png)$' | paste -sd, -)
# Idle sockets held for the whole run, and /health probed once a second (bounded by DURATION).
python3 - "$port" "$IDLE" "$DURATION" > "$work/idle.txt" 2>&1 <<'PY' &
import resource, socket, sys, time
port, count, duration = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, count + 256), hard))
idle = []
for _ in range(count):
    s = socket.socket(); s.settimeout(5); s.connect(("127.0.0.1", port)); idle.append(s)
times, failures = [], 0
end = time.monotonic() + max(1, duration - 3)
while time.monotonic() < end:
    start = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as h:
            h.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            ok = h.recv(64).startswith(b"HTTP/1.1 200")
    except OSError:
        ok = False
    times.append((time.monotonic() - start) * 1000)
    failures += 0 if ok else 1
    time.sleep(1)
times.sort()
print(f"idle connections held: {len(idle)}; /health probes: {len(times)}, failed {failures}, "
      f"median {times[len(times) // 2]:.1f} ms, max {times[-1]:.1f} ms")
print(f"HEALTH {failures} {times[len(times) // 2]:.1f} {times[-1]:.1f}")
PY
idler=$!
wrk -t 2 -c "$CONNECTIONS" -d "${DURATION}s" --timeout 30s --latency -s scripts/load.lua "http://127.0.0.1:$port" | tee "$work/wrk.txt"
wait $idler || true
grep -v '^HEALTH' "$work/idle.txt" || true
read -r _ health_failures health_median health_max < <(grep '^HEALTH' "$work/idle.txt" || echo "HEALTH ? ? ?")
alive=yes; kill -0 $server 2>/dev/null || alive=no
read -r anon_kb file_kb total_kb < "$work/peak"
peak_mb=$(( anon_kb / 1024 ))
kill $sampler 2>/dev/null || true
echo "server alive after the run: $alive; peak resident memory: anonymous ${peak_mb} MB (limit ${LIMIT_MB} MB), file-backed $(( file_kb / 1024 )) MB, total $(( total_kb / 1024 )) MB"
fives=$(grep -o '5xx [0-9]*' "$work/wrk.txt" | grep -o '[0-9]*$' || echo "?")
[ "$alive" = yes ] || { tail -30 "$work/server.log" >&2; echo "FAIL: the server died" >&2; exit 1; }
[ "$fives" = 0 ] || { tail -30 "$work/server.log" >&2; echo "FAIL: $fives responses were 5xx" >&2; exit 1; }
socket_errors=$(grep -o 'Socket errors:.*' "$work/wrk.txt" || true)
[ -z "$socket_errors" ] || { echo "FAIL: wrk saw $socket_errors" >&2; exit 1; }
[ "$health_failures" = 0 ] || { echo "FAIL: /health failed $health_failures times under $IDLE idle connections" >&2; exit 1; }
awk -v m="$health_median" -v x="$health_max" 'BEGIN { exit !(m < 100 && x < 1000) }' \
    || { echo "FAIL: /health median ${health_median} ms (goal < 100), max ${health_max} ms (goal < 1000)" >&2; exit 1; }
[ "$peak_mb" -le "$LIMIT_MB" ] || { echo "FAIL: peak memory ${peak_mb} MB over ${LIMIT_MB} MB" >&2; exit 1; }
if [ "$BIG_SIDE" != 0 ] && [ $(( total_kb / 1024 )) -gt "$LIMIT_MB" ]; then
    echo "FAIL: peak total resident memory $(( total_kb / 1024 )) MB over ${LIMIT_MB} MB" >&2; exit 1
fi
echo "load: OK"
