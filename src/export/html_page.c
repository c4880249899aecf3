/* SPDX-License-Identifier: MIT */
/*
 * The page shell (html_page.h): a fixed head, the inlined styles (uPlot's,
 * then the report's), the data, configuration and build-status JSON
 * elements, and the inlined scripts (uPlot, then the report's renderer).
 * The page may not load anything: no network, no other file.
 */
#include <string.h>

#include "export/html_assets.h"
#include "export/html_page.h"
#include "pipeprof/version.h"

static const char page_head[] =
    "<!DOCTYPE html>\n"
    "<html lang=\"en\">\n"
    "<head>\n"
    "<meta charset=\"utf-8\">\n"
    "<meta name=\"viewport\" content=\"width=device-width, "
    "initial-scale=1\">\n"
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
    "'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'";

/* The live page fetches its data from the server that served it, and from
 * nowhere else; the static report fetches nothing. */
static const char csp_live[] = "; connect-src 'self'";

static const char page_meta[] =
    "\">\n"
    "<meta name=\"generator\" content=\"pipeprof " PP_VERSION_STRING "\">\n"
    "<title>";

static const char page_style[] = "</title>\n<style>\n";
static const char page_style2[] = "\n</style>\n<style>\n";

static const char page_body[] =
    "</style>\n"
    "</head>\n"
    "<body>\n"
    "<noscript><p>This report is drawn by JavaScript; enable it to see "
    "the report. The data is in the element with id "
    "&quot;pp-data&quot;.</p></noscript>\n"
    "<div id=\"pp-app\"></div>\n";

static const char data_open[] =
    "<script type=\"application/json\" id=\"pp-data\">";
static const char config_open[] =
    "</script>\n<script type=\"application/json\" id=\"pp-config\">";
static const char config_open_first[] =
    "<script type=\"application/json\" id=\"pp-config\">";
static const char build_open[] =
    "</script>\n<script type=\"application/json\" id=\"pp-build\">";
static const char script_open[] = "</script>\n<script>\n";
static const char page_tail[] = "</script>\n</body>\n</html>\n";

static void put(FILE *f, const void *s, size_t n) {
  if (n)
    fwrite(s, 1, n, f);
}

static void puts_lit(FILE *f, const char *s) { put(f, s, strlen(s)); }

/* Text for <title>: &, < and > as character references. */
static void put_text_escaped(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '&')
      puts_lit(f, "&amp;");
    else if (*s == '<')
      puts_lit(f, "&lt;");
    else if (*s == '>')
      puts_lit(f, "&gt;");
    else
      fputc(*s, f);
  }
}

/* JSON with '<', U+2028 and U+2029 escaped (see html_page.h); well-formed
 * UTF-8 input, so E2 80 A8/A9 can only be those two characters. Trailing
 * white space (the summary's closing newline) is left out. */
static void put_json_escaped(FILE *f, const char *s) {
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\r' ||
                   s[n - 1] == '\t'))
    n--;
  size_t from = 0;
  for (size_t i = 0; i < n; i++) {
    const char *esc = NULL;
    size_t skip = 1;
    if (s[i] == '<') {
      esc = "\\u003c";
    } else if ((unsigned char)s[i] == 0xE2 && i + 2 < n &&
               (unsigned char)s[i + 1] == 0x80 &&
               ((unsigned char)s[i + 2] == 0xA8 ||
                (unsigned char)s[i + 2] == 0xA9)) {
      esc = (unsigned char)s[i + 2] == 0xA8 ? "\\u2028" : "\\u2029";
      skip = 3;
    }
    if (!esc)
      continue;
    put(f, s + from, i - from);
    put(f, esc, 6);
    i += skip - 1;
    from = i + 1;
  }
  put(f, s + from, n - from);
}

int pp__html_page(FILE *out, const char *title, const char *data_json,
                  const char *config_json) {
  if (!out)
    return -1;
  put(out, page_head, sizeof page_head - 1);
  /* a live page (config "live") may fetch from its own origin */
  if (config_json && strstr(config_json, "\"live\""))
    put(out, csp_live, sizeof csp_live - 1);
  put(out, page_meta, sizeof page_meta - 1);
  put_text_escaped(out, title ? title : "pipeprof report");
  put(out, page_style, sizeof page_style - 1);
  put(out, pp__uplot_css, pp__uplot_css_len);
  put(out, page_style2, sizeof page_style2 - 1);
  put(out, pp__html_css, pp__html_css_len);
  put(out, page_body, sizeof page_body - 1);
  if (data_json) {
    put(out, data_open, sizeof data_open - 1);
    put_json_escaped(out, data_json);
    put(out, config_open, sizeof config_open - 1);
  } else {
    put(out, config_open_first, sizeof config_open_first - 1);
  }
  put_json_escaped(out, config_json ? config_json : "{}");
  put(out, build_open, sizeof build_open - 1);
  put_json_escaped(out, (const char *)pp__uplot_status);
  if (pp__uplot_js_len > 0) {
    put(out, script_open, sizeof script_open - 1);
    put(out, pp__uplot_js, pp__uplot_js_len);
  }
  put(out, script_open, sizeof script_open - 1);
  put(out, pp__html_js, pp__html_js_len);
  put(out, page_tail, sizeof page_tail - 1);
  return ferror(out) ? -1 : 0;
}
