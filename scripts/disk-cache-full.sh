#!/usr/bin/env bash
# A disk cache on a real 64 MiB tmpfs, holding small (inline) values with no byte limit: with the
# limit derived from the free space turned off, it fills the file system; then, each time from a
# fresh process, trim(toSize:), trim(toSizeByDate:), removeValue and removeAll must succeed, free
# space, and let a new value be stored. With that default limit on, filling never runs out of space.
# Needs the right to mount a tmpfs (root, or an unprivileged user namespace).
# Usage: scripts/disk-cache-full.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/tmpfs-helper.sh
use_tmpfs 64m disk-cache-full
trap 'umount "$mountpoint" || true; rmdir "$mountpoint" || true' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
free_kib() { df -k --output=avail "$mountpoint" | tail -1 | tr -d ' '; }
usage() { du -sk "$1" | cut -f1; }

cache="$mountpoint/stuck"
seed=1
# Each operation runs on a freshly filled disk. Trims and removeAll must give back at least
# 16 MiB (the index is compacted once mostly free); removing one small entry frees too little
# to measure, but must work and leave room for a new value.
for operation in "trim-size $((8 << 20))" "trim-date $((8 << 20))" "remove" "remove-all"; do
    filled=$("$helper" disk-fill "$cache" "$seed" --no-default-limit --count 200000) || fail "fill: $filled"
    seed=$((seed + 1))
    before=$(free_kib)
    echo "$filled; cache uses $(usage "$cache") KiB, $before KiB free"
    grep -q '^full after' <<<"$filled" || fail "the cache did not fill the file system"
    [ "$before" -lt 2048 ] || fail "expected a nearly full file system, $before KiB free"
    # shellcheck disable=SC2086
    result=$("$helper" disk-free "$cache" $operation) || fail "$operation on a full disk: $result"
    after=$(free_kib)
    echo "  $operation: $result; $after KiB free"
    case "$operation" in
        remove) ;;
        *) [ $((after - before)) -ge 16384 ] || fail "$operation freed only $((after - before)) KiB" ;;
    esac
done

# The same workload with the default limit (a share of the free space at open) never fills it.
filled=$("$helper" disk-fill "$mountpoint/default" 99 --count 60000) || fail "fill with the default limit: $filled"
left=$(free_kib)
echo "default limit: $filled; cache uses $(usage "$mountpoint/default") KiB, $left KiB free"
grep -q '^stored 60000' <<<"$filled" || fail "with the default limit, a set ran out of space"
echo "disk-cache-full: OK"
