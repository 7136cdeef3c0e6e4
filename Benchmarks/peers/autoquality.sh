#!/usr/bin/env bash
# Autoquality and best format on the sample photos (issue 27), one run, one core (taskset),
# release build, through a real `easel serve`: 256 px thumbnails of every Samples/ image.
#  1. The target: the median perceptual distance (`easel compare`) that JPEG at fixed quality 80
#     gives, against the same thumbnail made losslessly (PNG).
#  2. Fixed JPEG q80, then autoquality JPEG, WebP and AVIF at that target, and best format
#     (`f=auto`, a client taking AVIF and WebP): total bytes against q80's (goal: autoquality
#     JPEG ≤ 0.85×), encodes per answer (goal: ≤ 3 on average; from /metrics), the time of the
#     cold requests, and each autoquality answer's distance checked against the target.
#
#   SKIP_BUILD=1 CPU=0 Benchmarks/peers/autoquality.sh
set -euo pipefail
# Like for like: the peers here write no line per request, so neither does easel serve (its
# access log is on by default; EASEL_ACCESS_LOG=1 measures it with the log).
export EASEL_ACCESS_LOG="${EASEL_ACCESS_LOG:-0}"
PEERS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$(dirname "$PEERS")")"
CPU="${CPU:-0}"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  "$ROOT/scripts/install-deps.sh" build
  nice -n 19 swift build --package-path "$ROOT" -c release --product easel -j 1 >/dev/null
fi
EASEL="${EASEL_BIN:-$ROOT/.build/release/easel}"
work=$(mktemp -d)
trap 'kill "${server:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/origin" "$work/png" "$work/q80"
cp "$ROOT"/Samples/*.jpg "$ROOT"/Samples/*.png "$work/origin/"
"$EASEL" thumbnail --size 256x256 --format png --output-dir "$work/png" "$work"/origin/* >/dev/null
"$EASEL" thumbnail --size 256x256 --format jpeg --quality 80 --output-dir "$work/q80" "$work"/origin/* >/dev/null
target=$(for f in "$work"/png/*.png; do b=$(basename "$f" .png); "$EASEL" compare "$f" "$work/q80/$b.jpg"; done \
  | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$work/easel.json" <<JSON
{"port": $port, "origin": "$work/origin", "cacheDirectory": "$work/cache", "allowUnsignedAdHoc": true,
 "autoQuality": {"target": $target}, "processingConcurrency": 1}
JSON
taskset -c "$CPU" "$EASEL" serve --config "$work/easel.json" > "$work/serve.log" 2>&1 &
server=$!
python3 - "$port" "$work" "$target" "$EASEL" <<'PY'
import os, re, subprocess, sys, time, urllib.request
port, work, target, easel = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
base = "http://127.0.0.1:%s" % port
for _ in range(300):  # bounded start-up wait (30 s)
    try:
        urllib.request.urlopen(base + "/health", timeout=2).read()
        break
    except OSError:
        time.sleep(0.1)
names = sorted(os.listdir(os.path.join(work, "origin")))

def get(path, accept=None):
    request = urllib.request.Request(base + path, headers={"Accept": accept} if accept else {})
    with urllib.request.urlopen(request, timeout=120) as response:
        return response.read(), response.headers.get("Content-Type")

def encodes():
    text = urllib.request.urlopen(base + "/metrics", timeout=10).read().decode()
    return sum(float(m) for m in re.findall(r"^easel_pipeline_encodes_total(?:\{[^}]*\})? ([0-9.e+]+)$", text, re.M))

def run(label, spec, accept=None, check=False):
    before, start, total, worst, types = encodes(), time.perf_counter(), 0, 0.0, {}
    for name in names:
        body, kind = get("/images/w=256,h=256,%s/%s" % (spec, name), accept)
        total += len(body)
        types[kind] = types.get(kind, 0) + 1
        if check:
            out = os.path.join(work, "answer")
            open(out, "wb").write(body)
            reference = os.path.join(work, "png", "tn_" + os.path.splitext(name)[0] + ".png")
            distance = float(subprocess.check_output([easel, "compare", reference, out]).split()[0])
            worst = max(worst, distance)
    seconds = time.perf_counter() - start
    return {"label": label, "bytes": total, "encodes": (encodes() - before) / len(names), "seconds": seconds,
            "worst": worst if check else None, "types": types}

rows = [run("JPEG, fixed quality 80", "f=jpeg,q=80"),
        run("JPEG, autoquality", "f=jpeg,q=auto", check=True),
        run("WebP, autoquality", "f=webp,q=auto", "image/webp", check=True),
        run("AVIF, autoquality", "f=avif,q=auto", "image/avif", check=True),
        run("best format (AVIF, WebP, JPEG), autoquality", "f=auto,q=auto", "image/avif,image/webp", check=True)]
q80 = rows[0]
print("## Autoquality and best format (%d thumbnails of 256 px, the sample photos; one core)" % len(names))
print()
print("Target distance %.6f: the median that JPEG at quality 80 gives these thumbnails." % target)
print()
print("| answers | total bytes | against JPEG q80 | encodes per answer | cold time, s | worst distance |")
print("|---|---|---|---|---|---|")
for r in rows:
    worst = "—" if r["worst"] is None else "%.6f" % r["worst"]
    print("| %s | %d | %.3f× | %.2f | %.2f | %s |" % (r["label"], r["bytes"], r["bytes"] / q80["bytes"], r["encodes"], r["seconds"], worst))
best = rows[4]
print()
print("best format chose: " + ", ".join("%s × %d" % (k, v) for k, v in sorted(best["types"].items())))
print("best format's bytes against AVIF only: %.3f×, against WebP only: %.3f×" % (best["bytes"] / rows[3]["bytes"], best["bytes"] / rows[2]["bytes"]))
over = [r["label"] for r in rows if r["worst"] is not None and r["worst"] > target]
if over:
    print("OVER THE TARGET: " + ", ".join(over))
    sys.exit(1)
PY
