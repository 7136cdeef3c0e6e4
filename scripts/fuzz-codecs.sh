#!/usr/bin/env bash
# Fuzzes EaselCodecs' read path (sniff, info, decode, resize) with libFuzzer under
# AddressSanitizer, for a set number of iterations.
# Usage: scripts/fuzz-codecs.sh [RUNS (default 200000)] [-- extra libFuzzer flags]
# Needs clang with libFuzzer (the Swift toolchain's) and the codec -dev packages.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-200000}"; shift || true
[ "${1:-}" = "--" ] && shift
scripts/install-deps.sh
WORK=".build-fuzz"
mkdir -p "$WORK/modules" "$WORK/corpus" "$WORK/seeds"
SAN="-fsanitize=address,fuzzer-no-link"
for shim in CJPEG CPNG CGIF CWebP; do
  mkdir -p "$WORK/modules/$shim"
  header=$(ls "Sources/$shim/include/"*.h)
  cp "$header" "$WORK/modules/$shim/"
  printf 'module %s {\n    header "%s"\n    export *\n}\n' "$shim" "$(basename "$header")" > "$WORK/modules/$shim/module.modulemap"
  for source in Sources/$shim/*.c; do
    clang -c -O1 -g $SAN -I "Sources/$shim/include" "$source" -o "$WORK/$(basename "$source" .c).o"
  done
done
swiftc -sanitize=fuzzer,address -parse-as-library -O -g -module-name EaselCodecsFuzz -package-name easel \
  $(for shim in CJPEG CPNG CGIF CWebP; do echo "-I $WORK/modules/$shim"; done) \
  $(find Sources/EaselCodecs -name '*.swift') Fuzz/CodecFuzzer.swift \
  "$WORK"/*.o -ljpeg -lpng16 -lspng -lwebp -lwebpdemux -lgif \
  -o "$WORK/codec-fuzzer"
EASEL_FUZZ_SEEDS="$WORK/seeds" "$WORK/codec-fuzzer" -runs=0 "$WORK/seeds" >/dev/null 2>&1 || true
echo "fuzzing for $RUNS runs (corpus: $WORK/corpus, seeds: $WORK/seeds)"
"$WORK/codec-fuzzer" -runs="$RUNS" -max_len=65536 -rss_limit_mb=2048 -timeout=10 "$@" "$WORK/corpus" "$WORK/seeds"
