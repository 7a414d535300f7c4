# shellcheck shell=bash
# Sourced by every bench script, run.sh too (lib.sh sources it for the others): what they measure
# with, defined once — CPU time from /proc, and the start of the reference nginx's configuration,
# so that every script measures against the same nginx.

# utime + stime (clock ticks) summed over the given pids (all their threads)
cpu_ticks() {
  local total=0 pid stat f
  for pid in "$@"; do
    stat="$(cat "/proc/$pid/stat" 2>/dev/null)" || continue
    stat="${stat##*) }"
    read -r -a f <<<"$stat"
    total=$((total + f[11] + f[12]))
  done
  echo "$total"
}
# Busy ticks of the machine (user, nice, system, irq, softirq) and, apart, steal: the time the
# hypervisor ran someone else on our virtual CPUs. Steal is not other work on this machine, and on
# a shared host it rises with our own load, so the reports show it in a column of its own.
busy_ticks() { awk '$1 == "cpu" {print $2 + $3 + $4 + $7 + $8; exit}' /proc/stat; }
steal_ticks() { awk '$1 == "cpu" {print $9; exit}' /proc/stat; }

# nginx_conf_head WORK WORKERS: the start of an nginx.conf whose prefix is WORK/nginx (in the
# foreground, as the current user, temporary files under WORK/nginx/tmp, the `bench` log format),
# open inside `http {`: the caller adds its directives and servers, and the closing brace.
nginx_conf_head() {
  local dir="$1/nginx" user_line=""
  [ "$(id -u)" -eq 0 ] && user_line="user $(id -un) $(id -gn);"
  cat <<CONF
$user_line
worker_processes $2;
daemon off;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 4096; }
http {
  types { image/jpeg jpg jpeg; image/png png; image/webp webp; image/avif avif; }
  default_type application/octet-stream;
  client_body_temp_path $dir/tmp/body;
  proxy_temp_path $dir/tmp/proxy;
  fastcgi_temp_path $dir/tmp/fastcgi;
  uwsgi_temp_path $dir/tmp/uwsgi;
  scgi_temp_path $dir/tmp/scgi;
  # One line per request, like thumbd's request log.
  log_format bench '\$remote_addr [\$time_local] "\$request" \$status \$body_bytes_sent \$request_time';
CONF
}
