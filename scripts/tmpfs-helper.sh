# Sourced by the scripts that fill a real tmpfs (table-disk-full.sh, disk-cache-full.sh):
# `use_tmpfs SIZE NAME` builds EaselCrashHelper (outside the namespace), sets `helper` to it and
# `mountpoint` to a fresh tmpfs of SIZE. Without the right to mount, it re-runs the calling script
# in an unprivileged user and mount namespace, or exits 2 saying nothing was tested. The caller
# unmounts in its EXIT trap.
use_tmpfs() {
    local size="$1" name="$2"
    if [ "${EASEL_IN_NAMESPACE:-}" != 1 ]; then
        scripts/install-deps.sh build
        swift build --product EaselCrashHelper
    fi
    helper="$(swift build --show-bin-path)/EaselCrashHelper"
    mountpoint="$(mktemp -d /tmp/easel-tmpfs.XXXXXX)"
    if ! mount -t tmpfs -o "size=$size" tmpfs "$mountpoint" 2>/dev/null; then
        rmdir "$mountpoint"
        if [ "${EASEL_IN_NAMESPACE:-}" != 1 ] && unshare -rm true 2>/dev/null; then
            exec unshare -rm env EASEL_IN_NAMESPACE=1 "$0"
        fi
        echo "$name: this machine does not allow mounting a tmpfs; nothing was tested" >&2
        exit 2
    fi
}
