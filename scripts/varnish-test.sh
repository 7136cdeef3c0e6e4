#!/usr/bin/env bash
# easel serve behind a real Varnish (Debian's package) with docs/varnish.vcl, all on 127.0.0.1:
# - Vary: Accept keeps WebP and JPEG answers apart in Varnish's cache;
# - a strong ETag revalidates: a client's If-None-Match gets 304, and once an object is stale
#   Varnish revalidates it with easel (easel answers 304, Varnish keeps the bytes);
# - Cache-Control passes through and Age is set on hits;
# - signed URLs are cached like any other;
# - a purge on easel bans the source's answers in Varnish (cdnBanURLs, Surrogate-Key).
# Uses EASEL_BIN (default .build/debug/easel, built when missing). Bounded: about 10 s.
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d /tmp/easel-varnish.XXXXXX)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  if [ "${KEEP:-0}" != 1 ]; then rm -rf "$work"; fi
}
trap cleanup EXIT
easel="${EASEL_BIN:-.build/debug/easel}"
[ -x "$easel" ] || swift build --product easel
varnishd="$(command -v varnishd || echo /usr/sbin/varnishd)"
[ -x "$varnishd" ] || { echo "varnishd missing: make deps installs it" >&2; exit 1; }

# N free ports, all different: every socket is held until all are bound (two free_port calls
# in a row could be given the same port, and easel would then answer in Varnish's place).
free_ports() { python3 -c 'import socket, sys; s = [socket.socket() for _ in range(int(sys.argv[1]))]; [x.bind(("127.0.0.1", 0)) for x in s]; print(" ".join(str(x.getsockname()[1]) for x in s))' "$1"; }
wait_for() {
  for _ in $(seq 1 200); do curl -fsS -o /dev/null "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "no answer from $1" >&2; return 1
}
fail() { echo "varnish test FAILED: $*" >&2; tail -5 "$work/easel.log" >&2; for h in "$work"/*.h; do echo "== $h" >&2; head -12 "$h" >&2; done; exit 1; }
header() { grep -i "^$1:" "$2" | head -1 | cut -d' ' -f2- | tr -d '\r'; }

read -r easel_port varnish_port <<<"$(free_ports 2)"
key=00112233445566778899aabbccddeeff; salt=5a17; token="varnish-test-admin-token"
cat > "$work/easel.json" <<JSON
{ "port": $easel_port, "origin": "$PWD/Samples", "cacheDirectory": "$work/cache", "maxAge": 1,
  "signingKeys": ["$key"], "signingSalt": "$salt", "adminToken": "$token",
  "cdnBanURLs": ["http://127.0.0.1:$varnish_port/"] }
JSON
"$easel" serve --config "$work/easel.json" > "$work/easel.log" 2>&1 &
pids+=($!)
sed "s/\.port = \"8080\"/.port = \"$easel_port\"/" docs/varnish.vcl > "$work/easel.vcl"
"$varnishd" -F -j none -n "$work/varnish" -a "127.0.0.1:$varnish_port" -f "$work/easel.vcl" -s malloc,64m \
  -p default_grace=0 > "$work/varnish.log" 2>&1 &
pids+=($!)
wait_for "http://127.0.0.1:$easel_port/health"
wait_for "http://127.0.0.1:$varnish_port/health"
v="http://127.0.0.1:$varnish_port"

get() {  # get NAME URL [curl args…]: headers in $work/NAME.h, body in $work/NAME.b
  local name="$1" url="$2"; shift 2
  curl -sS -D "$work/$name.h" -o "$work/$name.b" "$@" "$url"
}

# 1. Vary: Accept keeps the kinds apart: AVIF, WebP and JPEG, one cached copy each.
get avif1 "$v/images/thumb/chelsea-cat.jpg" -H "Accept: image/avif,image/webp,image/apng,image/*,*/*;q=0.8"
get avif2 "$v/images/thumb/chelsea-cat.jpg" -H "Accept: image/webp, image/avif"
[ "$(header Content-Type "$work/avif1.h")" = image/avif ] || fail "no AVIF for an AVIF Accept"
[ "$(header X-Cache "$work/avif1.h")" = MISS ] && [ "$(header X-Cache "$work/avif2.h")" = HIT ] || fail "AVIF not cached"
# Each answer has its own request's ID, the hit too (never the ID of the request that filled the
# cache); a client's own ID comes back as sent.
id1="$(header X-Request-ID "$work/avif1.h")"; id2="$(header X-Request-ID "$work/avif2.h")"
[ -n "$id1" ] && [ -n "$id2" ] && [ "$id1" != "$id2" ] || fail "request IDs: miss '$id1', hit '$id2'"
get avif3 "$v/images/thumb/chelsea-cat.jpg" -H "Accept: image/webp, image/avif" -H "X-Request-ID: varnish-test-3"
[ "$(header X-Request-ID "$work/avif3.h")" = varnish-test-3 ] || fail "the client's request ID did not come back"
get webp1 "$v/images/thumb/chelsea-cat.jpg" -H "Accept: image/avif;q=0,image/webp,*/*"
get webp2 "$v/images/thumb/chelsea-cat.jpg" -H "Accept: image/webp,*/*;q=0.8"
get jpeg1 "$v/images/thumb/chelsea-cat.jpg" -H "Accept: image/jpeg"
get jpeg2 "$v/images/thumb/chelsea-cat.jpg"
[ "$(header Content-Type "$work/webp1.h")" = image/webp ] || fail "no WebP for a WebP Accept"
[ "$(header X-Cache "$work/webp1.h")" = MISS ] && [ "$(header X-Cache "$work/webp2.h")" = HIT ] || fail "WebP not cached"
[ "$(header Content-Type "$work/jpeg1.h")" = image/jpeg ] || fail "a JPEG client got $(header Content-Type "$work/jpeg1.h")"
[ "$(header X-Cache "$work/jpeg1.h")" = MISS ] && [ "$(header X-Cache "$work/jpeg2.h")" = HIT ] || fail "JPEG not cached apart"
[ "$(header Content-Type "$work/jpeg2.h")" = image/jpeg ] || fail "the cached JPEG answer is $(header Content-Type "$work/jpeg2.h")"
[ "$(header Vary "$work/webp1.h")" = Accept ] || fail "no Vary: Accept"
# 2. Cache-Control passes through; Age is set on hits.
[ "$(header Cache-Control "$work/webp2.h")" = "public, max-age=1" ] || fail "Cache-Control is $(header Cache-Control "$work/webp2.h")"
age=$(header Age "$work/webp2.h"); [[ "$age" =~ ^[0-9]+$ ]] || fail "no Age on a hit"
# 3. A strong ETag: If-None-Match answered 304 by Varnish.
etag=$(header ETag "$work/jpeg2.h"); [[ "$etag" == \"*\" ]] || fail "not a strong ETag: $etag"
status=$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" "$v/images/thumb/chelsea-cat.jpg")
[ "$status" = 304 ] || fail "If-None-Match got $status"
# ...and once the object is stale (max-age=1), Varnish revalidates it with easel: 304, same bytes.
revalidated=no
for _ in $(seq 1 60); do
  get again "$v/images/thumb/chelsea-cat.jpg"
  if [ "$(header X-Easel-Revalidated "$work/again.h")" = true ]; then revalidated=yes; break; fi
  sleep 0.1
done
[ "$revalidated" = yes ] || fail "Varnish never revalidated with a 304 from easel"
cmp -s "$work/again.b" "$work/jpeg1.b" || fail "the revalidated answer changed"
[ "$(header ETag "$work/again.h")" = "$etag" ] || fail "the revalidated ETag changed"
# 4. Signed URLs are cacheable.
path="/images/w=120,h=90,fit=fill/coffee-cup.jpg"
sig=$(python3 -c "import hmac,hashlib,base64,sys; print(base64.urlsafe_b64encode(hmac.new(bytes.fromhex('$key'), bytes.fromhex('$salt')+b'$path', hashlib.sha256).digest()).decode().rstrip('='))")
get signed1 "$v$path?s=$sig"; get signed2 "$v$path?s=$sig"
grep -q "^HTTP/1.1 200" "$work/signed1.h" || fail "the signed URL was refused: $(head -1 "$work/signed1.h")"
[ "$(header X-Cache "$work/signed2.h")" = HIT ] || fail "the signed URL was not cached"
status=$(curl -s -o /dev/null -w '%{http_code}' "$v$path?s=${sig}x")
[ "$status" = 403 ] || fail "a bad signature got $status"
# 5. A purge on easel bans the source's answers in Varnish.
surrogate=$(header Surrogate-Key "$work/jpeg2.h"); [[ "$surrogate" =~ ^easel-[0-9a-f]{16}$ ]] || fail "no Surrogate-Key"
# Objects live 1 s here (for step 3): the other source is fetched again just before the purge and
# checked just after it, with nothing slow in between, so that it is still fresh.
get cat "$v/images/thumb/chelsea-cat.jpg" -H "Accept: image/webp"
get other1 "$v$path?s=$sig"
status=$(curl -s -o "$work/purge.txt" -w '%{http_code}' -X DELETE -H "Authorization: Bearer $token" "http://127.0.0.1:$easel_port/images/chelsea-cat.jpg")
[ "$status" = 200 ] || fail "purge answered $status: $(cat "$work/purge.txt")"
get other "$v$path?s=$sig"
[ "$(header X-Cache "$work/other.h")" = HIT ] || fail "the ban reached another source"
get after "$v/images/thumb/chelsea-cat.jpg" -H "Accept: image/webp"
[ "$(header X-Cache "$work/after.h")" = MISS ] || fail "Varnish still served the purged image from its cache"
# A ban from elsewhere than the ACL is refused: only loopback here, so check a malformed key instead.
status=$(curl -s -o /dev/null -w '%{http_code}' -X BAN -H "Surrogate-Key: easel-x" "$v/")
[ "$status" = 400 ] || fail "a malformed ban got $status"
echo "varnish test: OK (Vary keeps AVIF, WebP and JPEG apart, Age, Cache-Control, 304 to clients and to Varnish, signed URLs cached, purge bans)"
