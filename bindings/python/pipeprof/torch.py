# SPDX-License-Identifier: MIT
"""pipeprof.torch: PyTorch helpers over the pipeprof binding.

    import pipeprof, pipeprof.torch as ppt

    pipeprof.start(out="run.pptrace")
    with ppt.stage("infer", sync=True):      # zone + CUDA memory per stage
        y = model(x)
    with ppt.gpu_zone("infer"):              # device time on torch's stream
        y = model(x)
    sampler = ppt.MemorySampler(0.1).start() # torch.cuda memory counters
    with ppt.emit_nvtx():                    # operator ranges via NVTX
        y = model(x)

Imported only on request (`import pipeprof.torch`, or the attribute
pipeprof.torch): `import pipeprof` never imports torch. Without torch
this module raises ImportError saying so.

Nothing here makes up a number. Where CUDA is missing (a CPU-only torch,
no device, no driver) every CUDA figure is the string
"unavailable: <reason>" instead, the CUDA parts record nothing, and the
CPU parts (the stage's zone and timing) work as usual. status() lists
what is available. See docs/python.md, "PyTorch".
"""

import os as _os
import threading as _threading
import time as _time

try:
    import torch as _torch
except ImportError as _e:  # pragma: no cover - depends on the machine
    raise ImportError("pipeprof.torch needs PyTorch: import torch failed "
                      "(%s)" % _e) from _e

import pipeprof as _pp
from . import _pipeprof as _c

__all__ = ["stage", "gpu_zone", "sample_memory", "MemorySampler",
           "memory_stats", "emit_nvtx", "capture_nvtx", "cuda_reason",
           "status", "UNAVAILABLE", "profile_start_ns",
           "export_chrome_trace", "dataloader_zones", "DATALOADER_WAIT",
           "DATALOADER_FETCH"]

UNAVAILABLE = "unavailable: "
_NVTX_ENV = "NVTX_INJECTION64_PATH"


def cuda_reason():
    """None when torch can use a CUDA device here, else why not (a
    sentence, without the "unavailable: " prefix)."""
    cuda = getattr(_torch, "cuda", None)
    if cuda is None:
        return "this torch has no torch.cuda"
    version = getattr(getattr(_torch, "version", None), "cuda", None)
    if version is None:
        return "torch %s was built without CUDA" % _torch.__version__
    try:
        if not cuda.is_available():
            return ("torch.cuda.is_available() is False (torch %s, CUDA "
                    "%s: no CUDA device or driver visible)"
                    % (_torch.__version__, version))
    except Exception as e:  # a broken driver raises here
        return "torch.cuda.is_available() failed: %s" % e
    return None


_cpu_build = []  # the reason of a torch built without CUDA, made once


def _unavailable():
    # A torch built without CUDA stays so: its reason is made once (this
    # runs at every stage's start)
    if getattr(getattr(_torch, "version", None), "cuda", None) is None:
        if not _cpu_build:
            _cpu_build.append(UNAVAILABLE + cuda_reason())
        return _cpu_build[0]
    why = cuda_reason()
    return None if why is None else UNAVAILABLE + why


def _device(device):
    if device is None:
        return _torch.cuda.current_device()
    if isinstance(device, int):
        return device
    d = _torch.device(device)
    return d.index if d.index is not None else _torch.cuda.current_device()


# ---- stage: zone, optional synchronize, CUDA memory -------------------------

# Open stages with memory tracking, per device. The peak counter
# (max_memory_allocated) is one per device for the whole process, and each
# stage resets it: before a reset, the peak so far is handed to every
# stage still open on that device, so nested stages and stages on other
# threads keep their own peaks right.
_mem_lock = _threading.Lock()
_mem_open = {}
_mem_totals = {}


def _mem_begin(st, dev):
    cuda = _torch.cuda
    with _mem_lock:
        opened = _mem_open.setdefault(dev, [])
        if opened:
            pk = cuda.max_memory_allocated(dev)
            for other in opened:
                if pk > other._peak:
                    other._peak = pk
        cuda.reset_peak_memory_stats(dev)
        st._a0 = cuda.memory_allocated(dev)
        st._peak = st._a0
        opened.append(st)


def _mem_end(st, dev):
    cuda = _torch.cuda
    with _mem_lock:
        a1 = cuda.memory_allocated(dev)
        peak = max(st._peak, cuda.max_memory_allocated(dev))
        opened = _mem_open.get(dev, [])
        if st in opened:
            opened.remove(st)
        got = {"device": dev, "start_bytes": st._a0, "end_bytes": a1,
               "alloc_delta_bytes": a1 - st._a0, "peak_bytes": peak,
               "peak_over_start_bytes": peak - st._a0}
        t = _mem_totals.setdefault(st.name, {
            "count": 0, "alloc_delta_bytes_total": 0,
            "alloc_delta_bytes_max": None, "peak_bytes_max": 0,
            "peak_over_start_bytes_max": 0})
        t["count"] += 1
        t["alloc_delta_bytes_total"] += got["alloc_delta_bytes"]
        if t["alloc_delta_bytes_max"] is None or \
                got["alloc_delta_bytes"] > t["alloc_delta_bytes_max"]:
            t["alloc_delta_bytes_max"] = got["alloc_delta_bytes"]
        t["peak_bytes_max"] = max(t["peak_bytes_max"], peak)
        t["peak_over_start_bytes_max"] = max(
            t["peak_over_start_bytes_max"], got["peak_over_start_bytes"])
    return got


def memory_stats():
    """Per stage name, the CUDA memory of every stage(memory=True) ended
    so far: {"infer": {"count", "alloc_delta_bytes_total",
    "alloc_delta_bytes_max", "peak_bytes_max", "peak_over_start_bytes_max"},
    ...}; the string "unavailable: <reason>" when CUDA is not."""
    why = _unavailable()
    if why:
        return why
    with _mem_lock:
        return {k: dict(v) for k, v in _mem_totals.items()}


class stage:
    """A pipeline stage: ``with pipeprof.torch.stage("infer"):`` or
    ``@pipeprof.torch.stage("infer")``.

    The block is a pipeprof zone named name. With CUDA (see status()):

    - sync=True calls torch.cuda.synchronize(device) before the zone
      begins and again before it ends, so that the zone covers the device
      work the block queued (seed 000's profile_stage); without it the
      zone times what the CPU thread did (kernel launches are
      asynchronous);
    - memory=True (the default) resets the device's peak statistics at
      the start and reads torch.cuda.memory_allocated and
      max_memory_allocated at the end: the counters
      "<name>.cuda.alloc_delta_bytes" (allocated at the end minus at the
      start) and "<name>.cuda.peak_bytes" (the device's peak while the
      stage ran) are recorded on the stage's thread just before the zone
      ends, and memory_stats() sums them per name;
    - gpu=True also opens a GPU zone of the same name on torch's current
      stream (device time, see gpu_zone).

    After the block, s.elapsed_ns is the block's wall time as the stage
    measured it, and s.memory the figures (a dict) or "unavailable:
    <reason>" (None with memory=False). Without CUDA, sync, memory and
    gpu do nothing and say so.

    The peak statistics are per device and process-wide: stages running
    at the same time on one device (nested, or on other threads) each get
    the device's peak over their own span, which includes what the others
    allocated meanwhile; the delta, likewise, counts every allocation on
    the device, not only this thread's.
    """

    __slots__ = ("name", "sync", "track_memory", "gpu", "device",
                 "elapsed_ns", "memory", "_zone", "_dev", "_gz", "_t0",
                 "_a0", "_peak", "_cuda")

    def __init__(self, name, *, sync=False, memory=True, gpu=False,
                 device=None):
        if not isinstance(name, str):
            raise TypeError("pipeprof.torch.stage: name must be a str, not "
                            "%s" % type(name).__name__)
        self.name = name
        self.sync = bool(sync)
        self.track_memory = bool(memory)
        self.gpu = bool(gpu)
        self.device = device
        self.elapsed_ns = None
        self.memory = None
        self._zone = _c.zone(name)
        self._gz = None

    def _options(self):
        return dict(sync=self.sync, memory=self.track_memory, gpu=self.gpu,
                    device=self.device)

    def __enter__(self):
        why = _unavailable()
        self._cuda = why is None
        self.memory = why  # None: filled in at the end, or not asked for
        if self._cuda:
            self._dev = _device(self.device)
            if self.sync:
                _torch.cuda.synchronize(self._dev)
            if self.track_memory:
                _mem_begin(self, self._dev)
        self._t0 = _time.perf_counter_ns()
        self._zone.__enter__()
        if self._cuda and self.gpu:
            self._gz = _gpu_begin(self.name, None, self._dev)
        return self

    def __exit__(self, *exc):
        try:
            if self._gz is not None:
                gz, self._gz = self._gz, None
                _c.gpu_zone_end(gz)
            if self._cuda:
                if self.sync:
                    _torch.cuda.synchronize(self._dev)
                if self.track_memory:
                    m = _mem_end(self, self._dev)
                    self.memory = m
                    _c.counter(self.name + ".cuda.alloc_delta_bytes",
                               m["alloc_delta_bytes"])
                    _c.counter(self.name + ".cuda.peak_bytes",
                               m["peak_bytes"])
        finally:
            self._zone.__exit__(None, None, None)
            self.elapsed_ns = _time.perf_counter_ns() - self._t0

    def __call__(self, fn):
        """As a decorator of a plain function: each call of fn runs in a
        stage of its own."""
        import functools
        import inspect
        if not callable(fn):
            raise TypeError("pipeprof.torch.stage: @stage(name) decorates "
                            "a callable")
        if inspect.isgeneratorfunction(fn) or \
                inspect.iscoroutinefunction(fn) or \
                inspect.isasyncgenfunction(fn):
            raise TypeError("pipeprof.torch.stage: @stage(name) decorates "
                            "plain functions (a call of %s returns before "
                            "its body runs); use pipeprof.profile"
                            % getattr(fn, "__qualname__", fn))
        name, opts = self.name, self._options()

        @functools.wraps(fn)
        def staged(*args, **kwargs):
            with stage(name, **opts):
                return fn(*args, **kwargs)
        return staged

    def __repr__(self):
        return "pipeprof.torch.stage(%r)" % self.name


# ---- GPU zones on torch's current stream ------------------------------------

_ctx_ready = _threading.local()


def _gpu_begin(name, stream, dev):
    # pp_gpu_zone_begin needs the stream's context current on this thread.
    # The CUDA runtime makes it current lazily, at the thread's first call
    # that needs it; a synchronize is such a call, made once per thread.
    if not getattr(_ctx_ready, "ok", False):
        _torch.cuda.synchronize(dev)
        _ctx_ready.ok = True
    if stream is None:
        stream = _torch.cuda.current_stream(dev)
    return _c.gpu_zone_begin(getattr(stream, "cuda_stream", stream), name)


class gpu_zone:
    """``with pipeprof.torch.gpu_zone("infer"):`` times the device work
    queued on torch's current stream (or stream=, a torch.cuda.Stream)
    inside the block: pipeprof.gpu_zone on that stream. The first GPU zone
    of a thread synchronizes the device once, so that the runtime makes
    its context current there (the C API needs it). Without CUDA the
    block runs unrecorded and z.status says "unavailable: <reason>". Also
    a decorator."""

    __slots__ = ("name", "stream", "device", "status", "_tokens")

    def __init__(self, name, stream=None, device=None):
        if not isinstance(name, str):
            raise TypeError("pipeprof.torch.gpu_zone: name must be a str")
        self.name = name
        self.stream = stream
        self.device = device
        self.status = None
        self._tokens = []

    def __enter__(self):
        why = _unavailable()
        self.status = why or "available"
        tok = None
        if why is None:
            tok = _gpu_begin(self.name, self.stream, _device(self.device))
        self._tokens.append(tok)
        return self

    def __exit__(self, *exc):
        _c.gpu_zone_end(self._tokens.pop())

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def zoned(*args, **kwargs):
            with gpu_zone(self.name, self.stream, self.device):
                return fn(*args, **kwargs)
        return zoned


# ---- torch.cuda memory statistics as counters -------------------------------

def _devices(devices):
    if devices is None:
        return list(range(_torch.cuda.device_count()))
    if isinstance(devices, int):
        return [devices]
    return [_device(d) for d in devices]


def sample_memory(devices=None):
    """Record torch.cuda's memory statistics now, as counters, for each
    device (default: all): "torch.cuda<N>.allocated_bytes"
    (memory_allocated), "torch.cuda<N>.reserved_bytes" (memory_reserved,
    what the caching allocator holds) and
    "torch.cuda<N>.fragmentation_bytes" (reserved - allocated: held but
    not in use). Returns {device: {"allocated_bytes", "reserved_bytes",
    "fragmentation_bytes"}}, or "unavailable: <reason>" (and records
    nothing) without CUDA."""
    why = _unavailable()
    if why:
        return why
    out = {}
    cuda = _torch.cuda
    for dev in _devices(devices):
        alloc = int(cuda.memory_allocated(dev))
        res = int(cuda.memory_reserved(dev))
        got = {"allocated_bytes": alloc, "reserved_bytes": res,
               "fragmentation_bytes": res - alloc}
        for k, v in got.items():
            _c.counter("torch.cuda%d.%s" % (dev, k), v)
        out[dev] = got
    return out


class MemorySampler:
    """A daemon thread ("pipeprof-torch-memory") that calls
    sample_memory(devices) every interval_s seconds (0.001..60) while
    started: ``MemorySampler(0.1).start()`` ... ``.stop()``, or ``with
    MemorySampler(0.1):``. Without CUDA it starts no thread; status says
    "unavailable: <reason>"; samples counts the samples taken."""

    def __init__(self, interval_s=0.1, devices=None):
        if not isinstance(interval_s, (int, float)) or \
                not 0.001 <= interval_s <= 60:
            raise ValueError("pipeprof.torch.MemorySampler: interval_s must "
                             "be in 0.001..60 seconds, not %r"
                             % (interval_s,))
        self.interval_s = float(interval_s)
        self.devices = devices
        self.samples = 0
        self.status = None
        self._stop = _threading.Event()
        self._thread = None

    def start(self):
        why = _unavailable()
        self.status = why or "available"
        if why or self._thread is not None:
            return self
        self._stop.clear()
        self._thread = _threading.Thread(target=self._run, daemon=True,
                                         name="pipeprof-torch-memory")
        self._thread.start()
        return self

    def _run(self):
        while True:
            if isinstance(sample_memory(self.devices), dict):
                self.samples += 1
            if self._stop.wait(self.interval_s):
                return

    def stop(self):
        """Stop the thread (after one last sample) and wait for it."""
        t, self._thread = self._thread, None
        if t is not None:
            self._stop.set()
            t.join()
            sample_memory(self.devices)
            self.samples += 1

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


# ---- NVTX: torch.autograd.profiler.emit_nvtx through the injection ----------

def capture_nvtx():
    """Route the process's NVTX calls to pipeprof: set
    NVTX_INJECTION64_PATH to the loaded libpipeprof unless it is set
    already (pipeprof run sets it; another tool's value is left alone).
    NVTX reads the variable at the process's first NVTX call, so call
    this before any (emit_nvtx() does). Returns the status string:
    "available: ..." or "unavailable: <reason>"."""
    cur = _os.environ.get(_NVTX_ENV)
    lib = _pp.library_path
    if not cur:
        _os.environ[_NVTX_ENV] = lib
        return "available: NVTX calls go to %s" % lib
    if _os.path.realpath(cur) == _os.path.realpath(lib) or \
            "pipeprof" in _os.path.basename(cur):
        return "available: NVTX calls go to %s" % cur
    return (UNAVAILABLE + "%s is %s (another tool's injection library): "
            "NVTX calls go there" % (_NVTX_ENV, cur))


class emit_nvtx:
    """``with pipeprof.torch.emit_nvtx():`` runs torch's
    torch.autograd.profiler.emit_nvtx(record_shapes=...) with NVTX routed
    to pipeprof (capture_nvtx()), so each operator torch runs becomes a
    zone named as torch names its NVTX range ("aten::conv2d, seq = 12",
    with shapes when record_shapes). Needs CUDA: torch's emit_nvtx does;
    without it the block runs unprofiled and e.status says "unavailable:
    <reason>"."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = bool(enabled)
        self.record_shapes = bool(record_shapes)
        self.status = None
        self._inner = None

    def __enter__(self):
        why = _unavailable()
        if why:
            self.status = why
            return self
        self.status = capture_nvtx()
        if self.enabled:
            self._inner = _torch.autograd.profiler.emit_nvtx(
                enabled=True, record_shapes=self.record_shapes)
            self._inner.__enter__()
        return self

    def __exit__(self, *exc):
        inner, self._inner = self._inner, None
        if inner is not None:
            return inner.__exit__(*exc)


# ---- what is available ------------------------------------------------------

def profile_start_ns(prof):
    """The wall-clock time (ns since the epoch, time.time_ns()'s clock) of
    the time 0 of torch.profiler.profile prof's Chrome trace, once prof
    has stopped: torch's trace start, from which the events of the
    export count (torch 1.13's legacy export; a Kineto trace carries
    baseTimeNanoseconds itself)."""
    inner = getattr(prof, "profiler", None)  # torch.profiler.profile
    results = getattr(inner if inner is not None else prof,
                      "kineto_results", None)
    if results is None:
        raise ValueError("pipeprof.torch.profile_start_ns: the profiler "
                         "has no results (is it stopped?)")
    if hasattr(results, "trace_start_ns"):
        return int(results.trace_start_ns())
    return int(results.trace_start_us()) * 1000


def export_chrome_trace(prof, path):
    """prof.export_chrome_trace(path), and the profile's start recorded in
    the running pipeprof session (pipeprof.profile_start, tagged with the
    file's name), so that ``pipeprof report TRACE --with PATH`` aligns the
    two by wall clock. Returns path."""
    prof.export_chrome_trace(_os.fspath(path))
    _pp.profile_start(_os.path.basename(_os.fspath(path)),
                      realtime_ns=profile_start_ns(prof))
    return path


def status():
    """What this module can measure here, as {feature: "available..." or
    "unavailable: <reason>"} for "cuda", "stage_memory", "gpu_zones",
    "memory_counters" and "nvtx", with "torch" (the version)."""
    why = _unavailable()
    out = {"torch": _torch.__version__}
    if why:
        for k in ("cuda", "stage_memory", "gpu_zones", "memory_counters",
                  "nvtx"):
            out[k] = why
        return out
    dev = _torch.cuda.current_device()
    out["cuda"] = "available: %d device(s), current %d (%s), CUDA %s" % (
        _torch.cuda.device_count(), dev, _torch.cuda.get_device_name(dev),
        _torch.version.cuda)
    out["stage_memory"] = "available"
    out["gpu_zones"] = "available (the report counts zones it could not " \
        "record, with the reason)"
    out["memory_counters"] = "available"
    cur = _os.environ.get(_NVTX_ENV)
    if not cur:
        out["nvtx"] = "available: emit_nvtx() or capture_nvtx() sets %s" \
            % _NVTX_ENV
    elif _os.path.realpath(cur) == _os.path.realpath(_pp.library_path) \
            or "pipeprof" in _os.path.basename(cur):
        out["nvtx"] = "available: %s=%s" % (_NVTX_ENV, cur)
    else:
        out["nvtx"] = UNAVAILABLE + "%s is %s (another tool's)" % (
            _NVTX_ENV, cur)
    return out


# ---- DataLoader ----------------------------------------------------------

DATALOADER_WAIT = "DataLoader wait"
DATALOADER_FETCH = "DataLoader fetch"
_dl = {"on": False}


def _timed_next(self):
    """_BaseDataLoaderIter.__next__ in a zone: the time the loop waited
    for its next batch (with num_workers=0, the loading itself)."""
    with _c.zone(DATALOADER_WAIT):
        return _dl["next"](self)


def _timed_fetch(fetch):
    def timed(self, possibly_batched_index):
        with _c.zone(DATALOADER_FETCH):
            return fetch(self, possibly_batched_index)
    timed.__wrapped__ = fetch
    return timed


def _worker_loop(*args, **kwargs):
    """torch's worker loop (module level: a spawned worker unpickles it by
    name), its thread named "DataLoader worker <id>"."""
    import inspect
    loop = _dl.get("loop") or _torch.utils.data._utils.worker._worker_loop
    try:
        wid = inspect.signature(loop).bind(*args, **kwargs).arguments.get(
            "worker_id")
    except TypeError:
        wid = None
    _c.thread_name("DataLoader worker %s" % ("?" if wid is None else wid))
    return loop(*args, **kwargs)


def dataloader_zones(on=True):
    """Record torch DataLoaders as pipeline stages (on at import of
    pipeprof.torch): the zone "DataLoader wait" around each next batch in
    the training or inference loop (the time the model waited for data:
    the data-loading stall), the zone "DataLoader fetch" around each batch
    a worker (or, with num_workers=0, the loop itself) loads, and worker
    threads named "DataLoader worker <id>". dataloader_zones(False) puts
    torch's own functions back. Returns whether they were on before."""
    from torch.utils.data import dataloader as dl
    from torch.utils.data._utils import fetch, worker
    was = _dl["on"]
    if on and not was:
        _dl["next"] = dl._BaseDataLoaderIter.__next__
        _dl["fetch"] = {k: k.fetch for k in (fetch._MapDatasetFetcher,
                                             fetch._IterableDatasetFetcher)}
        _dl["loop"] = worker._worker_loop
        dl._BaseDataLoaderIter.__next__ = _timed_next
        for k, f in _dl["fetch"].items():
            k.fetch = _timed_fetch(f)
        worker._worker_loop = _worker_loop
    elif was and not on:
        dl._BaseDataLoaderIter.__next__ = _dl["next"]
        for k, f in _dl["fetch"].items():
            k.fetch = f
        worker._worker_loop = _dl["loop"]
    _dl["on"] = bool(on)
    return was


dataloader_zones(True)
