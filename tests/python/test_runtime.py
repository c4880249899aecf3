# SPDX-License-Identifier: MIT
"""pipeprof.runtime: the C pipeline runtime with Python objects as items,
real threads, and what it records read back from the trace."""
import json
import queue
import threading
import time

import pytest

import pipeprof
from pipeprof import runtime
from conftest import summary_json


def test_queue_objects_order_timeouts_and_close():
    q = runtime.Queue("pyq", 4)
    assert q.capacity == 4
    items = [object() for _ in range(4)]
    for i, it in enumerate(items):
        q.put(it, id=i)
    with pytest.raises(queue.Full):
        q.put("x", timeout=0)
    with pytest.raises(queue.Full):
        q.put("x", timeout=0.001)
    assert q.qsize() == 4
    assert [q.get_with_id() for _ in range(4)] == list(zip(items, range(4)))
    with pytest.raises(queue.Empty):
        q.get(timeout=0)
    q.put({"a": 1})
    q.close()
    with pytest.raises(runtime.Closed):
        q.put(1)
    assert q.get() == {"a": 1}
    with pytest.raises(runtime.Closed):
        q.get()


def test_queue_threads_no_loss_no_duplication():
    q = runtime.Queue("pyq threads", 8)
    n, got, lock = 2000, [], threading.Lock()

    def produce(k):
        for i in range(n):
            q.put((k, i))

    def consume():
        while True:
            try:
                v = q.get()
            except runtime.Closed:
                return
            with lock:
                got.append(v)

    prods = [threading.Thread(target=produce, args=(k,)) for k in range(3)]
    cons = [threading.Thread(target=consume) for _ in range(3)]
    for t in prods + cons:
        t.start()
    for t in prods:
        t.join()
    q.close()
    for t in cons:
        t.join()
    assert sorted(got) == [(k, i) for k in range(3) for i in range(n)]


def test_pipeline_stages_filter_output_and_error():
    p = runtime.Pipeline("py items")
    p.add_stage("double", lambda x, id: x * 2, workers=2)
    p.add_stage("odd out", lambda x, id: None if x % 4 else x + 1)
    p.output(64)
    p.start()
    out = []
    t = threading.Thread(target=lambda: out.extend(_take_all(p)))
    t.start()
    for i in range(200):
        p.submit(i, id=i)
    p.drain()
    t.join()
    assert sorted(v for v, _ in out) == [2 * i + 1 for i in range(0, 200, 2)]
    st = p.stats()
    assert st["submitted"] == 200 and st["completed"] == 100
    assert st["filtered"] == 100 and st["dropped"] == 0

    bad = runtime.Pipeline("py failing")

    def boom(x, id):
        if id == 7:
            raise KeyError("item seven")
        return x

    bad.add_stage("check", boom)
    bad.start()
    for i in range(20):
        try:
            bad.submit(i, id=i)
        except runtime.Closed:
            break
    with pytest.raises(runtime.PipelineError) as e:
        bad.drain()
    assert "stage 'check' failed on item 7" in str(e.value)
    assert isinstance(e.value.__cause__, KeyError)


def _take_all(p):
    while True:
        try:
            yield p.take()
        except runtime.Closed:
            return


def test_batcher_and_sizer():
    b = runtime.Batcher("py batches", 3, 10.0, lanes=2, pad="pow2")
    b.lane_delay(0, 0)
    for i in range(2):
        b.put("bulk%d" % i, id=100 + i, lane=1)
    with pytest.raises(queue.Empty):
        b.next(timeout=0)
    b.put("urgent", id=1, lane=0)
    got = b.next()
    assert got["items"] == ["urgent", "bulk0", "bulk1"]
    assert got["ids"] == [1, 100, 101] and got["padded"] == 4
    assert got["full"]
    b.close()
    with pytest.raises(runtime.Closed):
        b.next()
    s = runtime.Sizer("py model", 1, 8, 0.010, window=2)
    assert s.size == 1
    for _ in range(4):
        s.observe(0.001)
    assert s.size == 3
    assert s.oom() == 1


def test_pipeline_into_batcher():
    b = runtime.Batcher("py to batcher", 4, 0.001)
    p = runtime.Pipeline("py into batcher")
    p.add_stage("double", lambda x, id: x * 2, workers=2)
    p.to_batcher(b)
    with pytest.raises(ValueError):
        p.output(4)
    p.start()
    got = []
    t = threading.Thread(target=lambda: [got.extend(bt["items"]) for bt in
                                         iter(lambda: _next_or_none(b), None)])
    t.start()
    for i in range(100):
        p.submit(i, id=i + 1)
    p.drain()
    b.close()
    t.join()
    assert sorted(got) == [2 * i for i in range(100)]


def _next_or_none(b):
    try:
        return b.next()
    except runtime.Closed:
        return None


def test_runtime_is_recorded(tmp_path):
    out = tmp_path / "rt.pptrace"
    assert pipeprof.start(out=out, install_signals=False)
    p = runtime.Pipeline("py frames")
    p.ends("camera")
    p.add_stage("prep", lambda x, id: x)
    with pytest.raises(ValueError):
        p.ends("late")
    p.add_stage("model", lambda x, id: time.sleep(0.001) or x)
    p.start()
    for i in range(50):
        p.submit(i, id=i)
    p.drain()
    b = runtime.Batcher("py recorded batches", 4, 0.0)
    b.stages("model", "sink")
    for i in range(8):
        b.put(i, id=i)
    with pytest.raises(ValueError):
        b.stages("x", "y")
    b.close()
    while True:
        try:
            b.next()
        except runtime.Closed:
            break
    pipeprof.stop()
    s = summary_json(out)
    stages = {st["name"]: st for st in s["pipeline"]["stages"]}
    assert stages["prep"]["items"] == 50 and stages["model"]["items"] == 50
    assert s["pipeline"]["bound"] == "model"
    queues = {q["name"]: q for q in s["queues"]}
    assert queues["model in"]["pushes"] == 50
    assert queues["model in"]["from"] == "prep"
    assert queues["prep in"]["from"] == "camera"
    assert queues["py recorded batches"]["from"] == "model"
    assert queues["py recorded batches"]["to"] == "sink"
    assert queues["py recorded batches"]["pops"] == 8
