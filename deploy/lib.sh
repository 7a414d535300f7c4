# shellcheck shell=bash disable=SC2034,SC2154
# Sourced by deploy/test-systemd.sh, deploy/test-nginx.sh and examples/gallery/test.sh: on top of
# bench/lib.sh (log, die, stopping every pid in `pids` on exit, the release build), a free port,
# waiting for a URL, the source images and the loopback origin that serves them. The sourcing
# script sets `name`, `root` (the repository) and `work` (its temporary directory, removed on
# exit) before sourcing.
here="$root/bench"
THUMBD_BIN="${THUMBD_BIN:-}"
# shellcheck source=../bench/lib.sh
. "$root/bench/lib.sh"
# bench/lib.sh's cleanup, then the work directory (KEEP_WORK=1 keeps it, for the logs).
deploy_cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do stop_pid "$p"; done
  if [ "$rc" != 0 ]; then
    log "failed (exit $rc); logs in $work"
  elif [ "${KEEP_WORK:-0}" != 1 ]; then
    rm -rf "$work"
  fi
  exit "$rc"
}
trap deploy_cleanup EXIT

fail=0
check() { # check DESCRIPTION COMMAND...: runs it, prints PASS/FAIL, remembers a failure
  if "${@:2}"; then log "PASS $1"; else log "FAIL $1"; fail=1; fi
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# wait_for URL [STATUS]: up to 30 s for URL to answer STATUS (200).
wait_for() {
  for _ in $(seq 300); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$1")" = "${2:-200}" ] && return 0
    sleep 0.1
  done
  die "$1 did not answer ${2:-200} within 30 s"
}

# make_sources DIR: synthetic 1200x800 sources, one per decoder thumbd takes (JPEG, PNG, WebP,
# GIF, AVIF, TIFF), plus a PNG with alpha. Made with the vips CLI, so they cost no repository space.
make_sources() {
  local dir="$1" t="$1/.tmp"
  mkdir -p "$t"
  vips gaussnoise "$t/noise.v" 1200 800 --mean 128 --sigma 30
  vips gaussblur "$t/noise.v" "$t/blur.v" 6
  vips cast "$t/blur.v" "$t/grey.v" uchar
  vips xyz "$t/xy.v" 1200 800
  vips linear "$t/xy.v" "$t/xy8.v" "0.2 0.3" "0 0" --uchar
  vips bandjoin "$t/grey.v $t/xy8.v" "$t/rgb3.v"
  vips copy "$t/rgb3.v" "$t/rgb.v" --interpretation srgb
  vips copy "$t/rgb.v" "$dir/photo.jpg[Q=85]"
  vips copy "$t/rgb.v" "$dir/photo.png"
  vips copy "$t/rgb.v" "$dir/photo.webp[Q=80]"
  vips copy "$t/rgb.v" "$dir/photo.gif"
  vips copy "$t/rgb.v" "$dir/photo.avif[Q=50]"
  vips copy "$t/rgb.v" "$dir/photo.tif"
  vips bandjoin "$t/rgb.v $t/grey.v" "$t/rgba.v"
  vips copy "$t/rgba.v" "$dir/alpha.png"
  rm -rf "$t"
}

# start_origin DIR PORT: a static HTTP origin on 127.0.0.1 serving DIR.
start_origin() {
  python3 -m http.server "$2" --bind 127.0.0.1 --directory "$1" >"$work/origin.log" 2>&1 &
  pids+=($!)
  wait_for "http://127.0.0.1:$2/"
}

# urlencode STRING
urlencode() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }

# nginx_conf DIR PORT UPSTREAM-PORT UPSTREAM-PORT2|"" [EXTRA-SERVER-FILE...]: an nginx prefix in DIR
# running deploy/nginx.conf and its snippets as committed, with only the machine-specific lines
# replaced (listen port, upstream ports, cache directory; each replacement checked, so a change to
# the committed file cannot make the test run something else), plus an X-Upstream-Addr header
# saying which instance answered. Extra files (already made for this machine) go into http {}
# after it.
nginx_conf() {
  local dir="$1" port="$2" a="$3" b="${4:-}" conf="$1/conf"
  shift 4
  mkdir -p "$conf/snippets" "$dir/logs" "$dir/tmp" "$dir/cache"
  local user_line=""
  [ "$(id -u)" -eq 0 ] && user_line="user $(id -un) $(id -gn);"
  sed -e "s|^proxy_cache_path /var/cache/nginx/thumbd |proxy_cache_path $dir/cache |" \
    -e "s|^    server 127.0.0.1:8080;|    server 127.0.0.1:$a max_fails=1 fail_timeout=5s;|" \
    -e "s|^    # server 127.0.0.1:8081;|${b:+    server 127.0.0.1:$b max_fails=1 fail_timeout=5s;}|" \
    -e "s|^    listen 80;|    listen 127.0.0.1:$port;|" "$root/deploy/nginx.conf" >"$conf/thumbd.conf"
  grep -q "proxy_cache_path $dir/cache " "$conf/thumbd.conf" || die "nginx.conf: proxy_cache_path line not found"
  grep -q "server 127.0.0.1:$a " "$conf/thumbd.conf" || die "nginx.conf: 'server 127.0.0.1:8080;' not found"
  [ -z "$b" ] || grep -q "server 127.0.0.1:$b " "$conf/thumbd.conf" || die "nginx.conf: '# server 127.0.0.1:8081;' not found"
  grep -q "listen 127.0.0.1:$port;" "$conf/thumbd.conf" || die "nginx.conf: 'listen 80;' not found"
  cp "$root/deploy/nginx/thumbd-locations.conf" "$conf/snippets/"
  sed 's|^\(add_header X-Cache-Status .*\)$|\1\nadd_header X-Upstream-Addr $upstream_addr always;|' \
    "$root/deploy/nginx/thumbd-proxy.conf" >"$conf/snippets/thumbd-proxy.conf"
  grep -q X-Upstream-Addr "$conf/snippets/thumbd-proxy.conf" || die "thumbd-proxy.conf: no X-Cache-Status line"
  local includes="include thumbd.conf;" extra n=0
  for extra in "$@"; do
    n=$((n + 1))
    cp "$extra" "$conf/extra$n.conf"
    includes="$includes include extra$n.conf;"
  done
  cat >"$conf/nginx.conf" <<CONF
# Generated by deploy/lib.sh: a foreground nginx with everything under $dir.
$user_line
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/logs/error.log info;
events { worker_connections 256; }
http {
  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  client_body_temp_path $dir/tmp/body;
  proxy_temp_path $dir/tmp/proxy;
  fastcgi_temp_path $dir/tmp/fastcgi;
  uwsgi_temp_path $dir/tmp/uwsgi;
  scgi_temp_path $dir/tmp/scgi;
  access_log $dir/logs/access.log;
  $includes
}
CONF
}

# start_nginx DIR PORT: checks the configuration (nginx -t), then runs it in the foreground.
start_nginx() {
  nginx -t -q -p "$1" -e "$1/logs/error.log" -c "$1/conf/nginx.conf" || die "nginx -t failed"
  nginx -p "$1" -e "$1/logs/error.log" -c "$1/conf/nginx.conf" &
  pids+=($!)
  wait_for "http://127.0.0.1:$2/livez"
}
