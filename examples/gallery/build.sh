#!/usr/bin/env bash
# Writes the gallery page: OUT/index.html (one <img srcset> per source, every URL a /thumb of it at
# 200, 400 and 800 px wide, 3:2 cover crops), gallery.css and gallery.js. With a signing key the
# URLs are signed with `thumbd sign`, as a web back end would do when it renders the page.
#
# Usage: examples/gallery/build.sh OUT-DIR SOURCE-URL...
#   SIGNING_KEY=HEX   sign the URLs (thumbd runs with --signing-keys HEX); THUMBD=path/to/thumbd
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$1"
shift
thumbd="${THUMBD:-thumbd}"
widths=(200 400 800)
# The slot each image gets, as gallery.css lays it out (keep the two in step).
sizes="(min-width: 1000px) calc((100vw - 80px) / 4), calc((100vw - 64px) / 3)"

encode() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
html() { python3 -c 'import html, sys; print(html.escape(sys.argv[1]))' "$1"; }
target() { # target SOURCE-URL WIDTH: the (signed) request target of one candidate
  local t
  t="/thumb?url=$(encode "$1")&w=$2&h=$(($2 * 2 / 3))&fit=cover"
  if [ -n "${SIGNING_KEY:-}" ]; then "$thumbd" sign --key "$SIGNING_KEY" "$t"; else echo "$t"; fi
}

mkdir -p "$out"
cp "$here/gallery.css" "$here/gallery.js" "$out/"
{
  cat <<'HEAD'
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>thumbd gallery</title>
<link rel="stylesheet" href="gallery.css">
</head>
<body>
<h1>thumbd gallery <small>every image a /thumb through nginx</small></h1>
<ul class="grid">
HEAD
  for source in "$@"; do
    name="${source##*/}"
    srcset=""
    for w in "${widths[@]}"; do srcset="${srcset:+$srcset, }$(target "$source" "$w") ${w}w"; done
    printf '<li><figure><img src="%s" srcset="%s" sizes="%s" width="400" height="267" loading="lazy" alt="%s" data-name="%s"><figcaption>%s</figcaption></figure></li>\n' \
      "$(html "$(target "$source" 400)")" "$(html "$srcset")" "$sizes" "$(html "$name")" "$(html "$name")" "$(html "$name")"
  done
  cat <<'TAIL'
</ul>
<pre id="report" hidden></pre>
<script src="gallery.js"></script>
</body>
</html>
TAIL
} >"$out/index.html"
echo "build.sh: $out/index.html, $# images, ${SIGNING_KEY:+signed }URLs" >&2
