#!/usr/bin/env bash
# Builds the real promtool from the Go module proxy, once per machine, into
# ~/.cache/worker-stacks/prometheus/<module version>/bin/promtool (WORKER_STACKS_TOOLS_CACHE overrides
# ~/.cache/worker-stacks). test/charts/prometheus-rules.test.ts runs `promtool check rules` and `promtool test rules`.
# github.com/prometheus/prometheus v0.316.0 is Prometheus 3.16.0 (the Go module's v0.3xx numbering); its go.mod has no
# replace directives. The tag remove_all_sd leaves out the service-discovery plugins (AWS, Azure, GCE, ...), which
# promtool's rule commands never use: fewer packages to compile.
set -euo pipefail

PROM_MODULE_VERSION="${PROM_MODULE_VERSION:-v0.316.0}"
PROM_VERSION="${PROM_VERSION:-3.16.0}"
OUT="${WORKER_STACKS_TOOLS_CACHE:-$HOME/.cache/worker-stacks}/prometheus/$PROM_MODULE_VERSION"
BIN="$OUT/bin"

if [[ -x "$BIN/promtool" && "${1:-}" != "--force" ]]; then
  echo "promtool: $BIN/promtool ($PROM_VERSION)"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "promtool: Go is not installed; install it (apt-get install -y golang-go, or https://go.dev/dl) and run $0 again" >&2
  exit 1
fi
mkdir -p "$BIN"
export CGO_ENABLED=0 GOFLAGS=-mod=mod
LDFLAGS="-X github.com/prometheus/common/version.Version=$PROM_VERSION -X github.com/prometheus/common/version.Branch=HEAD"
echo "promtool: building promtool $PROM_VERSION ($PROM_MODULE_VERSION) from the Go module proxy"
GOBIN="$OUT/gobin" go install -trimpath -tags remove_all_sd -ldflags "$LDFLAGS" "github.com/prometheus/prometheus/cmd/promtool@$PROM_MODULE_VERSION"
mv "$OUT/gobin/promtool" "$BIN/promtool" && rmdir "$OUT/gobin"
"$BIN/promtool" --version | head -1
echo "promtool: built into $BIN"
