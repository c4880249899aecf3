# SPDX-License-Identifier: MIT
# Finding nvcc for the CUDA parts (tests/gpu, the video demo's kernel):
# /usr/local/cuda/bin/nvcc is tried when nvcc is not on PATH; then
# check_language(CUDA) sets CMAKE_CUDA_COMPILER where one works.
include_guard(GLOBAL)
include(CheckLanguage)
if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX}
   AND EXISTS /usr/local/cuda/bin/nvcc)
  find_program(PP_NVCC_ON_PATH nvcc)
  if(NOT PP_NVCC_ON_PATH)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
endif()
check_language(CUDA)
