#!/usr/bin/env bash
# Builds the real kubectl from the Go module proxy, once per machine, into the same directory as the API server:
# ~/.cache/worker-stacks/kube/<kubernetes version>/bin/kubectl (WORKER_STACKS_KUBE_CACHE overrides the root).
# The test client of test/ops/kubectl-readme.test.ts and test/charts/ (helm talks to the API server itself).
# /usr/bin/kubectl may be something else entirely: the tests run this one by its absolute path.
#
# Same scratch-module approach as build.sh (k8s.io/kubernetes's ./staging replaces are ignored in a dependency, so
# each staging module is replaced by its published v0.x release), in its own directory so that the two builds can
# run side by side; they share the Go module and build caches, so after kube-apiserver only kubectl's own packages
# compile (about 4 minutes on 2 cores shared with another build).
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-v1.37.2}"
STAGING_VERSION="v0.${KUBE_VERSION#v1.}"
ROOT="${WORKER_STACKS_KUBE_CACHE:-$HOME/.cache/worker-stacks/kube}"
OUT="$ROOT/$KUBE_VERSION"
BIN="$OUT/bin"

if [[ -x "$BIN/kubectl" && "${1:-}" != "--force" ]]; then
  echo "kubectl: $BIN/kubectl ($KUBE_VERSION)"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "kubectl: Go is not installed; install it (apt-get install -y golang-go, or https://go.dev/dl) and run $0 again" >&2
  exit 1
fi

SRC="$OUT/src-kubectl"
mkdir -p "$SRC" "$BIN"
cd "$SRC"
export GOFLAGS=-mod=mod
export CGO_ENABLED=0

go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" >/dev/null
KDIR="$(go env GOMODCACHE)/k8s.io/kubernetes@$KUBE_VERSION"
STAGING=$(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$KDIR/go.mod")
if [[ -z "$STAGING" ]]; then
  echo "kubectl: no staging replaces found in $KDIR/go.mod; the layout changed, update $0" >&2
  exit 1
fi
{
  echo "module worker-stacks.io/kubectl-build"
  echo
  echo "go $(sed -n 's/^go //p' "$KDIR/go.mod")"
  echo
  echo "require k8s.io/kubernetes $KUBE_VERSION"
  echo
  echo "replace ("
  for m in $STAGING; do echo "	$m => $m $STAGING_VERSION"; done
  echo ")"
} > go.mod
cat > tools.go <<'GO'
//go:build tools

package tools

import _ "k8s.io/kubernetes/cmd/kubectl"
GO

echo "kubectl: resolving modules for $KUBE_VERSION (staging $STAGING_VERSION)"
go mod tidy -e >/dev/null 2>&1 || true
go get "k8s.io/kubernetes@$KUBE_VERSION" >/dev/null
MINOR="${KUBE_VERSION#v1.}"; MINOR="${MINOR%%.*}"
# kubectl reads its version from client-go's (and component-base's) version package, as Kubernetes' build stamps both.
LDFLAGS=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  LDFLAGS="$LDFLAGS -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$MINOR -X $pkg.gitTreeState=clean"
done
echo "kubectl: building kubectl $KUBE_VERSION"
go build -trimpath -ldflags "$LDFLAGS" -o "$BIN/kubectl.tmp" k8s.io/kubernetes/cmd/kubectl && mv "$BIN/kubectl.tmp" "$BIN/kubectl"
"$BIN/kubectl" version --client
echo "kubectl: built into $BIN"
