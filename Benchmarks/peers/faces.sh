#!/usr/bin/env bash
# What finding faces adds to a 256 px crop (issues 27 and 41; goal ≤ 10 ms at 24 MP): `g=face`
# (OpenCV's cascades, faces weighed into the crop) against `g=sm` (attention alone), 256×256
# fills of every Samples/ JPEG as it is and enlarged to 24 MP (6000×4000 for a 3:2 photo, made
# with Debian's ffmpeg), each asked once (cold) of a real `easel serve` on one core (taskset),
# release.
#
#   SKIP_BUILD=1 CPU=0 REPS=3 Benchmarks/peers/faces.sh
set -euo pipefail
# Like for like: the peers here write no line per request, so neither does easel serve (its
# access log is on by default; EASEL_ACCESS_LOG=1 measures it with the log).
export EASEL_ACCESS_LOG="${EASEL_ACCESS_LOG:-0}"
PEERS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$(dirname "$PEERS")")"
CPU="${CPU:-0}"
REPS="${REPS:-3}"
# ffmpeg (the test group) makes the 24 MP copies, even with SKIP_BUILD.
command -v ffmpeg >/dev/null || "$ROOT/scripts/install-deps.sh" build test
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  "$ROOT/scripts/install-deps.sh" build test
  nice -n 19 swift build --package-path "$ROOT" -c release --product easel -j 1 >/dev/null
  nice -n 19 swift build --package-path "$ROOT" -c release --product EaselFaces -j 1 >/dev/null
fi
EASEL="${EASEL_BIN:-$ROOT/.build/release/easel}"
work=$(mktemp -d)
trap 'kill "${server:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$work/origin"
for f in "$ROOT"/Samples/*.jpg; do
  name=$(basename "$f" .jpg)
  # 24 MP at the sample's aspect (even sides), Lanczos, quality about 90.
  ffmpeg -v error -i "$f" -vf "scale='trunc(iw*sqrt(24e6/(iw*ih))/2)*2':-2:flags=lanczos" -q:v 3 "$work/$name-24mp.jpg"
  for r in $(seq "$REPS"); do cp "$f" "$work/origin/$r-$name.jpg"; cp "$work/$name-24mp.jpg" "$work/origin/24mp-$r-$name.jpg"; done
done
cat > "$work/easel.json" <<JSON
{"port": $port, "origin": "$work/origin", "cacheDirectory": "$work/cache", "allowUnsignedAdHoc": true, "processingConcurrency": 1}
JSON
taskset -c "$CPU" "$EASEL" serve --config "$work/easel.json" > "$work/serve.log" 2>&1 &
server=$!
python3 - "$port" "$work" <<'PY'
import os, statistics, sys, time, urllib.request
port, work = sys.argv[1], sys.argv[2]
base = "http://127.0.0.1:%s" % port
for _ in range(300):  # bounded start-up wait (30 s)
    try:
        urllib.request.urlopen(base + "/health", timeout=2).read()
        break
    except OSError:
        time.sleep(0.1)
every = sorted(os.listdir(os.path.join(work, "origin")))
def run(gravity, names):
    times = []
    for name in names:
        start = time.perf_counter()
        urllib.request.urlopen("%s/images/w=256,h=256,fit=fill,g=%s,f=jpeg/%s" % (base, gravity, name), timeout=120).read()
        times.append(time.perf_counter() - start)
    return times
for label, names in (("the samples as they are (512-1500 px)", [n for n in every if not n.startswith("24mp-")]),
                     ("the samples at 24 MP", [n for n in every if n.startswith("24mp-")])):
    attention, face = run("sm", names), run("face", names)
    # (Each source asked twice, once per gravity: the second decodes it again, no cached bitmap is shared.)
    extra = [f - a for f, a in zip(face, attention)]
    print("## Face crops, %s: what finding faces adds to a 256 px fill (%d cold answers each, one core)" % (label, len(names)))
    print("| gravity | median ms | total s |")
    print("|---|---|---|")
    for row, times in (("g=sm (attention)", attention), ("g=face (faces, then attention)", face)):
        print("| %s | %.2f | %.3f |" % (row, statistics.median(times) * 1000, sum(times)))
    print()
    print("face detection per crop: median %.2f ms, mean %.2f ms, most %.2f ms (goal ≤ 10 ms at 24 MP)"
          % (statistics.median(extra) * 1000, statistics.mean(extra) * 1000, max(extra) * 1000))
    print("by image (median of the repeats, ms): " + ", ".join(
        "%s %.1f" % (base_name, statistics.median(e * 1000 for n, e in zip(names, extra) if n.split("-", 2 if n.startswith("24mp-") else 1)[-1] == base_name))
        for base_name in sorted({n.split("-", 2 if n.startswith("24mp-") else 1)[-1] for n in names})))
    print()
PY
