# SPDX-License-Identifier: MIT
# The Python binding (bindings/python) built into the build tree for its
# tests: <build>/python/pipeprof/ holds the package's .py files and the
# extension _pipeprof*.so, compiled here with the project's flags (and
# sanitizers) against PP_PYTHON's headers. `pip install` builds the same
# source with setuptools instead (docs/python.md).
#
# PP_PYTHON: the interpreter, default Debian's /usr/bin/python3 (the
# python3 first on PATH may be a pyenv shim without Debian's packages);
# set it with -DPP_PYTHON=... or PP_PYTHON=... in the environment at
# configure time. Without its headers (python3-dev) or pytest the tests
# are registered as skipped, with the reason.
if(DEFINED ENV{PP_PYTHON} AND NOT PP_PYTHON)
  set(PP_PYTHON_DEFAULT $ENV{PP_PYTHON})
else()
  set(PP_PYTHON_DEFAULT /usr/bin/python3)
endif()
set(PP_PYTHON ${PP_PYTHON_DEFAULT} CACHE FILEPATH
    "Python interpreter for the binding's tests")

set(PP_PY_SKIP "")
if(NOT EXISTS ${PP_PYTHON})
  set(PP_PY_SKIP "no Python interpreter at ${PP_PYTHON} (set PP_PYTHON)")
else()
  set(Python3_EXECUTABLE ${PP_PYTHON})
  find_package(Python3 COMPONENTS Interpreter Development.Module QUIET)
  if(NOT Python3_Development.Module_FOUND)
    set(PP_PY_SKIP "no Python headers for ${PP_PYTHON} (python3-dev)")
  else()
    execute_process(COMMAND ${PP_PYTHON} -c "import pytest"
                    RESULT_VARIABLE PP_PY_PYTEST OUTPUT_QUIET ERROR_QUIET)
    if(NOT PP_PY_PYTEST EQUAL 0)
      set(PP_PY_SKIP "no pytest for ${PP_PYTHON} (python3-pytest)")
    endif()
  endif()
endif()

if(PP_PY_SKIP)
  message(STATUS "pipeprof: Python binding tests skipped: ${PP_PY_SKIP}")
  add_test(NAME python COMMAND ${CMAKE_COMMAND} -E echo
           "skipped: ${PP_PY_SKIP}")
  set_tests_properties(python PROPERTIES SKIP_REGULAR_EXPRESSION "skipped:")
  return()
endif()

set(PP_PY_OUT ${PROJECT_BINARY_DIR}/python/pipeprof)
add_library(pp_python MODULE bindings/python/src/_pipeprof.c
  bindings/python/src/runtime.c)
target_include_directories(pp_python PRIVATE include)
target_include_directories(pp_python SYSTEM PRIVATE ${Python3_INCLUDE_DIRS})
target_link_libraries(pp_python PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
# The tuple the package searches first: this build tree's library.
target_compile_definitions(pp_python PRIVATE
  "PP_PY_LIBDIRS=\"(('build tree', '${PROJECT_BINARY_DIR}'),)\"")
set_target_properties(pp_python PROPERTIES
  OUTPUT_NAME _pipeprof PREFIX ""
  SUFFIX ".${Python3_SOABI}${CMAKE_SHARED_MODULE_SUFFIX}"
  C_VISIBILITY_PRESET default
  LIBRARY_OUTPUT_DIRECTORY ${PP_PY_OUT})
add_dependencies(pp_python pipeprof)

file(GLOB PP_PY_SRC CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/bindings/python/pipeprof/*.py)
set(PP_PY_COPIES)
foreach(f ${PP_PY_SRC})
  get_filename_component(n ${f} NAME)
  add_custom_command(OUTPUT ${PP_PY_OUT}/${n}
    COMMAND ${CMAKE_COMMAND} -E copy_if_different ${f} ${PP_PY_OUT}/${n}
    DEPENDS ${f} VERBATIM)
  list(APPEND PP_PY_COPIES ${PP_PY_OUT}/${n})
endforeach()
add_custom_target(pp_python_files ALL DEPENDS ${PP_PY_COPIES})
add_dependencies(pp_python pp_python_files)

# Sanitizer builds: the interpreter is not instrumented, so the runtime
# must be preloaded; Python's own allocations are not ours to check.
set(PP_PY_ENV
  "PYTHONPATH=${PROJECT_BINARY_DIR}/python"
  "PP_BUILD_DIR=${PROJECT_BINARY_DIR}"
  "PP_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
  "PP_PYTHON=${PP_PYTHON}"
  "PYTHONDONTWRITEBYTECODE=1")
set(PP_PY_PRELOAD "")
if(PP_SANITIZE MATCHES "address")
  set(PP_PY_SANLIB libasan.so)
elseif(PP_SANITIZE MATCHES "thread")
  set(PP_PY_SANLIB libtsan.so)
endif()
if(PP_PY_SANLIB)
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=${PP_PY_SANLIB}
                  OUTPUT_VARIABLE PP_PY_PRELOAD
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  list(APPEND PP_PY_ENV "PP_PY_PRELOAD=${PP_PY_PRELOAD}"
       "ASAN_OPTIONS=detect_leaks=0")
endif()

add_test(NAME python
  COMMAND ${PP_PYTHON} ${PROJECT_SOURCE_DIR}/tests/python/run.py -q
  WORKING_DIRECTORY ${PROJECT_BINARY_DIR})
set_tests_properties(python PROPERTIES TIMEOUT 900
  ENVIRONMENT "${PP_PY_ENV}" SKIP_RETURN_CODE 77)
