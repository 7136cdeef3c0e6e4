#!/usr/bin/env bash
# imgproxy- and thumbor-compatible URLs, built by the real client libraries from PyPI (imgproxy
# 1.0.0, libthumbor 2.0.2, in the virtualenv .venv-compat that `make deps` makes), requested
# from a running `easel serve` on 127.0.0.1: sizes, formats, crops, gravity, DPR, watermarks,
# signatures (tampered and unsigned: 403), unknown options (400), one cache entry for one
# request in the three styles, the info endpoints, expiring native URLs and `easel sign`.
# Then thumbor's own integration URL set (scripts/thumbor_suite.py: 558 single and 576 combined
# URLs on thumbor's test images, the deviations listed in Tests/Compat/thumbor/deviations.txt),
# and imgproxy's own parser tests replayed as URLs (scripts/imgproxy_suite.py: every test of
# Tests/Compat/imgproxy/processing_options_test.go, as Tests/Compat/imgproxy/cases.txt writes it);
# imgproxy's own processing tests with their sizes and pixel hashes (scripts/imgproxy_processing.py,
# Tests/Compat/imgproxy/processing/, processing-deviations.txt); last, real thumbor 7.8.0 and
# easel asked the same URLs, answer by answer
# (scripts/thumbor_differential.py, Tests/Compat/thumbor/differential-deviations.txt).
# Uses EASEL_BIN (default .build/debug/easel, built when missing). Bounded: about three minutes (the first run installs thumbor).
set -euo pipefail
cd "$(dirname "$0")/.."
easel="${EASEL_BIN:-.build/debug/easel}"
[ -x "$easel" ] || swift build --product easel -Xswiftc -warnings-as-errors
# The face plugin beside it (thumbor's smart crops find faces).
[ -f "$(dirname "$easel")/libEaselFaces.so" ] || swift build --product EaselFaces -Xswiftc -warnings-as-errors
python="${EASEL_COMPAT_PYTHON:-.venv-compat/bin/python3}"
[ -x "$python" ] || { echo "$python missing: run make deps" >&2; exit 1; }
timeout 300 "$python" scripts/compat_test.py "$easel"
timeout 600 "$python" scripts/thumbor_suite.py "$easel"
timeout 300 "$python" scripts/imgproxy_suite.py "$easel"
# thumbor 7.8.0 and OpenCV from PyPI in their own virtualenv, .venv-thumbor/ (thumbor pins a newer
# Pillow than .venv-compat's; its Pillow and numpy also serve the imgproxy processing replay).
thumbor_python=.venv-thumbor/bin/python3
if ! { [ -x "$thumbor_python" ] && "$thumbor_python" -c 'import thumbor, cv2; cv2.CascadeClassifier' >/dev/null 2>&1; }; then
  echo "installing thumbor 7.8.0 and OpenCV into .venv-thumbor/"
  python3 -m venv .venv-thumbor
  # (OpenCV 5 drops CascadeClassifier, which thumbor's face detector needs.)
  .venv-thumbor/bin/pip install --quiet thumbor==7.8.0 "opencv-python-headless==4.14.0.94"
fi
# imgproxy's own processing tests (sizes and pixel hashes), replayed (scripts/imgproxy_processing.py).
timeout 600 "$thumbor_python" scripts/imgproxy_processing.py "$easel"
# Real thumbor beside easel (scripts/thumbor_differential.py); the report is printed whatever the
# outcome.
report=.build/compat/thumbor-differential.txt
status=0
THUMBOR_DIFF_REPORT="$report" timeout 600 "$thumbor_python" scripts/thumbor_differential.py "$easel" || status=$?
echo "--- $report"
cat "$report" || true
exit "$status"
