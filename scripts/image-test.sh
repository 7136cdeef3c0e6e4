#!/usr/bin/env bash
# The container image's test (make image-test): builds the image (scripts/image.sh), checks its
# settings (non-root user, health check, cache volume, port), then runs its entrypoint and checks
# from the host that the gallery and a thumbnail are served, that the health check defined in the
# image passes, that a mounted config file and EASEL_* variables are read, that the cache is
# written as the image's user, and that SIGTERM stops the server with status 0.
#
# Where the entrypoint runs:
#   podman run  where this host can run containers (tried first): a named cache volume, the
#               config file mounted read-only, `podman healthcheck run`, `podman stop`
#   chroot      otherwise (a CI container, a VM without cgroups or rlimits for nested
#               containers): `podman image mount`, then in private mount and PID namespaces
#               (unshare) /proc, /dev's usual nodes, a cache directory and the config file are
#               mounted into that root and the entrypoint runs as the image's user (chroot
#               --userspec) with the image's environment and working directory, as PID 1;
#               the health check runs in the same namespaces and root
# EASEL_IMAGE_TEST_MODE=run|chroot forces one (default auto). EASEL_IMAGE_SKIP_BUILD=1 and the
# other settings of scripts/image.sh apply (EASEL_IMAGE_PODMAN_ARGS="--runtime runc", say).
# Bounded: every wait polls with a limit; the whole test takes well under a minute once the base
# is cached.
set -euo pipefail
cd "$(dirname "$0")/.."
tag="${EASEL_IMAGE_TAG:-localhost/easel:latest}"
mode="${EASEL_IMAGE_TEST_MODE:-auto}"
# shellcheck disable=SC2206 # options split into words on purpose
podman=(podman ${EASEL_IMAGE_PODMAN_ARGS:-})
case "$mode" in auto|run|chroot) ;; *) echo "image-test.sh: EASEL_IMAGE_TEST_MODE is auto, run or chroot" >&2; exit 2 ;; esac
say() { echo "image-test.sh: $*"; }
fail() { echo "image-test.sh: FAIL: $*" >&2; exit 1; }

scripts/image.sh
command -v curl >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl; }

work="$(mktemp -d /tmp/easel-image-test.XXXXXX)"
container="easel-image-test-$$"
volume="easel-image-test-cache-$$"
mnt=""
runner=""    # chroot mode: the unshare process; its only child is easel
# A process's children, from /proc (procps may not be installed).
children_of() { cat /proc/"$1"/task/*/children 2>/dev/null | tr ' ' '\n' | grep -v '^$' || true; }
cleanup() {
  set +e
  if [ -n "$runner" ] && kill -0 "$runner" 2>/dev/null; then
    for child in $(children_of "$runner"); do kill -KILL "$child" 2>/dev/null; done
    kill -KILL "$runner" 2>/dev/null
    wait "$runner" 2>/dev/null
  fi
  "${podman[@]}" rm -f -t 0 "$container" >/dev/null 2>&1
  "${podman[@]}" volume rm -f "$volume" >/dev/null 2>&1
  [ -n "$mnt" ] && "${podman[@]}" image unmount "$tag" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

# The image's settings, as podman recorded them.
inspect() { "${podman[@]}" image inspect --format "$1" "$tag"; }
user="$(inspect '{{.Config.User}}')"
uid="${user%%:*}"
[[ "$uid" =~ ^[0-9]+$ && "$uid" != 0 ]] || fail "the image's user is '$user' (expected a numeric non-root uid)"
mapfile -t entrypoint < <(inspect '{{range .Config.Entrypoint}}{{println .}}{{end}}' | sed '/^$/d')
mapfile -t cmd < <(inspect '{{range .Config.Cmd}}{{println .}}{{end}}' | sed '/^$/d')
mapfile -t image_env < <(inspect '{{range .Config.Env}}{{println .}}{{end}}' | sed '/^$/d')
mapfile -t health < <(inspect '{{if .HealthCheck}}{{range .HealthCheck.Test}}{{println .}}{{end}}{{end}}' | sed '/^$/d')
workdir="$(inspect '{{.Config.WorkingDir}}')"
[ ${#entrypoint[@]} -gt 0 ] || fail "the image has no entrypoint"
[ ${#health[@]} -ge 2 ] || fail "the image has no health check (built with --format oci?)"
inspect '{{.Config.Volumes}}' | grep -q '/var/cache/easel' || fail "/var/cache/easel is not a volume"
inspect '{{.Config.ExposedPorts}}' | grep -q '8080/tcp' || fail "port 8080 is not exposed"
case "${health[0]}" in
  CMD) health=("${health[@]:1}") ;;
  CMD-SHELL) health=(/bin/sh -c "${health[1]}") ;;
  *) fail "unexpected health check ${health[*]}" ;;
esac
say "$tag: user $user, entrypoint ${entrypoint[*]} ${cmd[*]}, health check ${health[*]}"

# A free loopback port for the host's side.
port=""
for _ in $(seq 1 50); do
  candidate=$((20000 + RANDOM % 40000))
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then port=$candidate; break; fi
done
[ -n "$port" ] || fail "no free loopback port found in 50 tries"
base="http://127.0.0.1:$port"
# A config file the server must read: its max-age shows in Cache-Control.
# (Unsigned ad-hoc sizes: the formats whose libraries easel loads on first use are asked below.)
echo '{ "maxAge": 4321, "allowUnsignedAdHoc": true }' > "$work/easel.json"
chmod 0644 "$work/easel.json"

# podman run, where this host allows it: a throwaway container tells. The rlimits are the
# host's own (or lower): podman's default raises them, which an unprivileged host refuses.
nofile="$(ulimit -Hn)"; [ "$nofile" = unlimited ] && nofile=1048576
limits=(--ulimit "nofile=$nofile:$nofile" --ulimit nproc=4096:4096)
requested_mode="$mode"
if [ "$mode" != chroot ]; then
  if "${podman[@]}" run --rm "${limits[@]}" --network none --entrypoint /bin/true "$tag" > "$work/probe.log" 2>&1; then
    mode=run
  elif [ "$mode" = run ]; then
    cat "$work/probe.log" >&2; fail "podman run does not work on this host"
  else
    say "podman run does not work here ($(grep -m1 -i 'error' "$work/probe.log" | grep -v 'systemd' || tail -1 "$work/probe.log")): chroot instead"
    mode=chroot
  fi
fi

server_alive() {
  if [ "$mode" = run ]; then
    [ "$("${podman[@]}" inspect --format '{{.State.Running}}' "$container" 2>/dev/null)" = true ]
  else
    kill -0 "$runner" 2>/dev/null
  fi
}
server_log() {
  if [ "$mode" = run ]; then "${podman[@]}" logs "$container" 2>&1 | tail -30; else tail -30 "$work/server.log"; fi
}

if [ "$mode" = run ]; then
  say "running the image with podman run on $base (container $container)"
  "${podman[@]}" volume create "$volume" >/dev/null
  # EASEL_PORT moves the port inside the container: the variables and the health check follow it.
  # (Where systemd is not running, podman logs that it cannot set up the health check timer.)
  "${podman[@]}" run -d --name "$container" "${limits[@]}" -e EASEL_PORT=9090 -p "127.0.0.1:$port:9090" \
    -v "$volume:/var/cache/easel" -v "$work/easel.json:/etc/easel/easel.json:ro" "$tag" > "$work/run.log" 2>&1 || {
    cat "$work/run.log" >&2
    # The probe ran a container, but this one (a published port, volumes) could not start.
    [ "$requested_mode" = auto ] || fail "podman run failed"
    say "podman run with a port and volumes failed here: chroot instead"
    "${podman[@]}" rm -f -t 0 "$container" >/dev/null 2>&1 || true
    mode=chroot
  }
  [ "$mode" = run ] && cache_dir="$("${podman[@]}" volume inspect --format '{{.Mountpoint}}' "$volume")"
fi
if [ "$mode" = chroot ]; then
  command -v unshare >/dev/null && command -v nsenter >/dev/null || fail "unshare and nsenter (util-linux) are needed"
  mnt="$("${podman[@]}" image mount "$tag")" || fail "podman image mount $tag failed"
  [ -x "$mnt${entrypoint[0]}" ] || [ -L "$mnt${entrypoint[0]}" ] || fail "${entrypoint[0]} is not in the image's root ($mnt)"
  cache_dir="$work/cache"
  mkdir -p "$cache_dir"
  chown "$uid:${user#*:}" "$cache_dir"
  # The container's environment: the image's, then what a runtime adds, then this test's (the
  # port: the server shares the host's network here).
  home="$(awk -F: -v u="$uid" '$3 == u { print $6 }' "$mnt/etc/passwd")"
  run_env=("${image_env[@]}" "HOME=${home:-/}" "HOSTNAME=$container" "EASEL_HOST=127.0.0.1" "EASEL_PORT=$port")
  # Runs inside the new namespaces: the mounts a runtime makes, then the entrypoint as PID 1.
  cat > "$work/inner.sh" <<'INNER'
set -euo pipefail
mnt="$1" cache="$2" config="$3" userspec="$4" workdir="$5"; shift 5
mount -t tmpfs -o mode=0755,nosuid tmpfs "$mnt/dev"
for node in null zero full random urandom tty; do
  touch "$mnt/dev/$node"; mount --bind "/dev/$node" "$mnt/dev/$node"
done
mkdir -p "$mnt/dev/shm"; mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$mnt/dev/shm"
ln -s /proc/self/fd "$mnt/dev/fd"
mount --bind "$cache" "$mnt/var/cache/easel"
mount --bind -o ro "$config" "$mnt/etc/easel/easel.json"
exec chroot --userspec="$userspec" "$mnt" /usr/bin/env -i --chdir="$workdir" "$@"
INNER
  say "running the entrypoint in the image's root ($mnt) with chroot on $base"
  unshare --mount --propagation private --pid --fork --kill-child --mount-proc="$mnt/proc" \
    bash "$work/inner.sh" "$mnt" "$cache_dir" "$work/easel.json" "$user" "${workdir:-/}" \
    "${run_env[@]}" "${entrypoint[@]}" "${cmd[@]}" > "$work/server.log" 2>&1 &
  runner=$!
fi

# /health from the host: polled, at most 30 s.
healthy=false
for _ in $(seq 1 150); do
  if curl -fsS -m 2 -o /dev/null "$base/health" 2>/dev/null; then healthy=true; break; fi
  server_alive || { server_log >&2; fail "the server exited before answering /health"; }
  sleep 0.2
done
$healthy || { server_log >&2; fail "no answer from $base/health within 30 s"; }
say "/health answers"

# The gallery: 200, HTML, with thumbnails.
code="$(curl -sS -m 30 -o "$work/gallery.html" -D "$work/gallery.headers" -w '%{http_code}' "$base/")"
[ "$code" = 200 ] || fail "GET / answered $code"
grep -qi '^content-type: text/html' "$work/gallery.headers" || fail "GET / is not HTML: $(grep -i '^content-type' "$work/gallery.headers")"
thumb="$(grep -o '<img src="[^"]*"' "$work/gallery.html" | head -1 | sed 's/^<img src="//; s/"$//; s/&amp;/\&/g')"
[ -n "$thumb" ] || fail "the gallery links no thumbnail"
say "gallery: $(grep -o '<img src=' "$work/gallery.html" | wc -l) thumbnails, first $thumb"

# The first thumbnail: 200, image/*, a decodable image's magic bytes, the config's max-age.
code="$(curl -sS -m 60 -o "$work/thumb" -D "$work/thumb.headers" -w '%{http_code}' "$base$thumb")"
[ "$code" = 200 ] || { server_log >&2; fail "GET $thumb answered $code"; }
type="$(grep -i '^content-type:' "$work/thumb.headers" | tr -d '\r' | cut -d' ' -f2)"
[[ "$type" == image/* ]] || fail "GET $thumb is $type, not an image"
magic="$(head -c 12 "$work/thumb" | od -An -tx1 | tr -d ' \n')"
case "$magic" in
  ffd8ff*) kind=JPEG ;;
  89504e470d0a1a0a*) kind=PNG ;;
  52494646????????57454250) kind=WebP ;;
  ????????66747970*) kind="AVIF/HEIF" ;;
  *) fail "GET $thumb ($type, $(stat -c %s "$work/thumb") bytes) starts with $magic: no image" ;;
esac
grep -qi '^cache-control:.*max-age=4321' "$work/thumb.headers" \
  || fail "the mounted config file was not read (expected max-age=4321; got $(grep -i '^cache-control' "$work/thumb.headers" | tr -d '\r'))"
say "thumbnail: $type, $kind, $(stat -c %s "$work/thumb") bytes, max-age from the mounted config file"

# The libraries loaded on first use (libavif, libheif, libjxl; not linked, so ldd does not name
# them for the base): each format answered from inside the image to a client that accepts it.
sample="${thumb##*/}"; sample="${sample%%\?*}"
for format in avif heic jxl; do
  code="$(curl -sS -m 60 -H "Accept: image/$format" -o "$work/thumb.$format" -D "$work/thumb.$format.headers" -w '%{http_code}' "$base/images/w=64,h=64,f=$format/$sample")"
  [ "$code" = 200 ] || { server_log >&2; fail "GET /images/w=64,h=64,f=$format/$sample answered $code: $(head -c 300 "$work/thumb.$format")"; }
  grep -qi "^content-type: image/$format" "$work/thumb.$format.headers" || fail "f=$format answered $(grep -i '^content-type' "$work/thumb.$format.headers")"
done
say "AVIF, HEIC and JPEG XL answered (libraries loaded on first use are in the image)"
# The face detector's plugin (libEaselFaces.so beside easel, with OpenCV): a face crop answered
# (a box of another shape than the sample, so that the crop has somewhere to go and faces are looked for).
code="$(curl -sS -m 60 -o "$work/face.jpg" -D "$work/face.headers" -w '%{http_code}' "$base/images/w=64,h=24,fit=fill,g=face,f=jpeg/$sample")"
[ "$code" = 200 ] || { server_log >&2; fail "GET /images/w=64,h=24,fit=fill,g=face,f=jpeg/$sample answered $code: $(head -c 300 "$work/face.jpg")"; }
say "a face crop answered (the face plugin and OpenCV are in the image)"

# The health check the image defines, run where the runtime would run it.
if [ "$mode" = run ]; then
  "${podman[@]}" healthcheck run "$container" > "$work/health.log" 2>&1 || { cat "$work/health.log" >&2; fail "podman healthcheck run failed"; }
else
  server_pid="$(children_of "$runner" | head -1)"
  [ -n "$server_pid" ] || fail "no server process under unshare ($runner)"
  nsenter --target "$server_pid" --mount --pid -- chroot --userspec="$user" "$mnt" /usr/bin/env -i "${run_env[@]}" \
    "${health[@]}" > "$work/health.log" 2>&1 || { cat "$work/health.log" >&2; fail "the image's health check (${health[*]}) failed in the chroot"; }
fi
say "the image's health check passes"

# SIGTERM: a graceful stop, status 0, within 20 s; the cache is written, as the image's user.
if [ "$mode" = run ]; then
  "${podman[@]}" stop -t 20 "$container" > /dev/null 2>&1 || fail "podman stop failed"
  status="$("${podman[@]}" inspect --format '{{.State.ExitCode}}' "$container")"
else
  kill -TERM "$server_pid"
  for _ in $(seq 1 200); do kill -0 "$runner" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$runner" 2>/dev/null && { server_log >&2; fail "the server did not stop within 20 s of SIGTERM"; }
  status=0; wait "$runner" || status=$?
  runner=""
fi
[ "$status" = 0 ] || { server_log >&2; fail "the server exited with status $status on SIGTERM"; }
files="$(find "$cache_dir" -type f | wc -l)"
foreign="$(find "$cache_dir" ! -uid "$uid" | wc -l)"
[ "$files" -gt 0 ] || fail "nothing was written to the cache volume"
[ "$foreign" = 0 ] || fail "$foreign cache entries are not owned by uid $uid"
say "stopped with status 0 on SIGTERM; $files cache files, owned by uid $uid"
say "OK ($mode)"
