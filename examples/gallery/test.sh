#!/usr/bin/env bash
# The gallery in a real browser (see CONTRIBUTING.md, "Deploy and example checks"): photographs from a
# Debian package served by a loopback origin, thumbd (signed URLs on) behind nginx with
# deploy/nginx.conf, the page built by build.sh with signed srcset URLs and served by the same
# nginx (examples/gallery/nginx.conf), then headless Chromium at 500 and 1280 px wide, DPR 1 and
# 2: check.py checks what each run loaded and chose; a screenshot of each is saved.
#
# Chromium gets only 127.0.0.1: every other host fails to resolve and any other traffic goes to
# a dead proxy; background services are off.
#
# Usage: examples/gallery/test.sh   (THUMBD_BIN=path skips the build; OUT=dir for screenshots,
#                                    default examples/gallery/out; KEEP_WORK=1 keeps logs)
set -euo pipefail
name=gallery
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
gallery="$root/examples/gallery"
work="$(mktemp -d /tmp/thumbd-gallery.XXXXXX)"
. "$root/deploy/lib.sh"
out="${OUT:-$gallery/out}"

"$root/scripts/setup.sh" nginx chromium fonts-dejavu-core libvips-tools curl python3
bench_build

# Source photographs: eight of lomiri-wallpapers-16.04 (bench/corpus.sh uses the same package),
# reduced to 1600 px wide so the origin and thumbd have less to move.
PHOTOS=(Bridge_by_Sander_Klootwijk Dragonfly_by_Bolly Picture_0B_by_freespace Wine_by_Jakkub_Mede
  aitzgorri_by_Aitzol_Berasategi greentock_by_Peter_Nerlich sunset_by_Aitzol_Berasategi umang_by_Abhishek_Mudgal)
debs="$gallery/work"
mkdir -p "$debs" "$work/sources" "$work/deb"
deb="$(ls "$root"/bench/work/debs/lomiri-wallpapers-16.04_*.deb "$debs"/lomiri-wallpapers-16.04_*.deb 2>/dev/null | head -1 || true)"
if [ -z "$deb" ]; then
  log "apt-get download lomiri-wallpapers-16.04 (16 MB, once; kept in $debs)"
  (cd "$debs" && { apt-get download lomiri-wallpapers-16.04 >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null && apt-get download lomiri-wallpapers-16.04 >/dev/null; }; })
  deb="$(ls "$debs"/lomiri-wallpapers-16.04_*.deb | head -1)"
fi
dpkg-deb -x "$deb" "$work/deb"
sources=()
for photo in "${PHOTOS[@]}"; do
  file="$(echo "$photo" | tr 'A-Z' 'a-z').jpg"
  vips thumbnail "$work/deb/usr/share/backgrounds/$photo.jpg" "$work/sources/${file}[Q=85,strip]" 1600
  sources+=("$file")
done

origin_port="$(free_port)"
start_origin "$work/sources" "$origin_port"
key="$(python3 -c 'import secrets; print(secrets.token_hex(32))')"
thumbd_port="$(free_port)"
"$work/thumbd" --port "$thumbd_port" --allow-loopback-sources --signing-keys "$key" >"$work/thumbd.log" 2>&1 &
pids+=($!)
wait_for "http://127.0.0.1:$thumbd_port/livez"

# The page, signed as a back end would sign it.
urls=()
for file in "${sources[@]}"; do urls+=("http://127.0.0.1:$origin_port/$file"); done
SIGNING_KEY="$key" THUMBD="$work/thumbd" "$gallery/build.sh" "$work/site" "${urls[@]}"

# nginx: deploy/nginx.conf and its snippet, plus the gallery's server (its port and root set here).
nginx_port="$(free_port)"
page_port="$(free_port)"
sed -e "s|^    listen 8000;|    listen 127.0.0.1:$page_port;|" -e "s|^    root /srv/thumbd-gallery;|    root $work/site;|" \
  "$gallery/nginx.conf" >"$work/gallery-server.conf"
grep -q "listen 127.0.0.1:$page_port;" "$work/gallery-server.conf" && grep -q "root $work/site;" "$work/gallery-server.conf" ||
  die "examples/gallery/nginx.conf: listen 8000 / root lines not found"
nginx_conf "$work/nginx" "$nginx_port" "$thumbd_port" "" "$work/gallery-server.conf"
start_nginx "$work/nginx" "$nginx_port"
page="http://127.0.0.1:$page_port/"
wait_for "$page"
log "page $page (nginx), thumbd 127.0.0.1:$thumbd_port, origin 127.0.0.1:$origin_port"

chromium_run() { # chromium_run WIDTH HEIGHT DPR PROFILE ARGS...
  local w="$1" h="$2" d="$3" profile="$4"
  shift 4
  chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$profile" \
    --no-first-run --no-default-browser-check --disable-background-networking --disable-component-update \
    --disable-sync --disable-extensions --disable-default-apps --disable-domain-reliability \
    --proxy-server=127.0.0.1:9 --host-resolver-rules="MAP * ~NOTFOUND, EXCLUDE 127.0.0.1" \
    --window-size="$w,$h" --force-device-scale-factor="$d" --virtual-time-budget=20000 "$@" 2>>"$work/chromium.log"
}

mkdir -p "$out"
access="$work/nginx/logs/access.log"
# viewport width, window height, DPR, the candidate expected (see check.py)
while read -r w h d expected; do
  run="${w}x${h}@${d}"
  before="$(wc -l <"$access")"
  chromium_run "$w" "$h" "$d" "$work/profile-$run-dom" --dump-dom "$page" >"$work/dom-$run.html" || true
  tail -n +"$((before + 1))" "$access" >"$work/access-$run.log"
  log "Chromium $run: expecting the ${expected}w candidate"
  if python3 "$gallery/check.py" "$work/dom-$run.html" "$w" "$d" "$work/access-$run.log" "$expected" >"$work/check-$run.txt"; then
    rc=0
  else
    rc=1
  fi
  sed "s/^/  /" "$work/check-$run.txt" >&2
  check "Chromium $run: every image loaded, ${expected}w chosen" test "$rc" = 0
  # The pixels behind one of them: the same URL through nginx (a cache hit now).
  target="$(sed -n 's|.*"GET \(/thumb?[^ ]*\) HTTP.*|\1|p' "$work/access-$run.log" | head -1)"
  curl -s -o "$work/one.img" "http://127.0.0.1:$page_port$target"
  pixels="$(vipsheader "$work/one.img" 2>/dev/null | sed -n 's/^[^:]*: \([0-9]*x[0-9]*\) .*/\1/p')"
  check "the ${expected}w candidate is $pixels pixels" test "$pixels" = "${expected}x$((expected * 2 / 3))"

  shot="$out/gallery-$run.png"
  rm -f "$shot"
  chromium_run "$w" "$h" "$d" "$work/profile-$run-shot" --screenshot="$shot" "$page" >/dev/null || true
  size="$(vipsheader "$shot" 2>/dev/null | sed -n 's/^[^:]*: \([0-9]*x[0-9]*\) .*/\1/p')"
  deviation="$(vips deviate "$shot" 2>/dev/null || echo 0)"
  check "screenshot $shot: $size, not blank (deviation ${deviation%.*})" \
    test "$size" = "$((w * d))x$((h * d))" -a "${deviation%.*}" -gt 20
done <<'RUNS'
500 900 1 200
500 900 2 400
1280 800 1 400
1280 800 2 800
RUNS

# The small copy for the README (examples/gallery/screenshot.jpg is one of these, committed): the
# wide run's two rows, 960 px wide.
vips crop "$out/gallery-1280x800@1.png" "$work/top.png" 0 0 1280 530
vips thumbnail "$work/top.png" "$out/screenshot.jpg[Q=80,strip]" 960
log "screenshots in $out ($(stat -c %s "$out/screenshot.jpg") bytes for the small copy)"

[ "$fail" = 0 ] || die "some checks failed"
log "all checks passed"
