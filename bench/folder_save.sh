#!/usr/bin/env bash
# The folder save of issue 26 on an Optimum-shaped seq2seq export: encoder_model.onnx,
# decoder_model.onnx and decoder_with_past_model.onnx, each with its .onnx_data, repeating an
# embedding (in all three, and as the decoders' tied lm_head) and the decoder layers (in both
# decoders). About 1 GiB of distinct weights at SCALE=1 (SCALE=4: 4 GiB).
#   bench/folder_save.sh [BUILD_DIR]   (default build; needs /usr/bin/time; node and
#                                       build/readers for the ONNX Runtime rows, optional)
# Rows: bytes on disk before and after; `repack DIR -o OUT --shared-data model.onnx_data`
# against `cp` of the bytes it writes + sync (median of RUNS, default 3); its peak RSS; and the
# resident memory of one ONNX Runtime process holding a session per graph, per-graph files
# against the shared file (NO_ORT=1 skips them: the sessions copy every weight). REPACK_ARGS adds options to the folder repack (e.g. "--align 65536").
set -euo pipefail
build=${1:-build}
runs=${RUNS:-3}
scale=${SCALE:-1}
cli=$build/app/onnx-repack
[[ -x $cli ]] || { echo "missing $cli: build it first" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "needs /usr/bin/time: apt-get install time" >&2; exit 2; }
scratch=$(mktemp -d /var/tmp/repack-folder.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
src=$scratch/export
mkdir "$src"

PYTHONPATH=$(dirname "${BASH_SOURCE[0]}") /usr/bin/python3 - "$src" "$scale" <<'PY'
import os, sys
out, scale = sys.argv[1], int(sys.argv[2])
MiB = 1 << 20
from onnx_wire import entry, field, varint
def value_info(name):  # FLOAT, no shape
    return field(1, name) + field(2, field(1, b"\x08\x01"))
# Distinct contents: an embedding, encoder layers, decoder layers (about 1 GiB in all at scale 1).
rng = os.urandom
embed = (b"embed", 256 * scale * MiB)
encoder_layers = [(b"encoder.layer%d.w%d" % (l, w), 6 * scale * MiB) for l in range(12) for w in range(4)]
decoder_layers = [(b"decoder.layer%d.w%d" % (l, w), 10 * scale * MiB) for l in range(12) for w in range(4)]
content = {name: None for name, _ in [embed] + encoder_layers + decoder_layers}
def blob(name, size):
    if content[name] is None:
        content[name] = rng(size)
    return content[name]
graphs = {
    "encoder_model": [embed] + encoder_layers,
    "decoder_model": [embed] + decoder_layers + [(b"lm_head", embed[1])],
    "decoder_with_past_model": [embed] + decoder_layers + [(b"lm_head", embed[1])],
}
for graph, weights in graphs.items():
    data_name = (graph + ".onnx_data").encode()
    offset, inits, nodes, outputs = 0, b"", b"", b""
    with open(os.path.join(out, graph + ".onnx_data"), "wb") as f:
        for name, size in weights:
            bytes_ = blob(b"embed" if name == b"lm_head" else name, size)  # a tied lm_head
            f.write(bytes_)
            inits += field(5, field(1, varint(size // 4)) + b"\x10\x01" + field(8, name)
                           + entry(b"location", data_name) + entry(b"offset", b"%d" % offset)
                           + entry(b"length", b"%d" % size) + b"\x70\x01")
            nodes += field(1, field(1, name) + field(2, name + b"_out") + field(4, b"Identity"))
            outputs += field(12, value_info(name + b"_out"))
            offset += size
    model = b"\x08\x08" + field(7, nodes + field(2, b"g") + inits + outputs) + field(8, b"\x10\x11")
    with open(os.path.join(out, graph + ".onnx"), "wb") as f:
        f.write(model)
PY
sync

median() { sort -n | awk 'NF { v[++n] = $1 } END { print v[int((n + 1) / 2)] }'; }
mib() { echo $(($1 / 1048576)); }
before=$(du -sb "$src" | cut -f1)
secs="" kib="" cps=""
for ((r = 0; r < runs; r++)); do
    rm -rf "$scratch/out"
    sync
    /usr/bin/time -f "%e %M" -o "$scratch/time" "$cli" repack "$src" -o "$scratch/out" \
        --shared-data model.onnx_data ${REPACK_ARGS:-} >"$scratch/report"
    read -r s k < "$scratch/time"
    secs+="$s"$'\n' kib+="$k"$'\n'
    after=$(du -sb "$scratch/out" | cut -f1)
    # cp of the bytes the save writes (the shared file and the three models), then sync.
    rm -rf "$scratch/cp" && mkdir "$scratch/cp" && sync
    start=$(date +%s.%N)
    cp "$scratch/out"/* "$scratch/cp/" && sync
    cps+="$(echo "$(date +%s.%N) - $start" | bc)"$'\n'
done
save=$(median <<<"$secs") cp=$(median <<<"$cps")
echo "Optimum-shaped export, SCALE=$scale, median of $runs"
printf '%-44s %s\n' "bytes on disk before (3 graphs, 3 files)" "$(mib "$before") MiB"
printf '%-44s %s\n' "bytes on disk after (3 graphs, 1 file)" "$(mib "$after") MiB"
printf '%-44s %s s\n' "repack DIR -o OUT --shared-data" "$save"
printf '%-44s %s s\n' "cp of the bytes written + sync" "$cp"
printf '%-44s %.2fx\n' "ratio" "$(echo "$save / $cp" | bc -l)"
printf '%-44s %s MiB\n' "peak RSS of the folder save" "$(($(median <<<"$kib") / 1024))"
cat "$scratch/report"

modules=$build/readers/node_modules
if [[ -z ${NO_ORT:-} ]] && command -v node >/dev/null && [[ -f $modules/onnxruntime-node/package.json ]]; then
    # Memory the sessions hold, physical: the page cache they fill (file pages are shared by
    # every mapping of one file) plus their own anonymous memory. The caches are dropped first
    # (root only), so the file pages counted are the ones the sessions brought in.
    cat > "$scratch/sessions.js" <<'JS'
const fs = require('fs');
const ort = require('onnxruntime-node');
const kib = (text, key) => Number(new RegExp(key + ':\\s+(\\d+)').exec(text)[1]);
(async () => {
    const cachedBefore = kib(fs.readFileSync('/proc/meminfo', 'utf8'), 'Cached');
    const sessions = [];
    for (const path of process.argv.slice(2))
        sessions.push(await ort.InferenceSession.create(path));
    const cached = kib(fs.readFileSync('/proc/meminfo', 'utf8'), 'Cached') - cachedBefore;
    const rollup = fs.readFileSync('/proc/self/smaps_rollup', 'utf8');
    const mib = (k) => Math.round(k / 1024);
    console.log(`${mib(kib(rollup, 'Rss'))} ${mib(kib(rollup, 'Anonymous'))} ${mib(cached)}`);
})();
JS
    printf '%-44s %9s %9s %12s\n' "ONNX Runtime, one process, 3 sessions" "RSS MiB" "anon MiB" \
        "page cache"
    for side in export out; do
        sync
        [[ -w /proc/sys/vm/drop_caches ]] && echo 3 > /proc/sys/vm/drop_caches
        read -r rss anon cached < <(NODE_PATH=$modules node "$scratch/sessions.js" \
            "$scratch/$side/encoder_model.onnx" "$scratch/$side/decoder_model.onnx" \
            "$scratch/$side/decoder_with_past_model.onnx")
        label=$([[ $side == export ]] && echo "per-graph files" || echo "one shared file")
        printf '%-44s %9s %9s %12s\n' "  $label" "$rss" "$anon" "+$cached MiB"
    done
else
    echo "ONNX Runtime rows skipped: no node or build/readers (scripts/install-test-readers.sh)"
fi
