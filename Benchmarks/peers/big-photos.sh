#!/usr/bin/env bash
# Big photos, side by side: a 49 MP photo (7000x7000, what current phones take) thumbnailed into
# a 256 px box, `easel thumbnail` against pyvips (libvips, what imgproxy runs on) on the same
# file, both whole processes on one core (taskset, VIPS_CONCURRENCY=1), one file a process: the
# peak resident memory (the kernel's ru_maxrss from wait4) and the wall time, best of RUNS.
#
#   Benchmarks/peers/big-photos.sh     (needs a release build: swift build -c release --product easel)
#
# Sources, made by libvips from Samples/ (upscaled, a light grain so they compress like photos):
# JPEG q90, PNG (compression 9), TIFF (tiled 256x256, deflate), the same TIFF as a pyramid (its
# levels halved, as libvips writes one), WebP q90, a GIF (libvips' cgif, its palette quantized;
# one frame, rows in order) and a 24-bit BMP (written here: libvips has no
# BMP saver, and pyvips' wheel no BMP loader, so that row is easel's alone); and a 200 MP PNG
# (HUGE_SIDE=14142, compression 1; HUGE_SIDE=0 leaves it out), past the server's 50 MP limit,
# which `easel thumbnail` takes with its defaults (its limits follow memory; goal <= 128 MB).
# Environment: RUNS=3 CPU=0 SIDE=7000 HUGE_SIDE=14142 SKIP_BUILD=1 EASEL_BIN=path
set -euo pipefail
PEERS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BENCH="$(dirname "$PEERS")"
ROOT="$(dirname "$BENCH")"
cd "$ROOT"
RUNS="${RUNS:-3}"; CPU="${CPU:-0}"; SIDE="${SIDE:-7000}"; HUGE_SIDE="${HUGE_SIDE:-14142}"
[ "${SKIP_BUILD:-}" = 1 ] || [ -n "${EASEL_BIN:-}" ] || swift build -c release --product easel >&2
EASEL="${EASEL_BIN:-$ROOT/.build/release/easel}"
VENV="$BENCH/.venv-thumb-vips"
if ! "$VENV/bin/python" -c 'import pyvips' 2>/dev/null; then
    rm -rf "$VENV"; python3 -m venv "$VENV" >&2
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check pyvips pyvips-binary >&2
fi
vips_version=$("$VENV/bin/python" -c 'import pyvips; print(f"{pyvips.version(0)}.{pyvips.version(1)}.{pyvips.version(2)}")')
work="$(mktemp -d "${TMPDIR:-/tmp}/easel-big.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# The sources.
"$VENV/bin/python" - "$ROOT/Samples/astronaut.jpg" "$SIDE" "$work" "$HUGE_SIDE" <<'PY'
import sys, pyvips
source, side, out, huge = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
image = pyvips.Image.new_from_file(source).colourspace("srgb")
image = image.resize(side / image.width, vscale=side / image.height, kernel="lanczos3")
# A light grain for the lossy files, so that they weigh what a photo of this size weighs; the
# lossless ones without it (grain does not compress losslessly: a photo of this size stores its detail, not noise).
grainy = (image + pyvips.Image.gaussnoise(side, side, sigma=6, mean=0)).cast("uchar")
grainy.jpegsave(f"{out}/big.jpg", Q=90)
grainy.webpsave(f"{out}/big.webp", Q=90)
image = image.cast("uchar")
image.pngsave(f"{out}/big.png", compression=9)
image.tiffsave(f"{out}/big.tif", tile=True, tile_width=256, tile_height=256, compression="deflate", predictor="horizontal")
image.gifsave(f"{out}/big.gif")
image.tiffsave(f"{out}/pyramid.tif", tile=True, tile_width=256, tile_height=256, compression="deflate", predictor="horizontal", pyramid=True)
# A BMP: 24-bit, bottom-up, rows padded to 4 bytes, blue first.
rgb = image.extract_band(0, n=3).write_to_memory()
width, height = image.width, image.height
stride = (width * 3 + 3) // 4 * 4
with open(f"{out}/big.bmp", "wb") as bmp:
    import struct
    bmp.write(b"BM" + struct.pack("<IHHI", 54 + stride * height, 0, 0, 54))
    bmp.write(struct.pack("<IiiHHIIiiII", 40, width, height, 1, 24, 0, stride * height, 2835, 2835, 0, 0))
    for y in range(height - 1, -1, -1):
        row = bytearray(rgb[y * width * 3:(y + 1) * width * 3])
        row[0::3], row[2::3] = row[2::3], row[0::3]
        bmp.write(row + bytes(stride - width * 3))
if huge:
    original = pyvips.Image.new_from_file(source).colourspace("srgb")
    scaled = original.resize(huge / original.width, vscale=huge / original.height, kernel="lanczos3").cast("uchar")
    scaled.pngsave(f"{out}/huge.png", compression=1)
PY
cat > "$work/vips_thumb.py" <<'PY'
import sys, pyvips
pyvips.cache_set_max(0)
pyvips.Image.thumbnail(sys.argv[1], 256, height=256).write_to_file(sys.argv[2], Q=80)
PY
# measure CMD…: "SECONDS MAXRSS_KB" of the command as a child (wait4's rusage: its own peak).
cat > "$work/measure.py" <<'PY'
import os, subprocess, sys, time
start = time.perf_counter()
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
_, status, usage = os.wait4(child.pid, 0)
elapsed = time.perf_counter() - start
if status != 0:
    sys.exit(f"{sys.argv[1:]} failed: {child.stderr.read().decode()[:500]}")
print(f"{elapsed:.4f} {usage.ru_maxrss}")
PY
best() {  # best TOOL FILE: the best time and the least peak of RUNS runs
  local t=999999 m=999999999 line
  for _ in $(seq "$RUNS"); do
    if [ "$1" = easel ]; then
      line=$(taskset -c "$CPU" python3 "$work/measure.py" "$EASEL" thumbnail "$2" --size 256x256 --fit contain --format jpeg \
        --quality 80 --jobs 1 --output-dir "$work/out-easel") || return 1
    else
      line=$(VIPS_CONCURRENCY=1 taskset -c "$CPU" python3 "$work/measure.py" "$VENV/bin/python" "$work/vips_thumb.py" "$2" "$work/vips.jpg") || return 1
    fi
    t=$(python3 -c "print(min($t, ${line% *}))"); m=$(python3 -c "print(min($m, ${line#* }))")
  done
  echo "$t $m"
}
# shellcheck source=Benchmarks/peers/figure.sh
. "$PEERS/figure.sh"
mp=$(python3 -c "print(round($SIDE * $SIDE / 1e6))")
echo "A ${mp} MP photo (${SIDE}x${SIDE}) to a 256 px JPEG, whole processes, one core, best of $RUNS"
echo "| source | easel peak MB | pyvips $vips_version peak MB | memory, pyvips / easel | easel s | pyvips s | time, pyvips / easel |"
echo "|---|---|---|---|---|---|---|"
files="big.jpg big.png big.tif pyramid.tif big.webp big.gif"
[ "$HUGE_SIDE" = 0 ] || files="$files huge.png"
# The BMP: easel's alone.
if easel_result=$(best easel "$work/big.bmp"); then
  read -r et em <<<"$easel_result"
  python3 -c "print(f'| big.bmp | {$em/1024:.0f} | (no BMP loader) | | {$et:.2f} | | |')"
else
  echo "| big.bmp | failed (see the log) | | | | | |"
fi
for file in $files; do
  if ! easel_result=$(best easel "$work/$file") || ! vips_result=$(best vips "$work/$file"); then
    echo "| $file | failed (see the log) | | | | | |"
    continue
  fi
  read -r et em <<<"$easel_result"
  read -r vt vm <<<"$vips_result"
  python3 -c "print(f'| $file | {$em/1024:.0f} | {$vm/1024:.0f} | {$vm/$em:.2f} | {$et:.2f} | {$vt:.2f} | {$vt/$et:.2f} |')"
  case $file in *.jpg) kind=JPEG ;; huge.png) kind=PNG; mp=$(python3 -c "print(round($HUGE_SIDE * $HUGE_SIDE / 1e6))") ;; *.png) kind=PNG ;; pyramid.tif) kind="pyramidal TIFF" ;; *.tif) kind=TIFF ;; *.gif) kind=GIF ;; *) kind=WebP ;; esac
  figure "Big photos" "a ${mp} MP ${kind} to a 256 px JPEG, peak resident memory, whole processes" "pyvips $vips_version" \
    "$(python3 -c "print($em / 1024)")" "$(python3 -c "print($vm / 1024)")" MB lower
  figure "Big photos" "a ${mp} MP ${kind} to a 256 px JPEG, time, whole processes, one core" "pyvips $vips_version" "$et" "$vt" s lower
done
