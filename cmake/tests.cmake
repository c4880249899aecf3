# SPDX-License-Identifier: MIT
# Unit, integration and CLI tests (tests/), benchmarks (bench/) and the fuzz
# corpus replay (fuzz/). Every tests/test-*.c registers itself with
# PP_TEST(); one runner binary holds them all.
file(GLOB PP_TEST_SRC CONFIGURE_DEPENDS tests/test-*.c)
add_executable(pp-tests tests/runner.c tests/trace_builder.c tests/cdp.c
  tests/fake_cuda_harness.c ${PP_TEST_SRC}
               ${PP_CORE_SRC} ${PP_SALVAGE_SRC})
target_compile_definitions(pp-tests PRIVATE PP_STATIC_BUILD PP_TESTING
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
# The /metrics page builder (no HTTP) is tested in the runner; the
# companion itself is loaded from beside pp-tests by tests/test-http.c.
target_sources(pp-tests PRIVATE src/http/metrics.c src/http/api.c
  src/http/page.c)
if(TARGET pipeprof_http)
  add_dependencies(pp-tests pipeprof_http)
  target_compile_definitions(pp-tests PRIVATE PP_HAVE_HTTP)
endif()

add_test(NAME unit COMMAND pp-tests)
set_tests_properties(unit PROPERTIES TIMEOUT 1500
  ENVIRONMENT "PP_BUILD_DIR=${PROJECT_BINARY_DIR};PP_SOURCE_DIR=${PROJECT_SOURCE_DIR}")

file(GLOB PP_BENCH_SRC CONFIGURE_DEPENDS bench/*.c)
if(PP_BENCH_SRC)
  add_executable(pipeprof-bench ${PP_BENCH_SRC} ${PP_CORE_SRC}
                 ${PP_SALVAGE_SRC})
  target_compile_definitions(pipeprof-bench PRIVATE PP_STATIC_BUILD)
  target_include_directories(pipeprof-bench PRIVATE include src)
  target_link_libraries(pipeprof-bench PRIVATE pptools ${PP_LIB_LINK})
  add_dependencies(pp-tests pipeprof-bench) # tests/test-bench.c runs it
endif()
# The synthetic program behind bench/diff_rates.sh (`pipeprof diff`'s
# false-positive and detection rates); a figure, never a test.
add_executable(pipeprof-diff-workload bench/diff/workload.c)
target_link_libraries(pipeprof-diff-workload PRIVATE pipeprof Threads::Threads m)
# The trace recorder behind bench/report_scale.sh (the report's peak RSS
# and events per second on 10^7..10^9-event traces); a figure, never a test.
add_executable(pipeprof-tracegen bench/report/tracegen.c)
target_link_libraries(pipeprof-tracegen PRIVATE pipeprof Threads::Threads)
# The batch "model" the `pipeprof sweep` tests sweep (tests/test-sweep.c).
add_executable(pipeprof-test-batch-worker tests/helpers/batch_worker.c)
target_link_libraries(pipeprof-test-batch-worker PRIVATE pipeprof)
add_dependencies(pp-tests pipeprof-test-batch-worker)
# A program that loads libpipeprof as a plugin and unloads it while its
# recording threads live (tests/test-recorder.c).
add_executable(pipeprof-test-dlclose-host tests/helpers/dlclose_host.c)
target_include_directories(pipeprof-test-dlclose-host PRIVATE include)
target_link_libraries(pipeprof-test-dlclose-host PRIVATE Threads::Threads
  ${CMAKE_DL_LIBS})
add_dependencies(pp-tests pipeprof-test-dlclose-host pipeprof)
# Hostile clients of the HTTP endpoint (tests/test-http.c,
# bench/http/load.sh): slowloris connections and a GET flood.
add_executable(pipeprof-test-http-siege tests/helpers/http_siege.c)
add_dependencies(pp-tests pipeprof-test-http-siege)
# Known hot functions inside known calls, with frame pointers, for the CPU
# stack sampler's tests (tests/test-stacks.c).
add_executable(pipeprof-test-hot-funcs tests/helpers/hot_funcs.c)
target_compile_options(pipeprof-test-hot-funcs PRIVATE -fno-omit-frame-pointer
  -O1)
target_link_libraries(pipeprof-test-hot-funcs PRIVATE m)
add_executable(pipeprof-test-hot-funcs-nofp tests/helpers/hot_funcs.c)
target_compile_options(pipeprof-test-hot-funcs-nofp PRIVATE
  -fomit-frame-pointer -O2)
target_link_libraries(pipeprof-test-hot-funcs-nofp PRIVATE m)
# ... and a C++ one, whose names the report shows demangled.
add_executable(pipeprof-test-hot-cpp tests/helpers/hot_cpp.cpp)
add_dependencies(pp-tests pipeprof-test-hot-funcs pipeprof-test-hot-funcs-nofp
  pipeprof-test-hot-cpp)
# The program bench/stacks_cost.sh samples: 8 spinning threads calling
# libm; a figure, never a test.
add_executable(pipeprof-bench-stacks-busy bench/stacks/busy.c)
target_link_libraries(pipeprof-bench-stacks-busy PRIVATE Threads::Threads m)
# pipeprof-bench-queue (bench/runtime/queue.c): the runtime's queue against
# a mutex + condvar queue; a figure, never a test.
add_executable(pipeprof-bench-queue bench/runtime/queue.c)
target_link_libraries(pipeprof-bench-queue PRIVATE pipeprof Threads::Threads)
# pipeprof-overhead (bench/overhead/): the profiler's overhead measured
# with and without recording against the figure the report prints. The
# workloads run in pipeprof-overhead-work, linked to libpipeprof like any
# instrumented program.
add_executable(pipeprof-overhead-work bench/overhead/work.c)
target_link_libraries(pipeprof-overhead-work PRIVATE pipeprof)
add_executable(pipeprof-overhead bench/overhead/overhead.c ${PP_CORE_SRC})
target_compile_definitions(pipeprof-overhead PRIVATE PP_STATIC_BUILD)
target_include_directories(pipeprof-overhead PRIVATE include src)
target_link_libraries(pipeprof-overhead PRIVATE pptools ${PP_LIB_LINK})
add_dependencies(pipeprof-overhead pipeprof-overhead-work
                 pipeprof-example-pipeline)

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

# ---- CUDA driver test double (src/core/gpu.c; owner: GPU zones) ---------
# A fake libcuda.so.1 with a scripted GPU ($PP_FAKE_CUDA, see
# tests/fakes/fake_cuda.c); tests point PIPEPROF_LIBCUDA at it. Never
# installed.
add_library(fake_cuda SHARED tests/fakes/fake_cuda.c)
set_target_properties(fake_cuda PROPERTIES
  OUTPUT_NAME cuda
  SOVERSION 1
  C_VISIBILITY_PRESET default
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/fakes)
target_link_libraries(fake_cuda PRIVATE Threads::Threads)
add_dependencies(pp-tests fake_cuda)
target_compile_definitions(pp-tests PRIVATE
  PP_FAKE_CUDA_PATH="$<TARGET_FILE_DIR:fake_cuda>/libcuda.so.1")
# The same fake without cuMemGetInfo_v2 (device memory unavailable).
add_library(fake_cuda_nomem SHARED tests/fakes/fake_cuda.c)
target_compile_definitions(fake_cuda_nomem PRIVATE FAKE_CUDA_NO_MEM_INFO)
set_target_properties(fake_cuda_nomem PROPERTIES
  OUTPUT_NAME cuda
  SOVERSION 1
  C_VISIBILITY_PRESET default
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/fakes/nomem)
target_link_libraries(fake_cuda_nomem PRIVATE Threads::Threads)
add_dependencies(pp-tests fake_cuda_nomem)
target_compile_definitions(pp-tests PRIVATE
  PP_FAKE_CUDA_NOMEM_PATH="$<TARGET_FILE_DIR:fake_cuda_nomem>/libcuda.so.1")
# ---- end of the CUDA driver block ---------------------------------------

# ---- GPU tests (tests/gpu/) ---------------------------------------------
# CUDA programs that check GPU features on real hardware; built with nvcc
# when CMake finds the CUDA toolkit (/usr/local/cuda/bin/nvcc is tried when
# nvcc is not on PATH), run by the suite, and print "skipped: no GPU" where
# there is none. Not with sanitizers (nvcc does not take their flags).
include(cmake/cuda.cmake)
set(PP_GPU_TESTS_DEFAULT OFF)
if(CMAKE_CUDA_COMPILER AND NOT PP_SANITIZE)
  set(PP_GPU_TESTS_DEFAULT ON)
endif()
option(PP_GPU_TESTS "Build the CUDA tests in tests/gpu (needs nvcc)"
       ${PP_GPU_TESTS_DEFAULT})
if(PP_GPU_TESTS)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 75 80 90)
  endif()
  enable_language(CUDA)
  add_executable(pp-gpu-zones tests/gpu/gpu_zones.cu tests/gpu/check.c)
  target_include_directories(pp-gpu-zones PRIVATE include src tests/gpu)
  target_link_libraries(pp-gpu-zones PRIVATE pipeprof pptools)
  add_dependencies(pp-tests pp-gpu-zones)
  target_compile_definitions(pp-tests PRIVATE
    PP_GPU_ZONES_BIN="$<TARGET_FILE:pp-gpu-zones>")
  add_test(NAME gpu_zones COMMAND pp-gpu-zones
           ${PROJECT_BINARY_DIR}/gpu_zones.pptrace)
endif()

# The disabled (PP_DISABLE) forms of the GPU zone and memory pool macros
# must compile, in C and C++.
add_library(pp_disabled_forms OBJECT tests/helpers/disabled_forms.c
            tests/helpers/disabled_forms.cpp)
target_include_directories(pp_disabled_forms PRIVATE include)
target_compile_definitions(pp_disabled_forms PRIVATE PP_DISABLE)
add_dependencies(pp-tests pp_disabled_forms)
# ---- end of the GPU tests block -----------------------------------------

# ---- CUPTI test double and GPU test (owner: CUDA activity tracing) -------
# A fake libcupti (tests/fakes/fake_cupti.c) with the toolkit's record
# layouts, loaded by the tracer through PIPEPROF_LIBCUPTI; only where the
# CUPTI headers were found (else the tracer is cupti_none.c).
if(PP_HAVE_CUPTI)
  add_library(fake_cupti SHARED tests/fakes/fake_cupti.c)
  target_include_directories(fake_cupti SYSTEM PRIVATE ${PP_CUPTI_INCLUDE}
                             ${PP_CUDA_H_INCLUDE})
  set_target_properties(fake_cupti PROPERTIES
    C_VISIBILITY_PRESET default
    LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/fakes)
  add_dependencies(pp-tests fake_cupti)
  target_compile_definitions(pp-tests PRIVATE PP_HAVE_CUPTI
    PP_FAKE_CUPTI_PATH="$<TARGET_FILE:fake_cupti>")
endif()
# tests/gpu/cupti_kernels.cu: real kernels and copies traced through
# pipeprof, checked against cudaEvent timings; built with nvcc when CMake
# finds one, registered as a test that prints "skipped: no GPU" and passes
# on machines without a GPU.
include(CheckLanguage)
check_language(CUDA)
if(CMAKE_CUDA_COMPILER AND PP_HAVE_CUPTI)
  enable_language(CUDA)
  add_executable(pp-gpu-cupti tests/gpu/cupti_kernels.cu)
  set_target_properties(pp-gpu-cupti PROPERTIES CUDA_ARCHITECTURES "80;90"
                        LINKER_LANGUAGE CUDA)
  target_include_directories(pp-gpu-cupti PRIVATE include src)
  target_link_libraries(pp-gpu-cupti PRIVATE pipeprof pptools)
  add_test(NAME gpu_cupti COMMAND pp-gpu-cupti)
  set_tests_properties(gpu_cupti PROPERTIES TIMEOUT 300
    ENVIRONMENT "PP_BUILD_DIR=${PROJECT_BINARY_DIR}")
endif()
