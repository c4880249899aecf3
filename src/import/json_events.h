/* SPDX-License-Identifier: MIT */
/*
 * Trace-event JSON (the Chrome / Perfetto "JSON trace" that torch.profiler
 * and ONNX Runtime write) read as a stream: each event object of the
 * top-level array, or of the "traceEvents" array of a top-level object, is
 * handed to a callback as soon as it is complete, so memory stays bounded
 * by one event whatever the file's length. Parsing is yajl's (Debian's
 * libyajl); without it (PP_HAVE_YAJL unset) every read fails with a line
 * that says so.
 *
 * An event's fields are kept as text, each cut at PP_JEV_TEXT_MAX bytes
 * (the cut is counted): name, ph, cat, ts, dur, pid, tid, id, and up to
 * PP_JEV_ARGS_MAX scalar members of "args" (a nested args value is kept
 * as its JSON text, compacted). Numbers keep their JSON spelling, so no
 * precision is lost before the importer parses them.
 */
#ifndef PP_IMPORT_JSON_EVENTS_H
#define PP_IMPORT_JSON_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#define PP_JEV_TEXT_MAX 4096u
/* The longest JSON value a file read takes whole (a string, a number):
 * past it the read stops with an error (yajl buffers a value that spans
 * reads). */
#define PP_JEV_VALUE_MAX (16 << 20)
#define PP_JEV_ARGS_MAX 24u

/* One text field: its bytes (not NUL-terminated inside JSON strings that
 * hold \u0000; n is the length), present or not, and whether it was a
 * JSON string (0: a number, true, false or null, or nested JSON). */
typedef struct pp_jtext {
  const char *s;
  size_t n;
  int present, is_str;
} pp_jtext;

typedef struct pp_jarg {
  pp_jtext key, value;
} pp_jarg;

typedef struct pp_jev {
  pp_jtext name, ph, cat, ts, dur, pid, tid, id;
  pp_jarg args[PP_JEV_ARGS_MAX];
  size_t nargs;
} pp_jev;

/* What the top level held besides the events (a top-level object's
 * scalar members: Kineto's "baseTimeNanoseconds", "schemaVersion",
 * "traceName", ...), each cut as above, and counts. */
typedef struct pp_jdoc {
  int top_is_array;     /* a bare array of events */
  int has_trace_events; /* a top-level object with "traceEvents" */
  pp_jarg top[PP_JEV_ARGS_MAX];
  size_t ntop;
  uint64_t events;       /* event objects seen */
  uint64_t not_objects;  /* array elements that were not objects */
  uint64_t args_dropped; /* args members past PP_JEV_ARGS_MAX */
  uint64_t texts_cut;    /* fields cut at PP_JEV_TEXT_MAX */
  char *store;           /* where top[] keeps its texts (pp_jdoc_free) */
} pp_jdoc;

/* Called for each event; the texts live until it returns. A non-zero
 * return stops the read, which fails with that value. */
typedef int (*pp_jev_fn)(void *arg, const pp_jdoc *doc, const pp_jev *e);

/* Read the JSON at path (or the n bytes at data) and hand every event to
 * fn. The top-level members after "traceEvents" are known only at the
 * end: doc (filled as the read goes) holds all of them once it returns,
 * until pp_jdoc_free.
 * Returns 0, the callback's value, or -1 with a one-line reason in err
 * (malformed JSON with its byte offset, an unreadable file, not JSON, no
 * yajl). PP_JEV_ENOMEM (-2): out of memory. */
#define PP_JEV_ENOMEM (-2)
int pp_jev_read_file(const char *path, pp_jev_fn fn, void *arg, pp_jdoc *doc,
                     char *err, size_t errlen);
int pp_jev_read_mem(const unsigned char *data, size_t n, pp_jev_fn fn,
                    void *arg, pp_jdoc *doc, char *err, size_t errlen);

/* Release what doc holds (after any read, failed or not). */
void pp_jdoc_free(pp_jdoc *doc);

/* Is t the literal s? */
int pp_jtext_is(const pp_jtext *t, const char *s);

#endif /* PP_IMPORT_JSON_EVENTS_H */
