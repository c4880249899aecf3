# SPDX-License-Identifier: MIT
# The video pipeline demo (examples/video/, docs/video-demo.md): a real
# pipeline on the runtime (include/pipeprof/runtime.h) that decodes a
# video with FFmpeg's libraries, preprocesses it with a fused pass, runs a
# small CNN on dynamic batches and encodes the result. Included after the
# tests, so that each part can add its tests to pp-tests
# (`if(TARGET pp-tests)`). FFmpeg's libraries are found with pkg-config;
# without them the demo and its tests are not built (make demo and make
# test install them: scripts/deps.sh).
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PP_AV QUIET IMPORTED_TARGET libavformat libavcodec
                    libswscale libavutil)
endif()
if(NOT PP_AV_FOUND)
  message(STATUS "FFmpeg's libraries (libavformat, libavcodec, libswscale, "
                 "libavutil) not found: no video demo")
endif()

# ---- fused preprocessing (examples/video/preprocess.*) -------------------
# The CPU passes need only libm (-O3: the fused pass's loop vectorises);
# the CUDA kernel is a shared object of its own, built where nvcc is (not
# with sanitizers, whose flags nvcc does not take) and loaded at run time.
add_library(pp_video_prep STATIC examples/video/preprocess.c
            examples/video/preprocess_cuda_loader.c)
target_compile_options(pp_video_prep PRIVATE -O3)
target_link_libraries(pp_video_prep PUBLIC m ${CMAKE_DL_LIBS})
if(TARGET pp-tests)
  target_link_libraries(pp-tests PRIVATE pp_video_prep)
endif()
# pipeprof-bench-preprocess: fused against separate passes; a figure.
add_executable(pipeprof-bench-preprocess bench/video/preprocess.c)
target_compile_options(pipeprof-bench-preprocess PRIVATE -O3)
target_link_libraries(pipeprof-bench-preprocess PRIVATE pp_video_prep)
include(cmake/cuda.cmake)
if(CMAKE_CUDA_COMPILER AND NOT PP_SANITIZE)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 75 80 90)
  endif()
  enable_language(CUDA)
  add_library(pipeprof-video-cuda SHARED examples/video/preprocess_cuda.cu)
  target_include_directories(pipeprof-video-cuda PRIVATE examples/video)
  set_target_properties(pipeprof-video-cuda PROPERTIES
    CUDA_RUNTIME_LIBRARY Static
    LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
  set(PP_VIDEO_CUDA ON)
  if(PP_BUILD_TESTS)
    # tests/gpu: the kernel against the reference on a real GPU ("skipped:
    # no GPU" elsewhere).
    add_executable(pp-gpu-preprocess tests/gpu/prep_cuda.c)
    target_include_directories(pp-gpu-preprocess PRIVATE examples/video)
    target_link_libraries(pp-gpu-preprocess PRIVATE pp_video_prep)
    add_dependencies(pp-gpu-preprocess pipeprof-video-cuda)
    add_test(NAME gpu_preprocess COMMAND pp-gpu-preprocess)
  endif()
endif()

# ---- end of fused preprocessing -------------------------------------------

# ---- FFmpeg input and output (examples/video/video_io.*) ----------------
if(PP_AV_FOUND)
  add_library(pp_video_io STATIC examples/video/video_io.c)
  target_link_libraries(pp_video_io PUBLIC PkgConfig::PP_AV m)
  if(TARGET pp-tests)
    target_link_libraries(pp-tests PRIVATE pp_video_io)
    target_compile_definitions(pp-tests PRIVATE PP_HAVE_AV)
  endif()
  # pipeprof-bench-video-io: encode, demux and decode frames/s; a figure
  # (docs/internals/video-io.md).
  add_executable(pipeprof-bench-video-io bench/video/io.c)
  target_link_libraries(pipeprof-bench-video-io PRIVATE pp_video_io)
endif()

# ---- end of FFmpeg input and output --------------------------------------

# ---- the CNN and the demo program (examples/video/cnn.*, video_demo.c) ---
# The CNN needs only libm; -O3 lets GCC vectorise its inner loops.
add_library(pp_video_cnn STATIC examples/video/cnn.c)
target_compile_options(pp_video_cnn PRIVATE -O3)
target_link_libraries(pp_video_cnn PUBLIC m)
if(TARGET pp-tests)
  target_link_libraries(pp-tests PRIVATE pp_video_cnn)
endif()

# The demo program: FFmpeg I/O, the preprocessing and the CNN on the
# runtime (libpipeprof).
if(PP_AV_FOUND AND TARGET pp_video_io AND TARGET pp_video_prep)
  add_executable(pipeprof-example-video examples/video/video_demo.c)
  target_compile_options(pipeprof-example-video PRIVATE -O3)
  target_link_libraries(pipeprof-example-video PRIVATE pipeprof pp_video_io
                        pp_video_prep pp_video_cnn Threads::Threads)
  if(PP_VIDEO_CUDA)
    add_dependencies(pipeprof-example-video pipeprof-video-cuda)
  endif()
  if(TARGET pp-tests)
    add_dependencies(pp-tests pipeprof-example-video)
  endif()
endif()
# ---- end of the CNN and the demo program ---------------------------------
