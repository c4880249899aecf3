# SPDX-License-Identifier: MIT
"""The pipeline runtime (docs/runtime.md) for Python: the C runtime's
bounded queue, pipeline of stages, dynamic batcher and adaptive batch
sizer, with Python objects as items. Everything they do is recorded as
the C runtime records it (queues, stage zones, flows, batches), so
`pipeprof report` shows a pipeline built on them with no more code.

    import pipeprof
    from pipeprof import runtime

    p = runtime.Pipeline("frames")
    p.add_stage("decode", decode, workers=2, capacity=16)
    p.add_stage("infer", infer, capacity=8)
    p.start()
    for i, f in enumerate(files):
        p.submit(f, i)
    p.drain()          # raises the first exception a stage raised

Stage functions run on the runtime's threads and hold the GIL while they
run, as any Python code: stages gain from several workers when they
spend their time in code that releases it (NumPy, PyTorch, I/O).
"""
import queue as _queue

from . import _pipeprof as _c

__all__ = ["Closed", "Queue", "Pipeline", "Batcher", "Sizer",
           "PipelineError"]


class Closed(Exception):
    """The queue, batcher or pipeline is closed (and, for a take, empty)."""


class PipelineError(RuntimeError):
    """A stage returned an error (C stages) or raised (see __cause__)."""


def _check(rc, full=False):
    if rc == _c.OK:
        return
    if rc == _c.ECLOSED:
        raise Closed("closed")
    if rc in (_c.EAGAIN, _c.ETIMEDOUT):
        raise (_queue.Full if full else _queue.Empty)()
    name, text, _ = _c.strerror(rc)
    raise ValueError("pipeprof runtime: %s (%s)" % (text, name))


class Queue:
    """A bounded multi-producer multi-consumer queue of Python objects.

    put/get follow the queue module: timeout None waits, 0 does not
    (queue.Full / queue.Empty), else waits that many seconds. get raises
    Closed once the queue is closed and empty. Every item has an id for
    the report (default: a counter)."""

    def __init__(self, name, capacity, from_stage=None, to_stage=None):
        self._q = _c.RtQueue(name, capacity, from_stage, to_stage)
        self._next = 0

    def put(self, item, id=None, timeout=None):
        if id is None:
            self._next += 1
            id = self._next
        _check(self._q.push(item, id, timeout), full=True)

    def get(self, timeout=None):
        return self.get_with_id(timeout)[0]

    def get_with_id(self, timeout=None):
        rc, item, id = self._q.pop(timeout)
        _check(rc)
        return item, id

    def close(self):
        self._q.close()

    def qsize(self):
        return self._q.depth()

    @property
    def capacity(self):
        return self._q.capacity()


class Pipeline:
    """Stages in a line, each a Python callable fn(item, id) -> next item
    (None drops it) run by its worker threads, joined by bounded queues."""

    def __init__(self, name):
        self._p = _c.RtPipeline(name)
        self._next = 0

    def ends(self, source=None, sink=None):
        """Name the stage that submits (default "submit") and the one
        that takes from output() (default "take") for the report; before
        the first add_stage()."""
        if self._p.ends(source, sink) != _c.OK:
            raise ValueError("pipeprof runtime: ends() before the first "
                             "stage")

    def to_batcher(self, batcher, lane=0):
        """Send what the last stage returns into batcher's lane (instead of
        output()); the wait for room is outside the stage's zone. Close the
        batcher after drain()."""
        if self._p.to_batcher(batcher._b, lane) != _c.OK:
            raise ValueError("pipeprof runtime: to_batcher() before start, "
                             "without output(), lane >= 0")

    def add_stage(self, name, fn, workers=1, capacity=16):
        rc = self._p.add_stage(name, fn, workers, capacity)
        if rc != _c.OK:
            raise ValueError("pipeprof runtime: cannot add stage %r "
                             "(workers 1..256, capacity >= 1, before "
                             "start, at most 64 stages)" % name)

    def output(self, capacity):
        """Keep the last stage's results for take()."""
        if self._p.output(capacity) != _c.OK:
            raise ValueError("pipeprof runtime: output before start, "
                             "capacity >= 1")

    def start(self):
        if self._p.start() != _c.OK:
            raise ValueError("pipeprof runtime: start once, with stages")

    def submit(self, item, id=None, timeout=None):
        if id is None:
            self._next += 1
            id = self._next
        _check(self._p.submit(item, id, timeout), full=True)

    def take(self, timeout=None):
        rc, item, id = self._p.take(timeout)
        if rc == _c.EINVAL:
            raise ValueError("pipeprof runtime: no output() queue")
        _check(rc)
        return item, id

    def drain(self):
        """Finish what is in, end the threads; raise PipelineError (from
        the stage's exception) when a stage failed."""
        rc, exc = self._p.drain()
        if rc != _c.OK:
            st = self._p.stats()
            raise PipelineError("stage %r failed on item %d"
                                % (st["error_stage"], st["error_item"])) \
                from exc

    def cancel(self):
        self._p.cancel()

    def stats(self):
        return self._p.stats()


_PADS = {"none": 0, "max": 1, "pow2": 2}


class Batcher:
    """Items put by any threads, handed out in batches of at most
    max_batch, or when the oldest has waited its lane's max_delay seconds.
    Lane 0 comes first; pad: "none", "max" or "pow2"."""

    def __init__(self, name, max_batch, max_delay, lanes=1,
                 lane_capacity=1024, pad="none"):
        if pad not in _PADS:
            raise ValueError("pad must be one of none, max, pow2")
        self._b = _c.RtBatcher(name, max_batch, int(max_delay * 1e9), lanes,
                               lane_capacity, _PADS[pad])
        self._next = 0

    def lane_delay(self, lane, max_delay):
        if self._b.lane_delay(lane, int(max_delay * 1e9)) != _c.OK:
            raise ValueError("no lane %r or a negative delay" % lane)

    def stages(self, from_stage=None, to_stage=None):
        """Name the stages on each side of the batcher for the report's
        pipeline analysis; before the first put()."""
        if self._b.stages(from_stage, to_stage) != _c.OK:
            raise ValueError("pipeprof runtime: stages() before the first "
                             "put()")

    def put(self, item, id=None, lane=0, timeout=None):
        if id is None:
            self._next += 1
            id = self._next
        rc = self._b.put(item, id, lane, timeout)
        if rc == _c.EINVAL:
            raise ValueError("no lane %r" % lane)
        _check(rc, full=True)

    def next(self, timeout=None):
        """The next batch: a dict with items, ids, padded, waited (s) and
        full (it went for its size, not a delay)."""
        rc, pairs, padded, waited, full = self._b.next(timeout)
        _check(rc)
        return {"items": [p[0] for p in pairs], "ids": [p[1] for p in pairs],
                "padded": padded, "waited": waited * 1e-9,
                "full": bool(full)}

    def set_max(self, n):
        if self._b.set_max(n) != _c.OK:
            raise ValueError("batch size 1 .. the max_batch made with")

    def close(self):
        self._b.close()


class Sizer:
    """The batch size that holds a p99 latency objective (seconds):
    additive increase, multiplicative decrease per window of batches."""

    def __init__(self, name, min_batch, max_batch, slo_p99, window=32):
        self._s = _c.RtSizer(name, min_batch, max_batch,
                             int(slo_p99 * 1e9), window)

    @property
    def size(self):
        return self._s.size()

    def observe(self, latency):
        """One batch took latency seconds: the size to use next."""
        return self._s.observe(int(latency * 1e9))

    def oom(self):
        """A batch of the current size ran out of memory: the smaller
        size to use (never above it again)."""
        return self._s.oom()
