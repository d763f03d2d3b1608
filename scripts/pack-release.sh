#!/usr/bin/env bash
# Packs the build of a past release for the upgrade tests (test/upgrade/): the commit's own `npm run build`,
# packed with only what runs (dist/**/*.js and the Lua scripts; no types, docs or dashboard assets), written
# to test/upgrade/releases/<version>-<short commit>.tgz. Needs the commit in this clone's history and the
# repository's node_modules (the build reuses them through a symlink; nothing is installed).
#   scripts/pack-release.sh e990c45
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
commit="$(git -C "$root" rev-parse --short=7 "${1:?usage: scripts/pack-release.sh <commit>}^{commit}")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

git -C "$root" archive "$commit" | tar -x -C "$work"
ln -s "$root/node_modules" "$work/node_modules"
(cd "$work" && npm run build --silent >/dev/null)
# Only what runs: the tests load dist/index.js with require(), its peers from the repository's node_modules.
# Its runtime dependencies (commander for the command line, croner for schedules) come from there as well.
node -e '
const fs = require("node:fs");
const file = process.argv[1];
const pkg = JSON.parse(fs.readFileSync(file, "utf8"));
pkg.files = ["dist/**/*.js", "dist/**/*.lua"];
delete pkg.scripts;
delete pkg.devDependencies;
fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + "\n");
' "$work/package.json"
# npm packs a README whatever `files` says: one line instead of the release's front page.
echo "The build of $(node -p 'require(process.argv[1]).name' "$work/package.json") at $commit, for the upgrade tests." > "$work/README.md"
version="$(node -p 'require(process.argv[1]).version' "$work/package.json")"
mkdir -p "$root/test/upgrade/releases"
tarball="$(cd "$work" && npm pack --silent --pack-destination "$work")"
out="$root/test/upgrade/releases/$version-$commit.tgz"
# npm pack stamps every entry with the same fixed date, so the same commit packs to the same bytes.
cp "$work/$tarball" "$out"
echo "$out ($(wc -c < "$out") bytes)"
