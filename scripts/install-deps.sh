#!/usr/bin/env bash
# Installs what a make target needs, when missing (Debian/Ubuntu, as root or via sudo), by group:
#   build  the libraries easel builds and runs against (make run, the fuzzer, the benchmarks)
#   test   + the tools the test suites make their files with, moto's S3 server and the pinned
#          Python reference clients (make test, make test-tsan, the compatibility test)
#   web    nginx and Varnish (the CDN test; the cluster recipe asks for test and web)
#   image  podman, mmdebstrap, binutils (strip) and Debian's archive keyring (make image)
# No group: all of them. `--print GROUP...` lists what the groups need, one name a line
# (Debian packages, then `pypi:` virtualenvs), and installs nothing (scripts/check-setup.sh).
# Every group includes build. Chromium (make browser-test) and wrk (make load) are installed by
# their own scripts.
set -euo pipefail
cd "$(dirname "$0")/.."
print=false
if [ "${1:-}" = "--print" ]; then print=true; shift; fi
groups=("$@")
[ ${#groups[@]} -eq 0 ] && groups=(build test web image)
wants() { local g; for g in "${groups[@]}"; do [ "$g" = "$1" ] && return 0; done; return 1; }
for g in "${groups[@]}"; do
  case "$g" in build|test|web|image) ;; *) echo "install-deps.sh: unknown group $g (build, test, web, image)" >&2; exit 2 ;; esac
done

packages=()
# Every group builds easel. liblcms2-dev, libavif-dev, libheif-dev: colour management, AVIF and
# HEIC. libisal-dev: ISA-L's inflate (igzip) for PNG decoding. libxxhash-dev: xxHash's header
# (XXH3, the disk cache's checksum of inline values). libtiff-dev: TIFF. librsvg2-dev: SVG
# (librsvg, cairo and GLib to link against). libxml2-dev: the SVG cleaner (SVG output).
# libjxl-dev: JPEG XL. libpoppler-glib-dev: PDF. libopencv-objdetect-dev and opencv-data: faces
# and eyes (OpenCV's Haar cascades, read at run time). libavformat-dev, libavcodec-dev,
# libswscale-dev, libavutil-dev: video frames (FFmpeg). libpango1.0-dev and fonts-dejavu-core:
# text watermarks (Pango, and a font that is always there).
packages+=(libsqlite3-dev libjpeg62-turbo-dev libpng-dev libspng-dev libisal-dev libxxhash-dev libwebp-dev libgif-dev
           liblcms2-dev libavif-dev libheif-dev libtiff-dev librsvg2-dev libxml2-dev libjxl-dev libpoppler-glib-dev
           libopencv-objdetect-dev opencv-data libavformat-dev libavcodec-dev libswscale-dev libavutil-dev
           libpango1.0-dev fonts-dejavu-core)
# libavif-bin and libheif-examples (avifenc, heif-enc) and icc-profiles-free (an Adobe
# RGB-compatible profile): the tests make their AVIF, HEIC and wide-gamut files with them;
# libjpeg-turbo-progs (cjpeg, jpegtran): progressive JPEGs with custom scan scripts;
# libtiff-tools (tiffcp): tiled and multi-page TIFFs; librsvg2-bin (rsvg-convert): SVG references;
# libjxl-tools (cjxl, djxl): JPEG XL files and references; poppler-utils (pdftoppm): PDF references;
# ffmpeg: the test videos (and the peer of Benchmarks/peers/video.sh).
wants test && packages+=(libavif-bin libheif-examples icc-profiles-free libjpeg-turbo-progs libtiff-tools librsvg2-bin libjxl-tools
                         poppler-utils ffmpeg)
# nginx and varnish: the cluster recipe and the CDN test (scripts/cluster.sh, scripts/varnish-test.sh).
wants web && packages+=(nginx varnish)
# podman and mmdebstrap: the container image (scripts/image.sh); binutils for strip; the keyring
# mmdebstrap checks Debian's archive with.
wants image && packages+=(podman mmdebstrap binutils debian-archive-keyring)

if $print; then
  printf '%s\n' "${packages[@]}"
  wants test && printf '%s\n' "pypi:moto[server]" "pypi:opentelemetry-proto" "pypi:imgproxy" "pypi:libthumbor" "pypi:blurhash" "pypi:thumbhash-python" "pypi:pillow" "pypi:scikit-image" "pypi:imagehash"
  exit 0
fi

needed=()
for package in "${packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || needed+=("$package")
done
if [ ${#needed[@]} -gt 0 ]; then
  echo "installing: ${needed[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${needed[@]}"
fi

wants test || exit 0

# moto's S3 server (PyPI `moto[server]`) for the S3 tests and OpenTelemetry's message
# definitions (`opentelemetry-proto`) for the trace receiver of the tracing test
# (scripts/otlp-receiver.py): the system Python's when it has both, else a virtualenv in
# .venv-tools/ (the tests and scripts look there first).
check='import moto.server, boto3, flask, flask_cors, opentelemetry.proto.collector.trace.v1.trace_service_pb2'
if ! python3 -c "$check" >/dev/null 2>&1 && ! { [ -x .venv-tools/bin/python3 ] && .venv-tools/bin/python3 -c "$check" >/dev/null 2>&1; }; then
  # (Also when an earlier install into .venv-tools/ was cut off: the import is what counts.)
  echo "installing moto[server] and opentelemetry-proto into .venv-tools/"
  python3 -m venv .venv-tools
  .venv-tools/bin/pip install --quiet "moto[server]>=5,<6" "opentelemetry-proto==1.45.2"
fi

# The reference client libraries of the compatibility tests (imgproxy's and thumbor's URL
# builders), the reference placeholder encoders (BlurHash, ThumbHash) and scikit-image (the
# reference SSIM of the autoquality tests), pinned, in .venv-compat/ (scripts/compat-test.sh
# and the tests look there).
compat='import imgproxy, libthumbor, blurhash, PIL, skimage, imagehash; from thumbhash.encode import rgba_to_thumbhash'
if ! { [ -x .venv-compat/bin/python3 ] && .venv-compat/bin/python3 -c "$compat" >/dev/null 2>&1; }; then
  echo "installing imgproxy, libthumbor, blurhash, thumbhash, Pillow, scikit-image and ImageHash into .venv-compat/"
  python3 -m venv .venv-compat
  .venv-compat/bin/pip install --quiet imgproxy==1.0.0 libthumbor==2.0.2 blurhash==1.1.5 \
    thumbhash-python==1.0.1 "pillow>=10,<12" scikit-image==0.26.0 ImageHash==4.3.2
fi
