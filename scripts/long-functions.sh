#!/usr/bin/env bash
# Lists the functions over 100 lines (Universal Ctags' line ranges: apt-get install -y
# universal-ctags) and the files over 700 lines in the product's folders: core, ui, cli, python,
# app. Prints nothing below each heading when the house is in order; always exits 0.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
echo "-- functions over 100 lines"
ctags -R --fields=+ne --kinds-c++=f -x --_xformat='%{end} %{line} %{input} %{name}' \
    core ui cli python app 2>/dev/null \
    | awk '$1 - $2 + 1 > 100 { print $1 - $2 + 1, $3 ":" $2, $4 }' | sort -rn
echo "-- files over 700 lines"
git ls-files core ui cli python app | grep -E '\.(cpp|h|py)$' | xargs wc -l \
    | awk '$1 > 700 && $2 != "total"'
