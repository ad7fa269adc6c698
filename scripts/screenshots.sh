#!/usr/bin/env bash
# Retakes the README's screenshots (docs/*.png) with the app's --screenshot mode, offscreen, from
# the bundled sample: the main window, the placement pane, the Before / after dock, a Compare of
# the sample with a repack of it, and the folder window on three copies of it.
#   scripts/screenshots.sh [BUILD_DIR]   (default build)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build=${1:-$root/build}
gui=$build/app/onnx-repack-gui
cli=$build/app/onnx-repack
for tool in "$gui" "$cli"; do
  [[ -x $tool ]] || { echo "missing $tool: build it first" >&2; exit 2; }
done
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# A home of its own: no settings of the user's show, and the titles read "~/models".
export HOME=$scratch XDG_CONFIG_HOME=$scratch/.config QT_QPA_PLATFORM=offscreen
mkdir -p "$scratch/models"
cp "$root"/resources/sample/sample.onnx* "$scratch/models/"
sample=$scratch/models/sample.onnx
shot() { "$gui" --screenshot "$root/docs/$1" --screenshot-view "$2" "${@:3}"; }
shot screenshot.png main "$sample"
shot placement.png placement "$sample"
shot before-after.png before-after "$sample"
mkdir "$scratch/models/b" "$scratch/models/export"
"$cli" repack "$sample" -o "$scratch/models/b/sample.onnx" --threshold 2K --order size --align 0 >/dev/null
shot compare.png compare "$sample" "$scratch/models/b/sample.onnx"
for graph in encoder_model decoder_model decoder_with_past_model; do
  "$cli" repack "$sample" -o "$scratch/models/export/$graph.onnx" --threshold 16 >/dev/null
done
shot folder.png folder "$scratch/models/export"
