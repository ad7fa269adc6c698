#!/usr/bin/env bash
# Builds the Debian package from an existing build folder (default ./build) with
# `cpack -G DEB`, installs it with apt-get, checks that what it installed works without a
# display (versions, man pages, bash completion, inspect of the bundled sample), and removes it
# again. Needs root (or sudo) for apt-get; refuses to run when onnx-repack is already installed,
# so that it never removes a package it did not install.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
sudo=()
if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
export DEBIAN_FRONTEND=noninteractive

fail() {
  echo "test-package: $*" >&2
  exit 1
}

[ -f "$build/CPackConfig.cmake" ] || fail "$build is not a configured build folder (run scripts/build.sh)"
if dpkg-query -W -f='${Status}' onnx-repack 2>/dev/null | grep -q "install ok installed"; then
  fail "onnx-repack is already installed; remove it first (apt-get remove onnx-repack)"
fi

gui=0
grep -q '^REPACK_BUILD_GUI:BOOL=ON' "$build/CMakeCache.txt" && gui=1
python=0
grep -q '^REPACK_BUILD_PYTHON:BOOL=ON' "$build/CMakeCache.txt" && python=1
targets=(onnx-repack)
((gui)) && targets+=(onnx-repack-gui)
((python)) && targets+=(onnx_repack)
cmake --build "$build" --target "${targets[@]}"

# A fresh folder, so that the one .deb in it is the one just built.
packages="$build/package"
rm -rf "$packages"
(cd "$build" && cpack -G DEB -B "$packages" >/dev/null)
debs=("$packages"/onnx-repack_*.deb)
[ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ] || fail "cpack wrote no single onnx-repack_*.deb into $packages"
deb="${debs[0]}"
version="$(dpkg-deb -f "$deb" Version)"
depends="$(dpkg-deb -f "$deb" Depends)"
contents="$(dpkg-deb -c "$deb")"
echo "test-package: built $(basename "$deb"), Depends: $depends"

# Depends from dpkg-shlibdeps names the Debian packages of the linked libraries.
for package in libprotobuf libonnx libssl libstdc++; do
  [[ $depends == *"$package"* ]] || fail "Depends lacks $package: $depends"
done
((gui)) && { [[ $depends == *libqt6widgets6* ]] || fail "Depends lacks libqt6widgets6: $depends"; }
expected=(usr/bin/onnx-repack usr/share/man/man1/onnx-repack.1
  usr/share/bash-completion/completions/onnx-repack)
((gui)) && expected+=(usr/bin/onnx-repack-gui usr/share/man/man1/onnx-repack-gui.1
  usr/share/applications/onnx-repack-gui.desktop
  usr/share/icons/hicolor/scalable/apps/onnx-repack-gui.svg
  usr/share/mime/packages/onnx-repack.xml usr/share/onnx-repack/sample/sample.onnx)
((python)) && expected+=(usr/lib/python3/dist-packages/onnx_repack/__init__.py
  usr/lib/python3/dist-packages/onnx_repack/__main__.py
  usr/lib/python3/dist-packages/onnx_repack/__init__.pyi)
for file in "${expected[@]}"; do
  grep -q " \./$file\$" <<<"$contents" || fail "the package lacks /$file"
done
if ((python)); then
  grep -qE " \./usr/lib/python3/dist-packages/onnx_repack/_core\.cpython-[^ ]*\.so\$" <<<"$contents" \
    || fail "the package lacks the onnx_repack extension in /usr/lib/python3/dist-packages"
fi

installed=0
cleanup() {
  if ((installed)); then
    "${sudo[@]}" apt-get remove -y -qq onnx-repack >/dev/null
    echo "test-package: removed onnx-repack again"
  fi
}
trap cleanup EXIT
# A local file must be named by a path for apt-get; it fetches the Depends that are missing.
"${sudo[@]}" apt-get install -y -qq "$deb" >/dev/null
installed=1

# From the installed paths only (a work tree's build may be first on PATH).
[ "$(/usr/bin/onnx-repack --version)" = "onnx-repack $version" ] \
  || fail "onnx-repack --version says '$(/usr/bin/onnx-repack --version)', the package is $version"
for exe in /usr/bin/onnx-repack*; do
  if ldd "$exe" | grep -q "not found"; then
    fail "$exe misses libraries: $(ldd "$exe" | grep "not found" | tr -s ' \t\n' ' ')"
  fi
done
# The distribution's Python finds the module where the package put it (from / and without
# PYTHONPATH, so neither a work tree nor build/python can answer instead).
if ((python)); then
  said="$(cd / && env -u PYTHONPATH /usr/bin/python3 -c "import onnx_repack; print(onnx_repack.__file__, onnx_repack.__version__)")" \
    || fail "/usr/bin/python3 -c 'import onnx_repack' fails"
  [[ $said == "/usr/lib/python3/dist-packages/onnx_repack/__init__.py $version" ]] \
    || fail "import onnx_repack found '$said', not the packaged module of version $version"
  [ "$(cd / && env -u PYTHONPATH /usr/bin/python3 -m onnx_repack --version)" = "onnx-repack $version" ] \
    || fail "python3 -m onnx_repack --version does not say onnx-repack $version"
fi

# Debian's slim images exclude /usr/share/man from installs (dpkg path-exclude): the package's
# man pages are checked above; here only that man finds them where they were installed.
if [ -f /usr/share/man/man1/onnx-repack.1 ] && command -v man >/dev/null; then
  [ "$(man -w onnx-repack)" = /usr/share/man/man1/onnx-repack.1 ] || fail "man -w onnx-repack: $(man -w onnx-repack 2>&1)"
  [ "$(MANWIDTH=80 man onnx-repack 2>/dev/null | grep -c -E "^SYNOPSIS|onnx-repack verify MODEL")" -eq 2 ] || fail "man onnx-repack does not render"
  ((gui)) && { man -w onnx-repack-gui >/dev/null || fail "man -w onnx-repack-gui finds no page"; }
fi

sample=/usr/share/onnx-repack/sample/sample.onnx
if ((gui)); then
  /usr/bin/onnx-repack inspect "$sample" | grep -q "tensors: " || fail "onnx-repack inspect $sample"
  /usr/bin/onnx-repack verify "$sample" >/dev/null || fail "onnx-repack verify $sample"
  [ "$(/usr/bin/onnx-repack-gui --version)" = "onnx-repack-gui $version" ] || fail "onnx-repack-gui --version"
  # No display: the GUI prints `onnx-repack inspect` of the installed sample instead (that
  # one, not a build tree's on this machine).
  gui_out=$(env -u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM /usr/bin/onnx-repack-gui)
  grep -qF "onnx-repack inspect $sample\`" <<<"$gui_out" \
    || fail "onnx-repack-gui without a display does not name $sample: $(head -1 <<<"$gui_out")"
  grep -q "tensors: " <<<"$gui_out" || fail "onnx-repack-gui without a display does not inspect $sample"
fi

# The completion offers every option each command's --help lists, and the --target presets.
completions=/usr/share/bash-completion/bash_completion
if [ -f "$completions" ]; then
  complete_words() {
    bash -c 'source "$1"; source /usr/share/bash-completion/completions/onnx-repack; shift
      COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
      _onnx_repack; printf "%s\n" "${COMPREPLY[@]}"' _ "$completions" "$@"
  }
  for command in inspect verify repack plan diff clean; do
    offered="$(complete_words onnx-repack "$command" --)"
    for option in $(/usr/bin/onnx-repack "$command" --help | grep -oE '^ +(-[a-z],)?--[a-z-]+' | grep -oE -- '--[a-z-]+'); do
      grep -qx -- "$option" <<<"$offered" || fail "bash completion of '$command' lacks $option"
    done
  done
  [ "$(complete_words onnx-repack repack m.onnx --target "" | tr '\n' ' ')" = "ort optimum web hub " ] \
    || fail "bash completion of --target: $(complete_words onnx-repack repack m.onnx --target "")"
  [ "$(complete_words onnx-repack "" | tr '\n' ' ')" = "inspect verify repack plan diff clean " ] \
    || fail "bash completion of the commands: $(complete_words onnx-repack "")"
fi

echo "test-package: onnx-repack $version installs, runs and completes"
