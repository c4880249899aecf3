/* SPDX-License-Identifier: MIT */
/*
 * Request pairing: the REQ_BEGIN, REQ_FIRST, REQ_TOKENS and REQ_END
 * events of pp_request_*() gathered by the caller's id into requests, for
 * the live engine (src/sink/live.c) and the report's streaming analysis
 * (src/analyze/requests.c) alike (docs/internals/pairing.md).
 *
 * A request's events may be recorded on several threads, and the writer
 * drains thread after thread, so they come in any order: an end can come
 * before its begin. The table keeps, per (space, id), what the events said
 * so far (times, token counts: running figures, never the events), and
 * hands a request to the consumer's settle function when it leaves the
 * table. Policy:
 *
 *   key          (space, id): space keeps processes of a merged trace
 *                apart (their ids are their own); any id, 0 included.
 *   complete     begin and end both seen. The request is held until the
 *                stream has passed its end (pp__reqs_settle_before: a
 *                first or token event at or before its end may still
 *                come, from another thread) or room is needed, then
 *                settled PP_REQ_DONE.
 *   halves before the begin
 *                first, tokens and end events of an id with no begun
 *                request are held (the begin may come later). When the
 *                begin comes, they join it if none is earlier than it;
 *                else they were not its (a previous request's strays) and
 *                are settled PP_REQ_ORPHANED, and the begin starts afresh.
 *                Threads of one process share one clock, so a half earlier
 *                than its begin is never a mere clock difference; in a
 *                stream in time order (model/feed.h) the rule gives what
 *                sorting each id's events by time gives.
 *   duplicate begin
 *                a begin of an id whose request is begun and open: the
 *                open one is settled PP_REQ_UNFINISHED (it never ended)
 *                and the begin starts a new request (ids may be reused).
 *   first token  the earliest REQ_FIRST or REQ_TOKENS time, whichever
 *                kind and in whatever order they come (tokens before the
 *                first-token event are first tokens).
 *   after the end
 *                a first or token event later than its request's end, or
 *                a second end, while the complete request is held: an
 *                orphan. Once the request is settled, such an event finds
 *                no request: it is held as a half of no begun request, an
 *                orphan unless a later begin takes it.
 *   second end   an end of an id whose held halves already have one:
 *                the held halves are settled PP_REQ_ORPHANED and the end
 *                is held afresh.
 *   bound        at most max_open requests (begun, complete and held, or
 *                holding halves) are kept. When a new one finds no room,
 *                the oldest complete request is settled to make room; if
 *                none is complete, a begin is counted `lost`, never kept,
 *                and any other event is counted in `orphans` (an event of
 *                no request kept).
 *   expiry       a long-running consumer (the live engine) forgets
 *                requests last heard of before a time: settled as at the
 *                end of the stream.
 *   end of stream
 *                complete requests held are settled PP_REQ_DONE, begun
 *                requests never ended are settled PP_REQ_UNFINISHED,
 *                halves of no begun request PP_REQ_ORPHANED (each held
 *                event is one orphan).
 *
 * Not thread-safe. Memory: 112 bytes per request kept, a hash index of 4
 * to 8 bytes per request and a queue of 24 bytes per complete request
 * held; at the bound of 1,000,000 (the report's default) at most about
 * 150 MiB, reached only with that many open at once.
 */
#ifndef PP_PAIR_REQUESTS_H
#define PP_PAIR_REQUESTS_H

#include <stddef.h>
#include <stdint.h>

#define PP_REQ_BEGUN 1u
#define PP_REQ_ENDED 2u
#define PP_REQ_FIRST 4u /* first holds the first token's time */

/* One request as its events have told so far. */
typedef struct pp_req {
  uint64_t id;
  uint32_t space;
  uint32_t flags;             /* PP_REQ_* */
  int64_t begin, end;         /* with PP_REQ_BEGUN / PP_REQ_ENDED */
  int64_t first;              /* with PP_REQ_FIRST */
  int64_t last_tok, prev_tok; /* times of the last two REQ_TOKENS events
                                 taken (in arrival order); chunks says how
                                 many there were */
  uint64_t tokens, chunks;    /* sum of REQ_TOKENS counts, their number */
  uint64_t seq;      /* begun requests: the order of the begin among all
                        begins offered (lost ones too), from 0 */
  int64_t held_from; /* earliest time of the events held (held > 0) */
  uint32_t held;     /* events taken, the begin not counted */
  int32_t status;    /* with PP_REQ_ENDED: the end's status */
  uint64_t user[2];  /* the consumer's, 0 when the request is new */
} pp_req;

/* How a request leaves the table. */
enum {
  PP_REQ_DONE = 0,   /* begun and ended */
  PP_REQ_UNFINISHED, /* begun, never ended (a new begin of its id, the
                        end of the stream, or expiry) */
  PP_REQ_ORPHANED    /* held events of no begun request (r->held) */
};

typedef struct pp_req_counts {
  uint64_t begins; /* begin events offered */
  uint64_t done, unfinished;
  uint64_t orphans; /* events of no begun request (see above) */
  uint64_t lost;    /* begins that found no room */
} pp_req_counts;

/* The consumer's hook: r leaves the table (outcome PP_REQ_*). r is valid
 * only during the call; its user fields are the consumer's to release. */
typedef void (*pp_req_settle_fn)(void *ctx, const pp_req *r, int outcome);

typedef struct pp_req_done {
  uint64_t id;
  uint32_t space;
  int64_t end;
} pp_req_done;

typedef struct pp_req_table {
  pp_req *v; /* the requests kept, dense */
  size_t n, cap;
  uint32_t *slot; /* hash index: index in v + 1, 0 empty */
  size_t nslots;  /* power of two, at least twice n, or 0 */
  size_t max_open;
  pp_req_done *done; /* complete requests held, in completion order (a
                        ring; entries of requests settled since are
                        skipped) */
  size_t ndone, done_head, cap_done;
  pp_req_settle_fn settle;
  void *ctx;
  pp_req_counts c;
} pp_req_table;

/* A table of at most max_open requests (0: the default 1,000,000; at
 * most 2^30) calling settle (may be NULL) with ctx. Allocates
 * nothing until the first event. */
void pp__reqs_init(pp_req_table *t, size_t max_open, pp_req_settle_fn settle,
                   void *ctx);
/* Forget everything without settling (use pp__reqs_finish first). */
void pp__reqs_free(pp_req_table *t);

/* Offer one event: type is PPT_EV_REQ_BEGIN .. PPT_EV_REQ_END, extra the
 * event's v2 (REQ_TOKENS: tokens; REQ_END: zigzag status). Returns the
 * request the event joined (complete, held, when it has PP_REQ_BEGUN and
 * PP_REQ_ENDED), valid until the next call on t, or NULL when the event
 * was not kept (lost, an orphan, or no room), settled its request at
 * once, or is not a request event. */
pp_req *pp__reqs_put(pp_req_table *t, uint32_t space, uint64_t id,
                     unsigned type, uint64_t extra, int64_t ts);

/* Settle the complete requests held whose end is before ts (a stream in
 * time order calls it with each event's time; a live one with a time its
 * threads' events have all been drained past). Returns how many. */
size_t pp__reqs_settle_before(pp_req_table *t, int64_t ts);

/* Settle every request last heard of before ts (a long-running consumer
 * whose other halves never came): as at the end of the stream. Returns
 * how many. */
size_t pp__reqs_expire(pp_req_table *t, int64_t ts);

/* The stream is over: settle every request still kept. */
void pp__reqs_finish(pp_req_table *t);

#endif /* PP_PAIR_REQUESTS_H */
