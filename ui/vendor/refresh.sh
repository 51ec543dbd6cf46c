#!/usr/bin/env bash
# ui/vendor/refresh.sh: re-fetches the vendored cytoscape.js from the npm
# registry at the pinned version (change CYTOSCAPE_VERSION to upgrade) and
# copies its built, minified file and its licence here. Needs npm and tar.
set -euo pipefail
CYTOSCAPE_VERSION=3.35.0
cd "$(dirname "$0")"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "cytoscape@$CYTOSCAPE_VERSION" >/dev/null)
tar -xzf "$tmp/cytoscape-$CYTOSCAPE_VERSION.tgz" -C "$tmp"
cp "$tmp/package/dist/cytoscape.min.js" cytoscape.min.js
cp "$tmp/package/LICENSE" cytoscape.LICENSE
echo "$CYTOSCAPE_VERSION" > cytoscape.VERSION
echo "cytoscape $CYTOSCAPE_VERSION vendored in $(pwd)"
