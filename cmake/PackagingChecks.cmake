# Run by cpack (CPACK_PROJECT_CONFIG_FILE). Without `file` or dpkg-shlibdeps, CPack's DEB
# generator only warns and writes a package with no Depends, which installs but cannot run:
# stop instead.
if(CPACK_GENERATOR STREQUAL "DEB")
  foreach(tool file dpkg-shlibdeps)
    find_program(found_${tool} ${tool})
    if(NOT found_${tool})
      message(FATAL_ERROR "cpack -G DEB needs `${tool}` to compute the package's Depends "
                          "(apt-get install file dpkg-dev)")
    endif()
  endforeach()
endif()
