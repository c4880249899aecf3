# SPDX-License-Identifier: MIT
# Unit, integration and CLI tests (tests/), benchmarks (bench/) and the fuzz
# corpus replay (fuzz/). Every tests/test-*.c registers itself with
# PP_TEST(); one runner binary holds them all.
file(GLOB PP_TEST_SRC CONFIGURE_DEPENDS tests/test-*.c)
add_executable(pp-tests tests/runner.c tests/trace_builder.c ${PP_TEST_SRC}
               ${PP_CORE_SRC})
target_compile_definitions(pp-tests PRIVATE PP_STATIC_BUILD
  PP_SOURCE_DIR_DEFAULT="${PROJECT_SOURCE_DIR}")
target_include_directories(pp-tests PRIVATE include src tests)
target_link_libraries(pp-tests PRIVATE pptools ${PP_LIB_LINK})
find_library(PP_JANSSON jansson)
if(PP_JANSSON)
  target_link_libraries(pp-tests PRIVATE ${PP_JANSSON})
  target_compile_definitions(pp-tests PRIVATE PP_HAVE_JANSSON)
endif()
# The history database layer (no CLI dependencies) and SQLite.
if(PP_SQLITE AND PP_SQLITE_INCLUDE)
  target_sources(pp-tests PRIVATE src/cli/history_db.c)
  target_include_directories(pp-tests PRIVATE ${PP_SQLITE_INCLUDE})
  target_link_libraries(pp-tests PRIVATE ${PP_SQLITE})
  target_compile_definitions(pp-tests PRIVATE PP_HAVE_SQLITE)
endif()
add_dependencies(pp-tests pipeprof_cli pipeprof-example-pipeline)

add_test(NAME unit COMMAND pp-tests)
set_tests_properties(unit PROPERTIES TIMEOUT 1500
  ENVIRONMENT "PP_BUILD_DIR=${PROJECT_BINARY_DIR};PP_SOURCE_DIR=${PROJECT_SOURCE_DIR}")

file(GLOB PP_BENCH_SRC CONFIGURE_DEPENDS bench/*.c)
if(PP_BENCH_SRC)
  add_executable(pipeprof-bench ${PP_BENCH_SRC} ${PP_CORE_SRC})
  target_compile_definitions(pipeprof-bench PRIVATE PP_STATIC_BUILD)
  target_include_directories(pipeprof-bench PRIVATE include src)
  target_link_libraries(pipeprof-bench PRIVATE pptools ${PP_LIB_LINK})
endif()

include(cmake/fuzz.cmake OPTIONAL)

# ---- NVML test double (src/collect/nvml.c; owner: the NVML reader) ------
# A fake libnvidia-ml.so.1 scripted through $PP_FAKE_NVML (see
# tests/fakes/fake_nvml.c), built where dlopen finds it by path or with
# LD_LIBRARY_PATH=<build>/fakes. Never installed.
add_library(fake_nvml SHARED tests/fakes/fake_nvml.c)
set_target_properties(fake_nvml PROPERTIES
  OUTPUT_NAME nvidia-ml
  SOVERSION 1
  C_VISIBILITY_PRESET default
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/fakes)
add_dependencies(pp-tests fake_nvml)
target_compile_definitions(pp-tests PRIVATE
  PP_FAKE_NVML_PATH="$<TARGET_FILE_DIR:fake_nvml>/libnvidia-ml.so.1")
# ---- end of the NVML block ----------------------------------------------
