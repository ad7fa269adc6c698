# Sourced by the bench scripts that compare against cp and python3-onnx: the tools they run,
# checked to be there.
# Sets here, build, gen, cli, python, pysave; exits 2 naming what is missing.
here=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
build=${REPACK_BUILD_DIR:-$here/../build-bench}
gen=$build/bench/repack-genmodel
cli=$build/app/onnx-repack
python=/usr/bin/python3
pysave=$here/bench_save_python.py
for tool in "$gen" "$cli"; do
    [[ -x $tool ]] || { echo "missing $tool: build it first (see bench/README.md)" >&2; exit 2; }
done
[[ -x /usr/bin/time ]] || { echo "needs /usr/bin/time: apt-get install time" >&2; exit 2; }
"$python" -c 'import onnx' 2>/dev/null ||
    { echo "needs python3-onnx for $python: apt-get install python3-onnx" >&2; exit 2; }

# Timing helpers shared by the scripts: nanoseconds, a settled page cache, samples and peak RSS
# per job, the median of a column of numbers.
now_ns() { date +%s%N; }
settle() { sync; cat "$@" >/dev/null; }
declare -A samples peak
add() { samples[$1]+="$2"$'\n'; }
add_rss() { if (($2 > ${peak[$1]:-0})); then peak[$1]=$2; fi; }
median() { sort -n | awk 'NF { v[++n] = $1 } END { print v[int((n + 1) / 2)] }'; }
