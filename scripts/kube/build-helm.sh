#!/usr/bin/env bash
# Builds the real helm v3 from the Go module proxy, once per machine, into
# ~/.cache/worker-stacks/helm/<version>/bin/helm (WORKER_STACKS_TOOLS_CACHE overrides ~/.cache/worker-stacks).
# test/charts/ runs it by that absolute path: lint, template and install/upgrade/uninstall against the test API server.
# helm.sh/helm/v3's go.mod has no replace directives, so `go install <pkg>@<version>` builds it as released; the
# ldflags are the ones its Makefile sets (version, and the Kubernetes version `helm template` assumes offline).
set -euo pipefail

HELM_VERSION="${HELM_VERSION:-v3.22.0}"
OUT="${WORKER_STACKS_TOOLS_CACHE:-$HOME/.cache/worker-stacks}/helm/$HELM_VERSION"
BIN="$OUT/bin"

if [[ -x "$BIN/helm" && "${1:-}" != "--force" ]]; then
  echo "helm: $BIN/helm ($HELM_VERSION)"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "helm: Go is not installed; install it (apt-get install -y golang-go, or https://go.dev/dl) and run $0 again" >&2
  exit 1
fi
mkdir -p "$BIN"
export CGO_ENABLED=0 GOFLAGS=-mod=mod
# helm v3.22 is built on k8s.io/client-go v0.37 (Kubernetes 1.37): the version its offline capabilities name.
LDFLAGS="-w -s -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
  LDFLAGS="$LDFLAGS -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=37"
done
echo "helm: building helm $HELM_VERSION from the Go module proxy"
GOBIN="$OUT/gobin" go install -trimpath -ldflags "$LDFLAGS" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
mv "$OUT/gobin/helm" "$BIN/helm" && rmdir "$OUT/gobin"
"$BIN/helm" version --short
echo "helm: built into $BIN"
