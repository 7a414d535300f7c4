#!/usr/bin/env bash
# Runs deploy/nginx.conf and deploy/nginx/ (its locations) in front of two thumbd instances
# on 127.0.0.1 (signed URLs on, a loopback origin serving generated images) and checks (see
# docs/operations.md, "nginx in front"): thumbnails through nginx with the signature passed through
# untouched; a cache HIT on the second request; format=auto keyed on what Accept decides (WebP,
# AVIF and JPEG entries side by side, other spellings of Accept hitting them, Vary: Accept kept);
# 304 on If-None-Match; /info (signed) as cached JSON on the instance that holds its source; the
# framework routes through a second nginx in front of an unsigned instance: /_next/image keyed on
# what Accept decides (and not on dpl), /_ipx/ and /_image keyed on the target alone, the weserv
# root / not passed; /prefetch, /cache and /metrics refused by nginx; and one instance
# stopping with SIGTERM while requests keep coming: its /readyz 503 during its drain phase,
# every request through nginx answered 200, by the other instance once it is gone.
# Usage: deploy/test-nginx.sh      (THUMBD_BIN=path skips the build; KEEP_WORK=1 keeps logs)
set -euo pipefail
name=nginx
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d /tmp/thumbd-nginx.XXXXXX)"
. "$root/deploy/lib.sh"

"$root/scripts/setup.sh" nginx libvips-tools curl python3
bench_build
thumbd="$work/thumbd"
key="$(python3 -c 'import secrets; print(secrets.token_hex(32))')"

mkdir -p "$work/sources"
make_sources "$work/sources"
origin_port="$(free_port)"
start_origin "$work/sources" "$origin_port"

# Two instances. With --drain-delay, SIGTERM makes /readyz 503 while the instance keeps serving
# for that long, then it stops.
start_thumbd() { # start_thumbd PORT LOG: the pid in $started
  "$thumbd" --port "$1" --allow-loopback-sources --signing-keys "$key" --cache-bytes 64M --work-bytes 128M \
    --workers 1 --drain-delay 3 >"$2" 2>&1 &
  started=$!
  pids+=("$started")
}
port_a="$(free_port)"
port_b="$(free_port)"
start_thumbd "$port_a" "$work/thumbd-a.log"
pid_a=$started
start_thumbd "$port_b" "$work/thumbd-b.log"
pid_b=$started
wait_for "http://127.0.0.1:$port_a/livez"
wait_for "http://127.0.0.1:$port_b/livez"

nginx_port="$(free_port)"
nginx_conf "$work/nginx" "$nginx_port" "$port_a" "$port_b"
start_nginx "$work/nginx" "$nginx_port"
log "nginx 127.0.0.1:$nginx_port -> thumbd 127.0.0.1:$port_a (pid $pid_a), 127.0.0.1:$port_b (pid $pid_b)"
base="http://127.0.0.1:$nginx_port"

src() { urlencode "http://127.0.0.1:$origin_port/$1"; }
signed() { "$thumbd" sign --key "$key" "$1"; }
# fetch TARGET [curl args...]: headers in $work/h, body in $work/b; prints the status
fetch() {
  local target="$1"
  shift
  curl -s -D "$work/h" -o "$work/b" -w '%{http_code}' "$@" "$base$target"
}
header() { sed -n "s/^$1: *\([^\r]*\)\r\{0,1\}$/\1/Ip" "$work/h" | head -1; }
size_of() { vipsheader "$work/b" 2>/dev/null | sed -n 's/^[^:]*: \([0-9]*x[0-9]*\) .*/\1/p'; }

# --- thumbnails, signature passed through untouched, nginx cache HIT
t="$(signed "/thumb?url=$(src photo.jpg)&w=300")"
code="$(fetch "$t")"
check "signed thumbnail through nginx: 200 image/jpeg 300x200, MISS (got $code $(header Content-Type) $(size_of) $(header X-Cache-Status))" \
  test "$code $(header Content-Type) $(size_of) $(header X-Cache-Status)" = "200 image/jpeg 300x200 MISS"
etag="$(header ETag)"
check "a strong ETag and thumbd's Cache-Control come through (got $etag, $(header Cache-Control))" \
  test -n "$etag" -a "${etag#W/}" = "$etag" -a -n "$(header Cache-Control)"
code="$(fetch "$t")"
check "second request: nginx cache HIT, same ETag (got $code $(header X-Cache-Status))" \
  test "$code $(header X-Cache-Status) $(header ETag)" = "200 HIT $etag"
code="$(fetch "/thumb?url=$(src photo.jpg)&w=300")"
check "unsigned target: 403 problem+json from thumbd (got $code $(header Content-Type))" \
  test "$code $(header Content-Type)" = "403 application/problem+json"
# A character inside the signature (sig= is last): the last of its 43 carries 2 unused bits, so
# changing it may leave the same 32 bytes.
swap=A
[ "${t: -10:1}" != A ] || swap=B
code="$(fetch "${t:0:${#t}-10}$swap${t: -9}")"
check "tampered signature: 403 (got $code)" test "$code" = 403

# --- 304 on If-None-Match, from nginx's cache
code="$(fetch "$t" -H "If-None-Match: $etag")"
check "If-None-Match through nginx: 304 (got $code $(header X-Cache-Status))" test "$code" = 304
code="$(fetch "$t" -H 'If-None-Match: "something-else"')"
check "another ETag: 200 (got $code)" test "$code" = 200

# --- format=auto: the key holds what Accept decides
auto="$(signed "/thumb?url=$(src photo.png)&w=240&format=auto")"
expect_auto() { # expect_auto ACCEPT TYPE CACHE-STATUS
  local code
  code="$(fetch "$auto" -H "Accept: $1")"
  check "format=auto, Accept '$1': $2 $3 (got $code $(header Content-Type) $(header X-Cache-Status), Vary $(header Vary))" \
    test "$code $(header Content-Type) $(header X-Cache-Status) $(header Vary)" = "200 $2 $3 Accept"
}
expect_auto "image/webp" image/webp MISS
expect_auto "image/jpeg" image/png MISS
expect_auto "image/webp" image/webp HIT
expect_auto "image/jpeg" image/png HIT
expect_auto "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8" image/avif MISS
expect_auto "image/avif,image/webp,*/*" image/avif HIT
expect_auto "text/html,image/webp,*/*;q=0.8" image/webp HIT
expect_auto "image/webp;q=0, image/png" image/png HIT
expect_auto "*/*" image/png HIT

# --- /info: signed like /thumb, cached JSON, on the instance that holds the source
code="$(fetch "$(signed "/thumb?url=$(src photo.jpg)&w=310")")"
upstream_of_thumb="$(header X-Upstream-Addr)"
check "another size: a MISS, so an instance answered (got $code $(header X-Cache-Status) $upstream_of_thumb)" \
  test "$code $(header X-Cache-Status)" = "200 MISS" -a -n "$upstream_of_thumb"
info="$(signed "/info?url=$(src photo.jpg)")"
code="$(fetch "$info")"
dims="$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["width"], d["height"], d["format"])' "$work/b" 2>/dev/null || true)"
check "/info through nginx: 200 application/json, 1200 800 jpeg, MISS (got $code $(header Content-Type), $dims, $(header X-Cache-Status))" \
  test "$code $(header Content-Type)|$dims|$(header X-Cache-Status)" = "200 application/json|1200 800 jpeg|MISS"
check "/info on the instance that made the source's thumbnails (got $(header X-Upstream-Addr), $upstream_of_thumb)" \
  test "$(header X-Upstream-Addr)" = "$upstream_of_thumb"
code="$(fetch "$info")"
check "/info again: nginx cache HIT (got $code $(header X-Cache-Status))" test "$code $(header X-Cache-Status)" = "200 HIT"
code="$(fetch "/_next/image?url=$(src photo.jpg)&w=640&q=75")"
check "/_next/image on a signed instance: 403 problem+json from thumbd (got $code $(header Content-Type))" \
  test "$code $(header Content-Type)" = "403 application/problem+json"

# --- the framework routes: an unsigned instance (they are off with --signing-keys) behind a
# second nginx with the same files, relative sources from the origin (--source-base-url)
port_c="$(free_port)"
"$thumbd" --port "$port_c" --allow-loopback-sources --source-base-url "http://127.0.0.1:$origin_port" \
  --cache-bytes 64M --work-bytes 128M --workers 1 >"$work/thumbd-c.log" 2>&1 &
pids+=($!)
wait_for "http://127.0.0.1:$port_c/livez"
open_port="$(free_port)"
# With deploy/nginx/thumbd-weserv.conf on the same port: its server name gets the weserv root.
sed -e "s|^    listen 80;|    listen 127.0.0.1:$open_port;|" "$root/deploy/nginx/thumbd-weserv.conf" >"$work/weserv.conf"
grep -q "listen 127.0.0.1:$open_port;" "$work/weserv.conf" || die "thumbd-weserv.conf: 'listen 80;' not found"
nginx_conf "$work/nginx-open" "$open_port" "$port_c" "" "$work/weserv.conf"
start_nginx "$work/nginx-open" "$open_port"
signed_base="$base"
base="http://127.0.0.1:$open_port"

# /_next/image: the format always follows Accept, so its outcome is always in the key; dpl is not
next_target="/_next/image?url=%2Fphoto.png&w=640&q=75"
expect_next() { # expect_next TARGET ACCEPT TYPE CACHE-STATUS
  local code
  code="$(fetch "$1" -H "Accept: $2")"
  check "/_next/image, Accept '$2': $3 $4 (got $code $(header Content-Type) $(header X-Cache-Status), Vary $(header Vary), $(size_of))" \
    test "$code $(header Content-Type) $(header X-Cache-Status) $(header Vary) $(size_of)" = "200 $3 $4 Accept 640x427"
}
expect_next "$next_target" "image/avif,image/webp,*/*" image/avif MISS
expect_next "$next_target" "image/webp,*/*" image/webp MISS
expect_next "$next_target" "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8" image/avif HIT
expect_next "$next_target" "text/html,image/webp,*/*;q=0.8" image/webp HIT
expect_next "$next_target" "*/*" image/png MISS
expect_next "$next_target" "image/avif;q=0, image/png" image/png HIT
# AVIF alone is an outcome of its own (an animation would be a GIF for it, WebP for the others)
expect_next "$next_target" "image/avif,*/*" image/avif MISS
expect_next "$next_target&dpl=dpl_01JV5V3CVXQNYFM2NHCRBM7KQH" "image/avif,image/webp,*/*" image/avif HIT
check "/_next/image: Next.js' hardening headers come through (got $(header X-Content-Type-Options), $(header Content-Security-Policy))" \
  test "$(header X-Content-Type-Options)|$(header Content-Security-Policy)" = "nosniff|script-src 'none'; frame-src 'none'; sandbox;"
code="$(fetch "/_next/image?url=%2Fphoto.png&w=641&q=75")"
check "/_next/image with a width Next.js does not ask for: 400 problem+json (got $code $(header Content-Type))" \
  test "$code $(header Content-Type)" = "400 application/problem+json"

# /_ipx/ and /_image: the format named, else the source's, whatever Accept says: the target is the key
expect_plain() { # expect_plain TARGET ACCEPT TYPE SIZE CACHE-STATUS
  local code
  code="$(fetch "$1" -H "Accept: $2")"
  check "$1, Accept '$2': 200 $3 $4 $5 (got $code $(header Content-Type) $(size_of) $(header X-Cache-Status))" \
    test "$code $(header Content-Type) $(size_of) $(header X-Cache-Status)" = "200 $3 $4 $5"
}
expect_plain "/_ipx/w_200&f_webp/photo.jpg" "*/*" image/webp 200x133 MISS
expect_plain "/_ipx/w_200&f_webp/photo.jpg" "image/avif,*/*" image/webp 200x133 HIT
expect_plain "/_ipx/w_200/photo.png" "image/avif,image/webp,*/*" image/png 200x133 MISS
expect_plain "/_ipx/w_200/photo.png" "*/*" image/png 200x133 HIT
expect_plain "/_ipx/w_120/http://127.0.0.1:$origin_port/photo.jpg" "*/*" image/jpeg 120x80 MISS
expect_plain "/_image?href=%2Fphoto.jpg&w=300&f=webp" "*/*" image/webp 300x200 MISS
expect_plain "/_image?href=%2Fphoto.jpg&w=300&f=webp" "image/avif,*/*" image/webp 300x200 HIT
expect_plain "/_image?href=%2Fphoto.png&w=300" "image/webp,*/*" image/png 300x200 MISS
# The weserv query at / is not in the shared locations (a site owns /): nginx's own 404; on the
# server name of thumbd-weserv.conf it is thumbd's, the URL unencoded and last as Nuxt sends it.
weserv="/?filename=photo&we&w=100&output=webp&url=http://127.0.0.1:$origin_port/photo.jpg"
code="$(fetch "$weserv")"
check "the weserv root through the shared locations: 404 from nginx (got $code $(header Content-Type))" \
  test "$code $(header Content-Type)" = "404 text/html"
for status in MISS HIT; do
  code="$(fetch "$weserv" -H "Host: thumbd.example.org" -H "Accept: image/avif,*/*")"
  check "the weserv root on thumbd's server name: 200 image/webp 100x67 $status (got $code $(header Content-Type) $(size_of) $(header X-Cache-Status))" \
    test "$code $(header Content-Type) $(size_of) $(header X-Cache-Status)" = "200 image/webp 100x67 $status"
done
code="$(fetch "/_ipx/w_200&f_webp/photo.jpg" -H "Host: thumbd.example.org")"
check "the shared locations on thumbd's server name too (got $code $(header X-Cache-Status))" \
  test "$code $(header X-Cache-Status)" = "200 HIT"
base="$signed_base"

# --- refused at nginx: 404 from nginx itself (text/html), never reaching thumbd
refused() { # refused METHOD TARGET
  local code
  code="$(fetch "$2" -X "$1")"
  check "$1 $2: 404 from nginx (got $code $(header Content-Type))" test "$code $(header Content-Type)" = "404 text/html"
}
refused POST "$(signed "/prefetch?url=$(src photo.jpg)&w=300")"
refused GET /cache/stats
refused DELETE "/cache?url=$(src photo.jpg)"
refused GET /metrics
refused GET /metrics/
refused GET /
refused GET /thumbx
for p in /livez /healthz /readyz; do
  code="$(fetch "$p")"
  check "GET $p through nginx: 200 (got $code)" test "$code" = 200
done

# --- one instance stops while requests keep coming through nginx
: >"$work/load.txt"
python3 "$root/deploy/load-through.py" "$nginx_port" "$origin_port" "$key" "$work/load.txt" "$work/stop" &
loader=$!
pids+=("$loader")
lines() { wc -l <"$work/load.txt"; }
wait_lines() { # wait_lines N: until the loader has N answers (60 s at most)
  for _ in $(seq 600); do [ "$(lines)" -ge "$1" ] && return 0; sleep 0.1; done
  die "the loader made only $(lines) of $1 requests"
}
wait_lines 20
# who answered: the last instance nginx tried
answered_by() { awk -v from="$1" -v to="$2" 'NR >= from && NR <= to { n = split($2, u, ","); print u[n] }' "$work/load.txt"; }
check "both instances answer before the stop" test "$(answered_by 1 20 | sort -u | grep -c 127.0.0.1)" = 2
before="$(lines)"
kill -TERM "$pid_a"
log "SIGTERM to instance A after $before requests"
ready="$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port_a/readyz")"
live="$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port_a/livez")"
check "draining instance: /readyz 503 and still serving /livez 200 (got $ready, $live)" test "$ready $live" = "503 200"
# The /readyz below gets A's 503, which nginx counts as a failure (max_fails=1): it then sends A
# nothing for fail_timeout. So first wait (2 s at most, within the 3-s drain) until the load has
# had an answer from A itself after the SIGTERM; otherwise whether A served during its drain
# would depend on how fast these curls ran.
for _ in $(seq 20); do
  answered_by $((before + 1)) "$(lines)" | grep -qx "127.0.0.1:$port_a" && break
  sleep 0.1
done
code="$(fetch /readyz)"
check "nginx /readyz during the drain: 200 from the other instance (got $code)" test "$code" = 200
wait "$pid_a" && rc=0 || rc=$?
pids=("${pids[@]/$pid_a/}")
at_exit="$(lines)"
check "instance A exits 0 after SIGTERM (got $rc)" test "$rc" = 0
wait_lines $((at_exit + 20))
touch "$work/stop"
wait "$loader" || true
pids=("${pids[@]/$loader/}")
total="$(lines)"
not_ok="$(awk '$1 != 200' "$work/load.txt" | wc -l)"
during="$(answered_by $((before + 1)) "$at_exit" | grep -cx "127.0.0.1:$port_a" || true)"
after_a="$(answered_by $((at_exit + 1)) "$total" | grep -cx "127.0.0.1:$port_a" || true)"
log "loader: $total requests, $((at_exit - before)) between SIGTERM and exit ($during of them answered by A), $((total - at_exit)) after"
check "every request through nginx answered 200 ($not_ok were not)" test "$not_ok" = 0
[ "$not_ok" = 0 ] || awk '$1 != 200' "$work/load.txt" | head >&2
check "A kept serving during its drain ($during answers)" test "$during" -gt 0
check "after A is gone, only B answers (A: $after_a)" test "$after_a" = 0

[ "$fail" = 0 ] || die "some checks failed"
log "all checks passed"
