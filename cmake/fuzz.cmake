# SPDX-License-Identifier: MIT
# Fuzz targets (fuzz/fuzz_<name>.c, each defining LLVMFuzzerTestOneInput).
#
# Always: fuzz-replay-<name>, the target linked with fuzz/replay.c, and a
# ctest test fuzz_replay_<name> that runs it over fuzz/corpus/<name>/ when
# that directory exists. This keeps the corpus a regression suite under any
# compiler and under the sanitizer builds.
#
# With PP_FUZZ=ON and clang: fuzz-<name>, a libFuzzer binary
# (-fsanitize=fuzzer,address), and pp-fuzz-all to build them all. `make fuzz`
# drives this from a separate build directory.
option(PP_FUZZ "Build libFuzzer binaries (clang only)" OFF)

file(GLOB PP_FUZZ_TARGETS CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/fuzz/fuzz_*.c)

# What a target needs beyond pptools, one line per target:
# PP_FUZZ_SRC_<name> (sources), PP_FUZZ_LIBS_<name> (libraries),
# PP_FUZZ_INC_<name> (include directories), PP_FUZZ_DEFS_<name> (compile
# definitions).
# load.c salvages unfinished traces (recover.c, src/salvage/), which
# encode with the library's sinks.
set(PP_FUZZ_SRC_cli_args src/cli/args.c src/cli/diff.c src/cli/load.c
    src/cli/with.c src/cli/recover.c ${PP_SALVAGE_SRC} ${PP_CORE_SRC})
set(PP_FUZZ_LIBS_cli_args ${PP_LIB_LINK})
set(PP_FUZZ_DEFS_cli_args PP_STATIC_BUILD)
if(PP_JANSSON)
  list(APPEND PP_FUZZ_LIBS_cli_args ${PP_JANSSON})
  list(APPEND PP_FUZZ_DEFS_cli_args PP_HAVE_JANSSON)
endif()
set(PP_FUZZ_SRC_salvage ${PP_SALVAGE_SRC} ${PP_CORE_SRC})
set(PP_FUZZ_LIBS_salvage ${PP_LIB_LINK})
set(PP_FUZZ_DEFS_salvage PP_STATIC_BUILD)
set(PP_FUZZ_SRC_history src/cli/history_db.c)
if(PP_SQLITE AND PP_SQLITE_INCLUDE)
  set(PP_FUZZ_LIBS_history ${PP_SQLITE})
  set(PP_FUZZ_INC_history ${PP_SQLITE_INCLUDE})
  set(PP_FUZZ_DEFS_history PP_HAVE_SQLITE)
endif()

function(pp_fuzz_extras target name)
  if(PP_FUZZ_SRC_${name})
    target_sources(${target} PRIVATE ${PP_FUZZ_SRC_${name}})
  endif()
  if(PP_FUZZ_LIBS_${name})
    target_link_libraries(${target} PRIVATE ${PP_FUZZ_LIBS_${name}})
  endif()
  if(PP_FUZZ_INC_${name})
    target_include_directories(${target} PRIVATE ${PP_FUZZ_INC_${name}})
  endif()
  if(PP_FUZZ_DEFS_${name})
    target_compile_definitions(${target} PRIVATE ${PP_FUZZ_DEFS_${name}})
  endif()
endfunction()

set(PP_FUZZ_LIBFUZZER OFF)
if(PP_FUZZ)
  if(CMAKE_C_COMPILER_ID MATCHES "Clang")
    set(PP_FUZZ_LIBFUZZER ON)
    add_custom_target(pp-fuzz-all)
  else()
    message(WARNING "PP_FUZZ=ON needs clang (CC=clang); building only the "
                    "corpus replay drivers")
  endif()
endif()

foreach(src ${PP_FUZZ_TARGETS})
  get_filename_component(base ${src} NAME_WE)
  string(REGEX REPLACE "^fuzz_" "" name ${base})

  # LLVMFuzzerTestOneInput is an entry point defined for the fuzzer's
  # runtime; it has no prototype in a header of ours.
  set_source_files_properties(${src} PROPERTIES
    COMPILE_OPTIONS "-Wno-missing-prototypes")

  add_executable(fuzz-replay-${name} fuzz/replay.c ${src})
  target_include_directories(fuzz-replay-${name} PRIVATE include src fuzz)
  target_link_libraries(fuzz-replay-${name} PRIVATE pptools)
  pp_fuzz_extras(fuzz-replay-${name} ${name})

  set(corpus ${PROJECT_SOURCE_DIR}/fuzz/corpus/${name})
  if(IS_DIRECTORY ${corpus})
    add_test(NAME fuzz_replay_${name}
             COMMAND fuzz-replay-${name} ${corpus})
    set_tests_properties(fuzz_replay_${name} PROPERTIES TIMEOUT 300)
  endif()

  if(PP_FUZZ_LIBFUZZER)
    add_executable(fuzz-${name} ${src})
    target_include_directories(fuzz-${name} PRIVATE include src fuzz)
    target_compile_options(fuzz-${name} PRIVATE -fsanitize=fuzzer,address)
    target_link_options(fuzz-${name} PRIVATE -fsanitize=fuzzer,address)
    target_link_libraries(fuzz-${name} PRIVATE pptools)
    pp_fuzz_extras(fuzz-${name} ${name})
    add_dependencies(pp-fuzz-all fuzz-${name})
  endif()
endforeach()
