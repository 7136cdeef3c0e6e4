#!/usr/bin/env bash
# Warm path, side by side: requests/s for cached thumbnails from `easel serve` (and from
# `easel serve` with its ready answers off, `"readyAnswerLimit": 0`: every request through the
# router), from a bare
# Hummingbird route returning the very same bytes from memory (Benchmarks/peers/BareRoute: the
# framework's ceiling, with easel's headers and nothing else), from a plain SwiftNIO handler
# doing the same without the framework (Benchmarks/peers/BareNIO: the ceiling of answering
# repeat requests in the channel pipeline), and from nginx (Debian's package,
# installed when missing) serving them as static files. Same machine, same client (wrk, 2
# threads, CONNECTIONS connections, DURATION s), runs interleaved, best of RUNS each. Servers and
# wrk share the cores. nginx runs 2 workers, sendfile on, access log off.
#
#   Benchmarks/peers/serve-vs-nginx.sh      (needs a release build: make run or swift build -c release)
#
# Environment: RUNS=3 DURATION=15 CONNECTIONS=64 SKIP_BUILD=1
#   EASEL_BEFORE=path/to/another/easel: also runs that binary with ready answers off, in the same
#   runs, as one more row (the router path before a change, side by side with after it).
set -euo pipefail
# Like for like: the peers here write no line per request, so neither does easel serve (its
# access log is on by default; EASEL_ACCESS_LOG=1 measures it with the log).
export EASEL_ACCESS_LOG="${EASEL_ACCESS_LOG:-0}"
PATHS_LUA="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/paths.lua"   # the wrk script: GET each of $PATHS in turn
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
RUNS="${RUNS:-3}"; DURATION="${DURATION:-15}"; CONNECTIONS="${CONNECTIONS:-64}"
for tool in nginx wrk; do
    command -v $tool >/dev/null || { apt-get update -q >&2; DEBIAN_FRONTEND=noninteractive apt-get install -y -q nginx wrk >&2; }
done
if [ "${SKIP_BUILD:-}" != 1 ]; then
    swift build -c release --product easel >&2
    swift build --package-path Benchmarks -c release --product BareRoute >&2
    swift build --package-path Benchmarks -c release --product BareNIO >&2
fi
bare_bin="$(swift build --package-path Benchmarks -c release --show-bin-path)/BareRoute"
nio_bin="$(swift build --package-path Benchmarks -c release --show-bin-path)/BareNIO"
work="$(mktemp -d)"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
easel_port=$(free_port); nginx_port=$(free_port); bare_port=$(free_port); nio_port=$(free_port); off_port=$(free_port)
.build/release/easel serve --port "$easel_port" --cache-dir "$work/cache" > "$work/easel.log" 2>&1 &
easel_pid=$!
echo '{"readyAnswerLimit": 0}' > "$work/off.json"
.build/release/easel serve --port "$off_port" --cache-dir "$work/cache-off" --config "$work/off.json" > "$work/easel-off.log" 2>&1 &
off_pid=$!
bare_pid=""; nio_pid=""; before_pid=""
before_port=$(free_port)
if [ -n "${EASEL_BEFORE:-}" ]; then
    "$EASEL_BEFORE" serve --port "$before_port" --cache-dir "$work/cache-before" --config "$work/off.json" > "$work/easel-before.log" 2>&1 &
    before_pid=$!
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$before_port/health" >/dev/null && break; sleep 0.2; done
fi
trap 'kill $easel_pid $off_pid $bare_pid $nio_pid $before_pid 2>/dev/null || true; [ -f "$work/nginx.pid" ] && kill $(cat "$work/nginx.pid") 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$easel_port/health" >/dev/null && break; sleep 0.2; done
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$off_port/health" >/dev/null && break; sleep 0.2; done

# Warm easel and copy its thumbnails (the exact bytes it serves) into nginx's root.
mkdir -p "$work/static"
names=$(ls Samples | grep -iE '\.(jpe?g|png)$')
for name in $names; do
    curl -sf -o "$work/static/$name" "http://127.0.0.1:$easel_port/images/thumb/$name"
    curl -sf -o /dev/null "http://127.0.0.1:$off_port/images/thumb/$name"
    if [ -n "$before_pid" ]; then curl -sf -o /dev/null "http://127.0.0.1:$before_port/images/thumb/$name"; fi
done
"$bare_bin" "$work/static" "$bare_port" > "$work/bare.log" 2>&1 &
bare_pid=$!
"$nio_bin" "$work/static" "$nio_port" > "$work/nio.log" 2>&1 &
nio_pid=$!
cat > "$work/nginx.conf" <<CONF
worker_processes 2;
daemon on;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    types { image/jpeg jpg; image/png png; }
    server { listen 127.0.0.1:$nginx_port; root $work/static; }
}
CONF
chmod -R a+rX "$work"   # nginx's workers run as www-data
nginx -c "$work/nginx.conf" -p "$work"
for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$nginx_port/$(echo $names | cut -d' ' -f1)" && break; sleep 0.1; done
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$bare_port/images/thumb/$(echo $names | cut -d' ' -f1)" && break; sleep 0.1; done
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$nio_port/images/thumb/$(echo $names | cut -d' ' -f1)" && break; sleep 0.1; done
# The same bytes from all four (easel's are the reference), or the comparison means nothing.
for name in $names; do
    for url in "http://127.0.0.1:$easel_port/images/thumb/$name" "http://127.0.0.1:$off_port/images/thumb/$name" "http://127.0.0.1:$bare_port/images/thumb/$name" "http://127.0.0.1:$nio_port/images/thumb/$name" "http://127.0.0.1:$nginx_port/$name"; do
        curl -sf "$url" | cmp -s - "$work/static/$name" || { echo "FAIL: $url does not serve easel's bytes" >&2; exit 1; }
    done
done

easel_paths=$(for n in $names; do printf '/images/thumb/%s,' "$n"; done)
nginx_paths=$(for n in $names; do printf '/%s,' "$n"; done)
rps() { grep 'Requests/sec' "$1" | awk '{print $2}'; }
best_easel=0; best_nginx=0; best_bare=0; best_nio=0; best_off=0; best_before=0
for run in $(seq "$RUNS"); do
    if [ -n "$before_pid" ]; then
        PATHS="$easel_paths" wrk -t 2 -c "$CONNECTIONS" -d "${DURATION}s" -s "$PATHS_LUA" "http://127.0.0.1:$before_port" > "$work/before-$run.txt"
        r=$(rps "$work/before-$run.txt"); echo "run $run: easel before (ready answers off) $r req/s" >&2
        best_before=$(echo "if ($r > $best_before) $r else $best_before" | bc -l)
    fi
    PATHS="$easel_paths" wrk -t 2 -c "$CONNECTIONS" -d "${DURATION}s" -s "$PATHS_LUA" "http://127.0.0.1:$easel_port" > "$work/easel-$run.txt"
    PATHS="$easel_paths" wrk -t 2 -c "$CONNECTIONS" -d "${DURATION}s" -s "$PATHS_LUA" "http://127.0.0.1:$off_port" > "$work/off-$run.txt"
    PATHS="$easel_paths" wrk -t 2 -c "$CONNECTIONS" -d "${DURATION}s" -s "$PATHS_LUA" "http://127.0.0.1:$bare_port" > "$work/bare-$run.txt"
    PATHS="$easel_paths" wrk -t 2 -c "$CONNECTIONS" -d "${DURATION}s" -s "$PATHS_LUA" "http://127.0.0.1:$nio_port" > "$work/nio-$run.txt"
    PATHS="$nginx_paths" wrk -t 2 -c "$CONNECTIONS" -d "${DURATION}s" -s "$PATHS_LUA" "http://127.0.0.1:$nginx_port" > "$work/nginx-$run.txt"
    e=$(rps "$work/easel-$run.txt"); b=$(rps "$work/bare-$run.txt"); n=$(rps "$work/nginx-$run.txt"); o=$(rps "$work/nio-$run.txt"); f=$(rps "$work/off-$run.txt")
    echo "run $run: easel $e req/s, easel (ready answers off) $f req/s, bare route $b req/s, bare NIO $o req/s, nginx $n req/s, easel/nginx $(echo "scale=3; $e / $n" | bc -l)" >&2
    best_off=$(echo "if ($f > $best_off) $f else $best_off" | bc -l)
    best_nio=$(echo "if ($o > $best_nio) $o else $best_nio" | bc -l)
    best_easel=$(echo "if ($e > $best_easel) $e else $best_easel" | bc -l)
    best_bare=$(echo "if ($b > $best_bare) $b else $best_bare" | bc -l)
    best_nginx=$(echo "if ($n > $best_nginx) $n else $best_nginx" | bc -l)
done
if grep -q "Non-2xx" "$work"/easel-*.txt "$work"/off-*.txt "$work"/bare-*.txt "$work"/nio-*.txt "$work"/nginx-*.txt $(ls "$work"/before-*.txt 2>/dev/null); then
    grep -H "Non-2xx" "$work"/easel-*.txt "$work"/off-*.txt "$work"/bare-*.txt "$work"/nio-*.txt "$work"/nginx-*.txt $(ls "$work"/before-*.txt 2>/dev/null) >&2
    echo "FAIL: error answers; the comparison would be meaningless" >&2
    exit 1
fi
echo
echo "Warm thumbnails ($(echo $names | wc -w) files, 256 px JPEG), wrk -t2 -c$CONNECTIONS ${DURATION}s, best of $RUNS"
echo "| server | requests/s | easel / this |"
echo "|---|---|---|"
echo "| nginx $(nginx -v 2>&1 | sed 's/.*nginx\///') (static files) | $best_nginx | $(echo "scale=2; $best_easel / $best_nginx" | bc -l) |"
echo "| bare SwiftNIO handler (same bytes from memory, no framework) | $best_nio | $(echo "scale=2; $best_easel / $best_nio" | bc -l) |"
echo "| bare Hummingbird route (same bytes from memory) | $best_bare | $(echo "scale=2; $best_easel / $best_bare" | bc -l) |"
echo "| easel serve, ready answers off (every request through the router) | $best_off | $(echo "scale=2; $best_easel / $best_off" | bc -l) |"
if [ -n "$before_pid" ]; then
    echo "| easel serve before ($EASEL_BEFORE), ready answers off | $best_before | $(echo "scale=2; $best_easel / $best_before" | bc -l) |"
fi
echo "| easel serve (ready answers) | $best_easel | |"
echo
if [ -n "$before_pid" ]; then echo "router path (ready answers off), after / before: $(echo "scale=3; $best_off / $best_before" | bc -l)"; fi
echo "ready answers / bare NIO: $(echo "scale=3; $best_easel / $best_nio" | bc -l)"
echo "easel / nginx: $(echo "scale=3; $best_easel / $best_nginx" | bc -l); ready answers off / nginx: $(echo "scale=3; $best_off / $best_nginx" | bc -l); bare NIO / nginx: $(echo "scale=3; $best_nio / $best_nginx" | bc -l); bare route / nginx: $(echo "scale=3; $best_bare / $best_nginx" | bc -l)"
# shellcheck source=Benchmarks/peers/figure.sh
. "$ROOT/Benchmarks/peers/figure.sh"
nginx_version=$(nginx -v 2>&1 | sed 's/.*nginx\///')
figure "Serving warm" "warm 256 px thumbnails, wrk -c$CONNECTIONS, requests/s" "nginx $nginx_version (the same bytes as static files)" "$best_easel" "$best_nginx" "requests/s" higher
figure "Serving warm" "warm 256 px thumbnails, wrk -c$CONNECTIONS, requests/s" "a bare SwiftNIO handler (the same bytes from memory)" "$best_easel" "$best_nio" "requests/s" higher
