#!/usr/bin/env bash
# Cold path, side by side: thumbnails/s from a file origin, `easel serve` vs thumbor (PyPI, in
# Benchmarks/.venv-thumbor, made on first use), same files, same size (fit in 256x256, JPEG),
# same client (a Python client, CLIENTS keep-alive connections), same machine. Each pass requests every corpus file once
# from a server with nothing cached (easel: a fresh cache directory per pass; thumbor: no storage,
# no result storage), timed from the first request to the last answer; PASSES passes each,
# interleaved, best kept. thumbor runs 2 processes (one per core); easel decodes on both cores.
#
#   Benchmarks/peers/serve-vs-thumbor.sh     (needs a release build: make run or swift build -c release)
#
# Corpus: thumbnail.sh's 30 photos (Samples cover-cropped to 1280x853 … 4000x3000, JPEG q85,
# thumbnail_workload.py), five copies each (150 files). easel serves one format (thumb, fit 256, q80) as thumbor does; with
# its default family of three formats a cold request makes all three from one decode.
# Environment: PASSES=3 CLIENTS=4 SKIP_BUILD=1
set -euo pipefail
# Like for like: the peers here write no line per request, so neither does easel serve (its
# access log is on by default; EASEL_ACCESS_LOG=1 measures it with the log).
export EASEL_ACCESS_LOG="${EASEL_ACCESS_LOG:-0}"
PEERS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"; BENCH="$(dirname "$PEERS")"; ROOT="$(dirname "$BENCH")"
cd "$ROOT"
PASSES="${PASSES:-3}"; CLIENTS="${CLIENTS:-4}"
[ "${SKIP_BUILD:-}" = 1 ] || swift build -c release --product easel >&2
if [ ! -x "$BENCH/.venv-thumbor/bin/thumbor" ]; then
    python3 -m venv "$BENCH/.venv-thumbor" >&2
    "$BENCH/.venv-thumbor/bin/pip" install --quiet thumbor >&2
fi
if [ ! -x "$BENCH/.venv-thumb-pillow/bin/python" ]; then
    python3 -m venv "$BENCH/.venv-thumb-pillow" >&2
    "$BENCH/.venv-thumb-pillow/bin/pip" install --quiet pillow >&2
fi
work="$(mktemp -d)"
pids=()
trap 'for p in "${pids[@]}"; do kill $p 2>/dev/null || true; done; rm -rf "$work"' EXIT
"$BENCH/.venv-thumb-pillow/bin/python" "$PEERS/thumbnail_workload.py" corpus "$ROOT/Samples" "$work/corpus" >&2
# Five copies of each file under other names: 150 distinct sources, each cold once per pass.
(cd "$work/corpus" && for f in *.jpg; do for i in 1 2 3 4; do cp "$f" "copy$i-$f"; done; done)
names=$(cd "$work/corpus" && ls *.jpg)
# easel with the one format asked for (its default family makes three from each decode).
echo '{"formats": [{"name": "thumb", "width": 256, "height": 256, "fit": "fit", "quality": 80}]}' > "$work/easel.json"
count=$(echo "$names" | wc -w)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() { for _ in $(seq 150); do curl -sf -o /dev/null "$1" && return 0; sleep 0.2; done; echo "no answer from $1" >&2; exit 1; }
now() { date +%s.%N; }
# Requests every file once, CLIENTS at a time (a Python client on keep-alive connections);
# prints the seconds it took; fails on any non-200.
cat > "$work/client.py" <<'PY'
import http.client, sys, time, threading, urllib.parse
base, clients, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
url = urllib.parse.urlparse(base)
queue, lock, codes = list(names), threading.Lock(), []
def worker():
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    while True:
        with lock:
            if not queue: return
            name = queue.pop()
        conn.request("GET", url.path + name)
        response = conn.getresponse(); response.read()
        with lock: codes.append(response.status)
start = time.monotonic()
threads = [threading.Thread(target=worker) for _ in range(clients)]
for t in threads: t.start()
for t in threads: t.join()
elapsed = time.monotonic() - start
bad = [c for c in codes if c != 200]
if bad: sys.exit(f"non-200 answers: {sorted(set(bad))}")
print(f"{elapsed:.4f}")
PY
pass() { python3 "$work/client.py" "$1" "$CLIENTS" $names; }

thumbor_port=$(free_port)
cat > "$work/thumbor.conf" <<CONF
LOADER = 'thumbor.loaders.file_loader'
FILE_LOADER_ROOT_PATH = '$work/corpus'
STORAGE = 'thumbor.storages.no_storage'
RESULT_STORAGE = None
QUALITY = 80
ALLOW_UNSAFE_URL = True
CONF
"$BENCH/.venv-thumbor/bin/thumbor" --port "$thumbor_port" --ip 127.0.0.1 --conf "$work/thumbor.conf" --processes 2 > "$work/thumbor.log" 2>&1 &
pids+=($!)
wait_for "http://127.0.0.1:$thumbor_port/healthcheck"

best_easel=999999; best_thumbor=999999
for p in $(seq "$PASSES"); do
    easel_port=$(free_port)
    .build/release/easel serve --origin "$work/corpus" --port "$easel_port" --cache-dir "$work/cache-$p" --config "$work/easel.json" > "$work/easel-$p.log" 2>&1 &
    easel_pid=$!; pids+=($easel_pid)
    wait_for "http://127.0.0.1:$easel_port/health"
    e=$(pass "http://127.0.0.1:$easel_port/images/thumb/")
    kill $easel_pid; wait $easel_pid 2>/dev/null || true
    t=$(pass "http://127.0.0.1:$thumbor_port/unsafe/fit-in/256x256/")
    echo "pass $p: easel $e s, thumbor $t s" >&2
    best_easel=$(echo "if ($e < $best_easel) $e else $best_easel" | bc -l)
    best_thumbor=$(echo "if ($t < $best_thumbor) $t else $best_thumbor" | bc -l)
done
rate() { echo "scale=1; $count / $1" | bc -l; }
echo
echo "Cold thumbnails from a file origin ($count JPEGs of 1.1 to 12 MP, fit in 256x256, JPEG), $CLIENTS clients, best of $PASSES"
echo "| server | thumbnails/s | easel/thumbor |"
echo "|---|---|---|"
thumbor_version=$("$BENCH/.venv-thumbor/bin/python" -c 'import thumbor; print(thumbor.__version__)')
echo "| thumbor $thumbor_version (2 processes) | $(rate "$best_thumbor") | |"
echo "| easel serve | $(rate "$best_easel") | $(echo "scale=2; $best_thumbor / $best_easel" | bc -l) |"
# shellcheck source=Benchmarks/peers/figure.sh
. "$PEERS/figure.sh"
figure "Serving cold" "$count cold thumbnails (1.1–12 MP JPEGs, fit 256, file origin), $CLIENTS clients" "thumbor $thumbor_version (2 processes)" \
  "$(rate "$best_easel")" "$(rate "$best_thumbor")" "thumbnails/s" higher 1
