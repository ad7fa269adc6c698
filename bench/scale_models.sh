#!/usr/bin/env bash
# Issue 37: the index on the shapes of model users have, each row beside its reference in one
# run; median of RUNS runs (default 3), /usr/bin/time's elapsed seconds and peak RSS.
#   bench/scale_models.sh [BUILD_DIR]   (default build; needs /usr/bin/time and python3-onnx)
# Models, exactly as the issue names them:
#   external-100k  repack-genmodel --weights 256M --tensors 100000 (100,000 external tensors
#                  over a 256 MiB data file): `inspect --json`, against /usr/bin/python3
#                  onnx.load(path, load_external_data=False) (the interpreter and `import onnx`
#                  included, as a user runs it);
#   attribute-3m   one node whose attribute holds 3,000,000 tensors in its `tensors` list,
#                  4-byte raw FLOAT scalars (a 30 MB file): `inspect --json`;
#   constants-300k 300,000 Constant nodes with a one-element value: `repack` to a new folder.
# Goals (issue 37): 0.1 s and 32 MiB; 6 s and 600 MiB; 150 MiB.
set -euo pipefail
runs=${RUNS:-3}
# The tools, checked, and median() (bench_env.sh); the build folder is the first argument.
REPACK_BUILD_DIR=$(realpath "${1:-build}")
# shellcheck source=bench_env.sh disable=SC2154 # sets build, gen, cli
source "$(dirname "${BASH_SOURCE[0]}")/bench_env.sh"
scratch=$(mktemp -d /var/tmp/repack-scale.XXXXXX)
trap 'rm -rf "$scratch"' EXIT

mkdir "$scratch/external-100k"
"$gen" --out "$scratch/external-100k/model.onnx" --weights 256M --tensors 100000 >/dev/null
PYTHONPATH=$(dirname "${BASH_SOURCE[0]}") /usr/bin/python3 - "$scratch" <<'PY'
import os, sys
out = sys.argv[1]
from onnx_wire import constants_model, field, model
scalar = field(10, b"\x10\x01" + field(9, bytes(4)))  # AttributeProto.tensors: FLOAT, raw 4 bytes
attribute = field(1, b"values") + b"\xa0\x01\x09" + scalar * 3_000_000  # type TENSORS
node = field(1, field(2, b"y") + field(4, b"Table") + field(7, b"bench") + field(5, attribute))
with open(os.path.join(out, "attribute-3m.onnx"), "wb") as f:
    f.write(model(field(2, b"g") + node, field(8, field(1, b"bench") + b"\x10\x01")))
with open(os.path.join(out, "constants-300k.onnx"), "wb") as f:
    f.write(constants_model(300_000))
PY

# row LABEL COMMAND...: the median time and peak RSS of RUNS runs of COMMAND. inspect exits 1
# on a model with problems (the 3m model's unnamed tensors); any other failure stops the bench.
row() {
    local label=$1 secs="" kib="" s k status
    shift
    for ((r = 0; r < runs; r++)); do
        rm -rf "$scratch/out"
        status=0
        /usr/bin/time -f "%e %M" -o "$scratch/time" "$@" >/dev/null 2>"$scratch/err" || status=$?
        if ((status > 1)) || { ((status == 1)) && [[ $label != *inspect* ]]; }; then
            echo "$label failed (exit $status):" >&2
            cat "$scratch/err" >&2
            exit 1
        fi
        read -r s k < <(tail -n 1 "$scratch/time")
        secs+="$s"$'\n' kib+="$k"$'\n'
    done
    printf '%-44s %9s %9s\n' "$label" "$(median <<<"$secs")" "$(($(median <<<"$kib") / 1024))"
}
printf '%-44s %9s %9s\n' "model, command" seconds "peak MiB"
row "external-100k  inspect --json" "$cli" inspect --json "$scratch/external-100k/model.onnx"
row "external-100k  python-onnx load (no data)" /usr/bin/python3 -c \
    "import onnx, sys; onnx.load(sys.argv[1], load_external_data=False)" \
    "$scratch/external-100k/model.onnx"
row "attribute-3m   inspect --json" "$cli" inspect --json "$scratch/attribute-3m.onnx"
row "constants-300k repack" "$cli" repack "$scratch/constants-300k.onnx" \
    -o "$scratch/out/constants-300k.onnx"
