#!/usr/bin/env bash
# Opening and verifying (the issue-2 benchmarks): opening a model costs the same whatever its weight
# size, with bounded memory; verify reads external data nearly as fast as cat. Prints a table of
# figures.
#
#   bench/open_and_verify.sh [SCRATCH_DIR]     (default: a fresh mktemp dir under /var/tmp)
#
# Needs the targets repack-genmodel, repack-bench-open and onnx-repack built in
# $REPACK_BUILD_DIR (default: build-bench beside this folder), /usr/bin/time (Debian package
# "time") and about 6.5 GiB free in the scratch dir. The models are removed afterwards.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${REPACK_BUILD_DIR:-$here/../build-bench}
gen=$build/bench/repack-genmodel
open=$build/bench/repack-bench-open
reader=$build/bench/repack-bench-read
cli=$build/app/onnx-repack
for tool in "$gen" "$open" "$reader" "$cli"; do
    [[ -x $tool ]] || { echo "missing $tool: build it first (see bench/README.md)" >&2; exit 2; }
done
[[ -x /usr/bin/time ]] || { echo "needs /usr/bin/time: apt-get install time" >&2; exit 2; }

if [[ $# -ge 1 ]]; then
    scratch=$1
    mkdir -p "$scratch"
    own_scratch=0
else
    scratch=$(mktemp -d /var/tmp/repack-bench.XXXXXX)
    own_scratch=1
fi
cleanup() {
    rm -f "$scratch"/issue2-*.onnx "$scratch"/issue2-*.onnx.data
    if [[ $own_scratch == 1 ]]; then rmdir "$scratch"; fi
}
trap cleanup EXIT

need_kib=$((6 * 1024 * 1024 + 512 * 1024))
avail_kib=$(df --output=avail -k "$scratch" | tail -1)
if ((avail_kib < need_kib)); then
    echo "$scratch: $((avail_kib / 1024)) MiB free, the models need $((need_kib / 1024)) MiB" >&2
    exit 2
fi

median() { sort -n | awk 'NF { v[++n] = $1 } END { print v[int((n + 1) / 2)] }'; }
now_ns() { date +%s%N; }
key() { awk -v k="$1" '$1 == k { print $2 }'; }

# name, weights, tensors: equal tensor counts so that only the weight size differs.
models=("issue2-1g 1G 1000" "issue2-4g 4G 1000" "issue2-1g-100k 1G 100000")
for spec in "${models[@]}"; do
    read -r name weights tensors <<<"$spec"
    "$gen" --out "$scratch/$name.onnx" --weights "$weights" --tensors "$tensors" >/dev/null
done

rows=()
for spec in "${models[@]}"; do
    read -r name weights tensors <<<"$spec"
    model=$scratch/$name.onnx
    stats=$("$open" "$model" --runs 7)
    rss=$(for _ in 1 2 3; do
        /usr/bin/time -f %M "$cli" inspect --json "$model" 2>&1 >/dev/null | tail -1
    done | sort -n | tail -1)
    phases=$(printf '%.0f / %.0f / %.0f' "$(key load_ms <<<"$stats")" \
        "$(key layout_ms <<<"$stats")" "$(key json_ms <<<"$stats")")
    rows+=("$(printf '%-8s %8s %8s %14.1f %22s %10s' "$weights" "$(key tensors <<<"$stats")" \
        "$(du -h --apparent-size "$model.data" | cut -f1)" "$(key median_ms <<<"$stats")" \
        "$phases" "$((rss / 1024)) MiB")")
done

# verify vs cat on the 1 GiB data file, page cache warm for both.
model=$scratch/issue2-1g.onnx
data=$model.data
bytes=$(stat -c %s "$data")
cat "$data" >/dev/null
"$cli" verify "$model" >/dev/null
cat_ns=() verify_ns=()
for _ in 1 2 3; do
    t=$(now_ns); cat "$data" >/dev/null; cat_ns+=($(($(now_ns) - t)))
    t=$(now_ns); "$cli" verify "$model" >/dev/null; verify_ns+=($(($(now_ns) - t)))
done
# The same reads as verify (8 MiB preads) into a page-aligned buffer and into one 16 bytes off,
# as malloc gives: shows how much of any gap to cat is the buffer's alignment.
aligned_ns=() misaligned_ns=()
for _ in 1 2 3; do
    aligned_ns+=($("$reader" "$data" --misalign 0 | awk '$1 == "ms" { printf "%.0f", $2 * 1e6 }'))
    misaligned_ns+=($("$reader" "$data" --misalign 16 | awk '$1 == "ms" { printf "%.0f", $2 * 1e6 }'))
done
aligned_med=$(printf '%s\n' "${aligned_ns[@]}" | median)
misaligned_med=$(printf '%s\n' "${misaligned_ns[@]}" | median)
cat_med=$(printf '%s\n' "${cat_ns[@]}" | median)
verify_med=$(printf '%s\n' "${verify_ns[@]}" | median)
mbps() { awk -v b="$bytes" -v ns="$1" 'BEGIN { printf "%.0f", b / (ns / 1e9) / 1e6 }'; }

echo "Issue 2 benchmarks, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores," \
    "load average $(cut -d' ' -f1-3 /proc/loadavg), scratch $scratch"
echo
printf '%-8s %8s %8s %14s %22s %10s\n' "weights" "tensors" "data" "open ms (med)" \
    "load/layout/json ms" "peak RSS"
printf '%s\n' "${rows[@]}"
echo
echo "all models external, one data file; open ms: Model::load + computeLayout + inspectJson,"
echo "median of 7 (repack-bench-open), then the median of each phase"
echo "peak RSS: /usr/bin/time -f %M onnx-repack inspect --json MODEL > /dev/null, worst of 3"
echo "target: open time independent of weight size; RSS < 50 MiB for the 1000-tensor models"
echo
printf 'verify vs cat, %s data file, warm page cache, median of 3:\n' \
    "$(du -h --apparent-size "$data" | cut -f1)"
printf '  cat > /dev/null        %6s MB/s  (%s ms)\n' "$(mbps "$cat_med")" $((cat_med / 1000000))
printf '  onnx-repack verify     %6s MB/s  (%s ms)\n' "$(mbps "$verify_med")" \
    $((verify_med / 1000000))
awk -v c="$cat_med" -v v="$verify_med" \
    'BEGIN { printf "  ratio verify/cat      %5.0f%%  (target >= 80%%)\n", 100 * c / v }'
printf '  pread 8 MiB, page-aligned buffer  %6s MB/s\n' "$(mbps "$aligned_med")"
printf '  pread 8 MiB, buffer at +16 bytes  %6s MB/s  (malloc alignment)\n' \
    "$(mbps "$misaligned_med")"
