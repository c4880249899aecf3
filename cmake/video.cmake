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

# ---- end of fused preprocessing -------------------------------------------

# ---- FFmpeg input and output (examples/video/video_io.*) ----------------

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
  if(TARGET pp-tests)
    add_dependencies(pp-tests pipeprof-example-video)
  endif()
endif()
# ---- end of the CNN and the demo program ---------------------------------
