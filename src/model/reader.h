/* SPDX-License-Identifier: MIT */
/*
 * The trace reader (src/model/reader.c): a .pptrace file or buffer into
 * the trace model (model/model.h), every event handed to a streaming
 * consumer as it is decoded and stored only as far as the caller allows.
 */
#ifndef PP_FORMAT_READER_H
#define PP_FORMAT_READER_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* How to read: which events to store, and who else sees them. */
typedef struct pp_read_opts {
  uint64_t keep_events; /* most thread events stored in the threads' ev:
                           those before a time chosen so that they fit,
                           on every thread (diag.first_unkept_ns);
                           UINT64_MAX: all */
  pp_feed_fn on_event;  /* each decoded thread event, stored or not, in
                           file order (each thread's in recording order,
                           threads interleaved chunk by chunk), its time
                           already in ns; NULL: none */
  void *arg;
  int scan_first; /* before the first on_event, find the trace's
                     earliest time (diag.first_ns), for a consumer that
                     writes times relative to it as the events go by:
                     the first pass decodes each event chunk it checks
                     (no second read), and every site an event names
                     exists before the first on_event */
} pp_read_opts;

/* Reader (src/model/reader.c). Returns 0 and fills *t, or -1 with a one-line
 * reason in err (which is always NUL-terminated), or PP_TRACE_ENOMEM when
 * memory ran out ("out of memory reading FILE (...)" in err; nothing is
 * kept, a partial trace is never returned). A damaged file still returns 0
 * when anything could be recovered; see t->diag. pp_trace_read_file checks
 * the file header from the first bytes and reads the rest chunk by chunk
 * (one chunk buffered at a time), so a FIFO, /dev/zero or any non-trace
 * input fails at once. */
#define PP_TRACE_ENOMEM (-2)
int pp_trace_read_file(const char *path, pp_trace *t, char *err, size_t errlen);
int pp_trace_read_mem(const unsigned char *data, size_t len, pp_trace *t,
                      char *err, size_t errlen);
/* The same with options (NULL: store everything, as above). A regular
 * file is read in two passes: every chunk but the events first (sites,
 * threads, clock), then the event chunks again by offset, each decoded,
 * handed to o->on_event and stored only while o->keep_events allows, so
 * memory stays bounded whatever the file's length. A pipe or FIFO cannot
 * be read twice: its event chunks are held, still encoded (a few bytes an
 * event), until the second pass. On a failure of on_event the read fails
 * with PP_TRACE_ENOMEM. */
int pp_trace_read_file_opts(const char *path, pp_trace *t,
                            const pp_read_opts *o, char *err, size_t errlen);
int pp_trace_read_mem_opts(const unsigned char *data, size_t len, pp_trace *t,
                           const pp_read_opts *o, char *err, size_t errlen);
/* The same read of a file, its second pass stepped by the caller, chunk
 * by chunk, so that several files can be read side by side (the Chrome
 * export of a run directory merges their events in time order).
 * pp__trace_reader_open reads the header and the first pass: t then holds
 * the sites (with those the events name but none defines), threads, clock
 * and meta, and with o->scan_first diag.first_ns; it returns 0 and *r, or
 * what pp_trace_read_file_opts returns on failure (nothing to free then).
 * pp__trace_reader_next: 1 while an event chunk is left, with the
 * earliest time in it (INT64_MIN when it holds no thread event or
 * o->scan_first is 0); 0 when the pass is over. pp__trace_reader_step
 * decodes that chunk, handing its events to o->on_event: 0, or -1 when the
 * pass is over. pp__trace_reader_finish ends the read, frees r, and
 * returns what pp_trace_read_file_opts would have (t is freed on
 * failure). */
typedef struct pp__trace_reader pp__trace_reader;
int pp__trace_reader_open(const char *path, pp_trace *t, const pp_read_opts *o,
                          pp__trace_reader **r, char *err, size_t errlen);
int pp__trace_reader_next(const pp__trace_reader *r, int64_t *first_ns);
int pp__trace_reader_step(pp__trace_reader *r);
/* With o->scan_first: no event still to be decoded is earlier than this
 * (INT64_MAX: none is left); without: INT64_MIN. */
int64_t pp__trace_reader_horizon(const pp__trace_reader *r);
int pp__trace_reader_finish(pp__trace_reader *r, char *err, size_t errlen);
#endif /* PP_FORMAT_READER_H */
