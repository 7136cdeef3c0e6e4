#!/usr/bin/env bash
# Setup by need, checked without installing anything: `make run` on a fresh clone installs only
# what building and running easel needs (scripts/install-deps.sh's build group), and that group
# names no test tool, while the test groups do (so the check cannot pass by listing nothing).
set -euo pipefail
cd "$(dirname "$0")/.."
fail() { echo "check-setup: $*" >&2; exit 1; }
plan="$(make --no-print-directory -n run)"
installs="$(grep -o 'install-deps\.sh[^;&|]*' <<<"$plan" | sed 's/ *$//' | sort -u || true)"
[ "$installs" = "install-deps.sh build" ] || fail "make run installs: ${installs:-nothing named} (expected: install-deps.sh build)"
if grep -Eq 'apt-get|pip |venv|npm ' <<<"$plan"; then fail "make run installs something itself: $plan"; fi
build="$(scripts/install-deps.sh --print build)"
test="$(scripts/install-deps.sh --print build test web)"
tools=(nginx varnish chromium wrk ffmpeg libavif-bin libheif-examples icc-profiles-free libjpeg-turbo-progs libtiff-tools librsvg2-bin libjxl-tools poppler-utils)
for tool in "${tools[@]}"; do
  if grep -qx "$tool" <<<"$build"; then fail "make run would install the test tool $tool"; fi
done
if grep -q '^pypi:' <<<"$build"; then fail "make run would install Python packages: $(grep '^pypi:' <<<"$build" | tr '\n' ' ')"; fi
for tool in nginx varnish libavif-bin libheif-examples icc-profiles-free libjpeg-turbo-progs libtiff-tools librsvg2-bin libjxl-tools poppler-utils 'pypi:moto\[server\]' pypi:libthumbor; do
  grep -qx "$tool" <<<"$test" || fail "the test groups no longer name $tool: is this check still checking?"
done
grep -qx libsqlite3-dev <<<"$build" || fail "the build group lost SQLite"
echo "make run installs $(wc -l <<<"$build") Debian packages (the build group) and no test tool:"
tr '\n' ' ' <<<"$build"; echo
