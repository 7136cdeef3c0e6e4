#!/usr/bin/env bash
# Headless Chromium (Debian's package, installed when missing) opens the gallery page of a running
# `easel serve` on the bundled sample photos and checks that every thumbnail loaded (natural
# width > 0, counted by the page itself on its load event), then writes a screenshot.
# Usage: scripts/browser-test.sh [SCREENSHOT]   (default: gallery.png in the working directory)
set -euo pipefail
cd "$(dirname "$0")/.."
shot="$(realpath -m "${1:-gallery.png}")"
scripts/install-deps.sh build
if ! command -v chromium >/dev/null; then
    echo "installing chromium (Debian package)" >&2
    apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >&2
fi
# shellcheck disable=SC2046  # (the build ID's flag splits into its words on purpose; see scripts/build-id.sh)
swift build --product easel $(scripts/build-id.sh) >&2
easel="$(swift build --show-bin-path)/easel"
work="$(mktemp -d)"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$easel" serve --port "$port" --cache-dir "$work/cache" > "$work/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
    kill -0 $server 2>/dev/null || { cat "$work/server.log" >&2; echo "FAIL: easel serve exited" >&2; exit 1; }
    sleep 0.2
done
expected=$(ls Samples | grep -ciE '\.(jpe?g|png|webp|gif)$')
browser=(chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --virtual-time-budget=60000)
"${browser[@]}" --dump-dom "http://127.0.0.1:$port/" > "$work/dom.html" 2> "$work/chromium.log" || true
loaded=$(grep -o 'data-thumbnails="[0-9]*/[0-9]*"' "$work/dom.html" | head -1 | grep -o '[0-9]*/[0-9]*' || true)
echo "gallery: $loaded thumbnails loaded (expected $expected/$expected)"
if [ "$loaded" != "$expected/$expected" ]; then
    tail -20 "$work/chromium.log" >&2
    tail -20 "$work/server.log" >&2
    echo "FAIL: not every thumbnail loaded" >&2
    exit 1
fi
"${browser[@]}" --window-size=1280,1400 --screenshot="$shot" "http://127.0.0.1:$port/" 2>> "$work/chromium.log" || true
[ -s "$shot" ] || { echo "FAIL: no screenshot" >&2; exit 1; }
echo "screenshot: $shot ($(stat -c %s "$shot") bytes)"
# Graceful shutdown: SIGTERM lets the server finish and write its caches.
kill -TERM $server
wait $server && status=0 || status=$?
[ "$status" -eq 0 ] || { echo "FAIL: easel serve exited with $status on SIGTERM" >&2; exit 1; }
echo "browser-test: OK"
