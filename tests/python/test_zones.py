# SPDX-License-Identifier: MIT
"""Zones, the profile decorator and threads, read back from the trace."""

import asyncio
import threading
import time

import pytest

import pipeprof
from conftest import summary_json, zones_by_name

MS = 1_000_000
# Durations in the trace are ticks converted to ns at the rate measured
# over the session: allow 0.1% for that conversion in bounds taken from
# the test's own clock.
LOW, HIGH = 0.999, 1.001


@pipeprof.profile
def module_level(x):
    return x * 2


def test_zone_counts_and_durations_match_what_the_test_measured(session):
    out = session()
    measured = []
    for _ in range(20):
        t0 = time.perf_counter_ns()
        with pipeprof.zone("work"):
            time.sleep(0.002)
        measured.append(time.perf_counter_ns() - t0)
    with pipeprof.zone("outer"):
        with pipeprof.zone("inner"):
            time.sleep(0.003)
    assert pipeprof.stop() == str(out)
    z = zones_by_name(summary_json(out))
    assert z["work"]["count"] == 20
    # each zone lies inside the test's own timing and covers the sleep
    assert z["work"]["min_ns"] >= 2 * MS * LOW
    assert z["work"]["max_ns"] <= max(measured) * HIGH
    assert z["work"]["total_ns"] <= sum(measured) * HIGH
    assert z["inner"]["count"] == 1 and z["outer"]["count"] == 1
    assert z["inner"]["total_ns"] >= 3 * MS * LOW
    # nesting: outer's self time excludes inner
    assert z["outer"]["total_ns"] >= z["inner"]["total_ns"]
    assert z["outer"]["self_ns"] == (z["outer"]["total_ns"]
                                     - z["inner"]["total_ns"])


def test_zone_object_is_cached_and_reentrant(session):
    out = session()
    a = pipeprof.zone("again")
    assert a is pipeprof.zone("again")
    assert a.name == "again" and "again" in repr(a)
    with a:
        with a:  # the same object nested
            pass
    with a as got:
        assert got is a
    pipeprof.stop()
    z = zones_by_name(summary_json(out))
    assert z["again"]["count"] == 3


def test_zone_closes_when_the_block_raises(session):
    out = session()
    with pytest.raises(KeyError):
        with pipeprof.zone("raises"):
            raise KeyError("x")
    with pipeprof.zone("after"):
        pass
    pipeprof.stop()
    j = summary_json(out)
    z = zones_by_name(j)
    assert z["raises"]["count"] == 1 and z["after"]["count"] == 1
    assert j["unclosed_zones"] == 0


def test_zone_and_profile_as_decorators(session):
    out = session()

    @pipeprof.zone("decorated")
    def f(x, y=1):
        """doc of f"""
        time.sleep(0.001)
        return x + y

    @pipeprof.profile
    def g():
        return "g"

    @pipeprof.profile("named")
    def h():
        return "h"

    class C:
        @pipeprof.profile
        def method(self, v):
            return (self, v)

    assert f(1, y=2) == 3 and f(2) == 3
    assert f.__name__ == "f" and f.__doc__ == "doc of f"
    assert f.__wrapped__(1) == 2  # not timed
    assert g() == "g" and h() == "h"
    c = C()
    assert c.method(5) == (c, 5)
    assert C.method(c, 6) == (c, 6)
    pipeprof.stop()
    z = zones_by_name(summary_json(out))
    assert z["decorated"]["count"] == 2
    assert z["decorated"]["min_ns"] >= 1 * MS * LOW
    assert z["named"]["count"] == 1
    site = z[g.__qualname__]["sites"][0]
    # profile's site names the function, file and line
    assert z[g.__qualname__]["count"] == 1
    assert site["function"] == g.__qualname__
    assert site["file"] == __file__
    assert site["line"] == g.__wrapped__.__code__.co_firstlineno
    assert z[C.method.__qualname__]["count"] == 2


def test_profile_on_a_generator_times_each_step(session):
    out = session()

    @pipeprof.profile
    def frames(n):
        for i in range(n):
            time.sleep(0.002)
            got = yield i
            if got is not None:
                yield ("echo", got)

    items = []
    gen = frames(3)
    for item in gen:
        items.append(item)
        with pipeprof.zone("consumer"):  # between steps: not inside
            time.sleep(0.001)
    assert items == [0, 1, 2]
    # send and throw pass through
    g2 = frames(5)
    assert next(g2) == 0
    assert g2.send("hi") == ("echo", "hi")
    with pytest.raises(ValueError):
        g2.throw(ValueError("in"))
    g3 = frames(5)
    next(g3)
    g3.close()
    pipeprof.stop()
    z = zones_by_name(summary_json(out))
    name = frames.__qualname__
    assert z["consumer"]["count"] == 3
    # 3 items and the step that ends the generator; then g2's next, send,
    # throw; then g3's next and close
    assert z[name]["count"] == 4 + 3 + 2
    # the consumer's zones never nested inside the generator's
    assert z[name]["self_ns"] == z[name]["total_ns"]
    assert z[name]["max_ns"] >= 2 * MS * LOW


def test_profile_on_async_functions_covers_the_awaits(session):
    out = session()

    @pipeprof.profile
    async def fetch(i):
        await asyncio.sleep(0.01)
        return i

    @pipeprof.profile(name="agen")
    async def ticks(n):
        for i in range(n):
            await asyncio.sleep(0.002)
            yield i

    async def main():
        got = await asyncio.gather(*(fetch(i) for i in range(4)))
        seen = [i async for i in ticks(3)]
        return got, seen

    got, seen = asyncio.run(main())
    assert got == [0, 1, 2, 3] and seen == [0, 1, 2]
    pipeprof.stop()
    z = zones_by_name(summary_json(out))
    # four overlapping calls on one thread: ranges, not nested zones
    assert z[fetch.__qualname__]["count"] == 4
    assert z[fetch.__qualname__]["min_ns"] >= 10 * MS * LOW
    assert z["agen"]["count"] == 4  # 3 items and the end
    assert z["agen"]["max_ns"] >= 2 * MS * LOW


def test_span_across_threads_and_awaits(session):
    out = session()
    s = pipeprof.span("handoff")
    s.__enter__()
    t = threading.Thread(target=lambda: s.__exit__(None, None, None))
    time.sleep(0.002)
    t.start()
    t.join()

    async def main():
        async with pipeprof.span("awaited"):
            await asyncio.sleep(0.003)

    asyncio.run(main())
    pipeprof.stop()
    z = zones_by_name(summary_json(out))
    assert z["handoff"]["count"] == 1
    assert z["handoff"]["total_ns"] >= 2 * MS * LOW
    assert z["awaited"]["count"] == 1
    assert z["awaited"]["total_ns"] >= 3 * MS * LOW


def test_threads_are_named_from_threading(session):
    out = session()
    ready = threading.Barrier(4)

    def work():
        ready.wait()
        for _ in range(100):
            with pipeprof.zone("w"):
                pass

    ts = [threading.Thread(target=work, name="decoder-%d" % i)
          for i in range(3)]
    for t in ts:
        t.start()
    ready.wait()
    with pipeprof.zone("main"):
        pass
    for t in ts:
        t.join()

    def renamed():
        pipeprof.thread_name("custom name")
        with pipeprof.zone("w"):
            pass

    t = threading.Thread(target=renamed, name="ignored")
    t.start()
    t.join()
    pipeprof.stop()
    j = summary_json(out)
    names = sorted(t["name"] for t in j["threads"])
    assert names == ["MainThread", "custom name", "decoder-0", "decoder-1",
                     "decoder-2"]
    assert zones_by_name(j)["w"]["count"] == 301


def test_many_threads_record_every_zone(session):
    out = session(buffer_kib=65536)

    def work():
        for _ in range(2000):
            with pipeprof.zone("outer"):
                with pipeprof.zone("inner"):
                    pass

    ts = [threading.Thread(target=work) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    pipeprof.stop()
    j = summary_json(out)
    z = zones_by_name(j)
    assert j["dropped"]["total"] == 0
    assert z["outer"]["count"] == 16000 and z["inner"]["count"] == 16000
    assert j["unclosed_zones"] == 0 and j["unmatched_zone_ends"] == 0


def test_deep_recursion_is_paired(session):
    out = session()

    @pipeprof.profile(name="rec")
    def rec(n):
        return 0 if n == 0 else 1 + rec(n - 1)

    assert rec(200) == 200
    with pipeprof.zone("after"):
        pass
    pipeprof.stop()
    j = summary_json(out)
    z = zones_by_name(j)
    assert z["rec"]["count"] == 201 and z["after"]["count"] == 1
    assert j["unclosed_zones"] == 0 and j["pairing"]["too_deep"] == 0


def test_paused_recording_drops_whole_zones(session):
    out = session()
    with pipeprof.zone("on"):
        pass
    assert pipeprof.enabled() is True
    assert pipeprof.enabled(False) is False
    with pipeprof.zone("off"):
        pass
    with pipeprof.zone("spans"):  # begun while paused: not recorded
        pipeprof.enabled(True)
    with pipeprof.zone("ends-paused"):  # begun on: its end is recorded
        pipeprof.enabled(False)
    pipeprof.enabled(True)
    pipeprof.stop()
    j = summary_json(out)
    z = zones_by_name(j)
    assert "off" not in z and "spans" not in z
    assert z["on"]["count"] == 1 and z["ends-paused"]["count"] == 1
    assert j["unclosed_zones"] == 0 and j["unmatched_zone_ends"] == 0


def test_stats_mode(session):
    out = session(mode="stats")
    for _ in range(5):
        with pipeprof.zone("s"):
            time.sleep(0.001)
    pipeprof.stop()
    j = summary_json(out)
    assert j["mode"] == "stats"
    assert zones_by_name(j)["s"]["count"] == 5


def test_zones_without_a_session_do_nothing():
    assert not pipeprof.running()
    with pipeprof.zone("nothing"):
        pass

    @pipeprof.profile
    def f():
        return 1

    assert f() == 1
    assert pipeprof.stop() is None


def test_decorated_functions_pickle_and_copy_by_reference():
    import copy
    import pickle
    assert pickle.loads(pickle.dumps(module_level)) is module_level
    assert copy.deepcopy(module_level) is module_level
    assert module_level(2) == 4
