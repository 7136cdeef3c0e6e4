#!/usr/bin/env bash
# An image table on a real, small tmpfs that fills up: it must never die of SIGBUS; once it
# cannot grow it replaces its least recently used entries, and every entry stays exact. Then a
# table created on the already-full file system must be refused with a "disk full" error.
# Needs the right to mount a tmpfs (root, or an unprivileged user namespace).
# Usage: scripts/table-disk-full.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/tmpfs-helper.sh
use_tmpfs 8m table-disk-full
log="$(mktemp)"
trap 'umount "$mountpoint" || true; rmdir "$mountpoint" || true; rm -f "$log"' EXIT

# 256×256 RGBA entries, chunks of 16 (4 MiB): the second chunk does not fit in 8 MiB, so the
# table stops growing at 16 entries and replaces its least recently used entry from then on.
set +e
reason=$("$helper" table "$mountpoint/table" 7 --count 300 2>&1 >"$log")
status=$?
set -e
written=$(grep -c '^done' "$log" || true)
echo "writer exit status $status after $written writes${reason:+: $reason}"
if [ "$status" -ne 0 ] || [ "$written" -ne 300 ]; then
    echo "FAIL: expected 300 writes to succeed by replacing old entries (a status of 135 is SIGBUS)" >&2
    exit 1
fi
verify=$("$helper" table-verify "$mountpoint/table")
echo "$verify (the table could not grow past one chunk)"
[ "$verify" = "verified 16" ] || { echo "FAIL: expected the 16 entries of one chunk, all exact" >&2; exit 1; }

# Fill what is left, then open a new table there.
dd if=/dev/zero of="$mountpoint/filler" bs=64k 2>/dev/null || true
set +e
reason=$("$helper" table "$mountpoint/other" 1 --count 1 2>&1 >/dev/null)
status=$?
set -e
echo "new table on a full file system: exit status $status: $reason"
if [ "$status" -ne 1 ] || ! grep -q "disk full" <<<"$reason"; then
    echo "FAIL: expected a disk full error when opening" >&2
    exit 1
fi
echo "table-disk-full: OK"
