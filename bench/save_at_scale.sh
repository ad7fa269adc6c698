#!/usr/bin/env bash
# Saves at scale (the issue-17 benchmarks): repack into a new folder, in place with a layout change,
# and a re-save that changes nothing, at 1, 4 and 16 GiB of external data, each timed against `cp
# FILE && sync FILE` of the same bytes, with peak RSS (/usr/bin/time %M); plus inspect of 100,000
# tensors.
#
#   bench/save_at_scale.sh [SCRATCH_DIR]    (default: /var/tmp; a fresh mktemp dir inside it)
#
#   external->new-N       onnx-repack repack IN -o OUT/model.onnx, OUT a new folder (a new data
#                         file); cp+sync copies IN's data file
#   inplace-layout-N      onnx-repack repack M -o M --align 64KiB, M written 4 KiB-aligned (the
#                         repack default), so every tensor of >= 1 MiB moves (checked, untimed);
#                         M is restored from a pristine copy before every run (not timed);
#                         cp+sync copies M's data file
#   resave-unchanged-N    onnx-repack repack M -o M after a first, untimed repack M -o M: must say
#                         "nothing to change" and leave the data file alone (checked); its ratio
#                         is to external->new-N's cp+sync
#   inspect-100k          onnx-repack inspect --json of a 100,000-tensor external model (256 MiB)
#
# N in SIZES (GiB, default "1 4 16"): repack-genmodel --weights NG --align 4K, its natural
# LLM shape (hidden 2048: 52 tensors at 1 GiB, ~200 at 4 GiB, ~800 at 16 GiB, the large ones
# 32-64 MiB). Method as repack_jobs_vs_cp_and_onnx.sh: the sides take turns to go first; before
# every timed run `sync`, then the file the job reads is read into the page cache (caches are not dropped);
# median of RUNS (default 3; RUNS_16G for the 16 GiB block, default RUNS); peak RSS is the worst
# run. Each size block prints its rows and `uptime` before and after; the full table is printed
# at the end. Needs repack-genmodel and onnx-repack in $REPACK_BUILD_DIR (default build-bench
# beside this folder), /usr/bin/time, /usr/bin/python3 with python3-onnx, and 3x the largest
# size + 1 GiB free (49 GiB for 16); everything it writes is removed on exit, also on failure.
set -euo pipefail

# shellcheck source=bench_env.sh disable=SC2154 # sets here, build, gen, cli, python
source "$(dirname "$0")/bench_env.sh"
runs_default=${RUNS:-3}
runs_16g=${RUNS_16G:-$runs_default}
sizes=${SIZES:-1 4 16}

parent=${1:-/var/tmp}
mkdir -p "$parent"
scratch=$(mktemp -d "$parent/repack-issue17.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# Per size N: the source (N), the in-place working copy (N) and, while a save or the cp
# baseline runs, its new data file (N).
need_gib() { # free GiB for sizes "$@"
    local max=0 n
    for n in "$@"; do ((n > max)) && max=$n; done
    echo $((3 * max + 1))
}
check_room() {
    local need avail_kib
    need=$(need_gib "$@")
    avail_kib=$(df --output=avail -k "$scratch" | tail -1)
    if ((avail_kib < need * 1024 * 1024)); then
        echo "$scratch: $((avail_kib / 1024)) MiB free, sizes $* need $((need * 1024)) MiB" >&2
        exit 2
    fi
}
# shellcheck disable=SC2086
check_room $sizes

stdout_to=/dev/null
timed() { # sets last_ns and last_kib; stdout goes to $stdout_to
    local t
    t=$(now_ns)
    /usr/bin/time -f %M -o "$scratch/rss" "$@" >"$stdout_to"
    last_ns=$(($(now_ns) - t))
    last_kib=$(tail -1 "$scratch/rss")
}
loadavg() { echo "[$(date -u +%H:%M:%S) $1] $(uptime | sed 's/.*load average/load average/')" >&2; }
busiest() { # the 5 processes with the most CPU over their lifetime (ps %CPU)
    ps -eo pcpu=,comm= --sort=-pcpu | head -5 | awk '{ printf " %s(%s%%)", $2, $1 }'
}
cp_sync() { # the baseline: copy $1 into $out, durable
    local t
    settle "$1"
    t=$(now_ns)
    cp "$1" "$out/copy"
    sync "$out/copy"
    last_ns=$(($(now_ns) - t))
}

# Fresh working copy $work of the pristine model $1 (folder), not timed.
restore() {
    rm -rf "$work"
    mkdir "$work"
    cp --reflink=never "$1/m.onnx" "$1/m.onnx.data" "$work/"
}

# Offsets of the tensors of at least 1 MiB: before (inspect --json of $1), as planned and after.
big_offsets() { # json file on stdin -> "name offset" lines of tensors >= 1 MiB
    "$python" -c '
import json, sys
for t in json.load(sys.stdin)["tensors"]:
    if t.get("storage") == "external" and t.get("length", 0) >= 1 << 20:
        print(t["name"], t["offset"])'
}

declare -a rows
job_new() { # N: external->new-N
    local n=$1 src=$scratch/src$1 name=external-\>new-$1G i k side
    rows+=("$name")
    for ((i = 0; i < runs; i++)); do
        for ((k = 0; k < 2; k++)); do
            side=$(((i + k) % 2))
            out=$scratch/out
            rm -rf "$out"
            mkdir "$out"
            if ((side == 0)); then
                cp_sync "$src/m.onnx.data"
                add "$name/cp" "$last_ns"
            else
                settle "$src/m.onnx.data"
                timed "$cli" repack "$src/m.onnx" -o "$out/model.onnx"
                add "$name/repack" "$last_ns"
                add_rss "$name/repack" "$last_kib"
            fi
            echo "  $name run $((i + 1)) $([[ $side == 0 ]] && echo cp+sync || echo repack): $((last_ns / 1000000)) ms" >&2
        done
    done
    rm -rf "$out"
}

job_inplace() { # N: inplace-layout-N
    local n=$1 src=$scratch/src$1 name=inplace-layout-$1G i k side moved total
    rows+=("$name")
    work=$scratch/work
    # Untimed check that the layout change moves every large tensor, and does what plan says.
    restore "$src"
    "$cli" inspect --json "$work/m.onnx" | big_offsets >"$scratch/before"
    "$cli" plan "$work/m.onnx" --align 64KiB --json | big_offsets >"$scratch/planned"
    "$cli" repack "$work/m.onnx" -o "$work/m.onnx" --align 64KiB >/dev/null
    "$cli" inspect --json "$work/m.onnx" | big_offsets >"$scratch/after"
    total=$(wc -l <"$scratch/before")
    moved=$(paste -d' ' "$scratch/before" "$scratch/after" | awk '$2 != $4' | wc -l)
    cmp -s "$scratch/planned" "$scratch/after" ||
        { echo "$name: offsets after the repack differ from plan --align 64KiB" >&2; exit 1; }
    echo "  $name: $moved of $total tensors >= 1 MiB moved (offsets as planned)" >&2
    ((moved == total)) || echo "  $name: WARNING: $((total - moved)) tensors >= 1 MiB keep their offset" >&2
    if ((n <= 4)); then # a byte comparison of 16 GiB would not fit in the page cache
        "$cli" diff --exit-code "$src/m.onnx" "$work/m.onnx" >/dev/null ||
            { echo "$name: values differ after the in-place repack" >&2; exit 1; }
    fi
    for ((i = 0; i < runs; i++)); do
        for ((k = 0; k < 2; k++)); do
            side=$(((i + k) % 2))
            out=$scratch/out
            rm -rf "$out"
            mkdir "$out"
            restore "$src"
            if ((side == 0)); then
                cp_sync "$work/m.onnx.data"
                add "$name/cp" "$last_ns"
            else
                settle "$work/m.onnx.data"
                timed "$cli" repack "$work/m.onnx" -o "$work/m.onnx" --align 64KiB
                add "$name/repack" "$last_ns"
                add_rss "$name/repack" "$last_kib"
            fi
            echo "  $name run $((i + 1)) $([[ $side == 0 ]] && echo cp+sync || echo repack): $((last_ns / 1000000)) ms" >&2
        done
    done
    rm -rf "$out" "$work"
}

job_resave() { # N: resave-unchanged-N
    local n=$1 src=$scratch/src$1 name=resave-unchanged-$1G i id
    rows+=("$name")
    work=$scratch/work
    restore "$src"
    "$cli" repack "$work/m.onnx" -o "$work/m.onnx" >/dev/null # the first of the two
    id=$(stat -c '%i %s %Y' "$work/m.onnx" "$work/m.onnx.data")
    stdout_to=$scratch/said
    for ((i = 0; i < runs; i++)); do
        settle "$work/m.onnx" "$work/m.onnx.data"
        timed "$cli" repack "$work/m.onnx" -o "$work/m.onnx"
        add "$name/repack" "$last_ns"
        add_rss "$name/repack" "$last_kib"
        grep -q '^nothing to change' "$scratch/said" ||
            { echo "$name: second run did not say nothing to change: $(cat "$scratch/said")" >&2; exit 1; }
        [[ $(stat -c '%i %s %Y' "$work/m.onnx" "$work/m.onnx.data") == "$id" ]] ||
            { echo "$name: the files were rewritten" >&2; exit 1; }
        echo "  $name run $((i + 1)): $((last_ns / 1000000)) ms" >&2
    done
    stdout_to=/dev/null
    rm -rf "$work"
}

job_inspect100k() {
    local m=$scratch/m100k/m.onnx name=inspect-100k i
    rows+=("$name")
    for ((i = 0; i < runs; i++)); do
        settle "$m"
        timed "$cli" inspect --json "$m"
        add "$name/repack" "$last_ns"
        add_rss "$name/repack" "$last_kib"
        echo "  $name run $((i + 1)): $((last_ns / 1000000)) ms" >&2
    done
}

stat_of() { # key -> "median min max" in s, or empty
    [[ -n ${samples[$1]:-} ]] || return 0
    printf '%s' "${samples[$1]}" | sort -n |
        awk '{ v[NR] = $1 } END { printf "%.3f %.3f %.3f %d", v[int((NR + 1) / 2)] / 1e9, v[1] / 1e9, v[NR] / 1e9, NR }'
}
header() {
    printf '%-22s %5s %-22s %-10s %8s %10s\n' job runs "repack s (min-max)" "cp+sync s" ratio "peak RSS"
}
row() { # name
    local name=$1 r c cpkey ratio rss size
    read -r rm rmin rmax rn <<<"$(stat_of "$name/repack")"
    cpkey=$name/cp
    if [[ $name == resave-unchanged-* ]]; then
        size=${name#resave-unchanged-}
        cpkey=external-\>new-$size/cp
    fi
    c=$(stat_of "$cpkey" | cut -d' ' -f1)
    ratio=$([[ -n $c ]] && awk -v a="$rm" -v b="$c" 'BEGIN { printf(a / b < 0.1 ? "%.4fx" : "%.2fx", a / b) }' || echo -)
    rss=$(awk -v k="${peak[$name/repack]}" 'BEGIN { printf "%.0f MiB", k / 1024 }')
    r=$(printf '%.3f (%.3f-%.3f)' "$rm" "$rmin" "$rmax")
    [[ $name == resave-unchanged-* || $name == inspect-* ]] &&
        r=$(awk -v a="$rm" -v b="$rmin" -v d="$rmax" 'BEGIN { printf "%.0f ms (%.0f-%.0f)", a * 1e3, b * 1e3, d * 1e3 }')
    [[ $name == resave-unchanged-* ]] && c="($c)"
    printf '%-22s %5s %-22s %-10s %8s %10s\n' "$name" "$rn" "$r" "${c:--}" "$ratio" "$rss"
}

echo "onnx-repack: $cli ($(stat -c '%y' "$cli" | cut -d. -f1)); scratch $scratch; sizes $sizes GiB; RUNS $runs_default, RUNS_16G $runs_16g" >&2
echo "machine: $(nproc) cores, $(free -g | awk '/^Mem:/ { print $2 }') GiB RAM, $(df -h --output=avail "$scratch" | tail -1 | tr -d ' ') free" >&2

runs=$runs_default
loadavg "inspect-100k start"
echo "  busiest (ps %CPU):$(busiest)" >&2
mkdir -p "$scratch/m100k"
"$gen" -o "$scratch/m100k/m.onnx" --weights 256M --tensors 100000 --storage external >/dev/null
job_inspect100k
rm -rf "$scratch/m100k"
loadavg "inspect-100k end"
header
row inspect-100k

for n in $sizes; do
    runs=$runs_default
    ((n == 16)) && runs=$runs_16g
    check_room "$n"
    t0=$(now_ns)
    loadavg "${n} GiB start"
    echo "  busiest (ps %CPU):$(busiest)" >&2
    mkdir -p "$scratch/src$n"
    "$gen" -o "$scratch/src$n/m.onnx" --weights "${n}G" --align 4K --storage external >&2
    job_new "$n"
    job_inplace "$n"
    job_resave "$n"
    rm -rf "$scratch/src$n"
    loadavg "${n} GiB end ($((($(now_ns) - t0) / 1000000000)) s)"
    echo "  busiest (ps %CPU):$(busiest)" >&2
    header
    for name in external-\>new-${n}G inplace-layout-${n}G resave-unchanged-${n}G; do row "$name"; done
done

echo
echo "All rows (median of the runs column; resave and inspect in ms; resave's cp+sync is" \
    "external->new's, in brackets; peak RSS: worst run):"
header
for name in "${rows[@]}"; do row "$name"; done
