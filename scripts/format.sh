#!/usr/bin/env bash
# Formats every C++ file git tracks with clang-format-14 and the project's .clang-format, or,
# with --check, changes nothing and fails listing the files that differ (scripts/test.sh, CI).
#   scripts/format.sh [--check]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
mapfile -t files < <(git ls-files -- '*.cpp' '*.h')
case "${1:-}" in
  --check)
    # --dry-run --Werror prints each difference as a warning and exits non-zero on any.
    report="$(mktemp)"
    trap 'rm -f "$report"' EXIT
    if ! clang-format-14 --dry-run --Werror "${files[@]}" 2>"$report"; then
      grep -o '^[^:]*\.\(cpp\|h\):' "$report" | sort -u | sed 's/^/format differs: /; s/:$//' >&2
      echo "scripts/format.sh formats them" >&2
      exit 1
    fi
    ;;
  "") clang-format-14 -i "${files[@]}" ;;
  *) echo "usage: scripts/format.sh [--check]" >&2; exit 2 ;;
esac
