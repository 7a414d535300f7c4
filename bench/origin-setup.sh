# shellcheck shell=bash
# shellcheck disable=SC2034  # work, bin and pid are for the scripts that source this
# Sourced (from the repository root) by ab.sh and cold-wide.sh, which run thumbd processes of
# their own against one origin: the corpus, a release build of thumbd (or THUMBD_BIN), the corpus
# names in $work/names.txt, an nginx origin for it on 127.0.0.1:18181 (/src/), and an EXIT trap
# that stops nginx and the thumbd whose pid is in $pid. Sets work, bin, pid; start_thumbd starts
# more. CORPUS_DIR: another corpus directory, already built (bench/cold-wide.sh's).
work=bench/work/origin
mkdir -p "$work/logs"
corpus_dir=${CORPUS_DIR:-bench/corpus}
[ "$corpus_dir" != bench/corpus ] || bench/corpus.sh >/dev/null
if [ -n "${THUMBD_BIN:-}" ]; then
  bin=$THUMBD_BIN
else
  swift build -c release --product thumbd >"$work/build.log" 2>&1
  bin="$(swift build -c release --show-bin-path)/thumbd"
fi
find "$corpus_dir" -maxdepth 1 \( -name '*.jpg' -o -name '*.png' \) -printf '%f\n' | sort >"$work/names.txt"
cat >"$work/nginx.conf" <<NGINX
worker_processes 1;
daemon on;
pid $PWD/$work/nginx.pid;
error_log $PWD/$work/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  client_body_temp_path $PWD/$work/tmp;
  server { listen 127.0.0.1:18181; location /src/ { alias $PWD/$corpus_dir/; } }
}
NGINX
mkdir -p "$work/tmp"
"$(command -v nginx || echo /usr/sbin/nginx)" -c "$PWD/$work/nginx.conf" -p "$PWD/$work"
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
  kill "$(cat "$work/nginx.pid" 2>/dev/null)" 2>/dev/null || true
}
trap cleanup EXIT

# shellcheck source=scripts/glibc-tunables.sh
source scripts/glibc-tunables.sh

# start_thumbd BIN PORT LOG [ARGS...]: one more thumbd on 127.0.0.1:PORT with thumbd's glibc malloc
# settings, its pid appended to the caller's pids array (the caller stops them); returns once
# /livez answers, exits if it never does.
start_thumbd() {
  local exe=$1 port=$2 log=$3
  shift 3
  # A thumbd of an earlier run drains for 5 s after SIGTERM and still answers /livez: wait for
  # the port, and take the answer only while our process lives (else it was the old one).
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/livez" || break; sleep 0.1; done
  GLIBC_TUNABLES="$thumbd_glibc_tunables" "$exe" --allow-loopback-sources --port "$port" "$@" 2>"$log" &
  local started=$!
  pids+=("$started")
  for _ in $(seq 100); do
    kill -0 "$started" 2>/dev/null || break
    curl -sf "http://127.0.0.1:$port/livez" >/dev/null && return
    sleep 0.1
  done
  echo "thumbd on $port did not come up (see $log)" >&2
  exit 1
}
