#!/usr/bin/env bash
# The shared result tier in S3, side by side in one run, release builds, requests one at a time,
# on photos of camera size (each sample scaled with Pillow to cover 1920x1080, 2560x1600 and
# 4000x3000, and mirrored: 60 JPEGs at q90), one 256 px thumbnail each. Two S3 endpoints on
# loopback: moto's server (S3's semantics, signatures checked; Python, a few ms a request) and
# nginx with WebDAV PUT/DELETE (Debian's package; path-style GET/PUT/DELETE, no signature
# check: the latency of a fast object store). For each:
# - cold path of a second instance: instance A makes the thumbnails and writes them to the
#   shared tier; instance B (empty local caches, same shared tier) serves them from it; instance
#   C (empty local caches, no shared tier) computes them again. Goal: B >= 5x faster than C.
# - the shared tier's cost on a local miss: instance D (empty caches, a shared tier holding
#   nothing under its prefix) computes them after a miss in S3; the median of the per-URL
#   differences D - C2, where C2 is another instance like C. Goal: <= 2 ms p50. Pairs (B, C)
#   and (D, C2) are timed interleaved, URL by URL, so both of a pair see the same machine; B
#   runs the URLs again (memory hits) for the floor of the HTTP path.
# - the lookup alone: SharedTierLookup (S3Store, a miss then a 20 KB hit, 200 times) next to
#   the same calls from botocore (s3_floor.py), which is what the endpoint itself costs.
#
#   Benchmarks/peers/shared-tier.sh        (SKIP_BUILD=1 to use existing release builds)
set -euo pipefail
# Like for like: the peers here write no line per request, so neither does easel serve (its
# access log is on by default; EASEL_ACCESS_LOG=1 measures it with the log).
export EASEL_ACCESS_LOG="${EASEL_ACCESS_LOG:-0}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
if [ "${SKIP_BUILD:-}" != 1 ]; then
  swift build -c release --product easel >&2
  swift build --package-path Benchmarks -c release --product SharedTierLookup >&2
fi
lookup_bin="$(swift build --package-path Benchmarks -c release --show-bin-path)/SharedTierLookup"
pil_venv=Benchmarks/.venv-thumb-pillow  # shared with thumbnail.sh
if ! { [ -x "$pil_venv/bin/python" ] && "$pil_venv/bin/python" -c 'import PIL' 2>/dev/null; }; then
  python3 -m venv "$pil_venv" && "$pil_venv/bin/python" -m pip install --quiet Pillow >&2
fi
python="${EASEL_PYTHON:-}"
[ -z "$python" ] && [ -x .venv-tools/bin/python3 ] && python=.venv-tools/bin/python3
python="${python:-python3}"
work="$(mktemp -d)"
pids=()
trap 'for p in "${pids[@]}"; do kill $p 2>/dev/null || true; done; exec 3>&- 2>/dev/null || true; rm -rf "$work"' EXIT
free_port() { "$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || { echo "nginx missing: make deps installs it" >&2; exit 1; }
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"

mkfifo "$work/moto.in"
"$python" scripts/s3-test-server.py easel-bench < "$work/moto.in" > "$work/moto.json" 2> "$work/moto.log" &
pids+=($!)
exec 3> "$work/moto.in"
for _ in $(seq 1 300); do [ -s "$work/moto.json" ] && break; sleep 0.1; done
read_json() { "$python" -c "import json; print(json.load(open('$work/moto.json'))['$1'])"; }
export AWS_ACCESS_KEY_ID="$(read_json accessKey)" AWS_SECRET_ACCESS_KEY="$(read_json secretKey)"
export AWS_REGION="$(read_json region)"
moto_endpoint="$(read_json endpoint)"

# nginx as a bare object store: /BUCKET/KEY read, written and deleted as files.
dav_port=$(free_port)
mkdir -p "$work/dav/easel-bench" "$work/dav-tmp"
chmod 711 "$work" && chmod 777 "$work/dav" "$work/dav/easel-bench" "$work/dav-tmp"  # nginx's workers may run as another user
cat > "$work/nginx.conf" <<NGINX
worker_processes 1;
pid $work/nginx.pid;
error_log $work/nginx-error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $work/dav-tmp;
    server {
        listen 127.0.0.1:$dav_port;
        root $work/dav;
        location / { dav_methods PUT DELETE; create_full_put_path on; client_max_body_size 64m; }
    }
}
NGINX
"$nginx_bin" -c "$work/nginx.conf" -p "$work" 2> "$work/nginx-start.log"
trap 'for p in "${pids[@]}"; do kill $p 2>/dev/null || true; done; [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null; exec 3>&- 2>/dev/null || true; rm -rf "$work"' EXIT
dav_endpoint="http://127.0.0.1:$dav_port"
"$python" -c "import json,sys; s=json.load(open(sys.argv[1])); s['endpoint']=sys.argv[2]; print(json.dumps(s))" \
  "$work/moto.json" "$dav_endpoint" > "$work/dav.json"

start() {  # start NAME ENDPOINT [flags…]: an instance on a free port with empty caches; prints its port
  local name="$1" endpoint="$2"; shift 2
  local port; port=$(free_port)
  EASEL_S3_ENDPOINT="$endpoint" .build/release/easel serve --port "$port" --origin "$work/photos" --cache-dir "$work/cache-$name" "$@" > "$work/$name.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 100); do curl -fsS -o /dev/null "http://127.0.0.1:$port/health" 2>/dev/null && break; sleep 0.1; done
  echo "$port"
}

# The corpus: every sample photo at three camera sizes, as is and mirrored; one thumbnail each.
mkdir -p "$work/photos"
"$pil_venv/bin/python" - "$work/photos" Samples/*.jpg <<'PY'
import os, sys
from PIL import Image, ImageOps
out = sys.argv[1]
for path in sys.argv[2:]:
    image = Image.open(path).convert("RGB")
    for width, height in ((1920, 1080), (2560, 1600), (4000, 3000)):
        scale = max(width / image.width, height / image.height)
        big = image.resize((round(image.width * scale), round(image.height * scale)), Image.BICUBIC)
        left, top = (big.width - width) // 2, (big.height - height) // 2
        big = big.crop((left, top, left + width, top + height))
        name = os.path.splitext(os.path.basename(path))[0]
        big.save(f"{out}/{name}-{width}.jpg", quality=90)
        ImageOps.mirror(big).save(f"{out}/{name}-{width}-mirrored.jpg", quality=90)
PY
ls "$work/photos" | sed 's#^#/images/thumb/#' > "$work/paths"
count=$(wc -l < "$work/paths")

stored() {  # stored STORE: objects under made/ in that store
  if [ "$1" = moto ]; then "$python" scripts/cluster/count_objects.py "$work/moto.json" easel-bench made/
  else find "$work/dav/easel-bench/made" -type f 2>/dev/null | wc -l; fi
}
for store in moto dav; do
  endpoint=$moto_endpoint; [ $store = dav ] && endpoint=$dav_endpoint
  a=$(start "a-$store" "$endpoint" --shared-cache s3://easel-bench/made/)
  "$python" Benchmarks/peers/time_requests.py "$work/paths" "127.0.0.1:$a" > /dev/null
  for _ in $(seq 1 200); do [ "$(stored $store)" -ge "$count" ] && break; sleep 0.1; done
  b=$(start "b-$store" "$endpoint" --shared-cache s3://easel-bench/made/)
  c=$(start "c-$store" "$endpoint")
  # Interleaved: for each URL, B and C in turn (order rotated), so that both see the same machine;
  # then B again (memory hits: the floor of the HTTP path).
  "$python" Benchmarks/peers/time_requests.py "$work/paths" "127.0.0.1:$b" "127.0.0.1:$c" > "$work/bc-$store.json"
  "$python" Benchmarks/peers/time_requests.py "$work/paths" "127.0.0.1:$b" > "$work/warm-$store.json"
  # D against its own control C2 (D's writes to the store after each answer must not land on B's reads).
  d=$(start "d-$store" "$endpoint" --shared-cache s3://easel-bench/empty/)
  c2=$(start "c2-$store" "$endpoint")
  "$python" Benchmarks/peers/time_requests.py "$work/paths" "127.0.0.1:$d" "127.0.0.1:$c2" > "$work/dc-$store.json"
  # (B must have answered from the shared tier: its metrics count the hits.)
  curl -fsS "http://127.0.0.1:$b/metrics" | grep -E '^easel_shared_tier_total\{.*outcome="hit"' | awk '{print $2}' > "$work/hits-$store"
  EASEL_S3_ENDPOINT="$endpoint" "$lookup_bin" easel-bench 200 > "$work/lookup-$store.json"
  "$python" Benchmarks/peers/s3_floor.py "$work/$store.json" easel-bench 200 > "$work/floor-$store.json"
done
"$python" - "$work" "$count" <<'PY'
import json, statistics, sys
sys.path.insert(0, "Benchmarks/peers")
from figures_out import figure
work, count = sys.argv[1], int(sys.argv[2])
ms = lambda x: x * 1000
print(f"\n{count} thumbnails (256 px JPEG) of photos at 1920x1080, 2560x1600 and 4000x3000, one request at a time, release builds")
names = {"moto": "moto (S3 semantics, signed)", "dav": "nginx WebDAV (fast store)"}
print("| shared tier in | instance | total s | p50 ms | p90 ms |")
print("|---|---|---|---|---|")
summary = []
for store in ("moto", "dav"):
    b, c = json.load(open(f"{work}/bc-{store}.json"))
    d, c2 = json.load(open(f"{work}/dc-{store}.json"))
    warm, = json.load(open(f"{work}/warm-{store}.json"))
    hits = open(f"{work}/hits-{store}").read().strip() or "0"
    for name, times in ((f"B: reads the shared tier ({hits} hits)", b), ("C: computes (no shared tier)", c),
                        ("B again: memory hits", warm),
                        ("D: shared-tier miss, then computes", d), ("C2: computes (D's control)", c2)):
        ordered = sorted(times)
        print(f"| {names[store]} | {name} | {sum(times):.2f} | {ms(statistics.median(times)):.1f} | {ms(ordered[int(len(ordered) * 0.9)]):.1f} |")
    diffs = [ms(y - x) for x, y in zip(c2, d)]
    figure("Scale-out", f"{count} thumbnails a second instance finds in the shared tier ({names[store]}), total time",
           "the same thumbnails computed again (no shared tier)", sum(b), sum(c), "s", "lower", 5)
    summary.append(f"{names[store]}: second instance reading the shared tier vs computing {sum(c) / sum(b):.1f}x faster in total, "
                   f"{statistics.median(c) / statistics.median(b):.1f}x at p50 (goal >= 5x); lookup on a local miss "
                   f"(median of per-URL D - C2) {statistics.median(diffs):.2f} ms (goal <= 2 ms)")
print()
for line in summary: print(line)
print("\n| lookup, 200 each, one at a time | miss p50 ms | hit (20 KB) p50 ms |")
print("|---|---|---|")
for store in ("moto", "dav"):
    lookup, floor = json.load(open(f"{work}/lookup-{store}.json")), json.load(open(f"{work}/floor-{store}.json"))
    print(f"| {names[store]}: S3Store (easel) | {ms(statistics.median(lookup['miss'])):.2f} | {ms(statistics.median(lookup['hit'])):.2f} |")
    print(f"| {names[store]}: botocore | {ms(statistics.median(floor['miss'])):.2f} | {ms(statistics.median(floor['hit'])):.2f} |")
    if store == "dav":
        for kind, what in (("miss", "a miss"), ("hit", "a 20 KB hit")):
            figure("Scale-out", f"shared-tier lookup, {what}, p50 (nginx WebDAV as the store)", "botocore (the same S3 calls)",
                   ms(statistics.median(lookup[kind])), ms(statistics.median(floor[kind])), "ms", "lower")
PY
