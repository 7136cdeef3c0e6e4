#!/usr/bin/env bash
# Easel on several machines, on one: three `easel serve` instances behind nginx (Debian's
# package) with `hash $request_uri consistent` upstreams and `proxy_next_upstream`, a result
# tier shared in S3 (moto's S3 server from PyPI, signatures checked), purges relayed to the
# peers, and nginx also serving the originals (its access log counts origin reads). All on
# 127.0.0.1.
#
#   scripts/cluster.sh          run until Ctrl-C (prints the balancer's URL)
#   scripts/cluster.sh --test   the cluster test: warm every variant, kill one instance with
#                               SIGKILL under load, check no request failed and that every
#                               variant was made once cluster-wide (one origin read per source)
#
# Uses EASEL_BIN (default: .build/debug/easel, built when missing) and the Python tools
# `make deps` installs. Bounded: every wait has a limit; the whole test takes about a minute.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-run}"
root="$PWD"
work="$(mktemp -d /tmp/easel-cluster.XXXXXX)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  exec 3>&- 2>/dev/null || true
  # Let them exit (at most 5 s) before their files are removed.
  for _ in $(seq 1 50); do
    alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.1
  done
  if [ "${KEEP:-0}" != 1 ]; then rm -rf "$work"; fi
}
trap cleanup EXIT

python="${EASEL_PYTHON:-}"
[ -z "$python" ] && [ -x .venv-tools/bin/python3 ] && python=.venv-tools/bin/python3
python="${python:-python3}"
easel="${EASEL_BIN:-.build/debug/easel}"
[ -x "$easel" ] || swift build --product easel
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || { echo "nginx missing: make deps installs it" >&2; exit 1; }
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"

# N free ports, all different: every socket is held until all are bound (free_port calls in a
# row could be given the same port twice).
free_ports() { "$python" -c 'import socket, sys; s = [socket.socket() for _ in range(int(sys.argv[1]))]; [x.bind(("127.0.0.1", 0)) for x in s]; print(" ".join(str(x.getsockname()[1]) for x in s))' "$1"; }
wait_for() {  # wait_for URL: up to 20 s for a 200
  for _ in $(seq 1 200); do
    curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "no answer from $1" >&2; return 1
}

# S3 (moto), with the bucket for the shared tier.
mkfifo "$work/moto.in"
"$python" scripts/s3-test-server.py easel-cluster < "$work/moto.in" > "$work/moto.json" 2> "$work/moto.log" &
pids+=($!)
exec 3> "$work/moto.in"
for _ in $(seq 1 300); do [ -s "$work/moto.json" ] && break; sleep 0.1; done
[ -s "$work/moto.json" ] || { echo "moto did not start:" >&2; cat "$work/moto.log" >&2; exit 1; }
read_json() { "$python" -c "import json,sys; print(json.load(open('$work/moto.json'))['$1'])"; }
export AWS_ACCESS_KEY_ID="$(read_json accessKey)" AWS_SECRET_ACCESS_KEY="$(read_json secretKey)"
export AWS_REGION="$(read_json region)" EASEL_S3_ENDPOINT="$(read_json endpoint)"

read -r origin_port balancer_port port_a port_b port_c <<<"$(free_ports 5)"
ports=("$port_a" "$port_b" "$port_c")
token="cluster-admin-token-$(date +%s)"
shared_prefix="variants/"

# nginx: the originals (Samples/, access-logged) and the balancer.
cat > "$work/nginx.conf" <<NGINX
worker_processes 1;
pid $work/nginx.pid;
error_log $work/nginx-error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $work/tmp; proxy_temp_path $work/tmp; fastcgi_temp_path $work/tmp;
  uwsgi_temp_path $work/tmp; scgi_temp_path $work/tmp;
  server {
    listen 127.0.0.1:$origin_port;
    root $root/Samples;
    access_log $work/origin.log;
  }
  upstream easel {
    hash \$request_uri consistent;
    server 127.0.0.1:${ports[0]} max_fails=1 fail_timeout=30s;
    server 127.0.0.1:${ports[1]} max_fails=1 fail_timeout=30s;
    server 127.0.0.1:${ports[2]} max_fails=1 fail_timeout=30s;
    keepalive 32;
  }
  server {
    listen 127.0.0.1:$balancer_port;
    location / {
      proxy_pass http://easel;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_connect_timeout 1s;
      proxy_next_upstream error timeout http_502 http_503;
      proxy_next_upstream_tries 3;
    }
  }
}
NGINX
mkdir -p "$work/tmp"
"$nginx_bin" -c "$work/nginx.conf" -p "$work"
wait_for "http://127.0.0.1:$origin_port/LICENSE.md"

# Three instances: the same origin, one shared tier, each other as peers.
peer_flags() { for p in "${ports[@]}"; do [ "$p" != "$1" ] && echo "--peer http://127.0.0.1:$p"; done; }
for i in 0 1 2; do
  port=${ports[$i]}
  # shellcheck disable=SC2046 # one flag per word
  EASEL_ADMIN_TOKEN="$token" "$easel" serve --port "$port" --origin "http://127.0.0.1:$origin_port/" \
    --shared-cache "s3://easel-cluster/$shared_prefix" $(peer_flags "$port") --cache-dir "$work/cache-$i" > "$work/easel-$i.log" 2>&1 &
  pids+=($!)
  disown "$!"  # no job notice when the test kills it
  echo "${pids[-1]}" > "$work/easel-$i.pid"
done
for port in "${ports[@]}"; do wait_for "http://127.0.0.1:$port/health"; done
balancer="http://127.0.0.1:$balancer_port"

if [ "$mode" != "--test" ]; then
  echo "cluster: $balancer/ (instances ${ports[*]}, originals on :$origin_port, S3 at $EASEL_S3_ENDPOINT); Ctrl-C stops it"
  echo "purge: curl -X DELETE -H 'Authorization: Bearer $token' $balancer/images/chelsea-cat.jpg"
  # The instances are disowned (no job notice when the test kills one), so `wait` would return
  # at once: poll them instead, until Ctrl-C or an instance stops.
  while kill -0 "${pids[0]}" 2>/dev/null && kill -0 "${pids[1]}" 2>/dev/null && kill -0 "${pids[2]}" 2>/dev/null; do sleep 1; done
  echo "cluster: an instance stopped; see $work/easel-*.log" >&2
  exit 1
fi

# --- The cluster test ---
fail() { echo "cluster test FAILED: $*" >&2; for f in "$work"/easel-*.log "$work/nginx-error.log"; do echo "== $f" >&2; tail -5 "$f" >&2; done; exit 1; }
ls Samples | grep -E '\.(jpg|png)$' | sed 's#^#/images/thumb/#' > "$work/paths"
sources=$(wc -l < "$work/paths")
origin_reads() { grep -cE '\.(jpg|png) HTTP/[0-9.]+" 200 ' "$work/origin.log" || true; }

# 1. Warm: every variant once through nginx; each instance makes its share.
"$python" scripts/cluster/load.py --base "$balancer" --paths "$work/paths" --requests "$sources" --threads 4 > "$work/warm.json" \
  || fail "warming: $(cat "$work/warm.json")"
[ "$(origin_reads)" -eq "$sources" ] || fail "warming read the origin $(origin_reads) times for $sources sources"
# The shared tier is written after each answer: wait (bounded) until it holds every variant.
for _ in $(seq 1 100); do
  [ "$("$python" scripts/cluster/count_objects.py "$work/moto.json" easel-cluster "$shared_prefix")" -ge "$sources" ] && break
  sleep 0.1
done
stored=$("$python" scripts/cluster/count_objects.py "$work/moto.json" easel-cluster "$shared_prefix")
[ "$stored" -ge "$sources" ] || fail "the shared tier holds $stored objects, expected $sources"

# 2. Load, and one instance killed with SIGKILL after 50 requests.
victim=$(cat "$work/easel-1.pid")
"$python" scripts/cluster/load.py --base "$balancer" --paths "$work/paths" --requests 400 --threads 8 --after 50 \
  --command "kill -9 $victim" > "$work/load.json" || fail "requests failed under load: $(cat "$work/load.json")"
grep -q '"fired": true' "$work/load.json" || fail "the instance was not killed"
kill -0 "$victim" 2>/dev/null && fail "the instance is still running"
grep -q "127.0.0.1:${ports[1]}" "$work/nginx-error.log" || fail "nginx never noticed the dead instance"
# 3. Every variant was made once cluster-wide: the killed instance's share came from the shared tier.
[ "$(origin_reads)" -eq "$sources" ] || fail "the origin was read $(origin_reads) times for $sources sources"

# 4. A purge through the balancer reaches the live peers and names the dead one.
status=$(curl -s -o "$work/purge.txt" -w '%{http_code}' -X DELETE -H "Authorization: Bearer $token" "$balancer/images/chelsea-cat.jpg")
# (Whichever live instance nginx hands it to, its peer ${ports[1]} is dead: 202, naming it.)
{ [ "$status" = 202 ] && grep -q "127.0.0.1:${ports[1]}" "$work/purge.txt"; } || fail "purge answered $status: $(cat "$work/purge.txt")"
curl -fsS -o /dev/null "$balancer/images/thumb/chelsea-cat.jpg" || fail "no answer after the purge"
[ "$(origin_reads)" -eq $((sources + 1)) ] || fail "after the purge the origin was read $(origin_reads) times, expected $((sources + 1))"
echo "cluster test: OK ($sources variants, 400 requests under a SIGKILL: $(cat "$work/load.json" | "$python" -c 'import json,sys; print(json.load(sys.stdin)["statuses"])'), origin reads $(origin_reads), purge $status)"
