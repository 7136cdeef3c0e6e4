#!/usr/bin/env bash
# The scaling table on a machine without Swift (the lent 16-core device): `easel thumbnail
# --jobs N` against N independent `easel thumbnail --jobs 1` processes and N Pillow processes
# (each process taking a contiguous share of the list), N = 1, 2, 4, 8, 16, best of 3. Needs device-pack/ from Benchmarks/peers/device-pack.sh (a stripped release easel with the
# shared libraries it links, the corpus, a Pillow wheel for the device's Python), carried along:
#
#   Benchmarks/peers/device-pack.sh                       # here
#   REPEAT=32 bash Benchmarks/peers/device-scaling.sh     # there (run tool: carry ["device-pack"])
set -u
B=/tmp/b; mkdir -p $B; tar -xJf device-pack/bundle.tar.xz -C $B || { echo "no device-pack/: run Benchmarks/peers/device-pack.sh first" >&2; exit 1; }
export LD_LIBRARY_PATH=$B/lib
nproc; python3 --version 2>&1
PY=""; if true; then
  mkdir -p /tmp/pil && tar -xJf device-pack/pil.tar.xz -C /tmp/pil && PYTHONPATH=/tmp/pil python3 -c "import PIL; print('PIL', PIL.__version__)" && PY=python3; fi
files=(); for r in $(seq ${REPEAT:-8}); do files+=($B/corpus/*.jpg); done
n=${#files[@]}; printf '%s\n' "${files[@]}" > /tmp/list
cat > /tmp/pillow.py <<'PY'
import sys
from PIL import Image
w, ws, lf, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
ps = open(lf).read().split()
for i, p in enumerate(ps):
    if not w * len(ps) // ws <= i < (w + 1) * len(ps) // ws: continue
    im = Image.open(p); im.draft("RGB", (256, 256)); im.thumbnail((256, 256), Image.LANCZOS); im.save(f"{out}/{i}.jpg", quality=80)
PY
best() { local b=999; for k in 1 2 3; do s=$(date +%s.%N); "$@" >/dev/null 2>&1 || { echo "failed $*" >&2; exit 1; }; e=$(date +%s.%N); b=$(python3 -c "print(min($b,$e-$s))"); done; echo $b; }
er() { rm -rf /tmp/e; mkdir -p /tmp/e; $B/easel thumbnail "${files[@]}" --size 256x256 --fit contain --format jpeg --quality 80 --jobs $1 --output-dir /tmp/e; }
qr() { rm -rf /tmp/q; pids=(); qf=0; for w in $(seq 0 $(($1-1))); do qs=$((w*n/$1)); qt=$(((w+1)*n/$1))
  mkdir -p /tmp/q/$w; $B/easel thumbnail "${files[@]:qs:qt-qs}" --size 256x256 --fit contain --format jpeg --quality 80 --jobs 1 --output-dir /tmp/q/$w & pids+=($!); done
  for p in "${pids[@]}"; do wait $p || qf=1; done; return $qf; }
pr() { rm -rf /tmp/p; mkdir -p /tmp/p; pids=(); for w in $(seq 0 $(($1-1))); do PYTHONPATH=/tmp/pil $PY /tmp/pillow.py $w $1 /tmp/list /tmp/p & pids+=($!); done; for p in "${pids[@]}"; do wait $p; done; }
echo "$n images"
printf '%-4s %12s %9s %17s %9s %14s %9s\n' N easel_img/s speedup easel_procs_img/s speedup pillow_img/s speedup
e1=; q1=; p1=
for j in 1 2 4 8 16; do
  e=$(best er $j); q=$(best qr $j); if [ -n "$PY" ]; then p=$(best pr $j); else p=0; fi
  [ -n "$e1" ] || { e1=$e; q1=$q; p1=$p; }
  python3 -c "
n=$n; e=$e; q=$q; p=$p; e1=$e1; q1=$q1; p1=$p1
print('%-4d %12.1f %8.2fx %17.1f %8.2fx %14.1f %8.2fx' % ($j, n/e, e1/e, n/q, q1/q, (n/p if p else 0), (p1/p if p else 0)))"
done
