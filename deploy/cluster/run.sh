#!/usr/bin/env bash
# N thumbd instances behind one balancer, all on loopback, in the foreground:
#
#   deploy/cluster/run.sh --instances N --port P [--balancer nginx|haproxy] [--disk-cache-root DIR]
#                         [-- THUMBD_ARGS...]
#
# Starts N instances on free loopback ports, each with THUMBD_ARGS and, with --disk-cache-root,
# its own --disk-cache-dir DIR/instance-I (one folder per instance: a folder is locked by the
# thumbd using it, never shared). Waits until every one answers /readyz 200, then starts the
# balancer on 127.0.0.1:P with deploy/cluster/nginx.conf or haproxy.cfg (a copy with these
# ports) and prints one line per instance,
#   instance I port PORT pid PID
# then `balancer KIND port P pid PID`, once all are ready. SIGTERM or SIGINT stops everything
# (each instance gets its own graceful stop). Installs nginx or haproxy if missing; builds thumbd
# (release) unless THUMBD_BIN names a binary. Work files in $CLUSTER_DIR (default a temp dir).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

instances=3 port=8080 balancer=nginx disk_root=
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --instances) instances="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --balancer) balancer="$2"; shift 2 ;;
    --disk-cache-root) disk_root="$2"; shift 2 ;;
    --) shift; args=("$@"); break ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$balancer" in nginx|haproxy) ;; *) echo "run.sh: --balancer nginx or haproxy" >&2; exit 2 ;; esac
[[ "$instances" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --instances N (N >= 1)" >&2; exit 2; }

say() { echo "[cluster $(date -u +%H:%M:%S)] $*" >&2; }
# thumbd's glibc malloc settings, for the instances only (the balancer keeps glibc's defaults).
# shellcheck source=scripts/glibc-tunables.sh
source "$root/scripts/glibc-tunables.sh"

if [ "$balancer" = nginx ]; then
  "$root/scripts/setup.sh" nginx-light >/dev/null
  balancer_bin="$(command -v nginx || echo /usr/sbin/nginx)"
else
  "$root/scripts/setup.sh" haproxy >/dev/null
  balancer_bin="$(command -v haproxy || echo /usr/sbin/haproxy)"
fi
"$root/scripts/setup.sh" curl python3 >/dev/null

if [ -z "${THUMBD_BIN:-}" ]; then
  say "building thumbd (release)"
  (cd "$root" && swift build -c release --product thumbd >&2)
  THUMBD_BIN="$root/.build/release/thumbd"
fi

dir="${CLUSTER_DIR:-$(mktemp -d /tmp/thumbd-cluster.XXXXXX)}"
mkdir -p "$dir"
pids=()
stop() {
  trap - TERM INT EXIT
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  [ -n "${CLUSTER_DIR:-}" ] || rm -rf "$dir"
}
trap 'stop; exit 0' TERM INT
trap stop EXIT

# Free loopback ports, chosen by the kernel (bound and released at once).
mapfile -t ports < <(python3 - "$instances" <<'PY'
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print("\n".join(str(s.getsockname()[1]) for s in socks))
PY
)

for i in $(seq 1 "$instances"); do
  p="${ports[$((i - 1))]}"
  disk=()
  [ -z "$disk_root" ] || disk=(--disk-cache-dir "$disk_root/instance-$i")
  GLIBC_TUNABLES="$thumbd_glibc_tunables" "$THUMBD_BIN" --host 127.0.0.1 --port "$p" "${disk[@]}" "${args[@]}" \
    2>"$dir/instance-$i.log" &
  pids+=($!)
  echo "$p $!" >"$dir/instance-$i"
done

ready() { [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$1/readyz")" = 200 ]; }
for i in $(seq 1 "$instances"); do
  read -r p pid <"$dir/instance-$i"
  for _ in $(seq 1 300); do
    ready "$p" && break
    kill -0 "$pid" 2>/dev/null || { cat "$dir/instance-$i.log" >&2; echo "run.sh: instance $i exited" >&2; exit 1; }
    sleep 0.1
  done
  ready "$p" || { echo "run.sh: instance $i not ready on port $p" >&2; exit 1; }
done

# The committed config, with this cluster's servers and port between its markers.
python3 - "$balancer" "$here" "$dir" "$port" "${ports[@]}" <<'PY'
import re, sys
kind, here, out, port, *ports = sys.argv[1:]
source = open(f"{here}/{'nginx.conf' if kind == 'nginx' else 'haproxy.cfg'}").read()
def block(marker, lines):
    global source
    pattern = re.compile(rf"^(\s*)# @{marker}\n.*?^\s*# @end\n", re.S | re.M)
    def fill(m):
        indent = m.group(1)
        return "".join(f"{indent}{line}\n" for line in lines)
    source, n = pattern.subn(fill, source)
    assert n >= 1, marker
if kind == "nginx":
    block("servers", [f"server 127.0.0.1:{p} max_fails=1 fail_timeout=5s;" for p in ports])
    block("servers-any", [f"server 127.0.0.1:{p};" for p in ports])
    block("listen", [f"listen 127.0.0.1:{port};"])
    source = source.replace("/tmp/thumbd-cluster-nginx", f"{out}/nginx")
    open(f"{out}/nginx.conf", "w").write(source)
else:
    block("servers", [f"server thumbd{i + 1} 127.0.0.1:{p}" for i, p in enumerate(ports)])
    block("listen", [f"bind 127.0.0.1:{port}"])
    open(f"{out}/haproxy.cfg", "w").write(source)
PY

if [ "$balancer" = nginx ]; then
  "$balancer_bin" -t -q -c "$dir/nginx.conf" -g 'daemon off;'
  "$balancer_bin" -c "$dir/nginx.conf" -g 'daemon off;' 2>"$dir/balancer.log" &
else
  "$balancer_bin" -c -q -f "$dir/haproxy.cfg"
  "$balancer_bin" -db -f "$dir/haproxy.cfg" 2>"$dir/balancer.log" &
fi
pids+=($!)
balancer_pid=$!
for _ in $(seq 1 100); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/readyz")" = 200 ] && break
  kill -0 "$balancer_pid" 2>/dev/null || { cat "$dir/balancer.log" >&2; echo "run.sh: $balancer exited" >&2; exit 1; }
  sleep 0.1
done

for i in $(seq 1 "$instances"); do
  read -r p pid <"$dir/instance-$i"
  echo "instance $i port $p pid $pid"
done
echo "balancer $balancer port $port pid $balancer_pid"
# In the foreground until signalled; if anything dies by itself, say so and keep the rest.
while true; do
  wait -n "${pids[@]}" 2>/dev/null || true
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null || true; done
  sleep 1
done
