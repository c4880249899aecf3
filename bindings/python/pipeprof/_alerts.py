# SPDX-License-Identifier: MIT
"""Alert delivery: pipeprof.on_alert(fn).

The library raises anomalies and alerts on its writer thread, which must
never wait for the GIL. The extension's C callback only copies each alert
into a bounded queue; the daemon thread "pipeprof-alerts" started here
takes them (waiting with the GIL released) and calls fn with an Alert.
"""

import atexit
import collections
import sys
import threading
import traceback

from . import _pipeprof as _c

Alert = collections.namedtuple(
    "Alert", "kind what which message value baseline spread threshold ts_ns")
Alert.__doc__ = """One anomaly or alert (pp_alert): kind "anomaly" or
"resource"; what ("p99", "rate", "mem", ...), which (the zone, "request
e2e", "system", ...), message (one line), value, baseline, spread,
threshold, ts_ns (CLOCK_MONOTONIC ns)."""

_lock = threading.Lock()
_callback = None
_thread = None
_stop = threading.Event()


def _deliver(items):
    for a in items:
        fn = _callback
        if fn is None:
            return
        try:
            fn(Alert(**a))
        except Exception:  # the callback's own error: report, go on
            print("pipeprof: exception in the alert callback:",
                  file=sys.stderr)
            traceback.print_exc()


def _loop():
    while not _stop.is_set():
        _deliver(_c.alerts_wait(0.2))


def on_alert(fn):
    """Call fn(alert) for every anomaly and alert the library raises from
    now on, on the thread "pipeprof-alerts" (never on the library's writer
    thread). One callback at a time: a second call replaces it; None
    removes it. Returns fn, so it also works as a decorator."""
    global _callback, _thread
    if fn is not None and not callable(fn):
        raise TypeError("pipeprof.on_alert: fn must be callable or None")
    with _lock:
        _callback = fn
        if fn is None:
            _c.alerts_enable(False)
            return None
        _c.alerts_enable(True)
        if _thread is None:
            _stop.clear()
            _thread = threading.Thread(target=_loop, name="pipeprof-alerts",
                                       daemon=True)
            _thread.start()
    return fn


def dropped():
    """Alerts lost because the queue (256) was full."""
    return _c.alerts_dropped()


@atexit.register
def _at_exit():
    # With a callback set, end the session here, while Python still runs,
    # so that the anomalies of its last writer pass reach the callback
    # (the library would otherwise end it after the interpreter is gone).
    global _thread
    if _thread is None:
        return
    if _c.is_running():
        _c.shutdown()
    _stop.set()
    _thread.join(timeout=2)
    _thread = None
    _deliver(_c.alerts_wait(0))
