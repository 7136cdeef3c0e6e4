#!/usr/bin/env bash
# Scaling with cores: `easel thumbnail --jobs N` against N Pillow processes on the same files,
# for N = 1, 2, 4, … up to the cores present (or JOBS="1 2 4 8 16"), and against N independent
# `easel thumbnail --jobs 1` processes each given its share of the files (what the machine allows
# without sharing anything in one process). Each prints images/s and its speed-up over N = 1; the
# goal is easel's speed-up at N = cores close to the processes'. Each process takes a contiguous
# share of the list (REPEAT passes over the corpus), the same for easel's and Pillow's.
#
#   Benchmarks/peers/jobs-scaling.sh     (needs a release build: swift build -c release --product easel)
#
# Corpus: every Samples/*.jpg scaled to 1920 and 2560 px wide (baseline JPEG q85, 4:2:0, by
# Pillow; with FORMAT=png, PNG at compress_level 6: full-size decodes, large pixel buffers),
# repeated REPEAT times (default 4) so every worker has work; 256×256 contain, JPEG q80.
# (Until this split, processes took every N-th file: with an even N some took only 2560 px ones.)
# Environment: RUNS=3 REPEAT=4 JOBS="1 2 …" SKIP_BUILD=1 FORMAT=jpg|png EASEL_BIN=path (another
# easel binary, e.g. an older build for a before/after)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
[ -z "${EASEL_BIN:-}" ] || EASEL_BIN="$(realpath "$EASEL_BIN")"   # relative to where it was run from
cd "$ROOT"
RUNS="${RUNS:-3}"; REPEAT="${REPEAT:-4}"; FORMAT="${FORMAT:-jpg}"
case "$FORMAT" in jpg|png) ;; *) echo "FORMAT must be jpg or png" >&2; exit 2 ;; esac
EASEL="${EASEL_BIN:-$ROOT/.build/release/easel}"
cores=$(nproc)
if [ -z "${JOBS:-}" ]; then JOBS=""; n=1; while [ "$n" -le "$cores" ]; do JOBS="$JOBS $n"; n=$((n * 2)); done; fi
[ "${SKIP_BUILD:-}" = 1 ] || swift build -c release --product easel >&2
python="${EASEL_COMPAT_PYTHON:-.venv-compat/bin/python3}"
[ -x "$python" ] || scripts/install-deps.sh build test >&2
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
"$python" - "$work/corpus" "$FORMAT" <<'PY'
import sys, glob, os
from PIL import Image
out, kind = sys.argv[1], sys.argv[2]
for path in sorted(glob.glob("Samples/*.jpg")):
    image = Image.open(path).convert("RGB")
    name = os.path.splitext(os.path.basename(path))[0]
    for width in (1920, 2560):
        height = round(image.height * width / image.width)
        resized = image.resize((width, height), Image.LANCZOS)
        if kind == "png":
            resized.save(os.path.join(out, f"{name}-{width}.png"), compress_level=6)
        else:
            resized.save(os.path.join(out, f"{name}-{width}.jpg"), quality=85)
PY
files=()
for _ in $(seq "$REPEAT"); do files+=("$work"/corpus/*."$FORMAT"); done
n=${#files[@]}
printf '%s\n' "${files[@]}" > "$work/list"
cat > "$work/pillow.py" <<'PY'
import sys
from PIL import Image
worker, workers, listfile, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
paths = open(listfile).read().split()
# A contiguous share: the list alternates 1920 and 2560 px files, so every N-th file would give
# some workers only the larger ones.
for i, path in enumerate(paths):
    if not worker * len(paths) // workers <= i < (worker + 1) * len(paths) // workers: continue
    image = Image.open(path)
    image.draft("RGB", (256, 256))
    image.thumbnail((256, 256), Image.LANCZOS)
    image.save(f"{out}/{i}.jpg", quality=80)
PY
best_of() {  # seconds of the fastest of RUNS runs of "$@"
    local best=999999
    for _ in $(seq "$RUNS"); do
        local start end
        start=$(date +%s.%N); "$@" || { echo "failed: $*" >&2; exit 1; }; end=$(date +%s.%N)
        best=$(python3 -c "print(min($best, $end - $start))")
    done
    echo "$best"
}
thumbnails() {  # JOBS OUTPUT-DIR FILE…: one easel run, the same options everywhere
    local jobs=$1 out=$2; shift 2
    "$EASEL" thumbnail "$@" --size 256x256 --fit contain --format jpeg --quality 80 --jobs "$jobs" --output-dir "$out" >/dev/null 2>&1
}
easel_run() { rm -rf "$work/e"; mkdir -p "$work/e"; thumbnails "$1" "$work/e" "${files[@]}"; }
easel_procs_run() {  # N processes, one job each, each a contiguous share of the files
    rm -rf "$work/q"; mkdir -p "$work/q"
    local pids=() failed=0
    for w in $(seq 0 $(($1 - 1))); do
        local start=$((w * n / $1)) end=$(((w + 1) * n / $1))
        mkdir -p "$work/q/$w"
        thumbnails 1 "$work/q/$w" "${files[@]:start:end-start}" & pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
    return "$failed"
}
pillow_run() {
    rm -rf "$work/p"; mkdir -p "$work/p"
    local pids=()
    for w in $(seq 0 $(($1 - 1))); do "$python" "$work/pillow.py" "$w" "$1" "$work/list" "$work/p" & pids+=($!); done
    for pid in "${pids[@]}"; do wait "$pid"; done
}
printf '%d images (%d cores), best of %d\n' "$n" "$cores" "$RUNS"
printf '%-6s %14s %10s %18s %10s %18s %10s\n' N "easel img/s" speed-up "easel procs img/s" speed-up "Pillow procs img/s" speed-up
e1=""; q1=""; p1=""
for j in $JOBS; do
    e=$(best_of easel_run "$j"); q=$(best_of easel_procs_run "$j"); p=$(best_of pillow_run "$j")
    [ -n "$e1" ] || { e1=$e; q1=$q; p1=$p; }
    printf '%-6s %14.1f %9.2fx %18.1f %9.2fx %18.1f %9.2fx\n' "$j" "$(python3 -c "print($n/$e)")" "$(python3 -c "print($e1/$e)")" \
        "$(python3 -c "print($n/$q)")" "$(python3 -c "print($q1/$q)")" "$(python3 -c "print($n/$p)")" "$(python3 -c "print($p1/$p)")"
done
# shellcheck source=Benchmarks/peers/figure.sh
. "$ROOT/Benchmarks/peers/figure.sh"
figure "Thumbnails" "$n thumbnails of 1920–2560 px ${FORMAT:-jpg} files with every core (easel --jobs $j; $j Pillow processes)" "Pillow ($j processes)" \
  "$(python3 -c "print($n/$e)")" "$(python3 -c "print($n/$p)")" "images/s" higher
