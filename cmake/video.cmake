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

# ---- end of the CNN and the demo program ---------------------------------
