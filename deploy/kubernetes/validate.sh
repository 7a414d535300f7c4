#!/usr/bin/env bash
# Validates the manifests here against the Kubernetes API schemas (kubernetes-validate from PyPI,
# offline, strict: unknown fields are errors), and checks what the recipe depends on: the
# Ingress hashes on the source argument and exposes the framework routes, the Service is headless, the probes use /livez and /readyz,
# the disk cache folder is on a volume of the pod's own (an emptyDir with a sizeLimit above
# THUMBD_DISK_CACHE_BYTES; no ReadWriteMany claim: one folder per instance).
# Installs kubernetes-validate into a virtualenv under ${XDG_CACHE_HOME:-~/.cache}/thumbd.
#   deploy/kubernetes/validate.sh [KUBERNETES_VERSION]   (default 1.30.0)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
version="${1:-1.30.0}"
"$root/scripts/setup.sh" python3 python3-venv >/dev/null
venv="${XDG_CACHE_HOME:-$HOME/.cache}/thumbd/kubernetes-validate"
if [ ! -x "$venv/bin/kubernetes-validate" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q kubernetes-validate
fi
"$venv/bin/kubernetes-validate" --strict --kubernetes-version "$version" \
  "$here/deployment.yaml" "$here/service.yaml" "$here/ingress.yaml" "$here/secret.example.yaml"
# The venv's python: kubernetes-validate brings PyYAML.
"$venv/bin/python" - "$here" <<'PY'
import re, sys
import yaml
here = sys.argv[1]
text = {n: open(f"{here}/{n}.yaml").read() for n in ("deployment", "service", "ingress")}
deployment = next(d for d in yaml.safe_load_all(text["deployment"]) if d and d["kind"] == "Deployment")
pod = deployment["spec"]["template"]["spec"]
container = pod["containers"][0]
env = {e["name"]: e.get("value") for e in container.get("env", [])}
disk_dir = env.get("THUMBD_DISK_CACHE_DIR")
mounts = {m["mountPath"]: m["name"] for m in container.get("volumeMounts", [])}
volume = next((v for v in pod.get("volumes", []) if v["name"] == mounts.get(disk_dir)), {})
def size(text):  # thumbd's K/M/G/T and Kubernetes' Ki/Mi/Gi/Ti: both powers of 1024
    m = re.fullmatch(r"(\d+)([KMGT])i?", str(text))
    return int(m.group(1)) << (10 * "KMGT".index(m.group(2)) + 10) if m else 0
limit = size(volume.get("emptyDir", {}).get("sizeLimit"))
budget = size(env.get("THUMBD_DISK_CACHE_BYTES"))
checks = [
    ("ingress hashes on the source argument", 'upstream-hash-by: "$arg_url$arg_href"' in text["ingress"]),
    ("ingress exposes the framework routes", all(f"path: {p}\n" in text["ingress"] for p in ("/thumb", "/info", "/_next/image", "/_image", "/"))),
    ("service is headless", re.search(r"clusterIP:\s*None", text["service"]) is not None),
    ("readiness probe on /readyz", re.search(r"readinessProbe:\s*\n\s*httpGet:\s*\n\s*path: /readyz", text["deployment"]) is not None),
    ("liveness probe on /livez", re.search(r"livenessProbe:\s*\n\s*httpGet:\s*\n\s*path: /livez", text["deployment"]) is not None),
    ("/metrics not routed by the ingress", "/metrics" not in text["ingress"].split("spec:")[1]),
    ("disk cache folder on the pod's own volume", bool(disk_dir) and "emptyDir" in volume),
    ("its sizeLimit above THUMBD_DISK_CACHE_BYTES, with a margin",
     budget > 0 and limit >= budget * 1.1),
    ("no ReadWriteMany volume (one disk folder per instance)",
     "ReadWriteMany" not in "".join(l.split("#")[0] for l in text["deployment"].splitlines())),
]
bad = [name for name, ok in checks if not ok]
for name, ok in checks:
    print(("ok   " if ok else "FAIL ") + name)
sys.exit(1 if bad else 0)
PY
echo "kubernetes manifests: valid for Kubernetes $version"
