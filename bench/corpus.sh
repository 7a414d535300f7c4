#!/usr/bin/env bash
# Builds bench/corpus/: real photographs and artwork exactly as Debian packages ship them
# (no conversion: the bytes are the package's), plus bench/corpus/manifest.tsv.
#
# The packages are downloaded with `apt-get download` into bench/work/debs/ and unpacked with
# `dpkg-deb -x` into a temporary directory; nothing is installed system-wide except the tools
# (libvips-tools for vipsheader, python3). The selection is deterministic: fixed package list,
# fixed rules, sorted candidates (see select_corpus below).
#
# Usage: bench/corpus.sh [--force]     (--force: rebuild even if the manifest is complete)
#        bench/corpus.sh --wide [--force]
#   --wide: instead, every distinct JPEG and PNG of 0.4-24 MP in the same packages, no quotas,
#   into bench/work/corpus-wide/ (small images included: bench/cold-wide.sh measures on it).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
corpus="$here/corpus"
wide=0
if [ "${1:-}" = "--wide" ]; then
  wide=1
  corpus="$here/work/corpus-wide"
  shift
fi
debs="$here/work/debs"
manifest="$corpus/manifest.tsv"

# Fixed package list (Debian bookworm names). Each is optional: a package that is not in the
# archive is skipped and the rules pick from the rest (the manifest records what was used).
PACKAGES=(
  desktop-base
  lomiri-wallpapers
  lomiri-wallpapers-16.04
  lomiri-wallpapers-20.04
  mate-backgrounds
  plasma-workspace-wallpapers
  sway-backgrounds
  ukui-wallpapers
)

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

need_tools=()
command -v vipsheader >/dev/null || need_tools+=(libvips-tools)
command -v python3 >/dev/null || need_tools+=(python3)
command -v dpkg-deb >/dev/null || need_tools+=(dpkg)
if [ ${#need_tools[@]} -gt 0 ]; then
  echo "corpus: installing ${need_tools[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q >/dev/null
  $sudo apt-get install -y -q --no-install-recommends "${need_tools[@]}" >/dev/null
fi

# Already built and intact? (every file in the manifest present with its byte count)
if [ "${1:-}" != "--force" ] && [ -s "$manifest" ]; then
  ok=1
  while IFS=$'\t' read -r _pkg _path name _fmt _w _h _mp bytes _rest; do
    [ "$name" = "file" ] && continue
    if ! [ -f "$corpus/$name" ] || [ "$(stat -c %s "$corpus/$name")" != "$bytes" ]; then ok=0; break; fi
  done <"$manifest"
  if [ "$ok" = 1 ]; then
    echo "corpus: $(($(wc -l <"$manifest") - 1)) images already in $corpus (--force to rebuild)" >&2
    exit 0
  fi
fi

mkdir -p "$debs"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# Download (cached in bench/work/debs; apt-get download fetches the candidate version).
available=()
for p in "${PACKAGES[@]}"; do
  if apt-cache show --no-all-versions "$p" >/dev/null 2>&1; then available+=("$p"); else
    echo "corpus: $p is not in the archive, skipped" >&2
  fi
done
if [ ${#available[@]} -eq 0 ]; then
  $sudo apt-get update -q >/dev/null
  available=("${PACKAGES[@]}")
fi
for p in "${available[@]}"; do
  v="$(apt-cache show --no-all-versions "$p" | awk '/^Version:/{print $2; exit}')"
  deb="$(compgen -G "$debs/${p}_*.deb" | head -1 || true)"
  if [ -z "$deb" ] || [ "$(dpkg-deb -f "$deb" Version)" != "$v" ]; then
    rm -f "$debs/${p}_"*.deb
    echo "corpus: downloading $p $v" >&2
    # apt's _apt user must be able to write here when we are root; otherwise it warns only.
    (cd "$debs" && apt-get download -q "$p" >/dev/null 2>&1) || echo "corpus: could not download $p" >&2
  fi
done

# Unpack and list candidates: pkg, version, path, loader, width, height, bytes.
: >"$tmp/candidates.tsv"
for deb in "$debs"/*.deb; do
  [ -e "$deb" ] || continue
  p="$(dpkg-deb -f "$deb" Package)"
  v="$(dpkg-deb -f "$deb" Version)"
  printf '%s\n' "${available[@]}" | grep -qx "$p" || continue
  mkdir -p "$tmp/x/$p"
  dpkg-deb -x "$deb" "$tmp/x/$p"
  (cd "$tmp/x/$p" && find . -type f \( -iname '*.jpg' -o -iname '*.jpeg' -o -iname '*.png' \) | LC_ALL=C sort) |
    while read -r f; do
      full="$tmp/x/$p/$f"
      hdr="$(vipsheader -a "$full" 2>/dev/null)" || continue
      loader="$(awk '$1 == "vips-loader:" {print $2}' <<<"$hdr")"
      w="$(awk '$1 == "width:" {print $2}' <<<"$hdr")"
      h="$(awk '$1 == "height:" {print $2}' <<<"$hdr")"
      if [ -z "$loader" ] || [ -z "$w" ] || [ -z "$h" ]; then continue; fi
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$p" "$v" "${f#.}" "$loader" "$w" "$h" "$(stat -c %s "$full")"
    done >>"$tmp/candidates.tsv"
done

# The selection rules, in order (each bucket takes candidates round-robin across packages in
# sorted package order, each package's candidates in sorted path order):
#   - a candidate's loader must match its extension (jpegload for .jpg/.jpeg, pngload for .png),
#     0.5 MP <= width*height <= 24 MP, at most 32 MiB (thumbd's default --max-source-bytes);
#   - one file per distinct content (sha256) and one file per Plasma wallpaper
#     (/usr/share/wallpapers/NAME/: those ship the same picture at several sizes), first wins;
#   - buckets, in this order, with their quotas:
#       JPEG >= 15 MP: all (up to 6) | JPEG 8-15 MP: 4 | JPEG 2-8 MP: 5 | JPEG 0.5-2 MP: 2
#       PNG  >= 8 MP: 5              | PNG  2-8 MP: 3
rm -rf "$corpus"
mkdir -p "$corpus"
python3 - "$tmp/candidates.tsv" "$tmp/x" "$corpus" "$wide" <<'EOF'
import collections, hashlib, os, re, shutil, sys

cands_file, root, out, wide = sys.argv[1:5]
wide = wide == "1"
min_mp = 0.4 if wide else 0.5
rows = []
with open(cands_file) as f:
    for line in f:
        pkg, ver, path, loader, w, h, size = line.rstrip("\n").split("\t")
        w, h, size = int(w), int(h), int(size)
        ext = path.rsplit(".", 1)[-1].lower()
        fmt = {"jpg": "jpeg", "jpeg": "jpeg", "png": "png"}[ext]
        if loader != fmt + "load":
            continue
        mp = w * h / 1e6
        if not (min_mp <= mp <= 24.0) or size > 32 * 1024 * 1024:
            continue
        with open(os.path.join(root, pkg) + path, "rb") as img:
            sha = hashlib.sha256(img.read()).hexdigest()
        rows.append(dict(pkg=pkg, ver=ver, path=path, fmt=fmt, w=w, h=h, mp=mp, size=size, sha=sha))

buckets = [  # (format, min MP inclusive, max MP exclusive, quota)
    ("jpeg", 15.0, 24.0001, 6),
    ("jpeg", 8.0, 15.0, 4),
    ("jpeg", 2.0, 8.0, 5),
    ("jpeg", 0.5, 2.0, 2),
    ("png", 8.0, 24.0001, 5),
    ("png", 2.0, 8.0, 3),
]

def group(r):
    m = re.match(r"/usr/share/wallpapers/([^/]+)/", r["path"])
    return ("plasma", m.group(1)) if m else ("file", r["pkg"], r["path"])

seen_sha, seen_group, chosen = set(), set(), []
if wide:  # every distinct file (a wallpaper's sizes are different work, so all are kept)
    for r in sorted(rows, key=lambda r: (r["pkg"], r["path"])):
        if r["sha"] not in seen_sha:
            seen_sha.add(r["sha"])
            chosen.append(r)
    buckets = []
for fmt, lo, hi, quota in buckets:
    per_pkg = collections.OrderedDict()
    for r in sorted(rows, key=lambda r: (r["pkg"], r["path"])):
        if r["fmt"] == fmt and lo <= r["mp"] < hi:
            per_pkg.setdefault(r["pkg"], []).append(r)
    taken, idx = 0, {p: 0 for p in per_pkg}
    while taken < quota and any(idx[p] < len(per_pkg[p]) for p in per_pkg):
        for p in per_pkg:
            if taken >= quota:
                break
            while idx[p] < len(per_pkg[p]):
                r = per_pkg[p][idx[p]]
                idx[p] += 1
                if r["sha"] in seen_sha or group(r) in seen_group:
                    continue
                seen_sha.add(r["sha"]); seen_group.add(group(r))
                chosen.append(r); taken += 1
                break

def name_for(r):
    # <short package>_<at most the last 3 path components that say something>.<ext>
    short = r["pkg"].replace("-wallpapers", "").replace("-backgrounds", "").replace("-workspace", "")
    drop = {"usr", "share", "backgrounds", "wallpapers", "contents", "images", "desktop-base", short}
    parts = [x for x in r["path"].lower().rsplit(".", 1)[0].split("/") if x and x not in drop][-3:]
    stem = re.sub(r"[^a-z0-9._-]+", "-", "_".join(parts))
    return f"{short}_{stem}." + ("jpg" if r["fmt"] == "jpeg" else "png")

names = set()
with open(os.path.join(out, "manifest.tsv"), "w") as m:
    m.write("package\tpath\tfile\tformat\twidth\theight\tMP\tbytes\tversion\tsha256\n")
    for r in sorted(chosen, key=lambda r: (r["fmt"], -r["mp"], r["pkg"], r["path"])):
        n = name_for(r)
        if wide and n in names:  # two files the naming rule cannot tell apart
            stem, ext = n.rsplit(".", 1)
            n = next(f"{stem}-{i}.{ext}" for i in range(2, 1000) if f"{stem}-{i}.{ext}" not in names)
        assert n not in names, n
        names.add(n)
        shutil.copyfile(os.path.join(root, r["pkg"]) + r["path"], os.path.join(out, n))
        m.write(f'{r["pkg"]}\t{r["path"]}\t{n}\t{r["fmt"]}\t{r["w"]}\t{r["h"]}\t{r["mp"]:.1f}\t'
                f'{r["size"]}\t{r["ver"]}\t{r["sha"]}\n')
print(f"corpus: {len(chosen)} images", file=sys.stderr)
EOF

# Check: the copied bytes are the package's bytes.
tail -n +2 "$manifest" | while IFS=$'\t' read -r _p _path name _f _w _h _mp bytes _v sha; do
  [ "$(sha256sum "$corpus/$name" | cut -d' ' -f1)" = "$sha" ] || { echo "corpus: $name differs" >&2; exit 1; }
done
n="$(($(wc -l <"$manifest") - 1))"
[ "$n" -ge 20 ] || { echo "corpus: only $n images (need >= 20)" >&2; exit 1; }
echo "corpus: $n images, $(du -sh "$corpus" | cut -f1) in $corpus" >&2
