#!/usr/bin/env bash
# The formats users send, side by side in one run, one core (taskset), release builds:
#   1. SVG rendered at 256 and 2048 px (square documents: Debian's Adwaita icons and a
#      generated drawing of 600 shapes with gradients, blur and text): easel in process vs
#      pyvips' svgload at the same scale (both librsvg 2.54), and the CLI vs rsvg-convert
#      (both a process per file writing a PNG) (goal: >= 1x).
#   2. TIFF decode (the sample photos as LZW TIFFs, written by libvips): easel vs pyvips
#      (both libtiff) (goal: >= 1x).
# pyvips runs on Debian's libvips42 in the venv color-and-formats.sh uses.
#
#   SKIP_BUILD=1 REPS=3 CPU=0 Benchmarks/peers/formats-in.sh
set -euo pipefail
PEERS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BENCH="$(dirname "$PEERS")"
ROOT="$(dirname "$BENCH")"
REPS="${REPS:-3}"
CPU="${CPU:-0}"
"$ROOT/scripts/install-deps.sh" build test
dpkg -s libvips42 >/dev/null 2>&1 || { [ "$(id -u)" -eq 0 ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libvips42 >/dev/null; }
dpkg -s adwaita-icon-theme >/dev/null 2>&1 || { [ "$(id -u)" -eq 0 ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq adwaita-icon-theme >/dev/null; }
VENV="$BENCH/.venv-color-vips"
[ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import pyvips" 2>/dev/null || { python3 -m venv "$VENV"; "$VENV/bin/pip" install -q pyvips; }
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  nice -n 19 swift build --package-path "$BENCH" -c release --product ColorFormatsWorkload -j 1 >/dev/null
  nice -n 19 swift build --package-path "$ROOT" -c release --product easel -j 1 >/dev/null
fi
WORKLOAD="$BENCH/.build/release/ColorFormatsWorkload"
EASEL="$ROOT/.build/release/easel"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/easel-formats.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
run() { taskset -c "$CPU" env VIPS_CONCURRENCY=1 "$@"; }
json() { "$VENV/bin/python" -c "import json,sys; d=json.load(sys.stdin); print(d$1)"; }
ratio() { "$VENV/bin/python" -c "print(f'{$1 / $2:.2f}')"; }

# Square SVGs: 20 of Adwaita's scalable icons (16 px documents of paths) and a generated 512 px
# drawing of 600 shapes.
mkdir -p "$WORK/svg"
ls /usr/share/icons/Adwaita/scalable/*/*.svg | head -20 | while read -r f; do cp "$f" "$WORK/svg/"; done
"$VENV/bin/python" - "$WORK/svg/drawing.svg" <<'PY'
import random, sys
random.seed(7)
shapes = []
for i in range(600):
    x, y, r = random.uniform(0, 512), random.uniform(0, 512), random.uniform(4, 60)
    kind = i % 3
    if kind == 0:
        shapes.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" fill="url(#g{i % 4})" opacity="0.7"/>')
    elif kind == 1:
        shapes.append(f'<path d="M{x:.1f} {y:.1f} q {r:.1f} {-r:.1f} {2*r:.1f} 0 t {2*r:.1f} 0" stroke="#{i*2731 % 0xFFFFFF:06x}" stroke-width="3" fill="none"/>')
    else:
        shapes.append(f'<text x="{x:.1f}" y="{y:.1f}" font-size="{r/2:.1f}" fill="#333">Easel {i}</text>')
gradients = "".join(f'<linearGradient id="g{k}"><stop offset="0" stop-color="#{k*0x3f3f3f:06x}"/><stop offset="1" stop-color="#f{k}0" stop-opacity=".4"/></linearGradient>' for k in range(4))
blur = '<filter id="b"><feGaussianBlur stdDeviation="3"/></filter>'
open(sys.argv[1], "w").write(f'<svg xmlns="http://www.w3.org/2000/svg" width="512" height="512" viewBox="0 0 512 512"><defs>{gradients}{blur}</defs><rect width="512" height="512" fill="#fafafa"/><g filter="url(#b)">{"".join(shapes[:60])}</g>{"".join(shapes[60:])}</svg>')
PY
icons=$(ls "$WORK"/svg/*.svg | grep -v drawing.svg); drawing="$WORK/svg/drawing.svg"
count=$(echo "$icons" | wc -l)

echo "## 1. SVG rendered at the size asked for ($count Adwaita icons and a 600-shape drawing, $REPS passes, one core)"
echo "| documents | size | easel median ms | pyvips svgload median ms | easel speed / pyvips |"
echo "|---|---|---|---|---|"
for set in icons drawing; do
  files=${!set}
  for size in 256 2048; do
    e=$(run "$WORKLOAD" render "$size" "$REPS" $files); v=$(run "$VENV/bin/python" "$PEERS/color_formats_vips.py" svg "$size" "$REPS" $files)
    echo "| $set | $size px | $(printf %.2f "$(echo "$e" | json "['medianMs']")") | $(printf %.2f "$(echo "$v" | json "['medianMs']")") | $(ratio "$(echo "$v" | json "['totalS']")" "$(echo "$e" | json "['totalS']")") |"
  done
done
echo
echo "### The CLI against rsvg-convert (a process per file, each writing a PNG of the size)"
echo "| documents | size | easel thumbnail s | rsvg-convert s | easel speed / rsvg-convert |"
echo "|---|---|---|---|---|"
for set in icons drawing; do
  files=${!set}
  for size in 256 2048; do
    start=$(date +%s.%N)
    for _ in $(seq "$REPS"); do for f in $files; do run "$EASEL" thumbnail --size "${size}x${size}" --format png --output-dir "$WORK/out" "$f" >/dev/null; done; done
    e=$("$VENV/bin/python" -c "print($(date +%s.%N) - $start)")
    start=$(date +%s.%N)
    for _ in $(seq "$REPS"); do for f in $files; do run rsvg-convert -w "$size" -h "$size" -o "$WORK/out/rsvg.png" "$f"; done; done
    r=$("$VENV/bin/python" -c "print($(date +%s.%N) - $start)")
    echo "| $set | $size px | $(printf %.2f "$e") | $(printf %.2f "$r") | $(ratio "$r" "$e") |"
  done
done
echo

mkdir -p "$WORK/tiff"
tiffs=$("$VENV/bin/python" "$PEERS/color_formats_vips.py" tiff "$WORK/tiff" "$ROOT"/Samples/*.jpg | json "['outputs']" | tr -d "[]',")
tcount=$(echo $tiffs | wc -w)
echo "## 2. TIFF decode ($tcount sample photos as LZW TIFFs, $REPS passes, one core)"
echo "| decoder | median ms | easel speed / this |"
echo "|---|---|---|"
e=$(run "$WORKLOAD" decode "$REPS" $tiffs); v=$(run "$VENV/bin/python" "$PEERS/color_formats_vips.py" decode "$REPS" $tiffs)
echo "| easel (libtiff) | $(printf %.2f "$(echo "$e" | json "['medianMs']")") | 1.00 |"
echo "| pyvips (libtiff) | $(printf %.2f "$(echo "$v" | json "['medianMs']")") | $(ratio "$(echo "$v" | json "['totalS']")" "$(echo "$e" | json "['totalS']")") |"
