# What `cmake --install` puts beside the executables, icon, desktop file and sample (installed by
# app/ and resources/): man pages, bash completion and the .onnx MIME type; and how
# `cpack -G DEB` packs it all as one Debian package, `onnx-repack`.
set(packaging_dir ${PROJECT_SOURCE_DIR}/packaging)

install(FILES ${packaging_dir}/man/onnx-repack.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${packaging_dir}/completion/onnx-repack
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
if(REPACK_BUILD_GUI)
  install(FILES ${packaging_dir}/man/onnx-repack-gui.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  # application/x-onnx for *.onnx, named by the desktop file's MimeType.
  install(FILES ${packaging_dir}/onnx-repack.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/mime/packages)
endif()

set(REPACK_PACKAGE_MAINTAINER "Onnx Repack developers <onnx-repack@invalid>"
    CACHE STRING "The Maintainer field of the Debian package")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME onnx-repack)
set(CPACK_PACKAGE_CONTACT "${REPACK_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "inspect and safely repack how ONNX models store their weights")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # onnx-repack_VERSION_ARCH.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# The lines after the summary (which CPack puts first); an empty line starts a paragraph.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "\
ONNX models over 2 GiB keep their weights in external data files. onnx-repack
shows where every tensor lives (inline, or which file at which offset), verifies
the external bytes, and rewrites that storage safely: thresholds, alignment,
sharding, inline, placement plans, and a diff of two layouts.

onnx-repack-gui shows the same as a table and a map of each data file; the Python
module onnx_repack gives scripts the same load, views and crash-safe save.")
# Depends from the libraries the executables link, by dpkg-shlibdeps (Debian package names and
# versions); cmake/PackagingChecks.cmake stops cpack when the tools it needs are missing.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Loaded with dlopen the first time they are needed, so dpkg-shlibdeps cannot see them; CPack
# adds the generated Depends to these: libcrypto for checksums (core/shared_library.h), libcurl
# when a URL is read (core/remote/curl_library.h).
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libssl3")
if(REPACK_REMOTE)
  string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libcurl4 (>= 7.85)")
endif()
if(REPACK_BUILD_PYTHON)
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "${REPACK_PYTHON_RECOMMENDS}")
endif()
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_SOURCE_DIR}/cmake/PackagingChecks.cmake)
include(CPack)
