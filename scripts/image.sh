#!/usr/bin/env bash
# The container image (make image): a Debian 12 root file system made by mmdebstrap with only the
# packages easel's shared libraries come from, imported into podman as the base (nothing is
# pulled from a registry), then `Containerfile` on top: easel (stripped), the Swift runtime
# libraries it links, the sample photos, a non-root user, /health as the health check, the
# cache on a volume. Podman and mmdebstrap are Debian's packages, installed when missing. Run as
# root (mmdebstrap's root mode, podman's system store).
#
#   scripts/image.sh                       builds .build/release/easel, then the image
#   EASEL_IMAGE_SKIP_BUILD=1 scripts/image.sh   uses the existing .build/release/easel
#
# Settings (environment):
#   EASEL_IMAGE_TAG           the image's name (default localhost/easel:latest)
#   EASEL_IMAGE_SKIP_BUILD=1  no `swift build` (the binary must exist)
#   EASEL_IMAGE_MIRROR        the Debian mirror mmdebstrap reads (default http://deb.debian.org/debian),
#                             for bookworm and bookworm-updates
#   EASEL_IMAGE_SECURITY_MIRROR  the same for bookworm-security (default
#                             http://deb.debian.org/debian-security)
#   EASEL_IMAGE_PODMAN_ARGS   global podman options for every podman call of this script and of
#                             scripts/image-test.sh: "--root DIR --storage-driver vfs" where
#                             overlay does not work (a store of its own: the default one keeps
#                             its driver), "--runtime runc" where crun cannot start containers.
#                             The image then lives in that store: give `podman run` the same
#                             options. Default: none, podman's own configuration, so that a plain
#                             `podman run localhost/easel` finds the image.
#   EASEL_IMAGE_MMDEBSTRAP_MODE  mmdebstrap's --mode (default auto: root when run as root)
#
# Where the libraries come from is read from the binary each time, never listed by hand: `ldd`
# names them, `dpkg -S` maps those that are Debian's to their packages (the base's package list),
# and the others (the Swift runtime, under the toolchain) are copied into the image. The base
# tarball is kept in .build-image/ under a key of its recipe and package list, so a rebuild with
# the same libraries skips mmdebstrap (and the import, while podman still has the base); remove
# .build-image/ to take Debian's newer (security) updates into the base.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
tag="${EASEL_IMAGE_TAG:-localhost/easel:latest}"
mirror="${EASEL_IMAGE_MIRROR:-http://deb.debian.org/debian}"
security_mirror="${EASEL_IMAGE_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
suite=bookworm
# The release with its updates and security fixes (a codec library's fix comes through these).
sources=("deb $mirror $suite main" "deb $mirror $suite-updates main" "deb $security_mirror $suite-security main")
build_dir="$root/.build-image"
binary="$root/.build/release/easel"
# The face detector's plugin (OpenCV), loaded by easel on first use from its own directory.
plugin="$root/.build/release/libEaselFaces.so"
# shellcheck disable=SC2206 # options split into words on purpose
podman=(podman ${EASEL_IMAGE_PODMAN_ARGS:-})
say() { echo "image.sh: $*" >&2; }
fail() { echo "image.sh: FAIL: $*" >&2; exit 1; }

# Tools: podman, mmdebstrap, strip and the archive keyring (install-deps.sh's image group, with
# the build group's libraries easel links); ldd and dpkg are always there on Debian.
scripts/install-deps.sh image

if [ "${EASEL_IMAGE_SKIP_BUILD:-0}" != 1 ]; then
  # shellcheck disable=SC2046  # (the flag splits into its words on purpose)
  swift build -c release --product easel $(scripts/build-id.sh)
  # shellcheck disable=SC2046
  swift build -c release --product EaselFaces $(scripts/build-id.sh)
fi
[ -x "$binary" ] || fail "$binary is missing (build it, or leave EASEL_IMAGE_SKIP_BUILD unset)"
[ -f "$plugin" ] || fail "$plugin is missing (swift build -c release --product EaselFaces, or leave EASEL_IMAGE_SKIP_BUILD unset)"

# The binary's shared libraries: Debian's become package names, the rest is copied.
# TLS roots for https:// and s3:// origins and shared tiers; the face cascades; a font for text
# marks; FFmpeg's libraries, which easel loads when it first reads a video (ldd cannot see them).
packages=(ca-certificates opencv-data fonts-dejavu-core libavformat59 libavcodec59 libswscale6 libavutil57)
# The libraries easel loads on first use (CLazy: ldd cannot see them either), by the sonames its
# shims open; their packages are found below as the linked ones' are.
lazy_sonames=(librsvg-2.so.2 libgio-2.0.so.0 libpoppler-glib.so.8 libpangocairo-1.0.so.0 libpango-1.0.so.0 libcairo.so.2
              libgobject-2.0.so.0 libglib-2.0.so.0 libheif.so.1 libavif.so.15 libjxl.so.0.7 libtiff.so.6
              libxml2.so.2)
swift_libs=()
# Debian 12 is merged-/usr: dpkg knows a file under the path its package shipped it at, which
# may be the /lib or the /usr/lib spelling, of the name ldd printed or of the file it links to.
candidates_of() {  # candidates_of FILE: the paths dpkg may know FILE by, one a line
  local path
  for path in "$1" "$(readlink -f "$1")"; do
    echo "$path"
    case "$path" in /usr/*) echo "${path#/usr}" ;; *) echo "/usr$path" ;; esac
  done
}
ldd_out="$(ldd "$binary"; ldd "$plugin")" || fail "ldd $binary $plugin failed"
grep -q 'not found' <<<"$ldd_out" && fail "$binary misses libraries: $(grep 'not found' <<<"$ldd_out" | tr -s ' \t' ' ')"
mapfile -t libs < <(awk '/=> \// { print $3 } /^[[:space:]]*\/[^ ]+ \(0x/ { print $1 }' <<<"$ldd_out" | sort -u)
for soname in "${lazy_sonames[@]}"; do
  path="$("$(command -v ldconfig || echo /sbin/ldconfig)" -p | awk -v name="$soname" '$1 == name && !found { print $NF; found = 1 }')"
  [ -n "$path" ] || fail "$soname (loaded by easel on first use) is not installed here"
  libs+=("$path")
done
# One dpkg -S for every candidate: "libfoo1:amd64: /usr/lib/..." per known path (several
# packages, comma-separated, for a shared directory; diversions on lines of their own).
declare -A owner_of=()
while IFS= read -r line; do
  case "$line" in "diversion by"*|"local diversion"*) continue ;; esac
  owner="${line%%: /*}"; path="/${line#*: /}"
  owner="${owner%%,*}"; owner="${owner%%:*}"
  [ -n "$owner" ] && [ -z "${owner_of[$path]:-}" ] && owner_of[$path]="$owner"
done < <(for lib in "${libs[@]}"; do candidates_of "$lib"; done | sort -u | xargs dpkg -S 2>/dev/null || true)
for lib in "${libs[@]}"; do
  owner=""
  while read -r path; do
    owner="${owner_of[$path]:-}"; [ -n "$owner" ] && break
  done < <(candidates_of "$lib")
  if [ -n "$owner" ]; then
    packages+=("$owner")
  else
    case "$lib" in
      */swift/*) swift_libs+=("$lib") ;;
      *) fail "$lib (linked by easel) is neither from a Debian package nor Swift's runtime" ;;
    esac
  fi
done
mapfile -t packages < <(printf '%s\n' "${packages[@]}" | sort -u)
[ ${#swift_libs[@]} -gt 0 ] || fail "no Swift runtime library in ldd's list: a static build? (this script copies them)"
say "Debian packages: ${packages[*]}"
say "Swift runtime libraries: $(printf '%s\n' "${swift_libs[@]##*/}" | tr '\n' ' ')"

# The base: Debian's Essential set (bash for the health check, coreutils; no apt) plus those
# packages, without documentation (the copyright files stay), manual pages, locales, apt's lists
# or logs; the user easel (uid and gid 10001) and its cache directory. Keyed by everything that
# shapes it (the options below, hooks included, the suite, the sources and the architecture).
uid=10001
recipe_version=1  # bump to rebuild the base for a reason the options do not show
mmdebstrap_args=(
  --variant=essential --include="$(IFS=,; echo "${packages[*]}")"
  # /bin, /lib, /sbin as links into /usr, set up the way debootstrap does it: without this hook
  # apt satisfies init-system-helpers' "usrmerge | usr-is-merged" with usrmerge and its Perl (50 MB).
  --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr
  --mode="${EASEL_IMAGE_MMDEBSTRAP_MODE:-auto}" --format=tar
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*'
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/lintian/*'
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright'
  --customize-hook="echo 'easel:x:$uid:$uid:easel:/nonexistent:/usr/sbin/nologin' >> \"\$1/etc/passwd\""
  --customize-hook="echo 'easel:x:$uid:' >> \"\$1/etc/group\""
  --customize-hook="mkdir -p \"\$1/var/cache/easel\" && chown $uid:$uid \"\$1/var/cache/easel\""
  --customize-hook="rm -rf \"\$1\"/var/lib/apt/lists/* \"\$1\"/var/cache/apt/* \"\$1\"/var/cache/debconf/*-old \"\$1\"/var/log/* \"\$1\"/var/lib/dpkg/*-old"
  # This machine's resolver and name stay out (a runtime mounts its own over the empty files).
  --customize-hook=": > \"\$1/etc/resolv.conf\" && : > \"\$1/etc/hostname\""
)
key="$(printf '%s\n' "$recipe_version" "$suite" "${sources[@]}" "$(dpkg --print-architecture)" "${mmdebstrap_args[@]}" | sha256sum | cut -c1-16)"
base_tar="$build_dir/base-$key.tar"
base_image="localhost/easel-base:$key"
mkdir -p "$build_dir"
started=$SECONDS
if [ ! -s "$base_tar" ]; then
  say "making the Debian $suite base with mmdebstrap ($base_tar)"
  rm -f "$base_tar.part"
  mmdebstrap --quiet "${mmdebstrap_args[@]}" "$suite" "$base_tar.part" "${sources[@]}" \
    || fail "mmdebstrap failed (EASEL_IMAGE_MMDEBSTRAP_MODE=unshare or fakechroot may work where root mode cannot mount)"
  mv "$base_tar.part" "$base_tar"
  # Older bases (other package lists) are of no further use.
  find "$build_dir" -maxdepth 1 -name 'base-*.tar' ! -name "base-$key.tar" -delete
else
  say "base $base_tar is cached"
fi
if ! "${podman[@]}" image exists "$base_image"; then
  say "importing it as $base_image"
  "${podman[@]}" import --quiet "$base_tar" "$base_image" >/dev/null
fi
say "base ready in $((SECONDS - started)) s ($(du -h "$base_tar" | cut -f1) uncompressed)"

# The build context: the Swift libraries and the face plugin (stripped), a stripped copy of easel (installed beside
# them: its RUNPATH has $ORIGIN), a link to it and the health check for /usr/local/bin, the
# sample photos and the default (empty) configuration file. The Containerfile copies what
# changes least first, so a rebuild after a code change reuses the runtime's layer.
context="$build_dir/context"
rm -rf "$context"
mkdir -p "$context/swift" "$context/bin" "$context/config"
for lib in "${swift_libs[@]}"; do
  strip --strip-unneeded -o "$context/swift/${lib##*/}" "$(readlink -f "$lib")"
  chmod 0644 "$context/swift/${lib##*/}"
done
strip --strip-all -o "$context/easel" "$binary"
strip --strip-unneeded -o "$context/swift/${plugin##*/}" "$plugin"
chmod 0644 "$context/swift/${plugin##*/}"
ln -s ../lib/easel/easel "$context/bin/easel"
install -m 0755 scripts/container-health.sh "$context/bin/easel-health"
cp -r Samples "$context/Samples"
echo '{}' > "$context/config/easel.json"

# chroot isolation: the build runs no container (the Containerfile has no RUN either), so it
# works where containers cannot run. --pull=never: the base is the local import, never a
# registry's. Docker's format, because the OCI image format has no health check field (podman
# drops HEALTHCHECK from OCI images).
say "building $tag"
old_id="$("${podman[@]}" image inspect --format '{{.Id}}' "$tag" 2>/dev/null || true)"
"${podman[@]}" build --isolation=chroot --pull=never --format=docker \
  --build-arg "BASE=$base_image" -f Containerfile -t "$tag" "$context"
new_id="$("${podman[@]}" image inspect --format '{{.Id}}' "$tag")"
# The image this one replaced and bases of other package lists, unless something still uses them.
if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ]; then
  "${podman[@]}" rmi "$old_id" >/dev/null 2>&1 || true
fi
"${podman[@]}" images --format '{{.Repository}}:{{.Tag}}' localhost/easel-base | while read -r other; do
  [ "$other" = "$base_image" ] || "${podman[@]}" rmi "$other" >/dev/null 2>&1 || true
done
size_bytes="$("${podman[@]}" image inspect --format '{{.Size}}' "$tag")"
say "$tag: $(awk -v b="$size_bytes" 'BEGIN { printf "%.1f MB (%d bytes)", b / 1e6, b }') uncompressed, built in $((SECONDS - started)) s"
