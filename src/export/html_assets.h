/* SPDX-License-Identifier: MIT */
/*
 * The HTML report's page assets (src/export/html/report.css, report.js),
 * and the chart library uPlot's dist/uPlot.iife.min.js and uPlot.min.css
 * with a status JSON object ({"uplot": "<version>"}, or {"unavailable":
 * "<reason>"} with both uPlot arrays empty; cmake/uplot.cmake), turned
 * into byte arrays at build time by cmake/embed.cmake; the generated
 * html_assets.c lives in the build tree. Each array holds the file's bytes
 * followed by one NUL, which the _len count leaves out. The generator
 * refuses assets that contain "</script", "</style", "<script" or "<!--"
 * (any case): such text would end the element the page inlines them into,
 * or change where the HTML parser thinks it ends.
 */
#ifndef PP_HTML_ASSETS_H
#define PP_HTML_ASSETS_H

#include <stddef.h>

extern const unsigned char pp__html_css[];
extern const size_t pp__html_css_len;
extern const unsigned char pp__html_js[];
extern const size_t pp__html_js_len;
extern const unsigned char pp__uplot_js[];
extern const size_t pp__uplot_js_len;
extern const unsigned char pp__uplot_css[];
extern const size_t pp__uplot_css_len;
extern const unsigned char pp__uplot_status[];
extern const size_t pp__uplot_status_len;

#endif /* PP_HTML_ASSETS_H */
