# SPDX-License-Identifier: MIT
"""Counters, marks, frames, flows, requests, batches and queues, read back
from the trace with the pipeprof command."""

import json
import threading
import time

import pipeprof
from conftest import cli, summary_json

MS = 1_000_000
# Durations in the trace are ticks converted to ns at the rate measured
# over the session: allow 0.1% for that conversion in bounds taken from
# the test's own clock.
LOW, HIGH = 0.999, 1.001


def by_name(items):
    return {i["name"]: i for i in items}


def test_counters_marks_and_frames(session):
    out = session()
    for v in (5, 7, 6):
        pipeprof.counter("queue_depth", v)
    pipeprof.counter("temp", 41.5)
    pipeprof.counter(name="temp", value=42.5)
    pipeprof.counter_add("items", 3)
    pipeprof.counter_add("items", 4)
    pipeprof.mark("cache flushed")
    for _ in range(10):
        pipeprof.frame_mark("camera0")
        time.sleep(0.001)
    pipeprof.frame_mark()
    pipeprof.stop()
    j = summary_json(out)
    c = by_name(j["counters"])
    assert c["queue_depth"]["samples"] == 3
    assert (c["queue_depth"]["min"], c["queue_depth"]["max"],
            c["queue_depth"]["last"]) == (5, 7, 6)
    assert c["queue_depth"]["type"] == "int"
    assert c["temp"]["type"] == "float" and c["temp"]["last"] == 42.5
    assert c["items"]["last"] == 7
    f = by_name(j["frames"])
    assert f["camera0"]["frames"] == 10
    assert f["camera0"]["mean_ns"] >= 1 * MS * LOW
    assert f["frame"]["frames"] == 1
    chrome = cli("export", str(out), "--format", "chrome").stdout
    assert "cache flushed" in chrome


def test_flows_follow_an_item_across_threads(session):
    out = session()

    def stage(name, call):
        with pipeprof.zone(name):
            call("frame", 42)

    steps = [("decode", pipeprof.flow_begin), ("infer", pipeprof.flow_step),
             ("encode", pipeprof.flow_end)]
    for name, call in steps:
        t = threading.Thread(target=stage, args=(name, call), name=name)
        t.start()
        t.join()
    pipeprof.stop()
    trace = json.loads(cli("export", str(out), "--format", "chrome").stdout)
    # Chrome flows v2: the zones around the points share one bind_id
    bound = {e["name"]: e for e in trace["traceEvents"]
             if e.get("ph") == "X" and "bind_id" in e}
    assert sorted(bound) == ["decode", "encode", "infer"]
    assert len({e["bind_id"] for e in bound.values()}) == 1
    assert len({e["tid"] for e in bound.values()}) == 3
    assert bound["decode"].get("flow_out") and bound["encode"].get("flow_in")
    assert trace["metadata"]["flow_chains_v2"] == 1


def test_requests_give_ttft_tpot_and_itl(session):
    out = session()
    for rid in (1, 2, 3):
        pipeprof.request_begin(rid)
        time.sleep(0.005)
        pipeprof.request_first_token(rid)
        for _ in range(4):
            time.sleep(0.002)
            pipeprof.request_tokens(rid, 2)
        pipeprof.request_end(rid)
    with pipeprof.request() as r:  # the context manager, auto id
        time.sleep(0.003)
        r.tokens(3)
    try:
        with pipeprof.request(id=99):
            raise RuntimeError("failed request")
    except RuntimeError:
        pass
    pipeprof.batch(6, 8)
    pipeprof.batch(size=8)
    pipeprof.stop()
    q = summary_json(out)["requests"]
    assert q["requests"] == 5
    assert q["completed"] == 4 and q["failed"] == 1
    assert q["output_tokens"] == 3 * 8 + 3
    assert q["ttft"]["count"] == 4
    assert q["ttft"]["min_ns"] >= 3 * MS * LOW
    assert q["e2e"]["min_ns"] >= 3 * MS * LOW
    assert q["e2e"]["max_ns"] >= 13 * MS * LOW
    assert q["tpot"]["count"] >= 3
    assert q["itl"]["min_ns"] >= 2 * MS * LOW
    b = q["batches"]
    assert (b["count"], b["items"], b["padded_items"]) == (2, 14, 16)
    assert abs(b["padding_waste"] - 2 / 16) < 1e-9


def test_queue_wrapper_records_items_and_waits(session):
    out = session()
    q = pipeprof.Queue("frames", maxsize=2, from_stage="decode",
                       to_stage="infer")
    n = 30
    # The order of the waits, by construction rather than by sleeps: the
    # producer starts once the consumer waits on the empty queue, and the
    # consumer takes its second item once the producer waits on the full
    # one. Each wait is said by the queue's wait_begin, which the test
    # watches (the wait itself follows it).
    waiting = {pipeprof.EMPTY: threading.Event(),
               pipeprof.FULL: threading.Event()}
    wait_begin = q.pp.wait_begin

    def watched_wait_begin(why):
        wait_begin(why)
        waiting[why].set()

    q.pp.wait_begin = watched_wait_begin

    def producer():
        for i in range(n):
            with pipeprof.zone("decode"):
                pass
            q.put(i)

    def consumer(got, saw_full):
        for k in range(n):
            item = q.get()
            if k == 0:  # the producer fills the queue and waits
                saw_full.append(waiting[pipeprof.FULL].wait(60))
            with pipeprof.zone("infer"):
                time.sleep(0.001)
            got.append(item)

    got, saw_full = [], []
    tc = threading.Thread(target=consumer, args=(got, saw_full),
                          name="infer", daemon=True)
    tp = threading.Thread(target=producer, name="decode", daemon=True)
    tc.start()
    assert waiting[pipeprof.EMPTY].wait(60)  # the consumer waits first
    tp.start()
    tp.join(120)
    tc.join(120)
    assert saw_full == [True]
    assert got == list(range(n))
    assert q.pp.depth == 0
    pipeprof.stop()
    j = summary_json(out)
    qq = by_name(j["queues"])["frames"]
    assert (qq["from"], qq["to"], qq["capacity"]) == ("decode", "infer", 2)
    assert qq["pushes"] == n and qq["pops"] == n and qq["paired"] == n
    assert qq["unmatched_pops"] == 0
    assert qq["consumer_waits"] >= 1
    # a 2-slot queue the consumer left full: the producer blocked
    assert qq["producer_waits"] >= 1
    assert qq["waits_unclosed"] == 0


def test_queue_declare_by_hand(session):
    out = session()
    q = pipeprof.queue_declare("jobs", "a", "b", capacity=4)
    assert q.name == "jobs" and q.depth == 0
    q.push(1)
    q.push(2)
    assert q.depth == 2
    with q.waiting(pipeprof.EMPTY):
        time.sleep(0.001)
    q.pop(1)
    q.pop(2)
    pipeprof.stop()
    qq = by_name(summary_json(out)["queues"])["jobs"]
    assert qq["paired"] == 2 and qq["consumer_waits"] == 1
    assert qq["consumer_waited_ns"] >= 1 * MS * LOW
