#!/usr/bin/env bash
# Parsing overhead of the compatible URL styles: requests/s for one cached 300×200 fill of one
# image asked through a native ad-hoc URL, an imgproxy URL and a thumbor URL (all signed, all
# the same cache entry), and `GET /health` as the server's floor. Same server, same client (wrk,
# 2 threads, CONNECTIONS connections, DURATION s), runs interleaved, best of RUNS each.
#
#   Benchmarks/peers/url-styles.sh      (needs a release build: make run or swift build -c release)
#
# Environment: RUNS=3 DURATION=10 CONNECTIONS=64 SKIP_BUILD=1
set -euo pipefail
# Like for like: the peers here write no line per request, so neither does easel serve (its
# access log is on by default; EASEL_ACCESS_LOG=1 measures it with the log).
export EASEL_ACCESS_LOG="${EASEL_ACCESS_LOG:-0}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
RUNS="${RUNS:-3}"; DURATION="${DURATION:-10}"; CONNECTIONS="${CONNECTIONS:-64}"
command -v wrk >/dev/null || { apt-get update -q >&2; DEBIAN_FRONTEND=noninteractive apt-get install -y -q wrk >&2; }
[ "${SKIP_BUILD:-}" = 1 ] || swift build -c release --product easel >&2
work="$(mktemp -d)"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
key=00112233445566778899aabbccddeeff; salt=5a17
ikey=943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881; isalt=520f986b
tkey=bench-thumbor-key
cat > "$work/easel.json" <<JSON
{ "port": $port, "cacheDirectory": "$work/cache", "signingKeys": ["$key"], "signingSalt": "$salt",
  "imgproxyKeys": ["$ikey"], "imgproxySalts": ["$isalt"], "thumborSecurityKey": "$tkey" }
JSON
.build/release/easel serve --config "$work/easel.json" > "$work/easel.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.2; done
native=$(.build/release/easel sign native "/images/w=300,h=200,fit=fill,q=80,f=jpeg/chelsea-cat.jpg" --key $key --salt $salt)
imgproxy=$(.build/release/easel sign imgproxy "g:ce/rs:fill:300:200:1/q:80/plain/local:///chelsea-cat.jpg@jpg" --key $ikey --salt $isalt)
thumbor=$(.build/release/easel sign thumbor "300x200/filters:quality(80):format(jpeg)/chelsea-cat.jpg" --key $tkey)
declare -A url=([native]="$native" [imgproxy]="$imgproxy" [thumbor]="$thumbor" [health]="/health")
for name in native imgproxy thumbor; do
    curl -sf -o "$work/$name.jpg" "http://127.0.0.1:$port${url[$name]}"
done
cmp -s "$work/native.jpg" "$work/imgproxy.jpg" && cmp -s "$work/native.jpg" "$work/thumbor.jpg" || { echo "the three styles differ" >&2; exit 1; }
declare -A best=([native]=0 [imgproxy]=0 [thumbor]=0 [health]=0)
for run in $(seq "$RUNS"); do
    for name in native imgproxy thumbor health; do
        rps=$(wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" "http://127.0.0.1:$port${url[$name]}" | awk '/Requests\/sec/ {print $2}')
        echo "run $run $name: $rps req/s" >&2
        best[$name]=$(python3 -c "print(max(${best[$name]}, $rps))")
    done
done
printf '%-10s %12s %10s\n' style "req/s (best)" "vs native"
for name in native imgproxy thumbor health; do
    printf '%-10s %12.0f %9.3fx\n' "$name" "${best[$name]}" "$(python3 -c "print(${best[$name]} / ${best[native]})")"
done
