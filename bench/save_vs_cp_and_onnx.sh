#!/usr/bin/env bash
# Saving against cp and python3-onnx (the issue-3 benchmarks): saving with onnx-repack against `cp`
# of the same bytes (plain, and made durable with `sync FILE`, since a save fsyncs before it
# returns) and against python3-onnx's onnx.load + onnx.save_model(save_as_external_data=True).
# Prints a table of figures.
#
#   bench/save_vs_cp_and_onnx.sh [SCRATCH_DIR]     (default: /var/tmp; a fresh mktemp dir inside it)
#
# Needs repack-genmodel and onnx-repack built in $REPACK_BUILD_DIR (default: build-bench beside
# this folder), /usr/bin/time (Debian package "time"), /usr/bin/python3 with python3-onnx, and
# about 12 GiB free. RUNS (default 3) timed runs per job, INPLACE_RUNS (default 5) in-place
# re-saves; PYTHON_4G=0 skips python3-onnx on the 4 GiB model (it needs ~5 GiB of memory).
# Everything it writes is removed on exit, also on failure.
set -euo pipefail

source "$(dirname "$0")/bench_env.sh"
runs=${RUNS:-3}
inplace_runs=${INPLACE_RUNS:-5}
python_4g=${PYTHON_4G:-1}
((runs >= 3 && inplace_runs >= 3)) || { echo "RUNS and INPLACE_RUNS must be >= 3" >&2; exit 2; }

parent=${1:-/var/tmp}
mkdir -p "$parent"
scratch=$(mktemp -d "$parent/repack-issue3.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

need_kib=$((12 * 1024 * 1024))
avail_kib=$(df --output=avail -k "$scratch" | tail -1)
if ((avail_kib < need_kib)); then
    echo "$scratch: $((avail_kib / 1024)) MiB free, the benchmarks need" \
        "$((need_kib / 1024)) MiB" >&2
    exit 2
fi

median() { sort -n | awk 'NF { v[++n] = $1 } END { print v[int((n + 1) / 2)] }'; }
now_ns() { date +%s%N; }
# The same start for every timed run: nothing dirty anywhere, the source in the page cache.
settle() {
    sync
    cat "$@" >/dev/null
}

declare -A samples peak
add() { samples[$1]+="$2"$'\n'; }
add_rss() { if (($2 > ${peak[$1]:-0})); then peak[$1]=$2; fi; }
med() { printf '%s' "${samples[$1]}" | median; }
seconds() { awk -v ns="$1" 'BEGIN { printf "%.2f", ns / 1e9 }'; }
spread() {
    printf '%s' "${samples[$1]}" | sort -n |
        awk '{ v[NR] = $1 } END { printf "%.2f-%.2f", v[1] / 1e9, v[NR] / 1e9 }'
}
mib() { awk -v k="$1" 'BEGIN { printf "%.0f MiB", k / 1024 }'; }

# Runs "$@" under /usr/bin/time; sets last_ns (wall time) and last_kib (peak RSS).
timed() {
    local t
    t=$(now_ns)
    /usr/bin/time -f %M -o "$scratch/rss" "$@" >"$scratch/stdout"
    last_ns=$(($(now_ns) - t))
    last_kib=$(tail -1 "$scratch/rss")
}

phase_ns() { awk -v k="$1" '$1 == k { printf "%.0f", $2 * 1e9 }' "$scratch/stdout"; }

# Job 1 and 3: a model saved into a new folder, next to `cp FILE` (FILE: the bytes a user
# would copy, the data file of an external model or the inline .onnx) and python3-onnx.
# Sides take turns going first.
save_as() {
    local job=$1 model=$2 file=$3 n=$4 with_python=$5
    local out=$scratch/out sides=(cp repack python) i k side t t1
    for ((i = 0; i < n; i++)); do
        for ((k = 0; k < 3; k++)); do
            side=${sides[(i + k) % 3]}
            mkdir "$out"
            case $side in
            cp)
                settle "$file"
                t=$(now_ns)
                cp "$file" "$out/copy"
                t1=$(now_ns)
                sync "$out/copy"
                add "$job/cp" $((t1 - t))
                add "$job/cp+sync" $(($(now_ns) - t))
                ;;
            repack)
                settle "$file"
                timed "$cli" repack "$model" -o "$out/model.onnx"
                add "$job/onnx-repack" "$last_ns"
                add_rss "$job/onnx-repack" "$last_kib"
                # Once per job, untimed: the output is complete and reads back.
                if ((i == 0)); then "$cli" verify "$out/model.onnx" >/dev/null; fi
                ;;
            python)
                if ((with_python)); then
                    settle "$file"
                    t=$(now_ns)
                    timed "$python" "$pysave" "$model" "$out/model.onnx"
                    add "$job/python3-onnx" "$last_ns"
                    add_rss "$job/python3-onnx" "$last_kib"
                    add "$job/python-load" "$(phase_ns load_s)"
                    add "$job/python-save" "$(phase_ns save_s)"
                    sync "$out/model.onnx.data" "$out/model.onnx"
                    add "$job/python3-onnx+sync" $(($(now_ns) - t))
                fi
                ;;
            esac
            rm -rf "$out"
        done
    done
}

# "bytes:orphaned:referenced:padding" of MODEL's data file, from onnx-repack's layout report.
layout() {
    "$cli" inspect --json "$1" | "$python" -c '
import json, sys
f = json.load(sys.stdin)["files"][0]
print(f["bytes"], f["orphaned_bytes"], f["referenced_bytes"], f["padding_bytes"], sep=":")'
}

# Job 2 and the python contrast: in-place re-saves of a copy of MODEL. onnx-repack toggles
# --order (size/declaration), so every tensor moves and the data file is really rewritten; its
# cp equivalent copies the data file beside itself, syncs and renames the copy over it (the
# durable way to replace a file by hand). python3-onnx re-saves its own copy onto itself.
in_place() {
    local job=$1 model=$2 n=$3
    local rdir=$scratch/inplace-repack pdir=$scratch/inplace-python sides=(cp repack python)
    local i k side t t1 order name
    name=$(basename "$model")
    mkdir "$rdir" "$pdir"
    cp "$model" "$model.data" "$rdir/"
    cp "$model" "$model.data" "$pdir/"
    python_layouts=("$(layout "$pdir/$name")")
    repack_layouts=("$(layout "$rdir/$name")")
    for ((i = 0; i < n; i++)); do
        for ((k = 0; k < 3; k++)); do
            side=${sides[(i + k) % 3]}
            case $side in
            cp)
                settle "$rdir/$name.data"
                t=$(now_ns)
                cp "$rdir/$name.data" "$rdir/copy"
                t1=$(now_ns)
                sync "$rdir/copy"
                mv "$rdir/copy" "$rdir/$name.data"
                add "$job/cp" $((t1 - t))
                add "$job/cp+sync" $(($(now_ns) - t))
                ;;
            repack)
                order=$( ((i % 2 == 0)) && echo size || echo declaration)
                settle "$rdir/$name.data"
                timed "$cli" repack "$rdir/$name" -o "$rdir/$name" --order "$order"
                add "$job/onnx-repack" "$last_ns"
                add_rss "$job/onnx-repack" "$last_kib"
                repack_layouts+=("$(layout "$rdir/$name")")
                ;;
            python)
                settle "$pdir/$name.data"
                timed "$python" "$pysave" "$pdir/$name" "$pdir/$name"
                add "$job/python3-onnx" "$last_ns"
                add_rss "$job/python3-onnx" "$last_kib"
                python_layouts+=("$(layout "$pdir/$name")")
                ;;
            esac
        done
    done
    "$cli" verify "$rdir/$name" >/dev/null
    rm -rf "$rdir" "$pdir"
}

# Where one onnx-repack run spends its wall time: seconds inside each system call (strace -T),
# the rest is user space (parsing, serializing) and process start and exit.
breakdown() { # label, then the onnx-repack arguments
    local label=$1 t
    shift
    command -v strace >/dev/null || return 0
    t=$(now_ns)
    strace -f -T -o "$scratch/strace" "$cli" "$@" >/dev/null
    awk -v label="$label" -v wall="$(($(now_ns) - t))" '
        $NF ~ /^<[0-9.]+>$/ && $2 ~ /^[a-z_0-9]+\(/ {
            name = $2; sub(/\(.*/, "", name); d = substr($NF, 2, length($NF) - 2)
            s[name] += d; n[name]++; all += d
        }
        END {
            printf "  %-16s wall %.2f s:", label, wall / 1e9
            for (k in s) if (s[k] >= 0.01) printf " %s %.2f (%d),", k, s[k], n[k]
            printf " other syscalls %.2f, outside syscalls %.2f\n", all - big(), wall / 1e9 - all
        }
        function big(   k, t) { for (k in s) if (s[k] >= 0.01) t += s[k]; return t }
    ' "$scratch/strace"
}

started=$(date -u '+%Y-%m-%d %H:%M UTC')
src=$scratch/src
mkdir "$src"
"$gen" --out "$src/ext1g.onnx" --weights 1G >/dev/null
"$gen" --out "$src/ext4g.onnx" --weights 4G >/dev/null
"$gen" --out "$src/inline1g.onnx" --weights 1G --storage inline >/dev/null
inline_bytes=$(stat -c %s "$src/inline1g.onnx")

save_as "new-1G" "$src/ext1g.onnx" "$src/ext1g.onnx.data" "$runs" 1
avail_mem_kib=$(awk '$1 == "MemAvailable:" { print $2 }' /proc/meminfo)
if ((python_4g)) && ((avail_mem_kib < 8 * 1024 * 1024)); then
    python_4g=0
    python_4g_note="skipped: $(mib "$avail_mem_kib") of memory available, python needs ~5 GiB"
fi
save_as "new-4G" "$src/ext4g.onnx" "$src/ext4g.onnx.data" "$runs" "$python_4g"
rm -f "$src/ext4g.onnx" "$src/ext4g.onnx.data"
in_place "inplace-1G" "$src/ext1g.onnx" "$inplace_runs"
save_as "inline-1G" "$src/inline1g.onnx" "$src/inline1g.onnx" "$runs" 1

breakdowns=()
mkdir "$scratch/out"
settle "$src/ext1g.onnx.data"
breakdowns+=("$(breakdown "1. new folder" repack "$src/ext1g.onnx" -o "$scratch/out/model.onnx")")
rm -rf "$scratch/out/"*
cp "$src/ext1g.onnx" "$src/ext1g.onnx.data" "$scratch/out/"
settle "$scratch/out/ext1g.onnx.data"
breakdowns+=("$(breakdown "2. in place" repack "$scratch/out/ext1g.onnx" \
    -o "$scratch/out/ext1g.onnx" --order size)")
rm -rf "$scratch/out/"*
settle "$src/inline1g.onnx"
breakdowns+=("$(breakdown "3. inline" repack "$src/inline1g.onnx" -o "$scratch/out/model.onnx")")
rm -rf "$scratch/out"

# Table -----------------------------------------------------------------------------------
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
row() { # job, side[, "noratio"]
    local job=$1 side=$2 key="$1/$2" m vs_cp="" vs_sync="" rss=""
    [[ -n ${samples[$key]:-} ]] || return 0
    m=$(med "$key")
    if [[ $side != cp* && ${3:-} != noratio ]]; then
        vs_cp=$(ratio "$m" "$(med "$job/cp")")
        vs_sync=$(ratio "$m" "$(med "$job/cp+sync")")
    fi
    [[ -z ${peak[$key]:-} ]] || rss=$(mib "${peak[$key]}")
    printf '  %-24s %8s %12s %8s %10s %10s\n' "$side" "$(seconds "$m")" "$(spread "$key")" \
        "$vs_cp" "$vs_sync" "$rss"
}
verdict() { # label, measured, limit
    awk -v l="$1" -v m="$2" -v t="$3" \
        'BEGIN { printf "  %-44s %6.2f  (<= %s)  %s\n", l, m, t, m <= t ? "met" : "MISSED" }'
}
job_ratio() { awk -v a="$(med "$1/onnx-repack")" -v b="$(med "$1/$2")" 'BEGIN { print a / b }'; }
rss_mib() { awk -v k="${peak[$1/onnx-repack]}" 'BEGIN { print k / 1024 }'; }
size_of() { du -h --apparent-size "$1" | cut -f1; }

echo "Issue 3 save benchmarks, $started, $(nproc) cores," \
    "$(awk '$1 == "MemTotal:" { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) RAM," \
    "load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "scratch $scratch: $(findmnt -no FSTYPE,OPTIONS -T "$scratch")"
echo "median of $runs runs ($inplace_runs in place), sides taking turns to go first; before every" \
    "run: sync, and the source file read into the page cache"
echo
printf '  %-24s %8s %12s %8s %10s %10s\n' "" "median s" "range s" "vs cp" "vs cp+sync" "peak RSS"
echo "1. external 1 GiB -> new folder (data file $(size_of "$src/ext1g.onnx.data"))"
for s in cp cp+sync onnx-repack python3-onnx python3-onnx+sync; do row new-1G "$s"; done
echo "   external 4 GiB -> new folder"
for s in cp cp+sync onnx-repack python3-onnx python3-onnx+sync; do row new-4G "$s"; done
[[ -z ${python_4g_note:-} ]] || echo "  python3-onnx: $python_4g_note"
echo "2. external 1 GiB in place (OUT == IN, --order toggled);" \
    "cp+sync: copy beside, sync, rename over"
for s in cp cp+sync onnx-repack; do row inplace-1G "$s"; done
row inplace-1G python3-onnx noratio
echo "   (python3-onnx in place appends to the data file rather than rewriting it: see 5.)"
echo "3. inline 1 GiB .onnx ($(size_of "$src/inline1g.onnx")) -> external, new folder"
for s in cp cp+sync onnx-repack python3-onnx python3-onnx+sync; do row inline-1G "$s"; done
echo
echo "python3-onnx phases (median s): onnx.load / onnx.save_model"
for job in new-1G new-4G inline-1G; do
    [[ -n ${samples[$job/python-load]:-} ]] || continue
    printf '  %-10s %6s / %s\n' "$job" "$(seconds "$(med "$job/python-load")")" \
        "$(seconds "$(med "$job/python-save")")"
done
echo
echo "5. data file before and after each in-place re-save: MiB (of which orphaned MiB)"
show_layouts() {
    local entry size orphaned out=""
    for entry in "$@"; do
        IFS=: read -r size orphaned _ <<<"$entry"
        out+=$(awk -v s="$size" -v o="$orphaned" \
            'BEGIN { printf "%.1f (%.0f) ", s / 1048576, o / 1048576 }')
    done
    echo "$out"
}
printf '  %-14s %s\n' "onnx-repack" "$(show_layouts "${repack_layouts[@]}")"
printf '  %-14s %s\n' "python3-onnx" "$(show_layouts "${python_layouts[@]}")"
echo
echo "Where one onnx-repack run spends its wall time (strace -f -T: s in syscall (calls))"
printf '%s\n' "${breakdowns[@]}"
echo
echo "Targets (time: ratio of medians; RSS: worst run)"
verdict "1. new data file 1 GiB / cp+sync (durable)" "$(job_ratio new-1G cp+sync)" 1.2
verdict "   new data file 1 GiB / plain cp" "$(job_ratio new-1G cp)" 1.2
verdict "   new data file 4 GiB / cp+sync (durable)" "$(job_ratio new-4G cp+sync)" 1.2
verdict "   new data file 4 GiB / plain cp" "$(job_ratio new-4G cp)" 1.2
verdict "2. in place / cp+sync+rename (durable)" "$(job_ratio inplace-1G cp+sync)" 1.3
verdict "   in place / plain cp" "$(job_ratio inplace-1G cp)" 1.3
verdict "3. inline -> external / cp+sync (durable)" "$(job_ratio inline-1G cp+sync)" 1.5
verdict "   inline -> external / plain cp" "$(job_ratio inline-1G cp)" 1.5
verdict "4. peak RSS MiB, external 1 GiB" "$(rss_mib new-1G)" 100
verdict "   peak RSS MiB, external 4 GiB" "$(rss_mib new-4G)" 100
inline_rss=$(awk -v k="${peak[inline-1G/onnx-repack]}" -v b="$inline_bytes" \
    'BEGIN { print k * 1024 / b }')
verdict "   peak RSS / model file, inline 1 GiB" "$inline_rss" 1.3
exact=1
for entry in "${repack_layouts[@]:1}"; do
    IFS=: read -r size orphaned referenced padding <<<"$entry"
    ((orphaned == 0 && size == referenced + padding)) || exact=0
done
echo "  5. onnx-repack's data file after each of $inplace_runs in-place re-saves: $( ((exact)) &&
    echo "exactly tensor bytes + padding, nothing orphaned: met" ||
    echo "MISSED: ${repack_layouts[*]} (bytes:orphaned:referenced:padding)")"
