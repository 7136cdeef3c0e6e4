#!/usr/bin/env bash
# Fuzzes EaselCodecs' read path (sniff, info with the ICC profile readers, decode with colour
# conversion, animation frames, resize), then the geometry planner (headers into every named
# format's sizes) and the ICC parser with libFuzzer under
# AddressSanitizer, for a set number of iterations. Formats: JPEG, PNG, WebP (still and
# animated), GIF (still and animated), AVIF, HEIC, JPEG XL, TIFF, SVG, PDF, BMP (every depth, RLE), ICO (PNG and BMP
# entries); profiles: JPEG APP2, PNG iCCP, WebP ICCP, BMP V5.
# Differential checks: progressive JPEGs' DC-only decode against the full one, and the PNG fast
# path (ISA-L inflate) against libspng.
# Usage: scripts/fuzz-codecs.sh [RUNS (default 200000)] [-- extra libFuzzer flags]
#   FUZZ_SECONDS=N: each target runs N seconds instead of RUNS runs (CI: `make fuzz-smoke`).
#   FUZZ_BUILD_ONLY=1: compile the fuzzer and stop (`make fuzz-build`).
# Inputs: the checked-in corpus Fuzz/corpus/ (a minimised set, seeds included) and what earlier
# runs found in .build-fuzz/; new finds go to .build-fuzz/ only.
# Needs clang with libFuzzer (the Swift toolchain's) and the codec -dev packages.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-200000}"; shift || true
[ "${1:-}" = "--" ] && shift
scripts/install-deps.sh build
swift package resolve >/dev/null  # swift-log's sources (EaselCodecs logs ignored profiles)
WORK=".build-fuzz"
rm -rf "$WORK/modules" "$WORK"/*.o "$WORK"/*.a
mkdir -p "$WORK/modules" "$WORK/corpus" "$WORK/seeds"
SAN="-fsanitize=address,fuzzer-no-link"
# (CLazy loads libraries on first use, CFacesLoader the face plugin: the fuzzer links the libraries
# themselves, so CLazy finds them loaded; it fuzzes no face detection, and CFaces, which has no
# headers of its own, is left out.)
SHIMS="CInput CJPEG CPNG CGIF CWebP CLCMS CLazy CAVIF CHEIF CTIFF CCairo CSVG CJXL CPDF CResample CXXHash CPlatform CFacesLoader CText CVideo"
for shim in $SHIMS; do
  mkdir -p "$WORK/modules/$shim"
  header=$(ls "Sources/$shim/include/"*.h | head -1)
  cp "$header" "$WORK/modules/$shim/"
  printf 'module %s {\n    header "%s"\n    export *\n}\n' "$shim" "$(basename "$header")" > "$WORK/modules/$shim/module.modulemap"
  for source in Sources/$shim/*.c; do
    [ -e "$source" ] || continue
    # (libxml2's include path for the SVG cleaner.)
    clang -c -O1 -g $SAN -I "Sources/$shim/include" -I Sources/CCairo/include -I Sources/CLazy/include -I Sources/CInput/include $(pkg-config --cflags libxml-2.0) "$source" -o "$WORK/$(basename "$source" .c).o"
  done
done
# The Swift modules EaselCodecs imports, as static libraries: swift-log's Logging, the package's
# EaselSupport, and what EaselSupport imports: swift-distributed-tracing's Instrumentation,
# ServiceContextModule and Tracing (for its switch for spans; their warnings are the package's,
# silenced as SwiftPM silences a dependency's).
swiftc -sanitize=address -parse-as-library -O -g -module-name Logging -package-name swift_log -emit-library -static \
  -emit-module -emit-module-path "$WORK/modules/Logging.swiftmodule" \
  $(find .build/checkouts/swift-log/Sources/Logging -name '*.swift') -o "$WORK/libLogging.a"
for module in Instrumentation ServiceContextModule Tracing; do
  swiftc -sanitize=address -parse-as-library -O -g -module-name $module -package-name swift_distributed_tracing -emit-library -static -suppress-warnings \
    -I "$WORK/modules" -emit-module -emit-module-path "$WORK/modules/$module.swiftmodule" \
    $(find .build/checkouts/swift-distributed-tracing/Sources/$module -name '*.swift') -o "$WORK/lib$module.a"
done
swiftc -sanitize=address -parse-as-library -O -g -module-name EaselSupport -package-name easel -emit-library -static -I "$WORK/modules/CXXHash" -I "$WORK/modules/CPlatform" -I "$WORK/modules" \
  -emit-module -emit-module-path "$WORK/modules/EaselSupport.swiftmodule" \
  $(find Sources/EaselSupport -name '*.swift') -o "$WORK/libEaselSupport.a"
swiftc -sanitize=fuzzer,address -parse-as-library -O -g -module-name EaselCodecsFuzz -package-name easel \
  -I "$WORK/modules" $(for shim in $SHIMS; do echo "-I $WORK/modules/$shim"; done) \
  $(find Sources/EaselCodecs -name '*.swift') Fuzz/CodecFuzzer.swift \
  "$WORK"/*.o -L "$WORK" -lEaselSupport -lTracing -lServiceContextModule -lInstrumentation -lLogging \
  -ljpeg -lpng16 -lspng -lz -lisal -lwebp -lwebpdemux -lwebpmux -lgif -llcms2 -lavif -lheif -ltiff -ljxl -lrsvg-2 -lxml2 -lpoppler-glib -lpangocairo-1.0 -lpango-1.0 -lavformat -lavcodec -lswscale -lavutil -lcairo -lgio-2.0 -lgobject-2.0 -lglib-2.0 \
  -lstdc++ \
  -o "$WORK/codec-fuzzer"
if [ -n "${FUZZ_BUILD_ONLY:-}" ]; then echo "built $WORK/codec-fuzzer"; exit 0; fi
if [ -n "${FUZZ_SECONDS:-}" ]; then LENGTH=(-max_total_time="$FUZZ_SECONDS"); else LENGTH=(-runs="$RUNS"); fi
EASEL_FUZZ_SEEDS="$WORK/seeds" "$WORK/codec-fuzzer" -runs=0 "$WORK/seeds" >/dev/null 2>&1 || true
# A HEIC seed from Debian's encoder (Easel writes no HEIC).
if command -v heif-enc >/dev/null; then
  [ -f "$WORK/seeds/seed.png" ] && heif-enc -q 50 -o "$WORK/seeds/seed.heic" "$WORK/seeds/seed.png" >/dev/null 2>&1 || true
else
  echo "no heif-enc (scripts/install-deps.sh test): HEIC seeds come from Fuzz/corpus only"
fi
# Leaks inside Debian's libraries (fontconfig's caches, libxml2's entity values) are named in
# Fuzz/lsan-suppressions.txt; any other leak still fails the run.
export LSAN_OPTIONS="suppressions=$PWD/Fuzz/lsan-suppressions.txt${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
echo "fuzzing: ${LENGTH[*]} (corpus: $WORK/corpus, Fuzz/corpus, seeds: $WORK/seeds)"
"$WORK/codec-fuzzer" "${LENGTH[@]}" -max_len=65536 -rss_limit_mb=2048 -timeout=10 "$@" "$WORK/corpus" Fuzz/corpus "$WORK/seeds"
# The geometry target: headers (any size, no pixel limit) planned into every named format's
# geometry, the path a 0×0 HEIC once crashed the server through. Seeds: the same files, whose
# header sides the fuzzer mutates towards 0 and 2^32-1.
mkdir -p "$WORK/corpus-geometry"
echo "fuzzing the geometry planner: ${LENGTH[*]} (corpus: $WORK/corpus-geometry)"
EASEL_FUZZ_TARGET=geometry "$WORK/codec-fuzzer" "${LENGTH[@]}" -max_len=4096 -rss_limit_mb=2048 -timeout=10 "$@" \
  "$WORK/corpus-geometry" Fuzz/corpus "$WORK/seeds"
