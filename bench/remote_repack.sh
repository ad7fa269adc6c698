#!/usr/bin/env bash
# Issue 38 step 9: `repack URL -o OUT` of a 1 GiB external-data model on a web server into a local
# folder against curl downloading the same files from the same server to the same disk (the
# goal: <= 1.15x curl's time, peak RSS <= 64 MiB). Debian's nginx serves on 127.0.0.1 from the
# page cache. The repack syncs what it writes (its save protocol), so curl is timed twice: as it
# is, and followed by `sync FILES` (the same durability). Median of RUNS runs (default 3), the
# tools alternating; the written files are removed between runs.
#   bench/remote_repack.sh [BUILD_DIR]   (default build; needs curl, nginx-light, /usr/bin/time)
# Model: repack-genmodel --weights 1G (external, one data file, dense).
set -euo pipefail
runs=${RUNS:-3}
# The tools, median(), the served model and its URL (bench_served_model.sh).
# shellcheck source=bench_served_model.sh disable=SC2154 # sets cli, scratch, base, total
source "$(dirname "${BASH_SOURCE[0]}")/bench_served_model.sh"
out=$scratch/out

timed() { # LABEL COMMAND...: seconds and peak KiB into samples[LABEL], peak[LABEL]
    local label=$1 s k
    shift
    rm -rf "$out" && mkdir -p "$out" && sync
    : >"$scratch/access.log"
    /usr/bin/time -f "%e %M" -o "$scratch/time" "$@" >/dev/null
    read -r s k < <(tail -n 1 "$scratch/time")
    add "$label" "$s"
    add_rss "$label" "$k"
    served_by[$label]=$(served)
}
declare -A served_by
for ((r = 0; r < runs; r++)); do
    timed curl curl -sf -o "$out/model.onnx" "$base/model.onnx" \
        -o "$out/model.onnx.data" "$base/model.onnx.data"
    # shellcheck disable=SC2016 # $1 and $2 are the inner shell's
    timed curl+sync sh -c 'curl -sf -o "$1/model.onnx" "$2/model.onnx" \
        -o "$1/model.onnx.data" "$2/model.onnx.data" && sync "$1/model.onnx" "$1/model.onnx.data"' \
        sh "$out" "$base"
    timed repack "$cli" repack "$base/model.onnx" -o "$out/model.onnx"
done
/usr/bin/python3 -c "import sys, onnx; onnx.load(sys.argv[1])" "$out/model.onnx"
printf '%-26s %8s %10s %9s %9s %14s\n' "$total bytes" seconds "MB/s" "peak MiB" requests "bytes served"
for label in curl curl+sync repack; do
    s=$(median <<<"${samples[$label]}")
    read -r n b <<<"${served_by[$label]}"
    printf '%-26s %8s %10s %9s %9s %14s\n' "$label" "$s" \
        "$(awk -v t="$total" -v s="$s" 'BEGIN { printf "%.0f", t / s / 1e6 }')" \
        "$((peak[$label] / 1024))" "$n" "$b"
done
c=$(median <<<"${samples[curl]}")
cs=$(median <<<"${samples[curl+sync]}")
p=$(median <<<"${samples[repack]}")
awk -v c="$c" -v cs="$cs" -v p="$p" 'BEGIN {
    printf "repack takes %.2fx curl'"'"'s time, %.2fx curl+sync'"'"'s (goal <= 1.15x)\n", p / c, p / cs }'
echo "repack peak RSS $((peak[repack] / 1024)) MiB (goal <= 64 MiB)"
