# SPDX-License-Identifier: MIT
#
# Fetch the HTML report's chart library (uPlot, pinned by
# web/package-lock.json) with `npm ci` into the build tree and hand its two
# dist files to cmake/embed.cmake (script mode, run at build time):
#
#   cmake -DPP_NPM=/usr/bin/npm -DPP_WEB_DIR=<src>/web
#         -DPP_UPLOT_DIR=<build>/generated/uplot [-DPP_UPLOT_OFF=reason]
#         -P cmake/uplot.cmake
#
# Always writes PP_UPLOT_DIR/uplot.js, uplot.css and status.json, and never
# fails the build: without npm, without the registry, or with a dist file
# that cannot be inlined, the two asset files are empty and status.json
# says why ({"unavailable": "<reason>"}); the page then shows "chart
# unavailable: uPlot was not bundled at build time (<reason>)" where each
# chart would be. With uPlot: {"uplot": "<version>"}.
#
# The page inlines the files into <script> and <style> elements, so a file
# containing "</script", "</style", "<script" or "<!--" (any case) would end
# its element early or change how the HTML parser finds the end. uPlot
# 1.6.32 contains none; a later version that does is not bundled (the
# reason says which string), rather than rewritten: no textual rewrite of
# minified JavaScript is safe in general (docs/internals/build.md).
cmake_minimum_required(VERSION 3.16)

foreach(v PP_WEB_DIR PP_UPLOT_DIR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "uplot.cmake: ${v} is not set")
  endif()
endforeach()

set(js "${PP_UPLOT_DIR}/uplot.js")
set(css "${PP_UPLOT_DIR}/uplot.css")
set(status "${PP_UPLOT_DIR}/status.json")
set(npmdir "${PP_UPLOT_DIR}/npm")
file(MAKE_DIRECTORY "${PP_UPLOT_DIR}")

# The reason (the arguments joined; no ';' in them, CMake's list
# separator) as a JSON string body: our own text plus paths, so only
# backslashes, quotes and control characters need escaping.
function(pp_unavailable)
  string(JOIN "" reason ${ARGV})
  string(REPLACE "\\" "\\\\" r "${reason}")
  string(REPLACE "\"" "\\\"" r "${r}")
  string(REGEX REPLACE "[\r\n\t]+" " " r "${r}")
  file(WRITE "${js}" "")
  file(WRITE "${css}" "")
  file(WRITE "${status}" "{\"unavailable\": \"${r}\"}\n")
  message(STATUS "uPlot not bundled: ${reason}")
endfunction()

if(DEFINED PP_UPLOT_OFF AND NOT PP_UPLOT_OFF STREQUAL "")
  pp_unavailable("${PP_UPLOT_OFF}")
  return()
endif()
if(NOT DEFINED PP_NPM OR PP_NPM STREQUAL "" OR NOT EXISTS "${PP_NPM}")
  pp_unavailable("npm was not found when the build was configured "
                 "(scripts/deps.sh --browser installs it)")
  return()
endif()

# npm ci in a copy, so that node_modules/ never lands in the source tree.
file(MAKE_DIRECTORY "${npmdir}")
file(COPY "${PP_WEB_DIR}/package.json" "${PP_WEB_DIR}/package-lock.json"
     DESTINATION "${npmdir}")
execute_process(
  COMMAND "${PP_NPM}" ci --ignore-scripts --no-audit --no-fund
          --prefer-offline --fetch-retries=1 --fetch-timeout=30000
  WORKING_DIRECTORY "${npmdir}"
  RESULT_VARIABLE rc
  OUTPUT_FILE "${npmdir}/npm-ci.log"
  ERROR_FILE "${npmdir}/npm-ci.err"
  TIMEOUT 300)
set(dist "${npmdir}/node_modules/uplot/dist")
if(NOT rc EQUAL 0)
  pp_unavailable("npm ci failed (exit ${rc}: no network or registry?), "
                 "see ${npmdir}/npm-ci.err")
  return()
endif()
if(NOT EXISTS "${dist}/uPlot.iife.min.js" OR
   NOT EXISTS "${dist}/uPlot.min.css")
  pp_unavailable("npm ci gave no uplot/dist/uPlot.iife.min.js and "
                 "uPlot.min.css")
  return()
endif()

foreach(f uPlot.iife.min.js uPlot.min.css)
  file(READ "${dist}/${f}" text)
  string(TOLOWER "${text}" lower)
  foreach(bad "</script" "</style" "<script" "<!--")
    string(FIND "${lower}" "${bad}" at)
    if(NOT at EQUAL -1)
      pp_unavailable("uplot/dist/${f} contains '${bad}', which cannot be "
                     "inlined into the page")
      return()
    endif()
  endforeach()
endforeach()

file(READ "${npmdir}/node_modules/uplot/package.json" pkg)
string(REGEX MATCH "\"version\": *\"([^\"]+)\"" m "${pkg}")
set(version "${CMAKE_MATCH_1}")
configure_file("${dist}/uPlot.iife.min.js" "${js}" COPYONLY)
configure_file("${dist}/uPlot.min.css" "${css}" COPYONLY)
file(WRITE "${status}" "{\"uplot\": \"${version}\"}\n")
message(STATUS "uPlot ${version} bundled into the HTML report")
