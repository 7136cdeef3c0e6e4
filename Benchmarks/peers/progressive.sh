#!/usr/bin/env bash
# Progressive JPEGs at DCT scale 1/8: `easel thumbnail` with the DC-only decode (the AC scans
# libjpeg-turbo does not use at 1/8 dropped before it sees the file) vs without it
# (EASEL_JPEG_DC_ONLY=0, the same binary) vs the C floor (peers/thumbfloor.c: libjpeg-turbo
# used directly, the same DCT scale, box shrink, encode), all on one core, side by side.
#
#   Benchmarks/peers/progressive.sh     (needs a release build: swift build -c release --product easel)
#
# Corpus: every Samples/*.jpg upscaled (Lanczos) to 3000 px and 4000 px wide, saved by Pillow
# as progressive JPEG q85 in 4:2:0 and 4:4:4 (so a 256×256 box decodes at 1/8). The DC-only and
# full decodes give the same pixels, so the two easel runs must write identical thumbnails
# (checked with cmp). Environment: RUNS=3 CPU=0 SKIP_BUILD=1
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
RUNS="${RUNS:-3}"; CPU="${CPU:-0}"
[ "${SKIP_BUILD:-}" = 1 ] || swift build -c release --product easel >&2
python="${EASEL_COMPAT_PYTHON:-.venv-compat/bin/python3}"
[ -x "$python" ] || scripts/install-deps.sh build test >&2
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
"$python" - "$work/corpus" <<'PY'
import sys, glob, os
from PIL import Image
out = sys.argv[1]
for path in sorted(glob.glob("Samples/*.jpg")):
    image = Image.open(path).convert("RGB")
    name = os.path.splitext(os.path.basename(path))[0]
    for width, sub in ((3000, 2), (4000, 0)):
        height = round(image.height * width / image.width)
        image.resize((width, height), Image.LANCZOS).save(os.path.join(out, f"{name}-{width}.jpg"), quality=85, progressive=True, subsampling=sub)
PY
files=("$work"/corpus/*.jpg)
cc -O2 -o "$work/thumbfloor" Benchmarks/peers/thumbfloor.c -ljpeg -lm
easel=.build/release/easel
time_of() {  # seconds of the fastest of RUNS runs of the command
    local best=999999
    for _ in $(seq "$RUNS"); do
        local start end
        start=$(date +%s.%N); "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }; end=$(date +%s.%N)
        best=$(python3 -c "print(min($best, $end - $start))")
    done
    echo "$best"
}
mkdir -p "$work/dc" "$work/full" "$work/floor"
dc=$(time_of env EASEL_JPEG_DC_ONLY=1 taskset -c "$CPU" "$easel" thumbnail "${files[@]}" --size 256x256 --fit contain --format jpeg --quality 80 --jobs 1 --output-dir "$work/dc")
full=$(time_of env EASEL_JPEG_DC_ONLY=0 taskset -c "$CPU" "$easel" thumbnail "${files[@]}" --size 256x256 --fit contain --format jpeg --quality 80 --jobs 1 --output-dir "$work/full")
floor=$(time_of taskset -c "$CPU" "$work/thumbfloor" -s 256x256 -q 80 "$work/floor" "${files[@]}")
n=${#files[@]}
for dir in dc full floor; do
    [ "$(ls "$work/$dir" | wc -l)" -eq "$n" ] || { echo "$dir: not $n thumbnails" >&2; exit 1; }
done
for f in "$work"/dc/*; do cmp -s "$f" "$work/full/$(basename "$f")" || { echo "DC-only and full thumbnails differ: $(basename "$f")" >&2; exit 1; }; done
printf '%d progressive JPEGs (3000 and 4000 px wide, 4:2:0 and 4:4:4), 256x256 contain, JPEG q80, one core, best of %d\n' "$n" "$RUNS"
printf '%-28s %10s %12s %14s\n' tool seconds images/s "easel-dc/this"
for row in "easel (DC-only decode):$dc" "easel (full decode):$full" "C floor (full decode):$floor"; do
    name=${row%%:*}; t=${row##*:}
    printf '%-28s %10.3f %12.1f %13.2fx\n' "$name" "$t" "$(python3 -c "print($n / $t)")" "$(python3 -c "print($t / $dc)")"
done
# shellcheck source=Benchmarks/peers/figure.sh
. "$ROOT/Benchmarks/peers/figure.sh"
figure "Thumbnails" "$n progressive 3000–4000 px JPEGs to 256 px, whole processes, one core" "a C floor (libjpeg-turbo used directly, full decode)" \
  "$(python3 -c "print($n / $dc)")" "$(python3 -c "print($n / $floor)")" "images/s" higher
