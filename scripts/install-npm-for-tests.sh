#!/usr/bin/env bash
# Usage: install-npm-for-tests.sh DIR PACKAGE VERSION WITHOUT
# Installs npm's PACKAGE@VERSION (exactly that version, its install scripts not run) into
# build/DIR/node_modules for the tests, unless it is there already. Without npm or the registry
# it says what the tests do WITHOUT it and succeeds: the tests that need it say so and skip.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$root/build/$1"
package=$2
version=$3
without=$4
if [ -f "$dir/node_modules/$package/package.json" ] \
  && grep -q "\"version\": \"$version\"" "$dir/node_modules/$package/package.json"; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "$(basename "$0"): no npm; $without" >&2
  exit 0
fi
mkdir -p "$dir"
echo "Installing $package@$version for the tests into $dir" >&2
if ! (cd "$dir" && timeout 600 npm install --ignore-scripts --no-audit --no-fund --no-save \
    --prefix "$dir" "$package@$version" >/dev/null 2>&1); then
  echo "$(basename "$0"): npm install of $package failed; $without" >&2
fi
