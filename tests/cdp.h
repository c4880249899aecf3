/* SPDX-License-Identifier: MIT */
/*
 * A page held open in headless Chromium and looked at while it runs,
 * through the DevTools protocol over a pipe (--remote-debugging-pipe:
 * commands on the browser's fd 3, replies on its fd 4, each a JSON
 * message ended by a NUL byte). For tests of live pages, which must be
 * looked at several times in one connection: --dump-dom sees a page once.
 */
#ifndef PP_TESTS_CDP_H
#define PP_TESTS_CDP_H

typedef struct pp_cdp pp_cdp;

/* Chromium at path chromium showing url, or a failed test. */
pp_cdp *pp_cdp_open(const char *chromium, const char *url);
/* The value of the JavaScript expression js in the page, which must be a
 * string (malloc'd); NULL when it threw or is not a string. Fails the
 * test when the browser does not answer within 30 s. */
char *pp_cdp_eval(pp_cdp *c, const char *js);
/* A PNG of the page as it is now at path (a full-page capture), or a
 * failed test. */
void pp_cdp_screenshot(pp_cdp *c, const char *path);
/* Close the browser and wait for it. */
void pp_cdp_close(pp_cdp *c);

#endif /* PP_TESTS_CDP_H */
