#!/usr/bin/env bash
# The per-value costs of a disk-cache get besides SQLite (see docs/benchmarks.md, "Disk cache
# gets"): XXH64 (the checksum entries carry today), XXH3-64 (xxhash.h, Debian libxxhash-dev, in
# its SSE2 and AVX2 forms) and a plain copy, from the processor's cache and from memory (values
# scattered over 256 MB), for one value size (default 102400 bytes).
#
#   Benchmarks/peers/checksum-speed.sh [BYTES]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ -f /usr/include/xxhash.h ] || { apt-get update -q >&2; DEBIAN_FRONTEND=noninteractive apt-get install -y -q libxxhash-dev >&2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cc -O2 "$here/checksum/checksum_speed.c" -o "$work/sse2"
echo -n "SSE2 build: "; "$work/sse2" "${1:-102400}"
if grep -q avx2 /proc/cpuinfo; then
    cc -O2 -mavx2 "$here/checksum/checksum_speed.c" -o "$work/avx2"
    echo -n "AVX2 build: "; "$work/avx2" "${1:-102400}"
fi
