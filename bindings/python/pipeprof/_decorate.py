# SPDX-License-Identifier: MIT
"""Decorators: pipeprof.profile and a Zone used as @pipeprof.zone(name).

- plain functions: each call is a zone (a C wrapper, no Python frame of
  ours);
- generator functions: each step (the body's run from one resumption to
  the next yield) is a zone, so zones nest on the consumer's thread; the
  time the consumer spends between steps is not counted;
- async functions: the whole call, awaits included, is a range
  (pp_range_start/end): it may end on another thread and need not nest
  with the zones of other tasks running meanwhile;
- async generator functions: each step (awaits included) is a range.
"""

import functools
import inspect

from . import _pipeprof as _c


def _site_of(fn, name):
    code = getattr(fn, "__code__", None)
    qual = getattr(fn, "__qualname__", None) or getattr(
        fn, "__name__", None) or repr(fn)
    if name is None:
        name = qual
    if not isinstance(name, str):
        raise TypeError("pipeprof.profile: name must be a str, not %s"
                        % type(name).__name__)
    if code is None:
        return name, _c.zone(name)
    return name, _c._site(name, qual, code.co_filename,
                          max(code.co_firstlineno, 0))


def _gen_wrapper(fn, zone):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        gen = fn(*args, **kwargs)
        send, exc = None, None
        while True:
            with zone:
                try:
                    if exc is not None:
                        item = gen.throw(exc)
                    else:
                        item = gen.send(send)
                except StopIteration as stop:
                    return stop.value
            send, exc = None, None
            try:
                send = yield item
            except GeneratorExit:
                with zone:
                    gen.close()
                raise
            except BaseException as e:  # thrown in: pass it on
                exc = e
    return wrapper


def _async_wrapper(fn, name):
    @functools.wraps(fn)
    async def wrapper(*args, **kwargs):
        rid = _c.range_start(name)
        try:
            return await fn(*args, **kwargs)
        finally:
            _c.range_end(rid)
    return wrapper


def _asyncgen_wrapper(fn, name):
    @functools.wraps(fn)
    async def wrapper(*args, **kwargs):
        agen = fn(*args, **kwargs)
        send, exc = None, None
        while True:
            rid = _c.range_start(name)
            try:
                if exc is not None:
                    item = await agen.athrow(exc)
                else:
                    item = await agen.asend(send)
            except StopAsyncIteration:
                return
            finally:
                _c.range_end(rid)
            send, exc = None, None
            try:
                send = yield item
            except GeneratorExit:
                await agen.aclose()
                raise
            except BaseException as e:
                exc = e
    return wrapper


def wrap(fn, zone, name):
    """fn timed as zone (sync) or as ranges called name (async)."""
    if not callable(fn):
        raise TypeError("pipeprof: can only decorate a callable, not %s"
                        % type(fn).__name__)
    if inspect.isasyncgenfunction(fn):
        return _asyncgen_wrapper(fn, name)
    if inspect.iscoroutinefunction(fn):
        return _async_wrapper(fn, name)
    if inspect.isgeneratorfunction(fn):
        return _gen_wrapper(fn, zone)
    w = _c.Wrapped(zone, fn)
    try:
        functools.update_wrapper(w, fn)
    except AttributeError:
        pass
    return w


def decorate_zone(zone, fn):
    """@pipeprof.zone("name") on fn."""
    return wrap(fn, zone, zone.name)


def profile(fn=None, *, name=None):
    """Decorator: time every call of the function as a zone named after
    the function's qualified name (or name=...). Works on plain functions,
    generator functions (each step is a zone) and async functions (the
    whole call, awaits included, is a range). Forms: ``@profile``,
    ``@profile()``, ``@profile("name")``, ``@profile(name="name")``."""
    if isinstance(fn, str):
        fn, name = None, fn
    if fn is None:
        return lambda f: profile(f, name=name)
    nm, zone = _site_of(fn, name)
    return wrap(fn, zone, nm)


_c._set_decorator(decorate_zone)
