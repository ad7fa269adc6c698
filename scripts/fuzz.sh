#!/usr/bin/env bash
# Builds the libFuzzer targets (preset `fuzz`: clang, ASan + UBSan, into ./build-fuzz) and runs
# each for SECONDS (default 60) from its corpus: the seeds fuzz/make_corpus.py generates from
# Debian's libonnx-testdata, the bundled sample and fixture-like models, plus what is committed
# in fuzz/corpus/TARGET (regressions, and the seeds of size_options and http_answers). Fails on
# the first crash, leak, timeout (an input taking 1 s or more) or broken promise; the input is
# saved as build-fuzz/artifacts/TARGET-*.
#   scripts/fuzz.sh [TARGET...] [--seconds N] [-- LIBFUZZER_FLAGS...]
# TARGET: model_load external_data wire_scan tensor_index plan size_options http_answers
# (default: all).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build-fuzz"
all=(model_load external_data wire_scan tensor_index plan size_options http_answers)
targets=()
seconds=60
extra=()
while (($#)); do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) targets+=("$1"); shift ;;
  esac
done
((${#targets[@]})) || targets=("${all[@]}")

bash "$root/scripts/install-deps.sh"
cd "$root"
[ -f "$build/CMakeCache.txt" ] || cmake --preset fuzz >/dev/null
cmake --build "$build" --target fuzz_all -j "$(nproc)"

# Generated seeds, made once per build folder.
seeds="$build/corpus/seeds"
if [ ! -d "$seeds/external_models" ]; then
  rm -rf "$seeds"
  /usr/bin/python3 "$root/fuzz/make_corpus.py" "$seeds.tmp" >/dev/null
  mkdir -p "$seeds.tmp/plan"
  REPACK_FUZZ_PLAN_SEED="$seeds.tmp/plan/default-plan.json" "$build/fuzz/fuzz_plan" >/dev/null 2>&1
  mv "$seeds.tmp" "$seeds"
fi

mkdir -p "$build/artifacts"
# The harnesses write each input to a scratch file: on tmpfs, so a busy disk (a build, a test's
# fsyncs) cannot stall an execution past the 1 s timeout (a false timeout seen in open()).
if [ -z "${REPACK_FUZZ_TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
  REPACK_FUZZ_TMPDIR=/dev/shm
fi
export TMPDIR="${REPACK_FUZZ_TMPDIR:-${TMPDIR:-/tmp}}"
for target in "${targets[@]}"; do
  case "$target" in
    model_load | wire_scan) from=("$seeds/models"); dict=(-dict="$root/fuzz/onnx.dict") ;;
    tensor_index)
      from=("$seeds/models" "$seeds/external_models"); dict=(-dict="$root/fuzz/onnx.dict") ;;
    external_data) from=("$seeds/external_data"); dict=(-dict="$root/fuzz/onnx.dict") ;;
    plan) from=("$seeds/plan"); dict=(-dict="$root/fuzz/plan.dict") ;;
    size_options) from=(); dict=() ;;
    http_answers) from=(); dict=(-dict="$root/fuzz/http.dict") ;;
    *) echo "fuzz.sh: unknown target '$target' (one of: ${all[*]})" >&2; exit 2 ;;
  esac
  work="$build/corpus/work/$target" # what this run adds; kept for the next run
  mkdir -p "$work"
  committed="$root/fuzz/corpus/$target" # minimized crashers and regressions
  [ -d "$committed" ] && from=("$committed" "${from[@]}")
  echo "== fuzz_$target: ${seconds} s" >&2
  "$build/fuzz/fuzz_$target" "$work" "${from[@]}" "${dict[@]}" \
    -max_total_time="$seconds" -timeout=1 -rss_limit_mb=2048 -max_len=65536 \
    -print_funcs=0 -print_final_stats=1 -artifact_prefix="$build/artifacts/$target-" "${extra[@]}"
done
