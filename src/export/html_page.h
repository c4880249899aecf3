/* SPDX-License-Identifier: MIT */
/*
 * The page shell of the HTML report and of the live dashboard: one
 * self-contained HTML document (doctype, Content-Security-Policy, the
 * inlined style and script of src/export/html/ and of the chart library
 * uPlot, the data and a configuration as JSON elements). It knows nothing
 * of traces or analysis, so the HTTP companion can link it (with the
 * generated html_assets.c) to serve the live page.
 *
 * Escaping: every JSON text is written with each '<' as the JSON escape
 * \u003c and U+2028/U+2029 as \u2028/\u2029, so the element holding it
 * never contains "</script" or "<!--" and JSON.parse() gives back the exact
 * strings; the title is written with &, < and > as character references.
 * docs/html-report.md has the details.
 */
#ifndef PP_HTML_PAGE_H
#define PP_HTML_PAGE_H

#include <stdio.h>

/* Write the page to out.
 * @param title        the <title> before the script sets its own (UTF-8
 *                     text; NULL: "pipeprof report")
 * @param data_json    a summary JSON document (docs/formats/summary-json.md)
 *                     for a static report, the first snapshot of the live
 *                     dashboard, or NULL for a page that fetches its data;
 *                     well-formed UTF-8 JSON
 * @param config_json  a JSON object for the script (NULL: "{}"); the live
 *                     page passes {"live": {"summary": URL, "stream": URL}},
 *                     which also lets it connect to its own origin (CSP)
 * @return 0, or -1 when out had a write error. The caller keeps every
 * pointer; any thread may call. */
int pp__html_page(FILE *out, const char *title, const char *data_json,
                  const char *config_json);

#endif /* PP_HTML_PAGE_H */
