#!/usr/bin/env bash
# The formats users send, side by side in one run, one core (taskset), release builds:
#   1. SVG rendered at 256 and 2048 px (square documents: Debian's Adwaita icons and a
#      generated drawing of 600 shapes with gradients, blur and text): easel in process vs
#      pyvips' svgload at the same scale (both librsvg 2.54), and the CLI vs rsvg-convert
#      (both a process per file writing a PNG; then easel with every file in one process)
#      (goal: >= 1x).
#   2. TIFF decode (the sample photos as LZW TIFFs, written by libvips): easel vs pyvips
#      (both libtiff) (goal: >= 1x).
#   3. JPEG XL: decode of the sample photos (cjxl -q 85 -e 3) against pyvips (both libjxl), and
#      encode of 256 px thumbnails against pyvips' jxlsave and against cjxl's own timing of its
#      encode (--num_reps, MP/s: reading and writing files left out, as ours leaves out the PNG
#      decode) at the same quality and effort, with the bytes (goal: >= 1x at equal size).
#   4. PDF: a 2-page document's first page rendered at 256 and 2048 px wide, in process against
#      pyvips' pdfload and as a CLI against pdftoppm (all poppler) (goal: >= 1x).
# pyvips runs on Debian's libvips42 in the venv color-and-formats.sh uses.
#
#   SKIP_BUILD=1 REPS=3 CPU=0 Benchmarks/peers/formats-in.sh
#   SECTIONS="3" ...   only these sections (1 SVG, 2 TIFF, 3 JPEG XL, 4 PDF; default all)
set -euo pipefail
PEERS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BENCH="$(dirname "$PEERS")"
ROOT="$(dirname "$BENCH")"
REPS="${REPS:-3}"
CPU="${CPU:-0}"
SECTIONS="${SECTIONS:-1 2 3 4}"
wants() { [[ " $SECTIONS " == *" $1 "* ]]; }
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
# shellcheck source=Benchmarks/peers/figure.sh
. "$PEERS/figure.sh"
vips_version=$("$VENV/bin/python" -c 'import pyvips; print(f"{pyvips.version(0)}.{pyvips.version(1)}.{pyvips.version(2)}")')
total() { echo "$1" | json "['totalS']"; }

# Square SVGs: 20 of Adwaita's scalable icons (16 px documents of paths) and a generated 512 px
# drawing of 600 shapes.
mkdir -p "$WORK/svg"
adwaita=(/usr/share/icons/Adwaita/scalable/*/*.svg)
cp "${adwaita[@]:0:20}" "$WORK/svg/"
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

if wants 1; then
echo "## 1. SVG rendered at the size asked for ($count Adwaita icons and a 600-shape drawing, $REPS passes, one core)"
echo "| documents | size | easel median ms | pyvips svgload median ms | easel speed / pyvips |"
echo "|---|---|---|---|---|"
for set in icons drawing; do
  files=${!set}
  for size in 256 2048; do
    e=$(run "$WORKLOAD" render "$size" "$REPS" $files); v=$(run "$VENV/bin/python" "$PEERS/color_formats_vips.py" svg "$size" "$REPS" $files)
    echo "| $set | $size px | $(printf %.2f "$(echo "$e" | json "['medianMs']")") | $(printf %.2f "$(echo "$v" | json "['medianMs']")") | $(ratio "$(echo "$v" | json "['totalS']")" "$(echo "$e" | json "['totalS']")") |"
    figure "Formats" "SVG ($set) drawn at $size px, in process, one core" "pyvips $vips_version (svgload, librsvg)" "$(total "$e")" "$(total "$v")" s lower
  done
done
echo
# cli_table each|batch: easel thumbnail a process per file (each) or every file in one process
# (batch), against rsvg-convert, a process per file; both write a PNG of the size.
cli_table() {
  echo "| documents | size | easel thumbnail s | rsvg-convert s | easel speed / rsvg-convert |"
  echo "|---|---|---|---|---|"
  for set in icons drawing; do
    files=${!set}
    for size in 256 2048; do
      start=$(date +%s.%N)
      for _ in $(seq "$REPS"); do
        if [ "$1" = batch ]; then
          run "$EASEL" thumbnail --size "${size}x${size}" --format png --output-dir "$WORK/out" $files >/dev/null
        else
          for f in $files; do run "$EASEL" thumbnail --size "${size}x${size}" --format png --output-dir "$WORK/out" "$f" >/dev/null; done
        fi
      done
      e=$("$VENV/bin/python" -c "print($(date +%s.%N) - $start)")
      start=$(date +%s.%N)
      for _ in $(seq "$REPS"); do for f in $files; do run rsvg-convert -w "$size" -h "$size" -o "$WORK/out/rsvg.png" "$f"; done; done
      r=$("$VENV/bin/python" -c "print($(date +%s.%N) - $start)")
      echo "| $set | $size px | $(printf %.2f "$e") | $(printf %.2f "$r") | $(ratio "$r" "$e") |"
      if [ "$1" = each ]; then figure "Formats" "SVG ($set) to a $size px PNG, a process per file, one core" "rsvg-convert" "$e" "$r" s lower; fi
    done
  done
  echo
}
echo "### The CLI against rsvg-convert (a process per file, each writing a PNG of the size)"
cli_table each
# (SVG_BATCH=0 leaves out this table, which is not like for like by design.)
if [ "${SVG_BATCH:-1}" != 0 ]; then
echo "### A batch: easel thumbnail with every file in one process against rsvg-convert, a process per file"
cli_table batch
fi
fi

if wants 2; then
mkdir -p "$WORK/tiff"
tiffs=$("$VENV/bin/python" "$PEERS/color_formats_vips.py" tiff "$WORK/tiff" "$ROOT"/Samples/*.jpg | json "['outputs']" | tr -d "[]',")
tcount=$(echo $tiffs | wc -w)
echo "## 2. TIFF decode ($tcount sample photos as LZW TIFFs, $REPS passes, one core)"
echo "| decoder | median ms | easel speed / this |"
echo "|---|---|---|"
e=$(run "$WORKLOAD" decode "$REPS" $tiffs); v=$(run "$VENV/bin/python" "$PEERS/color_formats_vips.py" decode "$REPS" $tiffs)
echo "| easel (libtiff) | $(printf %.2f "$(echo "$e" | json "['medianMs']")") | 1.00 |"
echo "| pyvips (libtiff) | $(printf %.2f "$(echo "$v" | json "['medianMs']")") | $(ratio "$(echo "$v" | json "['totalS']")" "$(echo "$e" | json "['totalS']")") |"
figure "Formats" "TIFF decode of $tcount photos, in process, one core" "pyvips $vips_version (libtiff)" "$(total "$e")" "$(total "$v")" s lower
echo
fi

if wants 3; then
echo "## 3. JPEG XL ($REPS passes, one core)"
mkdir -p "$WORK/jxl"
for f in "$ROOT"/Samples/*.jpg; do cjxl "$f" "$WORK/jxl/$(basename "${f%.jpg}").jxl" -q 85 -e 3 --num_threads=0 >/dev/null 2>&1; done
jxls=$(ls "$WORK"/jxl/*.jxl)
echo "| work | easel median ms | pyvips median ms | easel speed / pyvips | easel bytes | pyvips bytes |"
echo "|---|---|---|---|---|---|"
e=$(run "$WORKLOAD" decode "$REPS" $jxls); v=$(run "$VENV/bin/python" "$PEERS/color_formats_vips.py" decode "$REPS" $jxls)
echo "| decode $(echo $jxls | wc -w) photos (cjxl q85 e3) | $(printf %.2f "$(echo "$e" | json "['medianMs']")") | $(printf %.2f "$(echo "$v" | json "['medianMs']")") | $(ratio "$(echo "$v" | json "['totalS']")" "$(echo "$e" | json "['totalS']")") | | |"
figure "Formats" "JPEG XL decode of $(echo $jxls | wc -w) photos, in process, one core" "pyvips $vips_version (libjxl)" "$(total "$e")" "$(total "$v")" s lower
"$WORKLOAD" prepare $(ls "$ROOT"/Samples/*.jpg | grep -v -- '-gray') "$WORK/jxl" >/dev/null
pngs=$(ls "$WORK"/jxl/*-256.png)
e=$(run "$WORKLOAD" jxl 82 3 "$REPS" $pngs); v=$(run "$VENV/bin/python" "$PEERS/color_formats_vips.py" jxl 82 3 "$REPS" $pngs)
echo "| encode $(echo $pngs | wc -w) 256 px thumbnails, q82 effort 3 | $(printf %.2f "$(echo "$e" | json "['medianMs']")") | $(printf %.2f "$(echo "$v" | json "['medianMs']")") | $(ratio "$(echo "$v" | json "['totalS']")" "$(echo "$e" | json "['totalS']")") | $(echo "$e" | json "['bytes']") | $(echo "$v" | json "['bytes']") |"
figure "Formats" "JPEG XL encode of $(echo $pngs | wc -w) 256 px thumbnails (q82, effort 3), in process, one core" "pyvips $vips_version (libjxl)" "$(total "$e")" "$(total "$v")" s lower
# cjxl's own measure of its encode (geomean MP/s over REPS runs of each file, one core), turned
# into seconds per file from the pixels; its bytes from the file it writes.
cjxl_s=0; cjxl_bytes=0
for f in $pngs; do
  out=$(run cjxl "$f" "$WORK/jxl/cjxl.jxl" -q 82 -e 3 --num_threads=0 --num_reps="$REPS" 2>&1)
  # ("W x H, geomean: R MP/s …"; with two repetitions cjxl says "second:" for the statistic.)
  mps=$(echo "$out" | sed -n 's/^[0-9]* x [0-9]*, [a-z]*: \([0-9.]*\) MP\/s.*/\1/p'); px=$(echo "$out" | sed -n 's/^\([0-9]*\) x \([0-9]*\), [a-z]*: .*/\1*\2/p')
  cjxl_s=$("$VENV/bin/python" -c "print($cjxl_s + $REPS * ($px) / ($mps * 1e6))")
  cjxl_bytes=$((cjxl_bytes + $(stat -c %s "$WORK/jxl/cjxl.jxl")))
done
cjxl_ms=$("$VENV/bin/python" -c "print(f'{$cjxl_s * 1000 / ($REPS * $(echo $pngs | wc -w)):.2f}')")
echo "| the same against cjxl (its own timing, q82 effort 3) | $(printf %.2f "$(echo "$e" | json "['medianMs']")") | cjxl: $cjxl_ms (mean) | $(ratio "$cjxl_s" "$(echo "$e" | json "['totalS']")") | $(echo "$e" | json "['bytes']") | cjxl: $cjxl_bytes |"
echo
fi

if wants 4; then
echo "## 4. PDF first page ($REPS passes, one core)"
"$VENV/bin/python" - "$WORK/doc.pdf" <<'PY'
import sys
# Two Letter pages: a page of text (Helvetica), rectangles and curves; then a blank one.
ops = ["BT /F1 11 Tf 72 720 Td 14 TL"] + [f"(Line {i}: the quick brown fox jumps over the lazy dog, {i * 37}.) '" for i in range(40)] + ["ET"]
ops += [f"{(i % 7) / 7:.2f} 0.3 0.6 rg {40 + i * 9} {40 + (i * 13) % 200} 30 20 re f" for i in range(50)]
ops += [f"0 0 0 RG 1 w {100 + i} 300 m {200 + i * 3} 420 {300 - i} 200 {500} {300 + i} c S" for i in range(30)]
content = "\n".join(ops)
objs = ["<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R 6 0 R] /Count 2 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        f"<< /Length {len(content)} >>\nstream\n{content}\nendstream", "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"]
out, offsets = "%PDF-1.4\n", []
for i, o in enumerate(objs):
    offsets.append(len(out)); out += f"{i + 1} 0 obj\n{o}\nendobj\n"
x = len(out)
out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n" + "".join(f"{o:010d} 00000 n \n" for o in offsets)
out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{x}\n%%EOF\n"
open(sys.argv[1], "w").write(out)
PY
echo "| size | easel median ms | pyvips pdfload median ms | easel speed / pyvips | easel thumbnail s | pdftoppm s | easel speed / pdftoppm |"
echo "|---|---|---|---|---|---|---|"
for size in 256 2048; do
  e=$(run "$WORKLOAD" render "$size" "$REPS" "$WORK/doc.pdf"); v=$(run "$VENV/bin/python" "$PEERS/color_formats_vips.py" pdf "$size" "$REPS" "$WORK/doc.pdf")
  start=$(date +%s.%N)
  for _ in $(seq $((REPS * 10))); do run "$EASEL" thumbnail --size "${size}x${size}" --format png --output-dir "$WORK/out" "$WORK/doc.pdf" >/dev/null; done
  et=$("$VENV/bin/python" -c "print($(date +%s.%N) - $start)")
  start=$(date +%s.%N)
  for _ in $(seq $((REPS * 10))); do run pdftoppm -png -f 1 -l 1 -singlefile -scale-to "$size" "$WORK/doc.pdf" "$WORK/out/pdftoppm"; done
  pt=$("$VENV/bin/python" -c "print($(date +%s.%N) - $start)")
  echo "| $size px | $(printf %.2f "$(echo "$e" | json "['medianMs']")") | $(printf %.2f "$(echo "$v" | json "['medianMs']")") | $(ratio "$(echo "$v" | json "['totalS']")" "$(echo "$e" | json "['totalS']")") | $(printf %.2f "$et") | $(printf %.2f "$pt") | $(ratio "$pt" "$et") |"
  figure "Formats" "PDF page drawn at $size px, in process, one core" "pyvips $vips_version (pdfload, poppler)" "$(total "$e")" "$(total "$v")" s lower
  figure "Formats" "PDF page to a $size px PNG, a process per render, one core" "pdftoppm" "$et" "$pt" s lower
done
fi
