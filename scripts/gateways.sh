#!/usr/bin/env bash
# Installs the other MCP gateways that benchmark P10 (cmd/legate-bench, docs/BENCHMARKS.md) runs
# beside Legate, at pinned versions, built from their sources with the Go module proxy, into
# ${LEGATE_TOOLS_DIR:-$HOME/.cache/legate-tools}/gateways, where the bench finds them.
#
#   bash scripts/gateways.sh
#   LEGATE_TOOLS_DIR=/var/cache/legate-tools bash scripts/gateways.sh
#
#   bin/mcp-proxy     TBXark/mcp-proxy (module github.com/TBXark/mcp-proxy)
#   bin/docker-mcp    docker/mcp-gateway (module github.com/docker/mcp-gateway), the
#                     `docker mcp` CLI plugin, run standalone as `docker-mcp gateway run`
#   bin/NAME.info     the module's .info from the proxy (version, time, VCS revision): the
#                     bench prints the version and commit of what it measured from it
#
# Idempotent: a gateway already built at its pin is left alone. Needs go (1.25 or later);
# building docker-mcp takes a few minutes on 2 cores, most of it fetching its dependencies.
set -euo pipefail

dir=${LEGATE_TOOLS_DIR:-${HOME:?}/.cache/legate-tools}/gateways

# The module proxy lists the versions of neither module (its version list is refused), so each
# is fetched at a pinned version. Both versions are in the checksum database; the hash pinned
# here is checked as well, so that a rebuild is of the same source.
#
# TBXark/mcp-proxy: v0.43.2 (tag of 2026-01-04) is the newest release. Its go.mod still says
# github.com/TBXark/mcp-proxy; the commits after it rename the module to lowercase and are in
# no release.
MCP_PROXY=github.com/TBXark/mcp-proxy
MCP_PROXY_VERSION=v0.43.2
MCP_PROXY_SUM=h1:TmICwoDZy67oiL1ca6jh6jQVmUXjGi1outLzlX3ImC8=
# docker/mcp-gateway: v0.43.3 is the newest release the proxy serves, but it cannot be built
# here: it requires github.com/docker/secrets-engine/client v0.0.29 and
# github.com/docker/secrets-engine/x v0.1.0-do.not.use, and the module proxy refuses both
# (403 "This module version is not available"). v0.43.1, the release before it, is the newest
# whose every dependency the proxy serves.
DOCKER_MCP=github.com/docker/mcp-gateway
DOCKER_MCP_VERSION=v0.43.1
DOCKER_MCP_SUM=h1:7Bo51deKxHZKkVKnZ8GpdC2JbSx6wNv9WzQnHazQzSE=

command -v go >/dev/null || { echo "gateways.sh: go not found on PATH" >&2; exit 1; }
mkdir -p "$dir/bin"
dir=$(cd "$dir" && pwd -P)

# build NAME MODULE VERSION SUM PACKAGE LDFLAGS: downloads MODULE@VERSION alone (`go install
# module@version` would ask the proxy for the version list), checks its hash, and builds PACKAGE
# in the module's own directory, with the module's go.mod and go.sum: its dependencies at its
# pins, fetched from the proxy.
build() {
  local name=$1 module=$2 version=$3 want=$4 pkg=$5 ldflags=$6
  local stamp="$dir/bin/$name.version"
  if [ -x "$dir/bin/$name" ] && [ -f "$dir/bin/$name.info" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$module@$version" ]; then
    echo "gateways.sh: $name ($module $version) up to date"
    return
  fi
  echo "gateways.sh: building $name ($module $version)"
  local info sum mod infofile start
  info=$(cd "$dir" && go mod download -json "$module@$version")
  field() { printf '%s\n' "$info" | sed -n "s/^[[:space:]]*\"$1\": \"\\(.*\\)\",\{0,1\}$/\\1/p" | head -1; }
  sum=$(field Sum) mod=$(field Dir) infofile=$(field Info)
  if [ -z "$sum" ]; then
    echo "gateways.sh: $module@$version could not be fetched:" >&2
    printf '%s\n' "$info" >&2
    exit 1
  fi
  [ "$sum" = "$want" ] || { echo "gateways.sh: $module@$version has hash $sum, want $want" >&2; exit 1; }
  start=$(date +%s)
  rm -f "$stamp"
  (cd "$mod" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -ldflags "$ldflags" -o "$dir/bin/$name" "$pkg")
  cp "$infofile" "$dir/bin/$name.info"
  echo "$module@$version" >"$stamp"
  echo "gateways.sh: built $name in $(( $(date +%s) - start ))s"
}

build mcp-proxy "$MCP_PROXY" "$MCP_PROXY_VERSION" "$MCP_PROXY_SUM" . \
  "-X main.BuildVersion=$MCP_PROXY_VERSION"
build docker-mcp "$DOCKER_MCP" "$DOCKER_MCP_VERSION" "$DOCKER_MCP_SUM" ./cmd/docker-mcp \
  "-X $DOCKER_MCP/cmd/docker-mcp/version.Version=$DOCKER_MCP_VERSION"

cat <<EOF
gateways dir:  $dir
mcp-proxy:     $dir/bin/mcp-proxy ($MCP_PROXY $MCP_PROXY_VERSION)
docker-mcp:    $dir/bin/docker-mcp ($DOCKER_MCP $DOCKER_MCP_VERSION)
EOF
