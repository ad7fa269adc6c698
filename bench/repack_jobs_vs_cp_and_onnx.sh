#!/usr/bin/env bash
# Repack jobs against cp and python3-onnx (the issue-9 benchmarks): each job of the issue's table
# timed in one run against `cp FILE && sync FILE` of the same bytes and against python3-onnx, with
# peak RSS (/usr/bin/time %M).
#
#   bench/repack_jobs_vs_cp_and_onnx.sh [SCRATCH_DIR]   (default: a fresh mktemp dir in /var/tmp)
#
#   inspect-inline-1G   onnx-repack inspect --json of a 1 GiB inline model
#                       (python: onnx.load of it, which parses every payload)
#   inline->external    repack of the 1 GiB inline model into a new folder (weights go external)
#   external->new-1G    repack of a 1 GiB external model into a new folder (a new data file)
#   external->new-4G    the same at 4 GiB
#   external->inline    repack --inline of the 1 GiB external model (python: load + save inline)
#   inspect-100k        onnx-repack inspect --json of a 100,000-tensor external model
#                       (python: onnx.load(load_external_data=False))
# The cp baseline copies the bytes the job moves: the .onnx for inline sources, the data file
# for external ones. Needs repack-genmodel and onnx-repack in $REPACK_BUILD_DIR (default
# build-bench beside this folder), /usr/bin/time, /usr/bin/python3 with python3-onnx, ~16 GiB
# free. RUNS (default 3) runs per side and job; PYTHON_4G=0 skips python3-onnx at 4 GiB.
set -euo pipefail

source "$(dirname "$0")/bench_env.sh"
runs=${RUNS:-3}
python_4g=${PYTHON_4G:-1}

parent=${1:-/var/tmp}
mkdir -p "$parent"
scratch=$(mktemp -d "$parent/repack-issue9.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
avail_kib=$(df --output=avail -k "$scratch" | tail -1)
if ((avail_kib < 16 * 1024 * 1024)); then
    echo "$scratch: $((avail_kib / 1024)) MiB free, the benchmarks need 16384 MiB" >&2
    exit 2
fi

timed() { # sets last_ns and last_kib
    local t
    t=$(now_ns)
    /usr/bin/time -f %M -o "$scratch/rss" "$@" >/dev/null
    last_ns=$(($(now_ns) - t))
    last_kib=$(tail -1 "$scratch/rss")
}

# job, source files to settle, copy-baseline file or "", then the sides' commands as
# "repack:..." and "python:..." strings run with eval in a fresh $out folder.
job() {
    local name=$1 baseline=$2 repack=$3 py=$4 i k side t
    local sides=(cp repack python)
    for ((i = 0; i < runs; i++)); do
        for ((k = 0; k < 3; k++)); do
            side=${sides[(i + k) % 3]}
            out=$scratch/out
            rm -rf "$out"
            mkdir "$out"
            case $side in
            cp)
                [[ -n $baseline ]] || continue
                settle "$baseline"
                t=$(now_ns)
                cp "$baseline" "$out/copy"
                sync "$out/copy"
                add "$name/cp+sync" $(($(now_ns) - t))
                ;;
            repack)
                settle "$baseline"
                eval "timed $repack"
                add "$name/onnx-repack" "$last_ns"
                add_rss "$name/onnx-repack" "$last_kib"
                ;;
            python)
                [[ -n $py ]] || continue
                settle "$baseline"
                t=$(now_ns)
                eval "timed $py"
                add "$name/python3-onnx" "$last_ns"
                add_rss "$name/python3-onnx" "$last_kib"
                ;;
            esac
        done
    done
    rm -rf "$out"
}

echo "generating models in $scratch ..." >&2
mkdir -p "$scratch/inline" "$scratch/ext1" "$scratch/ext4" "$scratch/m100k"
"$gen" -o "$scratch/inline/m.onnx" --weights 1G --storage inline >/dev/null
"$gen" -o "$scratch/ext1/m.onnx" --weights 1G --storage external >/dev/null
"$gen" -o "$scratch/ext4/m.onnx" --weights 4G --storage external >/dev/null
"$gen" -o "$scratch/m100k/m.onnx" --weights 256M --tensors 100000 --storage external >/dev/null

job inspect-inline-1G "$scratch/inline/m.onnx" \
    '"$cli" inspect --json "$scratch/inline/m.onnx"' \
    '"$python" -c "import onnx,sys; onnx.load(sys.argv[1])" "$scratch/inline/m.onnx"'
job inline-to-external "$scratch/inline/m.onnx" \
    '"$cli" repack "$scratch/inline/m.onnx" -o "$out/m.onnx"' \
    '"$python" "$pysave" "$scratch/inline/m.onnx" "$out/m.onnx"'
job external-to-new-1G "$scratch/ext1/m.onnx.data" \
    '"$cli" repack "$scratch/ext1/m.onnx" -o "$out/m.onnx"' \
    '"$python" "$pysave" "$scratch/ext1/m.onnx" "$out/m.onnx"'
py4=""
((python_4g)) && py4='"$python" "$pysave" "$scratch/ext4/m.onnx" "$out/m.onnx"'
job external-to-new-4G "$scratch/ext4/m.onnx.data" \
    '"$cli" repack "$scratch/ext4/m.onnx" -o "$out/m.onnx"' "$py4"
job external-to-inline "$scratch/ext1/m.onnx.data" \
    '"$cli" repack "$scratch/ext1/m.onnx" -o "$out/m.onnx" --inline' \
    '"$python" "$pysave" "$scratch/ext1/m.onnx" "$out/m.onnx" --inline'
job inspect-100k "$scratch/m100k/m.onnx" \
    '"$cli" inspect --json "$scratch/m100k/m.onnx"' \
    '"$python" -c "import onnx,sys; onnx.load(sys.argv[1], load_external_data=False)" "$scratch/m100k/m.onnx"'

# Untimed checks: the outputs are complete and hold the source's values.
"$cli" repack "$scratch/inline/m.onnx" -o "$scratch/check/m.onnx" >/dev/null
"$cli" repack "$scratch/ext1/m.onnx" -o "$scratch/check-inline/m.onnx" --inline >/dev/null
"$cli" diff --exit-code "$scratch/inline/m.onnx" "$scratch/check/m.onnx" >/dev/null
"$cli" diff --exit-code "$scratch/ext1/m.onnx" "$scratch/check-inline/m.onnx" >/dev/null
"$python" -c 'import onnx,sys; onnx.load(sys.argv[1]); onnx.load(sys.argv[2])' \
    "$scratch/check/m.onnx" "$scratch/check-inline/m.onnx"

printf '%-20s %-14s %-22s %s\n' job side "median s (min-max)" "peak RSS"
for name in inspect-inline-1G inline-to-external external-to-new-1G external-to-new-4G \
    external-to-inline inspect-100k; do
    for side in cp+sync onnx-repack python3-onnx; do
        key=$name/$side
        [[ -n ${samples[$key]:-} ]] || continue
        printf '%-20s %-14s %-22s %s\n' "$name" "$side" "$(printf '%s' "${samples[$key]}" |
            sort -n | awk '{ v[NR] = $1 } END {
                printf "%.2f (%.2f-%.2f)", v[int((NR + 1) / 2)] / 1e9, v[1] / 1e9, v[NR] / 1e9 }')" \
            "$( [[ -n ${peak[$key]:-} ]] && awk -v k="${peak[$key]}" 'BEGIN { printf "%.0f MiB", k / 1024 }')"
    done
done
