#!/usr/bin/env bash
# Issue 38: `verify URL` of a 1 GiB external-data model on a web server against curl downloading
# the same files from the same server (the issue's goal: >= 0.9x curl's throughput). Debian's
# nginx serves on 127.0.0.1 from the page cache; both read every byte once. Median of RUNS runs
# (default 3), the two tools alternating; peak RSS of verify.
#   bench/remote_verify.sh [BUILD_DIR]   (default build; needs curl, nginx-light, /usr/bin/time)
# Model: repack-genmodel --weights 1G (external, one data file, dense).
set -euo pipefail
runs=${RUNS:-3}
# The tools, median(), the served model and its URL (bench_served_model.sh).
# shellcheck source=bench_served_model.sh disable=SC2154 # sets cli, scratch, base, total
source "$(dirname "${BASH_SOURCE[0]}")/bench_served_model.sh"

curl_s="" verify_s="" verify_k="" verify_served="" curl_served=""
for ((r = 0; r < runs; r++)); do
    : >"$scratch/access.log"
    /usr/bin/time -f "%e %M" -o "$scratch/time" \
        curl -sf -o /dev/null "$base/model.onnx" -o /dev/null "$base/model.onnx.data"
    read -r s _ < <(tail -n 1 "$scratch/time")
    curl_s+="$s"$'\n'
    curl_served=$(served)
    : >"$scratch/access.log"
    /usr/bin/time -f "%e %M" -o "$scratch/time" "$cli" verify "$base/model.onnx" >/dev/null
    read -r s k < <(tail -n 1 "$scratch/time")
    verify_s+="$s"$'\n' verify_k+="$k"$'\n'
    verify_served=$(served)
done
c=$(median <<<"$curl_s")
v=$(median <<<"$verify_s")
printf '%-22s %8s %10s %9s %9s %14s\n' "$total bytes" seconds "MB/s" "peak MiB" requests "bytes served"
read -r n b <<<"$curl_served"
printf '%-22s %8s %10s %9s %9s %14s\n' "curl (two files)" "$c" \
    "$(awk -v t="$total" -v s="$c" 'BEGIN { printf "%.0f", t / s / 1e6 }')" "" "$n" "$b"
read -r n b <<<"$verify_served"
printf '%-22s %8s %10s %9s %9s %14s\n' "onnx-repack verify" "$v" \
    "$(awk -v t="$total" -v s="$v" 'BEGIN { printf "%.0f", t / s / 1e6 }')" \
    "$(($(median <<<"$verify_k") / 1024))" "$n" "$b"
awk -v c="$c" -v v="$v" 'BEGIN { printf "verify at %.2fx curl'"'"'s throughput (goal >= 0.9x)\n", c / v }'
