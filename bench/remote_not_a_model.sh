#!/usr/bin/env bash
# Issue 48: what `inspect URL` costs when the URL serves no ONNX model. Debian's nginx
# (nginx-light) serves on 127.0.0.1 three 256 MiB files: random bytes, random bytes after a byte
# that begins a graph field (0x3a, with a length that ends at the end of the file: the first
# field is one a model may begin with), and zeros. nginx's access log counts the bytes each run
# was sent, /usr/bin/time -v its peak RSS; the worst of RUNS runs (default 3). The last row is
# `inspect FILE` of the random file on disk.
#   bench/remote_not_a_model.sh [BUILD_DIR]   (default build)
set -euo pipefail
runs=${RUNS:-3}
size=$((256 << 20))
# The tools, checked, and median() (bench_env.sh); the build folder is the first argument.
REPACK_BUILD_DIR=$(realpath "${1:-build}")
# shellcheck source=bench_env.sh disable=SC2154 # sets here, build, gen, cli
source "$(dirname "${BASH_SOURCE[0]}")/bench_env.sh"
scratch=$(mktemp -d /var/tmp/repack-not-a-model.XXXXXX)
# shellcheck source=bench_nginx.sh disable=SC2154 # sets port, server; served()
source "$(dirname "${BASH_SOURCE[0]}")/bench_nginx.sh"
head -c "$size" /dev/urandom >"$scratch/www/random.onnx"
PYTHONPATH="$here" /usr/bin/python3 - "$scratch/www/graph-then-random.onnx" "$size" <<'PY'
import os, sys
from onnx_wire import varint
path, size = sys.argv[1], int(sys.argv[2])
length = size - 1 - len(varint(size))
head = b"\x3a" + varint(length)
with open(path, "wb") as f:
    f.write(head)
    left = size - len(head)
    while left:
        chunk = os.urandom(min(left, 8 << 20))
        f.write(chunk)
        left -= len(chunk)
PY
head -c "$size" /dev/zero >"$scratch/www/zeros.onnx"
sleep 0.5

# row LABEL NAME: inspect of $scratch/www/NAME by its URL, or by its path when NAME is "/NAME".
row() {
    local label=$1 name=$2 worst=0 fetched=0 requests=0 secs="" rc kib s r b
    local model="http://127.0.0.1:$port/$name"
    [[ $name == /* ]] && model=$scratch/www$name
    for ((run = 0; run < runs; run++)); do
        : >"$scratch/access.log"
        rc=0
        /usr/bin/time -v -o "$scratch/time" "$cli" inspect "$model" >/dev/null 2>"$scratch/err" ||
            rc=$?
        kib=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$scratch/time")
        s=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); printf "%.2f\n", t[n] + 60 * t[n-1] }' \
            "$scratch/time")
        secs+="$s"$'\n'
        read -r r b < <(served)
        ((kib > worst)) && worst=$kib
        ((b > fetched)) && fetched=$b
        ((r > requests)) && requests=$r
    done
    printf '%-32s %5s %9s %14s %9s %8s\n' "$label" "$rc" "$requests" "$fetched" \
        "$((worst / 1024))" "$(median <<<"$secs")"
    # What it said: the file's name, then what was found where.
    sed -n '1s/^/    /p' "$scratch/err" | cut -c1-200
}
printf '%-32s %5s %9s %14s %9s %8s\n' "inspect URL, $((size >> 20)) MiB served" exit requests \
    "bytes fetched" "peak MiB" seconds
row "random bytes" random.onnx
row "a graph tag, then random bytes" graph-then-random.onnx
row "zeros" zeros.onnx
row "random bytes, on disk" /random.onnx
