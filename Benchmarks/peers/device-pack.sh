#!/usr/bin/env bash
# Packs what Benchmarks/peers/device-scaling.sh needs on a machine without Swift into
# device-pack/ (gitignored locally; carried by the device run tool): a stripped release
# `easel` with every shared library it links except the C library's own (bundle.tar.xz), the
# corpus (every Samples/*.jpg scaled to 1920 and 2560 px wide, baseline q85, by Pillow) and a
# Pillow 10.4.0 wheel for the device's Python (PYTHON_VERSION, default 3.12: pil.tar.xz).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
[ "${SKIP_BUILD:-}" = 1 ] || { swift build -c release --product easel >&2 && swift build -c release --product EaselFaces >&2; }
python="${EASEL_COMPAT_PYTHON:-.venv-compat/bin/python3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bundle/lib" "$work/bundle/corpus" device-pack
cp .build/release/easel "$work/bundle/" && strip "$work/bundle/easel"
# The face plugin beside easel (its RUNPATH's $ORIGIN), with its libraries.
cp .build/release/libEaselFaces.so "$work/bundle/" && strip --strip-unneeded "$work/bundle/libEaselFaces.so"
{ ldd .build/release/easel; ldd .build/release/libEaselFaces.so; } | awk '/=>/ {print $3}' | grep -vE '/(libc|libm|libpthread|libdl|librt)\.so|ld-linux' \
    | while read -r lib; do cp -L "$lib" "$work/bundle/lib/"; done
strip --strip-unneeded "$work/bundle/lib/"* 2>/dev/null || true
"$python" - "$work/bundle/corpus" <<'PY'
import sys, glob, os
from PIL import Image
for path in sorted(glob.glob("Samples/*.jpg")):
    image = Image.open(path).convert("RGB")
    name = os.path.splitext(os.path.basename(path))[0]
    for width in (1920, 2560):
        height = round(image.height * width / image.width)
        image.resize((width, height), Image.LANCZOS).save(os.path.join(sys.argv[1], f"{name}-{width}.jpg"), quality=85)
PY
tar -cJf device-pack/bundle.tar.xz -C "$work/bundle" .
version="${PYTHON_VERSION:-3.12}"
pip download --quiet pillow==10.4.0 --python-version "$version" --only-binary=:all: --platform manylinux_2_28_x86_64 -d "$work/wheel"
python3 -m zipfile -e "$work"/wheel/*.whl "$work/pil"
tar -cJf device-pack/pil.tar.xz -C "$work/pil" PIL pillow.libs
ls -la device-pack
