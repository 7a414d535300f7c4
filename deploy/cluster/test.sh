#!/usr/bin/env bash
# The cluster recipe proven on loopback, with both balancers (see test.py for the checks):
#   deploy/cluster/test.sh [nginx|haproxy ...]     (default: both)
# Also validates deploy/kubernetes/ (validate.sh: kubernetes-validate from PyPI).
# Installs what it needs (nginx-light, haproxy, curl, python3), makes the bench corpus if it is
# missing (bench/corpus.sh), builds thumbd (release) unless THUMBD_BIN is set, and writes a
# Markdown report to bench/results/cluster-<UTC>.md. Exit 1 if any check fails. ~5 minutes.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
balancers=("$@")
[ ${#balancers[@]} -gt 0 ] || balancers=(nginx haproxy)
"$root/scripts/setup.sh" nginx-light haproxy curl python3 >/dev/null
[ -f "$root/bench/corpus/manifest.tsv" ] || "$root/bench/corpus.sh"
if [ -z "${THUMBD_BIN:-}" ]; then
  (cd "$root" && swift build -c release --product thumbd >&2)
  THUMBD_BIN="$root/.build/release/thumbd"
fi
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
report="$root/bench/results/cluster-$stamp.md"
mkdir -p "$root/bench/results"
{
  echo "# thumbd cluster on loopback: 3 instances behind a consistent hash"
  echo
  echo "- $(date -u '+%Y-%m-%d %H:%M UTC'); commit \`$(git -C "$root" rev-parse --short HEAD)\`, $(nproc) cores; \`deploy/cluster/test.sh ${balancers[*]}\`"
  echo
} >"$report"
status=0
# The Kubernetes recipe of docs/scaling.md, checked against the API schemas (kubernetes-validate).
if "$root/deploy/kubernetes/validate.sh" >"$root/bench/results/.k8s-$stamp.log" 2>&1; then
  echo "- deploy/kubernetes: valid (kubernetes-validate --strict, Kubernetes 1.30), recipe checks pass" >>"$report"
else
  cat "$root/bench/results/.k8s-$stamp.log" >&2
  echo "- deploy/kubernetes: **FAIL** (see deploy/kubernetes/validate.sh)" >>"$report"
  status=1
fi
rm -f "$root/bench/results/.k8s-$stamp.log"
for balancer in "${balancers[@]}"; do
  python3 "$here/test.py" --balancer "$balancer" --thumbd "$THUMBD_BIN" --out "$report" || status=1
done
echo "report: $report"
exit $status
