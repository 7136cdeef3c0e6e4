#!/usr/bin/env bash
# Side-by-side thumbnail throughput: `easel thumbnail` vs pyvips, Pillow, Pillow-SIMD and a
# C floor (libjpeg-turbo used directly, peers/thumbfloor.c), all on one core.
#
#   Benchmarks/peers/thumbnail.sh            # ~40 s once the venvs exist (+ the release build; first run
#                                            # also makes 3 venvs, ~1 min, pillow-simd compiles from source)
#
# What it does:
#   1. The mixed corpus: each Samples/*.jpg is converted to RGB, cover-cropped (scaled with Lanczos to
#      cover, then centre-cropped) to three of 1280x853, 1920x1080, 2048x1536, 2560x1600, 3000x2000 and
#      4000x3000 (rotating), given a light grain (so upscaled samples keep a photo's entropy) and saved as
#      JPEG q85 4:2:0 with Pillow; every third file is progressive (Pillow's progressive script, optimised
#      Huffman tables). 10 samples give 30 files, 10 of them progressive. Each run passes the list REPEAT
#      times (default 2, so 60 thumbnails a run).
#   2. Venvs under Benchmarks/ (gitignored .venv*), made on first use:
#        .venv-thumb-pillow  Pillow (also builds the corpus and computes PSNR and the table)
#        .venv-thumb-vips    pyvips + pyvips-binary (libvips wheel). If the wheel cannot be installed,
#                            falls back to Debian's libvips42 (apt) + pyvips in ABI mode.
#        .venv-thumb-simd    pillow-simd built from source with CC="cc -mavx2" when the CPU has AVX2
#                            (needs libjpeg62-turbo-dev and zlib1g-dev, installed with apt if missing and
#                            we are root). If it does not build, the row says "failed" and the rest goes on.
#   3. Every tool runs under `taskset -c $CPU` (and VIPS_CONCURRENCY=1 for libvips), box 256x256,
#      "contain" fit, JPEG q80, into its own output dir:
#        easel        easel thumbnail FILES --size 256x256 --fit contain --format jpeg --quality 80 --jobs 1
#        easel-float  the same with EASEL_RESAMPLE=float: Lanczos in floats, the reference for the
#                     default 16-bit fixed-point resampler (PSNR within 0.1 dB of it is the goal)
#        c-floor      thumbfloor.c: DCT-scaled decode (denominator chosen as easel chooses it: the largest
#                     of 8/4/2/1 whose output still covers the fit size), box shrink, encode q80
#        pyvips       pyvips.Image.thumbnail(path, 256, height=256).write_to_file(out, Q=80), operation cache off
#        pillow       Image.open; draft('RGB', (256,256)); thumbnail((256,256), LANCZOS); save JPEG quality=80
#        pillow-simd  the same code with Pillow-SIMD
#      Wall time of the whole process over the corpus, RUNS times each (default 2, interleaved), best
#      run kept. The Python tools also report their time inside the loop (after imports).
#      Then easel and the C floor again on the baseline files alone and on the progressive ones alone.
#   4. Quality: PSNR (RGB) of each tool's thumbnails against a reference, which is Pillow's full-size
#      decode resized with LANCZOS to that tool's own output size, averaged over the corpus.
#   5. PNG decode: one baseline file per sample cover-cropped to 1920x1080 and saved as PNG (compress_level
#      6), decoded with easel (Benchmarks' DecodeFiles), pyvips (new_from_file(access='sequential')
#      .copy_memory()) and Pillow (load()).
#   6. A table: tool, images/s, in-process images/s, easel/tool (>1: easel faster), mean PSNR.
#
# Environment (all optional):
#   RUNS=2              timed runs of each tool (best kept)
#   REPEAT=2            passes over the corpus within one run (pyvips runs with its operation cache off)
#   CPU=0               the core for taskset
#   BOX=256x256 QUALITY=80
#   SKIP_BUILD=1        do not run `swift build`; use the existing release binary (or EASEL_BIN)
#   EASEL_BIN=path      use this easel binary (implies SKIP_BUILD=1)
#   SWIFT_BUILD_FLAGS   flags for the release build (default "-j 1"; it is run with nice -n 19)
#   SKIP_SIMD=1         do not try to build Pillow-SIMD
#   WORK_DIR=dir        where the temporary work dir is created (default ${TMPDIR:-/tmp})
#   KEEP_WORK=1         keep the work dir (corpus, thumbnails) afterwards
set -euo pipefail

PEERS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BENCH_DIR="$(dirname "$PEERS_DIR")"
ROOT="$(dirname "$BENCH_DIR")"
SAMPLES="$ROOT/Samples"
HELPER="$PEERS_DIR/thumbnail_workload.py"

RUNS="${RUNS:-2}"
REPEAT="${REPEAT:-2}"
CPU="${CPU:-0}"
BOX="${BOX:-256x256}"
QUALITY="${QUALITY:-80}"
SWIFT_BUILD_FLAGS="${SWIFT_BUILD_FLAGS:--j 1}"

STARTED=$(date +%s)
log() { echo "[thumbnail] $*" >&2; }
PYTHON="${PYTHON:-python3}"

# ---------------------------------------------------------------- venvs
# venv_ok DIR PYTHON-CHECK
venv_ok() { [ -x "$1/bin/python" ] && "$1/bin/python" -c "$2" >/dev/null 2>&1; }
new_venv() { rm -rf "$1"; "$PYTHON" -m venv "$1" && "$1/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip >/dev/null 2>&1 || true; }
pip_in() { local dir="$1"; shift; "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "$@"; }

PIL_VENV="$BENCH_DIR/.venv-thumb-pillow"
VIPS_VENV="$BENCH_DIR/.venv-thumb-vips"
SIMD_VENV="$BENCH_DIR/.venv-thumb-simd"

if ! venv_ok "$PIL_VENV" 'import PIL'; then
    log "installing Pillow into $PIL_VENV"
    new_venv "$PIL_VENV"
    pip_in "$PIL_VENV" Pillow
fi

VIPS_OK=1
VIPS_NOTE="pyvips-binary wheel"
if ! venv_ok "$VIPS_VENV" 'import pyvips'; then
    log "installing pyvips + pyvips-binary into $VIPS_VENV"
    new_venv "$VIPS_VENV"
    if ! pip_in "$VIPS_VENV" pyvips pyvips-binary; then
        log "pyvips-binary did not install; falling back to Debian's libvips42 and pyvips in ABI mode"
        VIPS_NOTE="Debian libvips42 (apt), pyvips ABI mode"
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
            apt-get install -y -q libvips42 >&2 || { apt-get update -q >&2 && apt-get install -y -q libvips42 >&2; } || true
        fi
        pip_in "$VIPS_VENV" pyvips || true
    fi
    venv_ok "$VIPS_VENV" 'import pyvips' || { log "pyvips unusable: its rows will say failed"; VIPS_OK=0; }
fi
"$VIPS_VENV/bin/python" -c 'import importlib.metadata as m; m.version("pyvips-binary")' >/dev/null 2>&1 \
    || VIPS_NOTE="system libvips (pyvips-binary not installed)"

SIMD_OK=1
SIMD_NOTE=""
if [ "${SKIP_SIMD:-0}" = 1 ]; then
    SIMD_OK=0; SIMD_NOTE="skipped (SKIP_SIMD=1)"
elif ! venv_ok "$SIMD_VENV" 'import PIL'; then
    log "building pillow-simd from source into $SIMD_VENV (about half a minute)"
    if [ ! -e /usr/include/jpeglib.h ] || [ ! -e /usr/include/zlib.h ]; then
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
            log "installing libjpeg62-turbo-dev zlib1g-dev with apt"
            apt-get install -y -q libjpeg62-turbo-dev zlib1g-dev >&2 \
                || { apt-get update -q >&2 && apt-get install -y -q libjpeg62-turbo-dev zlib1g-dev >&2; } || true
        fi
    fi
    SIMD_LOG="${TMPDIR:-/tmp}/thumbnail-pillow-simd-build.log"
    SIMD_CC="cc"
    grep -qw avx2 /proc/cpuinfo && SIMD_CC="cc -mavx2"
    new_venv "$SIMD_VENV"
    if ! CC="$SIMD_CC" pip_in "$SIMD_VENV" --no-cache-dir --no-binary pillow-simd pillow-simd >"$SIMD_LOG" 2>&1; then
        SIMD_OK=0
        SIMD_NOTE="build failed, see the end of $SIMD_LOG"
        tail -n 15 "$SIMD_LOG" >&2 || true
        rm -rf "$SIMD_VENV"
    fi
fi
[ "$SIMD_OK" = 1 ] && [ -z "$SIMD_NOTE" ] && SIMD_NOTE="pillow-simd from source"

# ---------------------------------------------------------------- easel and the C floor
if [ -n "${EASEL_BIN:-}" ]; then
    EASEL="$EASEL_BIN"
else
    cd "$ROOT"
    if [ "${SKIP_BUILD:-0}" != 1 ]; then
        log "building easel (release, nice -n 19, $SWIFT_BUILD_FLAGS)"
        # shellcheck disable=SC2086
        nice -n 19 swift build -c release $SWIFT_BUILD_FLAGS --product easel >&2
    fi
    if [ "${SKIP_BUILD:-0}" = 1 ]; then
        EASEL="$ROOT/.build/release/easel"
    else
        # shellcheck disable=SC2086
        EASEL="$(swift build -c release $SWIFT_BUILD_FLAGS --show-bin-path)/easel"
    fi
fi
[ -x "$EASEL" ] || { log "missing $EASEL"; exit 1; }

if [ -n "${WORK_DIR:-}" ]; then mkdir -p "$WORK_DIR"; fi
WORK="$(mktemp -d "${WORK_DIR:-${TMPDIR:-/tmp}}/thumbnail-bench.XXXXXX")"
if [ "${KEEP_WORK:-0}" = 1 ]; then log "work dir: $WORK (kept)"; else trap 'rm -rf "$WORK"' EXIT; fi

FLOOR="$WORK/thumbfloor"
cc -O2 -o "$FLOOR" "$PEERS_DIR/thumbfloor.c" -ljpeg -lm

# ---------------------------------------------------------------- corpus
CORPUS="$WORK/corpus"
"$PIL_VENV/bin/python" "$HELPER" corpus "$SAMPLES" "$CORPUS" >&2
mapfile -t CORPUS_FILES < <(find "$CORPUS" -name '*.jpg' | sort)
FILES=()
for _ in $(seq "$REPEAT"); do FILES+=("${CORPUS_FILES[@]}"); done
N=${#FILES[@]}

echo "== thumbnail throughput: $BOX contain, JPEG q$QUALITY, one core (taskset -c $CPU) =="
echo "corpus: ${#CORPUS_FILES[@]} JPEGs, $(printf '%s\n' "${CORPUS_FILES[@]}" | grep -c -- '-prog\.jpg$') progressive (Samples cover-cropped to 1280x853 .. 4000x3000, grain, q85), $REPEAT passes = $N thumbnails per run, best of $RUNS runs"
echo "easel:       $EASEL (git $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')), $(ldd "$EASEL" | grep -o 'libjpeg[^ ]*' | head -1)"
echo "c-floor:     cc -O2 thumbfloor.c -ljpeg ($(ldd "$FLOOR" | grep -o 'libjpeg[^ ]*' | head -1))"
echo "pillow:      $("$PIL_VENV/bin/python" "$HELPER" versions)"
[ "$VIPS_OK" = 1 ] && echo "pyvips:      $("$VIPS_VENV/bin/python" "$HELPER" versions) [$VIPS_NOTE]"
if [ "$SIMD_OK" = 1 ]; then echo "pillow-simd: $("$SIMD_VENV/bin/python" "$HELPER" versions) [$SIMD_NOTE]"; else echo "pillow-simd: $SIMD_NOTE"; fi
echo "cpu:         $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores"

# ---------------------------------------------------------------- timing
declare -A WALL LOOP PSNR
OUT="$WORK/out"

# run_tool TOOL CMD... : one timed run into $OUT/TOOL; keeps the best wall time
run_tool() {
    local tool="$1"; shift
    rm -rf "${OUT:?}/$tool"; mkdir -p "$OUT/$tool"
    local t0 t1 ns loop
    t0=$(date +%s%N)
    if ! "$@" >"$WORK/$tool.stdout" 2>"$WORK/$tool.stderr"; then
        log "$tool failed:"; tail -n 5 "$WORK/$tool.stderr" >&2; WALL[$tool]="-"; LOOP[$tool]="-"; return 0
    fi
    t1=$(date +%s%N)
    ns=$((t1 - t0))
    loop="$(sed -n 's/^loop_seconds=//p' "$WORK/$tool.stdout" | tail -n 1)"
    local secs; secs=$(awk -v n="$ns" 'BEGIN { printf "%.6f", n / 1e9 }')
    log "$tool: $N in ${secs}s"
    if [ -z "${WALL[$tool]:-}" ] || { [ "${WALL[$tool]}" != "-" ] && awk -v a="$secs" -v b="${WALL[$tool]}" 'BEGIN { exit !(a < b) }'; }; then
        WALL[$tool]="$secs"; LOOP[$tool]="${loop:--}"
    fi
}

TOOLS=(easel easel-float c-floor)
[ "$VIPS_OK" = 1 ] && TOOLS+=(pyvips)
TOOLS+=(pillow)
TOOLS+=(pillow-simd)
for run in $(seq "$RUNS"); do
    log "run $run of $RUNS"
    for tool in "${TOOLS[@]}"; do
        case "$tool" in
        easel) run_tool easel taskset -c "$CPU" "$EASEL" thumbnail "${FILES[@]}" --size "$BOX" --fit contain \
                   --format jpeg --quality "$QUALITY" --output-dir "$OUT/easel" --jobs 1 ;;
        easel-float) run_tool easel-float env EASEL_RESAMPLE=float taskset -c "$CPU" "$EASEL" thumbnail "${FILES[@]}" --size "$BOX" \
                   --fit contain --format jpeg --quality "$QUALITY" --output-dir "$OUT/easel-float" --jobs 1 ;;
        c-floor) run_tool c-floor taskset -c "$CPU" "$FLOOR" -s "$BOX" -q "$QUALITY" "$OUT/c-floor" "${FILES[@]}" ;;
        pyvips) run_tool pyvips env VIPS_CONCURRENCY=1 taskset -c "$CPU" "$VIPS_VENV/bin/python" "$HELPER" pyvips \
                    "$OUT/pyvips" "$BOX" "$QUALITY" "${FILES[@]}" ;;
        pillow) run_tool pillow taskset -c "$CPU" "$PIL_VENV/bin/python" "$HELPER" pillow \
                    "$OUT/pillow" "$BOX" "$QUALITY" "${FILES[@]}" ;;
        pillow-simd)
            if [ "$SIMD_OK" = 1 ]; then
                run_tool pillow-simd taskset -c "$CPU" "$SIMD_VENV/bin/python" "$HELPER" pillow \
                    "$OUT/pillow-simd" "$BOX" "$QUALITY" "${FILES[@]}"
            else
                WALL[pillow-simd]="-"; LOOP[pillow-simd]="-"
            fi ;;
        esac
    done
done
[ "$VIPS_OK" = 1 ] || { WALL[pyvips]="-"; LOOP[pyvips]="-"; TOOLS+=(pyvips); }

# ---------------------------------------------------------------- baseline and progressive apart
# easel against the floor on each third of the corpus alone: the progressive files are where easel
# passes the floor (it skips their AC scans at 1/8); the baseline ones show the rest of the gap.
CLASS_LINES=()
for class in base prog; do
    mapfile -t CLASS_ONCE < <(printf '%s\n' "${CORPUS_FILES[@]}" | grep -- "-$class\.jpg\$")
    CLASS_FILES=()
    for _ in $(seq "$REPEAT"); do CLASS_FILES+=("${CLASS_ONCE[@]}"); done
    for run in $(seq "$RUNS"); do
        run_tool "easel-$class" taskset -c "$CPU" "$EASEL" thumbnail "${CLASS_FILES[@]}" --size "$BOX" --fit contain \
            --format jpeg --quality "$QUALITY" --output-dir "$OUT/easel-$class" --jobs 1
        run_tool "c-floor-$class" taskset -c "$CPU" "$FLOOR" -s "$BOX" -q "$QUALITY" "$OUT/c-floor-$class" "${CLASS_FILES[@]}"
    done
    CLASS_LINES+=("$(awk -v c="$class" -v n="${#CLASS_FILES[@]}" -v e="${WALL[easel-$class]}" -v f="${WALL[c-floor-$class]}" \
        'BEGIN { name = c == "base" ? "baseline files only   " : "progressive files only"
                 if (e == "-" || f == "-") { printf "%s  failed\n", name; exit }
                 printf "%s  easel %6.1f images/s, c-floor %6.1f images/s, easel/c-floor %.2f\n", name, n / e, n / f, f / e }')")
done

# ---------------------------------------------------------------- quality
log "PSNR against Pillow LANCZOS of the full decode"
PAIRS=()
for tool in "${TOOLS[@]}"; do [ "${WALL[$tool]}" != "-" ] && PAIRS+=("$tool=$OUT/$tool"); done
echo
echo "== PSNR vs Pillow LANCZOS of the full decode (tool, mean dB, files, missing, per source->thumbnail size) =="
"$PIL_VENV/bin/python" "$HELPER" psnr "$CORPUS" "${PAIRS[@]}" | tee "$WORK/psnr.tsv"
while IFS=$'\t' read -r tool mean _; do PSNR[$tool]="$mean"; done <"$WORK/psnr.tsv"

# ---------------------------------------------------------------- PNG decode
log "PNG decode"
if [ "${SKIP_BUILD:-0}" != "1" ]; then
    (cd "$ROOT/Benchmarks" && swift build -c release --product DecodeFiles ${SWIFT_BUILD_FLAGS:-} >&2)
fi
DECODE_FILES="$(cd "$ROOT/Benchmarks" && swift build -c release --show-bin-path ${SWIFT_BUILD_FLAGS:-})/DecodeFiles"
PNG="$WORK/png"
mapfile -t SMALL < <(printf '%s\n' "${CORPUS_FILES[@]}" | grep -- '-base\.jpg$' | awk -F/ '{ s = $NF; sub(/-[0-9]+x[0-9]+-base\.jpg$/, "", s); if (!seen[s]++) print }')
"$PIL_VENV/bin/python" "$HELPER" pngcorpus "$PNG" "${SMALL[@]}" >&2
mapfile -t PNG_ONCE < <(find "$PNG" -name '*.png' | sort)
PNG_FILES=()
for _ in $(seq "$REPEAT"); do PNG_FILES+=("${PNG_ONCE[@]}"); done
NPNG=${#PNG_FILES[@]}
NTHUMB=$N
N=$NPNG
PNG_TOOLS=(easel-png-decode pillow-png-decode)
[ "$VIPS_OK" = 1 ] && PNG_TOOLS=(easel-png-decode pyvips-png-decode pillow-png-decode)
for run in $(seq "$RUNS"); do
    for tool in "${PNG_TOOLS[@]}"; do
        case "$tool" in
        easel-png-decode) run_tool "$tool" taskset -c "$CPU" "$DECODE_FILES" "${PNG_FILES[@]}" ;;
        pyvips-png-decode) run_tool "$tool" env VIPS_CONCURRENCY=1 taskset -c "$CPU" "$VIPS_VENV/bin/python" "$HELPER" pyvips-png "${PNG_FILES[@]}" ;;
        pillow-png-decode) run_tool "$tool" taskset -c "$CPU" "$PIL_VENV/bin/python" "$HELPER" pillow-png "${PNG_FILES[@]}" ;;
        esac
    done
done

# ---------------------------------------------------------------- table
RESULTS="$WORK/results.tsv"
: >"$RESULTS"
for tool in "${TOOLS[@]}"; do
    printf 'thumb\t%s\t%s\t%s\t%s\t%s\n' "$tool" "$NTHUMB" "${WALL[$tool]}" "${LOOP[$tool]:--}" "${PSNR[$tool]:--}" >>"$RESULTS"
done
for tool in "${PNG_TOOLS[@]}"; do
    printf 'png\t%s\t%s\t%s\t%s\t-\n' "$tool" "$NPNG" "${WALL[$tool]}" "${LOOP[$tool]:--}" >>"$RESULTS"
done
"$PIL_VENV/bin/python" "$HELPER" report "$RESULTS"
echo
echo "Each third alone (same settings, best of $RUNS runs, $REPEAT passes):"
printf '%s\n' "${CLASS_LINES[@]}"
echo
echo "total time $(($(date +%s) - STARTED)) s"
exit 0
