#!/usr/bin/env bash
# Colour and modern formats, side by side in one run, one core (taskset), release builds:
#   1. ICC conversion cost: 256 px JPEG thumbnails of Display P3 photos (2560 px wide, q90),
#      converted to sRGB vs left unconverted, in process (goal: <= 5 % of the thumbnail's time).
#   2. AVIF encode of 256 px thumbnails: easel (aom, speed 8) vs pyvips' heifsave (libheif + aom)
#      at the same quality and the same aom speed (effort 1), and at vips' default effort 4;
#      bytes and PSNR against the input (goal: >= 1x its speed at equal or smaller size).
#   3. HEIC decode of the same photos (2560 px, heif-enc q80): easel vs pyvips.
# pyvips runs on Debian's libvips42 (installed with apt when missing, as root) in a venv under
# Benchmarks/.venv-color-vips.
#
#   SKIP_BUILD=1 REPS=3 CPU=0 Benchmarks/peers/color-and-formats.sh
set -euo pipefail
PEERS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BENCH="$(dirname "$PEERS")"
ROOT="$(dirname "$BENCH")"
REPS="${REPS:-3}"
CPU="${CPU:-0}"
QUALITY="${QUALITY:-50}"
"$ROOT/scripts/install-deps.sh" build test
dpkg -s libvips42 >/dev/null 2>&1 || { [ "$(id -u)" -eq 0 ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libvips42 >/dev/null; }
VENV="$BENCH/.venv-color-vips"
[ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import pyvips" 2>/dev/null || { python3 -m venv "$VENV"; "$VENV/bin/pip" install -q pyvips; }
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  nice -n 19 swift build --package-path "$BENCH" -c release --product ColorFormatsWorkload -j 1 >/dev/null
fi
WORKLOAD="$BENCH/.build/release/ColorFormatsWorkload"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/easel-color.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
run() { taskset -c "$CPU" env VIPS_CONCURRENCY=1 "$@"; }
json() { "$VENV/bin/python" -c "import json,sys; d=json.load(sys.stdin); print(d$1)"; }
# shellcheck source=Benchmarks/peers/figure.sh
. "$PEERS/figure.sh"
vips_version=$("$VENV/bin/python" -c 'import pyvips; print(f"{pyvips.version(0)}.{pyvips.version(1)}.{pyvips.version(2)}")')

# Colour photos only (the gray samples have nothing to convert).
samples=$(ls "$ROOT"/Samples/*.jpg | grep -v -- '-gray')
"$WORKLOAD" prepare $samples "$WORK" >/dev/null
p3=$(ls "$WORK"/*-p3.jpg); pngs=$(ls "$WORK"/*-256.png); count=$(echo "$p3" | wc -l)
for f in "$WORK"/*-srgb.jpg; do heif-enc -q 80 -o "${f%.jpg}.heic" "$f" >/dev/null; done
heics=$(ls "$WORK"/*.heic)

echo "## 1. ICC conversion cost ($count Display P3 photos, 2560 px wide, to 256 px JPEG q80, $REPS passes, one core)"
icc=$(run "$WORKLOAD" icc "$REPS" $p3)
echo "| thumbnails | converted to sRGB, median ms | unconverted, median ms | overhead (total time) |"
echo "|---|---|---|---|"
echo "$icc" | "$VENV/bin/python" -c "import json,sys; d=json.load(sys.stdin); print(f\"| {d['thumbnails']} | {d['convertedMedianMs']:.2f} | {d['unconvertedMedianMs']:.2f} | {d['overheadPercent']:.1f} % |\")"
echo

echo "## 2. AVIF encode of $count 256 px thumbnails (quality $QUALITY, $REPS passes, one core)"
echo "| encoder | settings | median ms | thumbnails/s | bytes (all) | PSNR dB | easel speed / this |"
echo "|---|---|---|---|---|---|---|"
easel_avif=$(run "$WORKLOAD" avif "$QUALITY" 8 "$REPS" $pngs)
e_ms=$(echo "$easel_avif" | json "['medianMs']"); e_total=$(echo "$easel_avif" | json "['totalS']")
psnr_of() {  # psnr_of SUFFIX: mean PSNR of each PNG's output with that suffix
  local total=0 n=0
  for png in $pngs; do
    v=$("$VENV/bin/python" "$PEERS/color_formats_vips.py" psnr "$png" "$png$1" | json "['psnr']")
    total=$("$VENV/bin/python" -c "print($total + $v)"); n=$((n + 1))
  done
  "$VENV/bin/python" -c "print(f'{$total / $n:.2f}')"
}
e_psnr=$(psnr_of .easel.avif)
e_rate=$("$VENV/bin/python" -c "print(f'{$(echo "$easel_avif" | json "['encodes']") / $e_total:.1f}')")
echo "| easel | aom speed 8, 1 thread | $(printf %.2f "$e_ms") | $e_rate | $(echo "$easel_avif" | json "['bytes']") | $e_psnr | 1.00 |"
for effort in 1 4; do
  vips=$(run "$VENV/bin/python" "$PEERS/color_formats_vips.py" avif "$QUALITY" "$effort" "$REPS" $pngs)
  v_total=$(echo "$vips" | json "['totalS']")
  v_rate=$("$VENV/bin/python" -c "print(f'{$(echo "$vips" | json "['encodes']") / $v_total:.1f}')")
  ratio=$("$VENV/bin/python" -c "print(f'{$v_total / $e_total:.2f}')")
  echo "| pyvips heifsave | effort $effort (aom speed $((9 - effort))) | $(printf %.2f "$(echo "$vips" | json "['medianMs']")") | $v_rate | $(echo "$vips" | json "['bytes']") | $(psnr_of .vips-e$effort.avif) | $ratio |"
  # Like for like: effort 1 is the encoder speed easel uses (aom speed 8).
  if [ "$effort" = 1 ]; then
    figure "Formats" "AVIF encode of $count 256 px thumbnails (aom speed 8, q$QUALITY), in process, one core" "pyvips $vips_version (heifsave effort 1)" \
      "$e_total" "$v_total" "s" lower
  fi
done
echo

echo "## 3. HEIC decode ($count photos, 2560 px wide, heif-enc q80, $REPS passes, one core)"
echo "| decoder | median ms | easel speed / this |"
echo "|---|---|---|"
easel_heic=$(run "$WORKLOAD" decode "$REPS" $heics)
vips_heic=$(run "$VENV/bin/python" "$PEERS/color_formats_vips.py" decode "$REPS" $heics)
echo "| easel (libheif + libde265) | $(printf %.2f "$(echo "$easel_heic" | json "['medianMs']")") | 1.00 |"
echo "| pyvips (libheif + libde265) | $(printf %.2f "$(echo "$vips_heic" | json "['medianMs']")") | $("$VENV/bin/python" -c "print(f'{$(echo "$vips_heic" | json "['totalS']") / $(echo "$easel_heic" | json "['totalS']"):.2f}')") |"
figure "Formats" "HEIC decode of $count 2560 px photos, in process, one core" "pyvips $vips_version (libheif)" \
  "$(echo "$easel_heic" | json "['totalS']")" "$(echo "$vips_heic" | json "['totalS']")" "s" lower
