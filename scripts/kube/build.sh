#!/usr/bin/env bash
# Builds a real kube-apiserver and etcd from the Go module proxy, once per machine, into
# ~/.cache/worker-stacks/kube/<kubernetes version>/bin (WORKER_STACKS_KUBE_CACHE overrides the root).
# Nothing of the built modules is committed: only this script and the pinned versions below.
#
# Why a scratch module: k8s.io/kubernetes replaces its staging modules (k8s.io/api, apiserver, …)
# with ./staging paths, which `go build` of a dependency ignores; requiring k8s.io/kubernetes and
# replacing every staging module with its published v0.x release is how other projects build it.
# etcd is built from the same module graph: Kubernetes 1.37 pins go.etcd.io/etcd/server/v3 v3.7.0
# (build/dependencies.yaml names etcd 3.7.0), so the server it is tested with is the one it ships with.
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-v1.37.2}"
STAGING_VERSION="v0.${KUBE_VERSION#v1.}"
ROOT="${WORKER_STACKS_KUBE_CACHE:-$HOME/.cache/worker-stacks/kube}"
OUT="$ROOT/$KUBE_VERSION"
BIN="$OUT/bin"

if [[ -x "$BIN/kube-apiserver" && -x "$BIN/etcd" && "${1:-}" != "--force" ]]; then
  echo "kube: $BIN has kube-apiserver and etcd ($KUBE_VERSION)"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "kube: Go is not installed; install it (apt-get install -y golang-go, or https://go.dev/dl) and run $0 again" >&2
  exit 1
fi

SRC="$OUT/src"
mkdir -p "$SRC" "$BIN"
cd "$SRC"
export GOFLAGS=-mod=mod
export CGO_ENABLED=0

# The staging modules come from k8s.io/kubernetes's own go.mod, so a new release brings its own list.
go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" >/dev/null
KDIR="$(go env GOMODCACHE)/k8s.io/kubernetes@$KUBE_VERSION"
STAGING=$(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$KDIR/go.mod")
if [[ -z "$STAGING" ]]; then
  echo "kube: no staging replaces found in $KDIR/go.mod; the layout changed, update $0" >&2
  exit 1
fi

{
  echo "module worker-stacks.io/kube-build"
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

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
GO

echo "kube: resolving modules for kube-apiserver $KUBE_VERSION (staging $STAGING_VERSION)"
go mod tidy -e >/dev/null 2>&1 || true
go get "k8s.io/kubernetes@$KUBE_VERSION" >/dev/null
echo "kube: building etcd (the module graph's go.etcd.io/etcd/server/v3)"
go build -trimpath -o "$BIN/etcd.tmp" go.etcd.io/etcd/server/v3 && mv "$BIN/etcd.tmp" "$BIN/etcd"
echo "kube: building kube-apiserver $KUBE_VERSION (cold: tens of minutes on 2 cores)"
# The release's version, as Kubernetes' own build stamps it (without it the server says v0.0.0-master).
MINOR="${KUBE_VERSION#v1.}"; MINOR="${MINOR%%.*}"
LDFLAGS="-X k8s.io/component-base/version.gitVersion=$KUBE_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$MINOR -X k8s.io/component-base/version.gitTreeState=clean"
go build -trimpath -ldflags "$LDFLAGS" -o "$BIN/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver && mv "$BIN/kube-apiserver.tmp" "$BIN/kube-apiserver"
"$BIN/etcd" --version | head -1
"$BIN/kube-apiserver" --version
echo "kube: built into $BIN"
