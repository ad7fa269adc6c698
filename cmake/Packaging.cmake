# What `cmake --install` puts beside the two executables (man pages, bash completion, MIME type)
# and how `cpack -G DEB` packs it all as one Debian package, `onnx-repack`.
