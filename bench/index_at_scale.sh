#!/usr/bin/env bash
# Time and peak memory of the tensor index at scale: models of many tiny tensors (the index's
# cost per tensor, not the weights', is what grows), each through `inspect --json`, `inspect`
# (the text table) and `repack` to a new folder; median of RUNS runs (default 3).
#   bench/index_at_scale.sh [BUILD_DIR]     (default build; needs /usr/bin/time and python3-onnx)
# Models, written at the protobuf wire level: 100,000 and 3,000,000 unnamed one-element float
# initializers (1.2 MB and 36 MB), and 300,000 Constant nodes with a one-element value.
set -euo pipefail
build=${1:-build}
runs=${RUNS:-3}
cli=$build/app/onnx-repack
[[ -x $cli ]] || { echo "missing $cli: build it first" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "needs /usr/bin/time: apt-get install time" >&2; exit 2; }
scratch=$(mktemp -d /var/tmp/repack-index.XXXXXX)
trap 'rm -rf "$scratch"' EXIT

PYTHONPATH=$(dirname "${BASH_SOURCE[0]}") /usr/bin/python3 - "$scratch" <<'PY'
import os, sys
out = sys.argv[1]
from onnx_wire import SCALAR, constants_model, field, model
for count, name in ((100_000, "initializers-100k"), (3_000_000, "initializers-3m")):
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(model(field(2, b"g") + field(5, SCALAR) * count))
with open(os.path.join(out, "constants-300k.onnx"), "wb") as f:
    f.write(constants_model(300_000))
PY

median() { sort -n | awk 'NF { v[++n] = $1 } END { print v[int((n + 1) / 2)] }'; }
printf '%-22s %-14s %9s %11s\n' model command seconds "peak MiB"
for model in initializers-100k constants-300k initializers-3m; do
    for command in "inspect --json" inspect repack; do
        secs="" kib=""
        for ((r = 0; r < runs; r++)); do
            args=($command "$scratch/$model.onnx")
            [[ $command == repack ]] && args+=(-o "$scratch/out/$model.onnx")
            rm -rf "$scratch/out"
            status=0
            /usr/bin/time -f "%e %M" -o "$scratch/time" "$cli" "${args[@]}" >/dev/null 2>&1 \
                || status=$?
            # inspect exits 1 on these models' problems (unnamed initializers); a repack must work
            if [[ $command == repack && $status != 0 ]]; then
                echo "repack of $model failed (exit $status)" >&2
                exit 1
            fi
            read -r s k < <(tail -n 1 "$scratch/time") # after "Command exited with non-zero ..."
            secs+="$s"$'\n' kib+="$k"$'\n'
        done
        printf '%-22s %-14s %9s %11s\n' "$model" "$command" "$(median <<<"$secs")" \
            "$(($(median <<<"$kib") / 1024))"
    done
done
