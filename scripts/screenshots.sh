#!/usr/bin/env bash
# Retakes the README's screenshots (docs/*.png) with the app's --screenshot mode, offscreen, from
# the bundled sample: the main window, the placement pane, the Before / after dock, a Compare of
# the sample with a repack of it, and the folder window on three copies of it.
#   scripts/screenshots.sh [BUILD_DIR]   (default build)
# With --screens OUT_DIR it takes each of them instead at each screen the app must fit (1366x768
# at 150 %, 1024x700 at 100 %, 1920x1080 at 200 %), each window at the whole screen's size, as
# OUT_DIR/WxH@SCALE-NAME.png, to be looked at; the README's pictures are left alone.
#   scripts/screenshots.sh --screens OUT_DIR [BUILD_DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
screens=
if [[ ${1:-} == --screens ]]; then
  [[ -n ${2:-} ]] || { echo "usage: $0 --screens OUT_DIR [BUILD_DIR]" >&2; exit 2; }
  mkdir -p "$2"
  screens=$(cd "$2" && pwd)
  shift 2
fi
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
mkdir "$scratch/models/b" "$scratch/models/export"
"$cli" repack "$sample" -o "$scratch/models/b/sample.onnx" --threshold 2K --order size --align 0 >/dev/null
for graph in encoder_model decoder_model decoder_with_past_model; do
  "$cli" repack "$sample" -o "$scratch/models/export/$graph.onnx" --threshold 16 >/dev/null
done
# shot NAME.png VIEW MODEL...: into docs/, or at $screen into $screens.
shot() {
  if [[ -z $screens ]]; then
    "$gui" --screenshot "$root/docs/$1" --screenshot-view "$2" "${@:3}"
  else
    "$gui" --screenshot "$screens/$screen-$1" --screenshot-view "$2" --screenshot-size "$logical" \
      "${@:3}"
  fi
}
all_shots() {
  shot screenshot.png main "$sample"
  shot placement.png placement "$sample"
  shot before-after.png before-after "$sample"
  shot compare.png compare "$sample" "$scratch/models/b/sample.onnx"
  shot folder.png folder "$scratch/models/export"
}
if [[ -z $screens ]]; then
  all_shots
  exit 0
fi
# The offscreen platform takes its screen from a JSON file; QT_SCALE_FACTOR scales the app.
for screen in 1366x768@1.5 1024x700@1 1920x1080@2; do
  size=${screen%@*} scale=${screen#*@}
  width=${size%x*} height=${size#*x}
  printf '{"screens": [{"name": "s", "x": 0, "y": 0, "width": %d, "height": %d, "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}\n' \
    "$width" "$height" >"$scratch/screen.json"
  # The window as large as the screen in the app's pixels: what a maximized window gets.
  logical=$(awk -v w="$width" -v h="$height" -v s="$scale" 'BEGIN { printf "%dx%d", w / s, h / s }')
  QT_QPA_PLATFORM="offscreen:configfile=$scratch/screen.json" QT_SCALE_FACTOR=$scale all_shots
done
echo "screenshots in $screens"
