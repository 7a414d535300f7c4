#!/usr/bin/env bash
# The framework examples against a real thumbd, and a page built as next/image builds it, in
# headless Chromium (see CONTRIBUTING.md, "Deploy and example checks"). thumbd runs unsigned as
# a public frontend's backend (--allowed-widths next,astro --snap-widths --allowed-qualities
# --source-base-url); the site's origin (origin.py) serves photographs from a Debian package on
# 127.0.0.1 and can hold every image fetch until it is released.
#
# 1. check-urls.mjs: every URL the examples make thumbd answer as asked. examples/nextjs (Next.js'
#    default loader at images.path, and thumbd-loader.mjs), examples/nuxt (Nuxt Image's weserv
#    provider, both URL styles), examples/astro (the config and its image service), read as they
#    are: each URL a 200 of the type asked or negotiated, decoded at the width asked (rounded up
#    to an allowed one), with Next.js' headers; refusals as problem+json; a /_next/image answer
#    is the /thumb cache entry.
# 2. build-page.mjs writes the page: per source its /info placeholder and a /_next/image srcset.
#    With thumbd's cache emptied and the origin holding, Chromium at 1280 px (DPR 1) and 500 px
#    (DPR 2): check-page.mjs checks that each image showed its placeholder with no pixels of its
#    own, then loaded the expected candidate at its width, and the placeholder went. Then a
#    screenshot while the origin holds every image: the placeholders' colours are on screen.
#
# Chromium gets only 127.0.0.1 (as in examples/gallery/test.sh).
#
# Usage: examples/frontends/test.sh   (THUMBD_BIN=path skips the build; OUT=dir for screenshots,
#                                      default examples/frontends/out; KEEP_WORK=1 keeps logs)
set -euo pipefail
name=frontends
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
frontends="$root/examples/frontends"
work="$(mktemp -d /tmp/thumbd-frontends.XXXXXX)"
. "$root/deploy/lib.sh"
out="${OUT:-$frontends/out}"

"$root/scripts/setup.sh" chromium fonts-dejavu-core libvips-tools curl python3 nodejs
bench_build

# The site: photographs of lomiri-wallpapers-16.04 (as the gallery and bench/corpus.sh use) at
# most 1600 px, where each framework keeps its images, and one PNG given as an absolute URL.
debs="$root/bench/work/debs"
mkdir -p "$debs" "$work/deb" "$work/site/images" "$work/site/_next/static/media" "$work/site/_astro" "$work/answers"
deb="$(ls "$debs"/lomiri-wallpapers-16.04_*.deb "$root"/examples/gallery/work/lomiri-wallpapers-16.04_*.deb 2>/dev/null | head -1 || true)"
if [ -z "$deb" ]; then
  log "apt-get download lomiri-wallpapers-16.04 (16 MB, once; kept in $debs)"
  (cd "$debs" && { apt-get download lomiri-wallpapers-16.04 >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null && apt-get download lomiri-wallpapers-16.04 >/dev/null; }; })
  deb="$(ls "$debs"/lomiri-wallpapers-16.04_*.deb | head -1)"
fi
dpkg-deb -x "$deb" "$work/deb"
while read -r photo size path; do
  vips thumbnail "$work/deb/usr/share/backgrounds/$photo.jpg" "$work/site/$path" "$size"
done <<'PHOTOS'
Bridge_by_Sander_Klootwijk 1600 images/bridge.jpg[Q=85,strip]
sunset_by_Aitzol_Berasategi 1600 images/sunset.jpg[Q=85,strip]
umang_by_Abhishek_Mudgal 1200 images/umang.png[strip]
Dragonfly_by_Bolly 1600 _next/static/media/dragonfly.3f2a1b9c.jpg[Q=85,strip]
Wine_by_Jakkub_Mede 1600 _astro/wine.Bx9f2c.jpg[Q=85,strip]
PHOTOS
PAGE=(/images/bridge.jpg /_next/static/media/dragonfly.3f2a1b9c.jpg /_astro/wine.Bx9f2c.jpg /images/sunset.jpg /images/umang.png)

origin_port="$(free_port)"
site="http://127.0.0.1:$origin_port"
python3 "$frontends/origin.py" "$work/site" "$origin_port" 2>"$work/origin.log" &
pids+=($!)
wait_for "$site/_gate/status"
token="$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
thumbd_port="$(free_port)"
thumbd="http://127.0.0.1:$thumbd_port"
"$work/thumbd" --port "$thumbd_port" --allow-loopback-sources --source-base-url "$site" \
  --allowed-widths next,astro --snap-widths --allowed-qualities 50,75,80 --admin-token "$token" >"$work/thumbd.log" 2>&1 &
pids+=($!)
wait_for "$thumbd/livez"
log "thumbd $thumbd, origin $site"

run_check() { # run_check DESCRIPTION OUTPUT-FILE COMMAND...: the command's lines indented, then PASS/FAIL
  local rc=0
  "${@:3}" >"$2" || rc=$?
  sed "s/^/  /" "$2" >&2
  check "$1" test "$rc" = 0
}
run_check "the examples' URLs (Next.js, Nuxt weserv, Astro) answered as asked" "$work/check-urls.txt" \
  node "$frontends/check-urls.mjs" "$thumbd" "$site" "$work/site" "$work/answers"

node "$frontends/build-page.mjs" "$thumbd" "$site" "$work/site/page" "${PAGE[@]}"
page="$site/page/index.html"

gate() { curl -s "$site/_gate/$1"; }
# cold: thumbd forgets every source of the page (its original, thumbnails and /info), and the
# origin holds each fetch from now on, so no image can arrive before the gate opens.
cold() {
  local p
  for p in "${PAGE[@]}"; do
    curl -s -o /dev/null -X DELETE -H "Authorization: Bearer $token" "$thumbd/cache?url=$(urlencode "$site$p")"
  done
  gate arm >/dev/null
}
chromium_run() { # chromium_run WIDTH HEIGHT DPR PROFILE ARGS...
  local w="$1" h="$2" d="$3" profile="$4"
  shift 4
  chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$profile" \
    --no-first-run --no-default-browser-check --disable-background-networking --disable-component-update \
    --disable-sync --disable-extensions --disable-default-apps --disable-domain-reliability \
    --proxy-server=127.0.0.1:9 --host-resolver-rules="MAP * ~NOTFOUND, EXCLUDE 127.0.0.1" \
    --window-size="$w,$h" --force-device-scale-factor="$d" "$@" 2>>"$work/chromium.log"
}

# viewport width, window height (every image in view), DPR, the candidate `sizes` gives
while read -r w h d expected; do
  run="${w}x${h}@${d}"
  cold
  chromium_run "$w" "$h" "$d" "$work/profile-$run" --virtual-time-budget=20000 --dump-dom "$page" >"$work/dom-$run.html" || true
  run_check "Chromium $run: placeholders first, then every image, the ${expected}w /_next/image" "$work/check-$run.txt" \
    node "$frontends/check-page.mjs" dom "$work/dom-$run.html" "$work/site/page" "$w" "$d" "$expected"
done <<'RUNS'
1280 1000 1 640
500 2200 2 1080
RUNS

# The placeholders on screen: a screenshot while the origin holds every image (page.js does not
# release with ?hold; Chromium stops waiting after 4 s and takes it).
mkdir -p "$out"
cold
rm -f "$out/placeholders.png"
chromium_run 1280 1000 1 "$work/profile-held" --timeout=4000 --screenshot="$out/placeholders.png" "$page?hold" >/dev/null || true
status="$(gate status)"
check "screenshot taken while the origin held all ${#PAGE[@]} sources ($status)" \
  test "$status" = "{\"armed\": true, \"held\": ${#PAGE[@]}}"
gate release >/dev/null
run_check "the screenshot shows each image's placeholder" "$work/check-shot.txt" \
  node "$frontends/check-page.mjs" shot "$out/placeholders.png" "$work/dom-1280x1000@1.html" "$work/site/page" "$work"

[ "$fail" = 0 ] || die "some checks failed"
log "all checks passed (the placeholders screenshot: $out/placeholders.png)"
