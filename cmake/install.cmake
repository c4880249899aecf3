# SPDX-License-Identifier: MIT
# Install rules: public headers, libpipeprof.so (with its SONAME links) and
# libpipeprof.a, the pipeprof CLI, the example pipelines under
# libexec/pipeprof/ (where `pipeprof demo` looks for them), pkg-config files
# (pipeprof.pc, pipeprof-static.pc) and a CMake package giving
# pipeprof::pipeprof and pipeprof::pipeprof_static. Everything installed is
# relocatable: `cmake --install build --prefix DIR` works for any DIR.
include(CMakePackageConfigHelpers)

set(PP_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/pipeprof)
set(PP_LIBEXEC_DIR ${CMAKE_INSTALL_LIBEXECDIR}/pipeprof)

# ---- headers ---------------------------------------------------------------
install(FILES include/pipeprof.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        COMPONENT dev)
install(DIRECTORY include/pipeprof/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/pipeprof COMPONENT dev
        FILES_MATCHING PATTERN "*.h")

# ---- libraries -------------------------------------------------------------
install(TARGETS pipeprof pipeprof_static EXPORT pipeprofTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime
          NAMELINK_COMPONENT dev
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)

# ---- programs --------------------------------------------------------------
install(TARGETS pipeprof_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        COMPONENT runtime)

# The instrumented example links libpipeprof.so: point its RPATH at the
# installed library relative to itself, so the demo runs from any prefix
# without LD_LIBRARY_PATH or ldconfig.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(PP_EXAMPLE_RPATH "${CMAKE_INSTALL_LIBDIR}")
else()
  file(RELATIVE_PATH PP_LIBEXEC_TO_LIB "/pp-root/${PP_LIBEXEC_DIR}"
       "/pp-root/${CMAKE_INSTALL_LIBDIR}")
  set(PP_EXAMPLE_RPATH "$ORIGIN/${PP_LIBEXEC_TO_LIB}")
endif()
# One RPATH for the build tree and the install: $ORIGIN finds the library
# beside the build-tree binary. (With separate ones, CMake pads the build
# RPATH with ':' to the install RPATH's length so it can rewrite it in
# place, and the dynamic loader reads an empty entry as the current
# directory: the build-tree example looked for libm and libc in whatever
# directory it was run from.)
set_target_properties(pipeprof-example-pipeline PROPERTIES
  BUILD_WITH_INSTALL_RPATH ON
  INSTALL_RPATH "$ORIGIN;${PP_EXAMPLE_RPATH}")
install(TARGETS pipeprof-example-pipeline pipeprof-example-pipeline-noprof
        RUNTIME DESTINATION ${PP_LIBEXEC_DIR} COMPONENT runtime)

# ---- pkg-config --------------------------------------------------------------
# prefix is derived from the .pc file's own location (${pcfiledir}), which
# both pkg-config and pkgconf understand, so the files stay valid after
# `cmake --install --prefix` or a DESTDIR copy. Absolute install dirs are
# written as they are.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(PP_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(PP_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  file(RELATIVE_PATH PP_PC_UP "/pp-root/${CMAKE_INSTALL_LIBDIR}/pkgconfig"
       "/pp-root")
  string(REGEX REPLACE "/$" "" PP_PC_UP "${PP_PC_UP}")
  set(PP_PC_PREFIX "\${pcfiledir}/${PP_PC_UP}")
  set(PP_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(PP_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(PP_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
# What the static library needs from the system, as linker flags.
set(PP_PC_LIBS_PRIVATE "-lpthread")
foreach(lib ${CMAKE_DL_LIBS} m)
  string(APPEND PP_PC_LIBS_PRIVATE " -l${lib}")
endforeach()

# The files to install live under pc-install/ (their paths are relative to
# where they are installed, meaningless in the build tree). The build
# tree itself gets pkg-config's -uninstalled variants: with
# PKG_CONFIG_PATH=<build>, `pkg-config pipeprof` gives the build's library
# and the source tree's headers (pkg-config prefers NAME-uninstalled.pc).
foreach(pc pipeprof pipeprof-static)
  configure_file(${PROJECT_SOURCE_DIR}/${pc}.pc.in
                 ${PROJECT_BINARY_DIR}/pc-install/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pc-install/${pc}.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)
endforeach()
set(PP_PC_PREFIX_SAVED "${PP_PC_PREFIX}")
set(PP_PC_PREFIX "${PROJECT_BINARY_DIR}")
set(PP_PC_LIBDIR "${PROJECT_BINARY_DIR}")
set(PP_PC_INCLUDEDIR "${PROJECT_SOURCE_DIR}/include")
foreach(pc pipeprof pipeprof-static)
  configure_file(${PROJECT_SOURCE_DIR}/${pc}.pc.in
                 ${PROJECT_BINARY_DIR}/${pc}-uninstalled.pc @ONLY)
endforeach()
set(PP_PC_PREFIX "${PP_PC_PREFIX_SAVED}")
file(REMOVE ${PROJECT_BINARY_DIR}/pipeprof.pc
     ${PROJECT_BINARY_DIR}/pipeprof-static.pc) # where older builds put them

# ---- CMake package -----------------------------------------------------------
install(EXPORT pipeprofTargets NAMESPACE pipeprof::
        DESTINATION ${PP_CMAKE_DIR} COMPONENT dev)
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/pipeprofConfig.cmake.in
  ${PROJECT_BINARY_DIR}/pipeprofConfig.cmake
  INSTALL_DESTINATION ${PP_CMAKE_DIR})
# 0.x releases make no compatibility promise between minor versions.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(PP_COMPAT SameMinorVersion)
else()
  set(PP_COMPAT SameMajorVersion)
endif()
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/pipeprofConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY ${PP_COMPAT})
install(FILES ${PROJECT_BINARY_DIR}/pipeprofConfig.cmake
              ${PROJECT_BINARY_DIR}/pipeprofConfigVersion.cmake
        DESTINATION ${PP_CMAKE_DIR} COMPONENT dev)

# ---- what `cmake --install` needs built ---------------------------------------
# Every target the rules above install (and the HTTP companion, installed
# by CMakeLists.txt when libmicrohttpd was found): `make demo` builds this
# set, so `cmake --install` works after it as after a full build.
add_custom_target(pp_installable)
add_dependencies(pp_installable pipeprof pipeprof_static pipeprof_cli
                 pipeprof-example-pipeline pipeprof-example-pipeline-noprof)
if(TARGET pipeprof_http)
  add_dependencies(pp_installable pipeprof_http)
endif()
