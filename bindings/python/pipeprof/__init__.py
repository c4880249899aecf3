# SPDX-License-Identifier: MIT
"""pipeprof: a low-overhead profiler for GPU/ML inference pipelines.

    import pipeprof

    pipeprof.start(mode="trace", out="run.pptrace")
    with pipeprof.zone("decode"):
        ...

    @pipeprof.profile
    def infer(batch): ...

    pipeprof.print_summary()
    pipeprof.stop()          # then: pipeprof report run.pptrace

A C extension over libpipeprof; docs/python.md is the guide. Recording
calls are thread-safe and cost a fraction of a microsecond; while
profiling is off they do close to nothing. PIPEPROF=1 in the environment
starts a session when the package is imported, as it does for C programs
(so `pipeprof run -- python3 app.py` needs no code change).
"""

import atexit as _atexit
import itertools as _itertools
import os as _os
import queue as _queue
import time as _time

from . import _pipeprof
from . import _library

library_path = _library.load(_pipeprof)

from ._pipeprof import (  # noqa: E402  (the library is loaded first)
    Error, Zone, QueueHandle, FULL, EMPTY,
    zone, counter, counter_add, mark, frame_mark,
    flow_begin, flow_step, flow_end, range_start, range_end,
    request_begin, request_first_token, request_tokens, request_end,
    batch, thread_name,
)
from ._decorate import profile  # noqa: E402
from ._summary import summary, print_summary  # noqa: E402
from ._alerts import Alert, on_alert  # noqa: E402
from ._library import LibraryNotFound  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "start", "stop", "enabled", "running", "output_path", "flight_dump",
    "zone", "profile", "span", "counter", "counter_add", "mark",
    "frame_mark", "flow_begin", "flow_step", "flow_end", "gpu_zone",
    "range_start",
    "range_end", "request", "request_begin", "request_first_token",
    "request_tokens", "request_end", "batch", "queue_declare", "Queue",
    "QueueTrack", "FULL", "EMPTY", "thread_name", "summary",
    "print_summary", "on_alert", "Alert", "Error", "LibraryNotFound",
    "library_version", "library_path", "profile_start",
]

_MODES = {"trace": _pipeprof.MODE_TRACE, "stats": _pipeprof.MODE_STATS,
          "flight": _pipeprof.MODE_FLIGHT}
_started_here = False


def _fail(fn, rc):
    name, text, detail = _pipeprof.strerror(rc)
    msg = "pipeprof.%s: %s (%s)" % (fn, text, name)
    if detail:
        msg += ": " + detail
    raise Error(msg)


def _price_python_zones():
    """The Python layer's cost of one zone event, in ns: `with
    pipeprof.zone(name):` as docs/python.md writes it (the name looked up
    each time) while recording is paused (the recording itself is the
    library's measured event cost, which the estimate adds), less the
    loop's own cost: the fastest of 5 rounds of 500 zones less the fastest
    of 5 rounds of the empty loop (each minimum on its own: a round of the
    empty loop slowed by a preemption must not make the difference 0 or
    less, which priced the zones at nothing)."""
    name = "pipeprof: python zone cost"
    zone_of = _pipeprof.zone
    was = _pipeprof.is_enabled()
    _pipeprof.set_enabled(False)
    try:
        zones = loop = None
        for _ in range(5):
            t0 = _time.perf_counter_ns()
            for _ in range(500):
                with zone_of(name):
                    pass
            t1 = _time.perf_counter_ns()
            for _ in range(500):
                pass
            t2 = _time.perf_counter_ns()
            zones = t1 - t0 if zones is None else min(zones, t1 - t0)
            loop = t2 - t1 if loop is None else min(loop, t2 - t1)
        return max((zones - loop) / 1000.0, 0.0)
    finally:
        _pipeprof.set_enabled(was)


def _write_python_costs():
    """Tell the session what this layer recorded and what that cost
    (META binding.python.*), so the overhead estimate prices Python zones
    as Python zones, not at the C cost of an event."""
    if not _pipeprof.is_running():
        return
    n = _pipeprof._zone_events(True)
    if n:
        _pipeprof.metadata("binding.python.zone_overhead_ns",
                           "%.1f" % _price_python_zones())
        _pipeprof.metadata("binding.python.events", str(n))


_atexit.register(_write_python_costs)


class _WorkerHook:
    """multiprocessing's children (Pool and DataLoader workers, fork or
    spawn) end with os._exit, which runs no atexit handler. The library
    records on in a forked child (a session of its own, started by its
    first event); this finishes that session in multiprocessing's own exit
    step, the finalizers its children run before os._exit."""

    @staticmethod
    def after_fork(_hook):
        from multiprocessing import util
        # lowest priority: after the program's own finalizers
        util.Finalize(None, _finish_worker, exitpriority=-100)


def _finish_worker():
    from multiprocessing import process
    if process.parent_process() is None:
        return  # the program itself: its atexit handler ends the session
    if _pipeprof.is_running():
        _write_python_costs()
        _pipeprof.metadata("binding.process_end", "multiprocessing exit")
        _pipeprof.shutdown()


_worker_hook = _WorkerHook()
try:
    from multiprocessing import util as _mp_util
    # a forked child: multiprocessing empties its finalizers, then runs
    # the after-fork hooks; a spawned child imports pipeprof afresh and
    # keeps the finalizer made now (a no-op in the program itself)
    _mp_util.register_after_fork(_worker_hook, _WorkerHook.after_fork)
    _WorkerHook.after_fork(_worker_hook)
except ImportError:  # a Python without multiprocessing
    pass


def library_version():
    """Version of the loaded libpipeprof ("MAJOR.MINOR.PATCH")."""
    return _pipeprof.version()


def start(mode="trace", out=None, *, sample_hz=0, buffer_kib=0,
          flush_ms=10, process_name=None, install_signals=True,
          enabled=True, http=None, live=None, alerts=None, gpu_slots=0,
          cuda=False):
    """Start a profiling session (pp_init).

    mode: "trace" (every event to the file), "stats" (per-zone statistics
    only) or "flight" (a ring per thread, written by flight_dump() or at
    exit). out: the output file (default pipeprof-<pid>.pptrace).
    sample_hz: 1..1000 also samples this process and the system.
    buffer_kib: per-thread ring, a power of two from 16 (0: the mode's
    default). flush_ms: writer period 1..1000. enabled=False starts
    paused (see enabled()). http: serve /metrics (Prometheus), /api/v1
    and /api/v1/stream while the session runs, on "PORT" (loopback),
    ":PORT" or "IPV4:PORT" (docs/http.md); a port in use costs one
    stderr line and the session runs on without it.
    live: the live statistics' settings ("off", or keys such as
    "interval=100ms", docs/live.md); alerts: resource-alert thresholds
    ("mem=80%,psi=off"); None for either takes PIPEPROF_LIVE /
    PIPEPROF_ALERTS from the environment, as the library does (`pipeprof
    help env`). gpu_slots: 2..65536 CUDA event pairs for GPU zones (0: the
    environment's or 1024). cuda=True records CUDA kernels and copies
    through CUPTI (trace mode), as PIPEPROF_CUDA=1.

    Returns True when this call started the session, False when one was
    already running from the environment (PIPEPROF=1, `pipeprof run`):
    that session goes on and the arguments are ignored. Raises Error when
    the session cannot start (e.g. the file cannot be created) or when a
    session started by start() is still running; ValueError/TypeError for
    bad arguments.
    """
    global _started_here
    if mode not in _MODES:
        raise ValueError("pipeprof.start: mode must be one of %s, not %r"
                         % (", ".join(sorted(_MODES)), mode))
    for key, val, lo, hi in (("sample_hz", sample_hz, 0, 1000),
                             ("buffer_kib", buffer_kib, 0, 1 << 20),
                             ("flush_ms", flush_ms, 1, 1000),
                             ("gpu_slots", gpu_slots, 0, 65536)):
        if not isinstance(val, int) or isinstance(val, bool):
            raise TypeError("pipeprof.start: %s must be an int" % key)
        if not lo <= val <= hi:
            raise ValueError("pipeprof.start: %s must be in %d..%d, not %d"
                             % (key, lo, hi, val))
    if out is not None:
        out = _os.fspath(out)
    if http is not None:
        if isinstance(http, int) and not isinstance(http, bool):
            http = str(http)
        if not isinstance(http, str):
            raise TypeError("pipeprof.start: http must be a port (int) or "
                            "an address string")
    if gpu_slots == 1:
        raise ValueError("pipeprof.start: gpu_slots must be 0 (the "
                         "default) or 2..65536, not 1")
    for key, val in (("live", live), ("alerts", alerts)):
        if val is not None and not isinstance(val, str):
            raise TypeError("pipeprof.start: %s must be a string or None"
                            % key)
    rc = _pipeprof.init(mode=_MODES[mode], out=out,
                        process_name=process_name, buffer_kib=buffer_kib,
                        flush_ms=flush_ms, sample_hz=sample_hz,
                        install_signals=bool(install_signals),
                        enabled=bool(enabled), http=http, live=live,
                        alerts=alerts, gpu_slots=gpu_slots,
                        cuda=bool(cuda))
    if rc == _pipeprof.OK:
        _started_here = True
        _pipeprof._zone_events(True)  # this session's count starts now
        return True
    if rc == _pipeprof.EBUSY and not _started_here:
        return False
    if rc == _pipeprof.EINVAL:  # an argument the library refused (a spec)
        raise ValueError("pipeprof.start: " + _pipeprof.strerror(rc)[2])
    if rc == _pipeprof.EBUSY:
        raise Error("pipeprof.start: a session started by pipeprof.start() "
                    "is running; call pipeprof.stop() first")
    _fail("start", rc)


def stop():
    """End the session: drain every thread's buffer and finish the output
    file. Returns the file's path, or None when no session was running."""
    global _started_here
    path = _pipeprof.output_path()
    _write_python_costs()
    rc = _pipeprof.shutdown()
    _started_here = False
    if rc == _pipeprof.ENOTRUNNING:
        return None
    if rc != _pipeprof.OK:
        _fail("stop", rc)
    return path


def enabled(on=None):
    """enabled(True|False) resumes or pauses recording without ending the
    session; enabled() says whether events are being recorded now."""
    if on is not None:
        _pipeprof.set_enabled(bool(on))
    return _pipeprof.is_enabled()


def running():
    """True while a session runs (started and not stopped)."""
    return _pipeprof.is_running()


def output_path():
    """The session's output file, or None when not running."""
    return _pipeprof.output_path()


def flight_dump(path=None):
    """Flight mode: write every thread's ring to path (default: the
    session's output file). Raises Error outside flight mode."""
    if path is not None:
        path = _os.fspath(path)
    rc = _pipeprof.flight_dump(path)
    if rc != _pipeprof.OK:
        _fail("flight_dump", rc)


def profile_start(tag, *, realtime_ns=None, monotonic_ns=None):
    """Record where another tool's profile of this process starts, so that
    ``pipeprof report TRACE --with PROFILE`` puts the profile on this
    trace's clock (docs/import.md). tag: the profile file's name (its
    basename); give the profile's time 0 as realtime_ns (the clock of
    time.time_ns(): torch.profiler's trace start) or monotonic_ns (the
    clock of time.monotonic_ns(): ONNX Runtime's
    InferenceSession.get_profiling_start_time_ns()). Records the counter
    "pipeprof.profile_start.realtime_ns TAG" (or ".monotonic_ns TAG") with
    that value; a profile that carries its own wall clock (Kineto's
    baseTimeNanoseconds) needs none."""
    if not isinstance(tag, str) or not tag:
        raise TypeError("pipeprof.profile_start: tag must be a non-empty "
                        "str (the profile file's name)")
    if (realtime_ns is None) == (monotonic_ns is None):
        raise TypeError("pipeprof.profile_start: give one of realtime_ns "
                        "and monotonic_ns")
    value = realtime_ns if realtime_ns is not None else monotonic_ns
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError("pipeprof.profile_start: the time must be an int "
                        "of ns")
    kind = "realtime_ns" if realtime_ns is not None else "monotonic_ns"
    counter("pipeprof.profile_start.%s %s" % (kind, tag), value)


class gpu_zone:
    """A GPU zone on a CUDA stream: ``with pipeprof.gpu_zone("infer",
    stream):`` times the device work queued on stream inside the block
    (pp_gpu_zone_begin/end, CUDA events read back by the library off the
    hot path). stream: a cudaStream_t as an int (0: the legacy default
    stream), or an object with a ``cuda_stream`` int (torch.cuda.Stream).
    The CUDA context of the stream must be current on the calling thread.
    When nothing can be recorded (no session, no CUDA driver, no current
    context) the block runs unrecorded and the report says why; with
    PyTorch, pipeprof.torch.gpu_zone takes torch's current stream."""

    __slots__ = ("name", "stream", "_tokens")

    def __init__(self, name, stream=0):
        if not isinstance(name, str):
            raise TypeError("pipeprof.gpu_zone: name must be a str")
        stream = getattr(stream, "cuda_stream", stream)
        if not isinstance(stream, int) or isinstance(stream, bool) \
                or stream < 0:
            raise TypeError("pipeprof.gpu_zone: stream must be a CUDA "
                            "stream handle (an int >= 0 or an object with "
                            "cuda_stream), not %r" % (stream,))
        self.name = name
        self.stream = stream
        self._tokens = []

    def __enter__(self):
        self._tokens.append(_pipeprof.gpu_zone_begin(self.stream, self.name))
        return self

    def __exit__(self, *exc):
        _pipeprof.gpu_zone_end(self._tokens.pop())


class span:
    """A range: ``with pipeprof.span("fetch"):`` or ``async with``. Unlike
    a zone it may end on another thread and need not nest, so it suits
    code that awaits: other tasks running during the await do not break
    it. Shown on async tracks; the report gives it a zone's statistics."""

    __slots__ = ("name", "_ids")

    def __init__(self, name):
        if not isinstance(name, str):
            raise TypeError("pipeprof.span: name must be a str")
        self.name = name
        self._ids = []

    def __enter__(self):
        self._ids.append(range_start(self.name))
        return self

    def __exit__(self, *exc):
        range_end(self._ids.pop())

    async def __aenter__(self):
        return self.__enter__()

    async def __aexit__(self, *exc):
        self.__exit__(*exc)


_request_ids = _itertools.count(1)


class request:
    """One LLM request: ``with pipeprof.request() as r: ... r.tokens(n)``.
    Begins at enter, ends at exit (status 0, or 1 when an exception
    leaves the block). id: the caller's, unique among requests in flight
    (default: a counter from 1). The report gives E2E latency, TTFT, TPOT
    and inter-token latency per request (trace and flight modes)."""

    __slots__ = ("id", "status")

    def __init__(self, id=None):
        self.id = next(_request_ids) if id is None else id
        self.status = None

    def begin(self):
        request_begin(self.id)
        return self

    def first_token(self):
        request_first_token(self.id)

    def tokens(self, n=1):
        request_tokens(self.id, n)

    def end(self, status=0):
        self.status = status
        request_end(self.id, status)

    def __enter__(self):
        return self.begin()

    def __exit__(self, exc_type, exc, tb):
        if self.status is None:
            self.end(0 if exc_type is None else 1)


class QueueTrack(QueueHandle):
    """A declared queue between two stages (pp_queue_declare): push(id),
    pop(id), wait_begin(why), wait_end(why), waiting(why), depth."""

    def waiting(self, why):
        """Context manager around a wait: why FULL (a producer blocked) or
        EMPTY (a consumer waiting)."""
        return _Waiting(self, why)


class _Waiting:
    __slots__ = ("q", "why")

    def __init__(self, q, why):
        self.q, self.why = q, why
        if why not in (FULL, EMPTY):
            raise ValueError("pipeprof: why must be pipeprof.FULL or "
                             "pipeprof.EMPTY, not %r" % (why,))

    def __enter__(self):
        self.q.wait_begin(self.why)

    def __exit__(self, *exc):
        self.q.wait_end(self.why)


def __getattr__(name):
    # pipeprof.torch is imported on first use only: `import pipeprof` must
    # not import torch (seconds, and not every program has it).
    if name == "torch":
        import importlib
        return importlib.import_module(".torch", __name__)
    raise AttributeError("module 'pipeprof' has no attribute %r" % name)


def queue_declare(name, from_stage=None, to_stage=None, capacity=0):
    """Declare the queue name between the stages from_stage (fills it) and
    to_stage (drains it), holding at most capacity items (0: unbounded).
    Idempotent by name. Stage names match zone names."""
    return QueueTrack(name, from_stage, to_stage, capacity)


class Queue(_queue.Queue):
    """queue.Queue that records itself as a pipeprof queue: every put and
    get (with FIFO item ids, so the report pairs each item's wait), and
    the time producers wait while it is full and consumers while it is
    empty."""

    def __init__(self, name, maxsize=0, from_stage=None, to_stage=None):
        self.pp = queue_declare(name, from_stage, to_stage, maxsize)
        self._pp_in = _itertools.count(1)
        self._pp_out = _itertools.count(1)
        super().__init__(maxsize)

    # _put and _get run under the queue's lock: ids and depth stay in step
    def _put(self, item):
        super()._put(item)
        self.pp.push(next(self._pp_in))

    def _get(self):
        item = super()._get()
        self.pp.pop(next(self._pp_out))
        return item

    def put(self, item, block=True, timeout=None):
        try:
            return super().put(item, False)
        except _queue.Full:
            if not block:
                raise
        with _Waiting(self.pp, FULL):
            return super().put(item, True, timeout)

    def get(self, block=True, timeout=None):
        try:
            return super().get(False)
        except _queue.Empty:
            if not block:
                raise
        with _Waiting(self.pp, EMPTY):
            return super().get(True, timeout)
