#!/usr/bin/env bash
# Installs the system libraries Easel builds against, when missing (Debian/Ubuntu, as root or via sudo).
set -euo pipefail
needed=()
# nginx and varnish: the cluster recipe and the CDN test (scripts/cluster.sh, scripts/varnish-test.sh).
# liblcms2-dev, libavif-dev, libheif-dev: colour management, AVIF and HEIC. libavif-bin and
# libheif-examples (avifenc, heif-enc) and icc-profiles-free (an Adobe RGB-compatible profile):
# the tests make their AVIF, HEIC and wide-gamut files with them; libjpeg-turbo-progs (cjpeg,
# jpegtran): progressive JPEGs with custom scan scripts for the DC-only decoding test.
# libdeflate-dev: whole-stream inflate for PNG decoding. libxxhash-dev: xxHash's header (XXH3, the
# disk cache's checksum of inline values).
for package in libsqlite3-dev libjpeg62-turbo-dev libpng-dev libspng-dev libdeflate-dev libxxhash-dev libwebp-dev libgif-dev liblcms2-dev libavif-dev \
    libheif-dev libavif-bin libheif-examples icc-profiles-free libjpeg-turbo-progs nginx varnish; do
  dpkg -s "$package" >/dev/null 2>&1 || needed+=("$package")
done
if [ ${#needed[@]} -gt 0 ]; then
  echo "installing: ${needed[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${needed[@]}"
fi

# moto's S3 server (PyPI `moto[server]`) for the S3 tests: the system Python's when it has it,
# else a virtualenv in .venv-tools/ (the tests and scripts look there first).
cd "$(dirname "$0")/.."
check='import moto.server, boto3, flask, flask_cors'
if ! python3 -c "$check" >/dev/null 2>&1 && ! { [ -x .venv-tools/bin/python3 ] && .venv-tools/bin/python3 -c "$check" >/dev/null 2>&1; }; then
  # (Also when an earlier install into .venv-tools/ was cut off: the import is what counts.)
  echo "installing moto[server] into .venv-tools/"
  python3 -m venv .venv-tools
  .venv-tools/bin/pip install --quiet "moto[server]>=5,<6"
fi

# The reference client libraries of the compatibility tests (imgproxy's and thumbor's URL
# builders) and the reference placeholder encoders (BlurHash, ThumbHash), pinned, in
# .venv-compat/ (scripts/compat-test.sh and the placeholder tests look there).
compat='import imgproxy, libthumbor, blurhash, PIL; from thumbhash.encode import rgba_to_thumbhash'
if ! { [ -x .venv-compat/bin/python3 ] && .venv-compat/bin/python3 -c "$compat" >/dev/null 2>&1; }; then
  echo "installing imgproxy, libthumbor, blurhash, thumbhash and Pillow into .venv-compat/"
  python3 -m venv .venv-compat
  .venv-compat/bin/pip install --quiet imgproxy==1.0.0 libthumbor==2.0.2 blurhash==1.1.5 \
    thumbhash-python==1.0.1 "pillow>=10,<12"
fi
