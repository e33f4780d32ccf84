#!/usr/bin/env bash
# Builds nodeadm (the EKS AL2023 node agent) and controller-gen from the Go module proxy, once per machine, into
# ~/.cache/worker-stacks/nodeadm/<nodeadm version>/bin (WORKER_STACKS_NODEADM_CACHE overrides the root), and generates
# the NodeConfig CRD from nodeadm's own API package (api/v1alpha1) with controller-gen into the same directory.
# The strict NodeConfig tests (test/model/cloudconfig/nodeadm-strict.test.ts) serve that CRD on the test
# kube-apiserver and run `nodeadm config check`. Nothing of the built modules is committed.
#
# Why this version: the proxy serves one pseudo-version of the module, from 2024-02-29 (`go list -m -versions`
# lists none, `@latest` resolves to it); test/helpers/tools.ts names the same pin.
set -euo pipefail

NODEADM_VERSION="${NODEADM_VERSION:-v0.0.0-20240229193347-cfab22a10647}"
CONTROLLER_GEN_VERSION="${CONTROLLER_GEN_VERSION:-v0.17.2}"
ROOT="${WORKER_STACKS_NODEADM_CACHE:-$HOME/.cache/worker-stacks/nodeadm}"
OUT="$ROOT/$NODEADM_VERSION"
BIN="$OUT/bin"
CRD="$OUT/crds/node.eks.aws_nodeconfigs.yaml"

if [[ -x "$BIN/nodeadm" && -x "$BIN/controller-gen" && -s "$CRD" && "${1:-}" != "--force" ]]; then
  echo "nodeadm: $BIN has nodeadm and controller-gen, $CRD is generated ($NODEADM_VERSION)"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "nodeadm: Go is not installed; install it (apt-get install -y golang-go, or https://go.dev/dl) and run $0 again" >&2
  exit 1
fi
mkdir -p "$BIN" "$OUT/crds"
export CGO_ENABLED=0
export GOFLAGS=-mod=mod
echo "nodeadm: building nodeadm $NODEADM_VERSION"
GOBIN="$BIN" go install -trimpath "github.com/awslabs/amazon-eks-ami/nodeadm/cmd/nodeadm@$NODEADM_VERSION"
echo "nodeadm: building controller-gen $CONTROLLER_GEN_VERSION"
GOBIN="$BIN" go install -trimpath "sigs.k8s.io/controller-tools/cmd/controller-gen@$CONTROLLER_GEN_VERSION"

# controller-gen reads Go packages: run it inside nodeadm's own module (a writable copy; the module cache is read-only),
# so the API package resolves against the module graph its go.mod pins (the build above downloaded it; its vendor/
# directory does not type-check under a current Go toolchain).
go mod download -json "github.com/awslabs/amazon-eks-ami/nodeadm@$NODEADM_VERSION" >/dev/null
# The kubelet module nodeadm's go.mod pins: scripts/generate-kubelet-config-fields.js reads its KubeletConfiguration.
go mod download -json "k8s.io/kubelet@v0.29.1" >/dev/null
SRC="$(go env GOMODCACHE)/github.com/awslabs/amazon-eks-ami/nodeadm@$NODEADM_VERSION"
WORK="$OUT/src"
rm -rf "$WORK" && cp -r "$SRC" "$WORK" && chmod -R u+w "$WORK"
(cd "$WORK" && "$BIN/controller-gen" crd paths=./api/... output:crd:dir="$OUT/crds.tmp")
mv "$OUT/crds.tmp/node.eks.aws_nodeconfigs.yaml" "$CRD" && rm -rf "$OUT/crds.tmp"
echo "nodeadm: built into $BIN; CRD $CRD"
