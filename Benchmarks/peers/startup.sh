#!/usr/bin/env bash
# Why a process per file loses to single-purpose tools on small images: what starting costs.
# One core (taskset), N runs each, mean wall time per run in milliseconds, and the peak resident
# memory of one run (/usr/bin/time's maximum RSS), of the programs below; then where easel's
# resident memory is, by mapped file:
#   - `easel --help` (the release build: dynamic Swift runtime and Foundation, and the codec
#     libraries it links, resolved at start as BIND_NOW makes it; librsvg, poppler, Pango, cairo,
#     GLib, libheif, libavif and libjxl are loaded on first use since issue 40, FFmpeg before);
#   - the peers' own start: `rsvg-convert --version`, `pdftoppm -v`, `cjxl --version`;
#   - empty C programs linked like easel (-z now, no --as-needed) against easel's C libraries:
#     all of them; all but the five that pull most (librsvg, poppler-glib, libjxl, libheif,
#     libavif, with their own dependencies); and the rest plus each of those five alone — what
#     loading a codec library only when a file needs it could save.
#
#   N=50 CPU=0 Benchmarks/peers/startup.sh     (after `swift build -c release --product easel`)
set -euo pipefail
PEERS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$(dirname "$PEERS")")"
N="${N:-50}"
CPU="${CPU:-0}"
EASEL="$ROOT/.build/release/easel"
[ -x "$EASEL" ] || { echo "no $EASEL: swift build -c release --product easel" >&2; exit 1; }
WORK="$(mktemp -d "${TMPDIR:-/tmp}/easel-startup.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

# mean_ms COMMAND...: the mean wall time of N runs, in milliseconds (output discarded).
mean_ms() {
  local start end
  start=$(date +%s%N)
  for _ in $(seq "$N"); do taskset -c "$CPU" "$@" >/dev/null 2>&1 || true; done
  end=$(date +%s%N)
  python3 -c "print(f'{($end - $start) / $N / 1e6:.1f}')"
}
libs() { ldd "$1" | wc -l; }
# Where `easel --help`'s resident memory is, by mapped file: a preloaded library copies
# /proc/self/smaps as the process exits, and the largest twelve are printed.
where_resident() {
  cat > "$WORK/smaps.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
__attribute__((destructor)) static void copy_smaps(void) {
    const char *out = getenv("SMAPS_OUT");
    FILE *in = fopen("/proc/self/smaps", "r"), *to = out ? fopen(out, "w") : NULL;
    char buffer[4096];
    size_t n;
    while (in && to && (n = fread(buffer, 1, sizeof buffer, in)) > 0) fwrite(buffer, 1, n, to);
    if (in) fclose(in);
    if (to) fclose(to);
}
C
  cc -shared -fPIC -O1 -o "$WORK/smaps.so" "$WORK/smaps.c"
  SMAPS_OUT="$WORK/smaps" LD_PRELOAD="$WORK/smaps.so" "$@" >/dev/null 2>&1 || true
  python3 - "$WORK/smaps" <<'PY'
import collections, re, sys
rss, name = collections.Counter(), None
for line in open(sys.argv[1]):
    if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
        parts = line.split()
        name = parts[5].rsplit("/", 1)[-1] if len(parts) > 5 else "[anonymous]"
    elif line.startswith("Rss:"):
        rss[name] += int(line.split()[1])
print("| mapping | resident MB |")
print("|---|---|")
for name, kb in rss.most_common(12):
    print(f"| {name} | {kb * 1024 / 1e6:.1f} |")
print(f"| all {len(rss)} | {sum(rss.values()) * 1024 / 1e6:.1f} |")
PY
}
# peak_mb COMMAND...: the peak resident memory of one run, in MB (GNU time's %M is in KiB).
peak_mb() {
  /usr/bin/time -f '%M' -o "$WORK/rss" "$@" >/dev/null 2>&1 || true
  python3 -c "print(f'{int(open(\"$WORK/rss\").read().split()[-1]) * 1024 / 1e6:.1f}')"
}

echo 'int main(void) { return 0; }' > "$WORK/empty.c"
# (The libraries easel linked before issue 40, as they were then: libdeflate, since replaced by
# ISA-L, comes with libtiff-dev.)
rest="-lsqlite3 -lz -lcairo -lgobject-2.0 -lglib-2.0 -lgio-2.0 -ltiff -llcms2 -lgif -lwebp -lwebpdemux -lwebpmux -lpng16 -lspng -ldeflate -ljpeg -lstdc++ -lm"
heavy="-lrsvg-2 -lpoppler-glib -ljxl -lheif -lavif"
stub() { cc -O1 "$WORK/empty.c" -o "$WORK/$1" -Wl,--no-as-needed -Wl,-z,now "${@:2}"; }
# shellcheck disable=SC2086
stub all $rest $heavy
# shellcheck disable=SC2086
stub rest $rest
for lib in $heavy; do
  # shellcheck disable=SC2086
  stub "rest+${lib#-l}" $rest "$lib"
done

echo "## Start-up, one core, mean of $N runs"
echo "| program | shared libraries loaded | ms per run | peak RSS MB |"
echo "|---|---|---|---|"
echo "| easel --help | $(libs "$EASEL") | $(mean_ms "$EASEL" --help) | $(peak_mb "$EASEL" --help) |"
echo "| rsvg-convert --version | $(libs "$(command -v rsvg-convert)") | $(mean_ms rsvg-convert --version) | $(peak_mb rsvg-convert --version) |"
echo "| pdftoppm -v | $(libs "$(command -v pdftoppm)") | $(mean_ms pdftoppm -v) | $(peak_mb pdftoppm -v) |"
echo "| cjxl --version | $(libs "$(command -v cjxl)") | $(mean_ms cjxl --version) | $(peak_mb cjxl --version) |"
echo "| empty C program, easel's C libraries before issue 40 | $(libs "$WORK/all") | $(mean_ms "$WORK/all") | $(peak_mb "$WORK/all") |"
echo "| the same without librsvg, poppler-glib, libjxl, libheif, libavif | $(libs "$WORK/rest") | $(mean_ms "$WORK/rest") | $(peak_mb "$WORK/rest") |"
for lib in $heavy; do
  echo "| ... plus ${lib#-l} alone | $(libs "$WORK/rest+${lib#-l}") | $(mean_ms "$WORK/rest+${lib#-l}") | $(peak_mb "$WORK/rest+${lib#-l}") |"
done

echo
echo "## Where easel --help's resident memory is (at exit, /proc/self/smaps)"
where_resident "$EASEL" --help
