/* SPDX-License-Identifier: MIT */
/*
 * Other tools' profiles into the trace model (model/model.h), so that
 * `pipeprof report`, `export` and `diff` read them as they read a
 * .pptrace: a torch.profiler Chrome trace (Kineto's JSON, or the legacy
 * autograd profiler's that CPU-only builds such as Debian's write) and an
 * ONNX Runtime profile (SessionOptions enable_profiling). The tool is
 * recognised by content; any other JSON is refused with a line that says
 * what was found.
 *
 * Mapping (docs/import.md): complete events ("X") and begin/end pairs
 * become zones on their thread, nested by time containment (an event that
 * overlaps its parent without nesting is clipped to the parent's end and
 * counted); counter events ("C") become counter samples; thread and
 * process names come from the metadata events; GPU activity (Kineto's
 * kernel, memcpy and memset events; ONNX Runtime's "Kernel" events)
 * becomes GPU zones on (device, stream). ONNX Runtime node events are
 * named by operator and provider ("Conv [CPU]"); their fence events are
 * left out and counted. Each zone event's input shapes (torch's "Input
 * Dims", ONNX Runtime's input_type_shape) count, with its duration and
 * self time, in t->shapes per (site, shapes). Times are ns: the file's
 * microseconds times 1000,
 * plus Kineto's baseTimeNanoseconds when the file gives it. META says
 * where the trace came from (import.source) and what was left out.
 *
 * Memory: every event is kept (about 80 bytes each while importing, 48
 * once imported); the JSON itself streams (import/json_events.h).
 */
#ifndef PP_IMPORT_PROFILE_H
#define PP_IMPORT_PROFILE_H

#include <stddef.h>

#include "model/model.h"

/* Does a file starting with these bytes look like JSON (its first byte
 * after white space is '{' or '[')? */
int pp_import_looks_json(const unsigned char *head, size_t n);

/* Import the profile at path (or the n bytes at data) into *t. Returns 0,
 * -1 with a one-line reason in err (not JSON, malformed JSON, a JSON that
 * is no torch or ONNX Runtime profile, too many threads or sites), or
 * PP_TRACE_ENOMEM (model/reader.h) when memory ran out; *t holds nothing
 * to free on failure. */
int pp_import_file(const char *path, pp_trace *t, char *err, size_t errlen);

/* The same, streamed: each event (in each thread's time order, threads
 * interleaved) is handed to o->on_event as it is made, and stored only
 * while at most o->keep fit (every event before a cut, on every thread,
 * as the .pptrace reader keeps them: diag.first_unkept_ns). A profile
 * can stream when it is a bare array whose zones and samples come in time
 * order on each thread, as torch's legacy export writes them; otherwise
 * this returns PP_IMPORT_UNORDERED, nothing is kept, and the caller reads
 * it whole with pp_import_file (what on_event took must be discarded). */
#define PP_IMPORT_UNORDERED (-3)
typedef struct pp_import_opts {
  uint64_t keep;
  pp_feed_fn on_event;
  void *arg;
} pp_import_opts;
int pp_import_file_opts(const char *path, pp_trace *t, const pp_import_opts *o,
                        char *err, size_t errlen);
int pp_import_mem_opts(const unsigned char *data, size_t n, pp_trace *t,
                       const pp_import_opts *o, char *err, size_t errlen);
int pp_import_mem(const unsigned char *data, size_t n, pp_trace *t, char *err,
                  size_t errlen);

#endif /* PP_IMPORT_PROFILE_H */
