#!/usr/bin/env bash
# Hostile-input hardening (docs/fuzzing.md), run by scripts/test.sh after the normal
# tests: every test suite built with AddressSanitizer + UBSan (preset asan, ./build-asan, -O1)
# and run by CTest, stopping at the first error or leak; then each fuzz target for
# REPACK_FUZZ_SECONDS (default 60) from its corpus (scripts/fuzz.sh, ./build-fuzz).
#   scripts/test-hardening.sh [--no-fuzz | --only-fuzz]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build-asan"
asan=1
fuzz=1
case "${1:-}" in
  --no-fuzz) fuzz=0 ;;
  --only-fuzz) asan=0 ;;
  "") ;;
  *) echo "usage: scripts/test-hardening.sh [--no-fuzz | --only-fuzz]" >&2; exit 2 ;;
esac
bash "$root/scripts/install-deps.sh"
cd "$root"

if ((asan)); then
  start=$SECONDS
  [ -f "$build/CMakeCache.txt" ] || cmake --preset asan >/dev/null
  # What the tests run, not the benchmarks: every suite (tst_*), the two executables and the
  # model generator (bench_generated_models and the crash suite run them).
  # A suite run once per screen (tst_window_fit_1366x768@1.5) is one target (tst_window_fit).
  mapfile -t suites < <(ctest --test-dir "$build" -N \
    | sed -n 's/^ *Test *#[0-9]*: \(tst_[A-Za-z0-9_]*\)\(_[0-9]*x[0-9]*@[0-9.]*\)\{0,1\}$/\1/p' | sort -u)
  cmake --build "$build" -j "$(nproc)" --target "${suites[@]}" onnx-repack onnx-repack-gui repack-genmodel
  echo "hardening: ASan + UBSan build took $((SECONDS - start)) s" >&2

  start=$SECONDS
  export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:strict_string_checks=1:check_initialization_order=1"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
  export LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp:print_suppressions=0"
  export REPACK_CRASH_KILLS=10 # tst_crash_consistency: 10 random kills instead of 50
  export REPACK_REWRITE_ROUNDS=15 # tst_sources_rewritten: 15 rounds a row instead of 50
  ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
  echo "hardening: tests under ASan + UBSan took $((SECONDS - start)) s" >&2
fi

if ((fuzz)); then
  start=$SECONDS
  bash "$root/scripts/fuzz.sh" --seconds "${REPACK_FUZZ_SECONDS:-60}"
  echo "hardening: fuzzing took $((SECONDS - start)) s" >&2
fi
