# SPDX-License-Identifier: MIT
"""Worker processes record with no code change beyond `import pipeprof`:
multiprocessing Pool workers (fork and spawn) and PyTorch DataLoader
workers, which end with os._exit (no atexit handler runs). Run under
`pipeprof run`, every zone a worker recorded is in the run's report.
"""

import os
import subprocess
import sys
import textwrap

import pytest

from conftest import CLI, SANITIZED, child_env, summary_json, zones_by_name

pytestmark = pytest.mark.skipif(
    SANITIZED, reason="the sanitizers' allocators are not fork-safe")


def run_app(tmp_path, code, *args, mode=None):
    app = tmp_path / "app.py"
    app.write_text(textwrap.dedent(code))
    run = tmp_path / "run"
    opts = ["--mode", mode] if mode else []
    r = subprocess.run(
        [CLI, "run", "-o", str(run), "-q", *opts, "--", sys.executable,
         str(app), *args], capture_output=True, text=True, timeout=300,
        env=child_env())
    assert r.returncode == 0, r.stdout + r.stderr
    return run, r


POOL = """
    import multiprocessing as mp, sys
    import pipeprof

    def work(i):
        with pipeprof.zone("task"):
            return sum(range(1000))

    if __name__ == "__main__":
        ctx = mp.get_context(sys.argv[1])
        pool = ctx.Pool(2)
        assert len(pool.map(work, range(50), chunksize=1)) == 50
        pool.close()   # the workers end with os._exit: no atexit
        pool.join()
        with pipeprof.zone("main"):
            pass
"""


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_pool_workers_record_every_task(tmp_path, method):
    run, _ = run_app(tmp_path, POOL, method)
    workers = [f for f in os.listdir(run) if f.startswith("app.pptrace.")]
    assert workers, os.listdir(run)
    j = summary_json(run)
    z = zones_by_name(j)
    assert z["task"]["count"] == 50
    assert z["main"]["count"] == 1
    # how each process ended: the program by exit, its workers in
    # multiprocessing's exit step
    ended = sorted(p.get("ended") for p in j["processes"])
    assert ended[0] == "exit" and len(ended) >= 2
    assert set(ended[1:]) == {"multiprocessing exit"}, ended
    # each worker's durable rings went with its finished session
    assert not leftover_rings(workers), leftover_rings(workers)


def leftover_rings(files):
    """The durable rings files (in PIPEPROF_RINGS_DIR or /dev/shm) of the
    processes whose traces are files (NAME.<pid>)."""
    pids = [f.rsplit(".", 1)[1] for f in files]
    where = os.environ.get("PIPEPROF_RINGS_DIR") or "/dev/shm"
    have = os.listdir(where) if os.path.isdir(where) else []
    return [n for n in have for p in pids
            if n.startswith("pipeprof-%s-" % p) and n.endswith(".rings")]


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_dataloader_workers_record_every_item(tmp_path, method):
    pytest.importorskip("torch", reason="Debian's python3-torch")
    run, r = run_app(tmp_path, """
        import sys, torch, pipeprof
        from torch.utils.data import DataLoader, Dataset

        class Items(Dataset):
            def __len__(self):
                return 64

            def __getitem__(self, i):
                with pipeprof.zone("load"):
                    return torch.full((4,), float(i))

        if __name__ == "__main__":
            torch.set_num_threads(1)
            n = 0
            for batch in DataLoader(Items(), batch_size=8, num_workers=2,
                                    multiprocessing_context=sys.argv[1]):
                with pipeprof.zone("step"):
                    n += batch.shape[0]
            print(n)
    """, method)
    assert r.stdout.splitlines()[0] == "64"
    z = zones_by_name(summary_json(run))
    assert z["load"]["count"] == 64
    assert z["step"]["count"] == 8
    workers = [f for f in os.listdir(run) if f.startswith("app.pptrace.")]
    assert workers and not leftover_rings(workers), leftover_rings(workers)


def test_dataloader_wait_is_the_stall_the_loop_measures(tmp_path):
    """pipeprof.torch records each next batch of a DataLoader as the zone
    "DataLoader wait" (the time the loop waited for data), each batch a
    worker loads as "DataLoader fetch", and names the workers' threads:
    the stall agrees with the loop's own timing of next()."""
    pytest.importorskip("torch", reason="Debian's python3-torch")
    run, r = run_app(tmp_path, """
        import time, torch, pipeprof, pipeprof.torch
        from torch.utils.data import DataLoader, Dataset

        class Items(Dataset):
            def __len__(self):
                return 64

            def __getitem__(self, i):
                time.sleep(0.01)   # 40 ms a batch with 2 workers
                return torch.full((4,), float(i))

        if __name__ == "__main__":
            torch.set_num_threads(1)
            waited, calls = 0, 0
            it = iter(DataLoader(Items(), batch_size=8, num_workers=2))
            while True:
                t0 = time.perf_counter_ns()
                try:
                    next(it)
                except StopIteration:
                    waited += time.perf_counter_ns() - t0
                    calls += 1
                    break
                waited += time.perf_counter_ns() - t0
                calls += 1
                with pipeprof.zone("step"):
                    time.sleep(0.003)
            print(waited, calls)
    """)
    waited, calls = map(int, r.stdout.splitlines()[0].split())
    j = summary_json(run)
    z = zones_by_name(j)
    wait = z["DataLoader wait"]
    assert wait["count"] == calls == 9
    # the zone is inside the loop's own timing: never more, and less only
    # by the interpreter's steps between the two clocks (about 1% of
    # waits of tens of ms; the bound leaves room for a loaded machine)
    assert 0.9 * waited <= wait["total_ns"] <= waited
    assert z["DataLoader fetch"]["count"] == 8
    names = sorted(t["name"] for t in j["threads"])
    assert "DataLoader worker 0" in names and "DataLoader worker 1" in names
    # the loop waited most of its time: the data-starved rule says so
    rules = {r["rule"]: r for r in j["recommendations"]}
    assert "data-starved" in rules, [r["rule"] for r in j["recommendations"]]
    assert "MainThread" in rules["data-starved"]["evidence"]


def test_dataloader_fast_enough_is_not_data_starved(tmp_path):
    """A loop whose batches are ready when it asks (the workers load in
    no time, two batches each ahead; the step takes 50 ms) gets no
    data-starved advice."""
    pytest.importorskip("torch", reason="Debian's python3-torch")
    run, r = run_app(tmp_path, """
        import time, torch, pipeprof, pipeprof.torch
        from torch.utils.data import DataLoader, Dataset

        class Items(Dataset):
            def __len__(self):
                return 64

            def __getitem__(self, i):
                return torch.full((4,), float(i))

        if __name__ == "__main__":
            torch.set_num_threads(1)
            loader = DataLoader(Items(), batch_size=8, num_workers=2)
            for b in loader:
                with pipeprof.zone("step"):
                    time.sleep(0.05)
    """)
    j = summary_json(run)
    assert zones_by_name(j)["DataLoader wait"]["count"] == 9
    assert "data-starved" not in [x["rule"] for x in j["recommendations"]]


KILLED = """
    import multiprocessing as mp, os, signal
    import pipeprof

    def work(ready):
        for i in range(200):
            with pipeprof.zone("task"):
                pass
        ready.set()    # the last zones are still in the worker's ring
        signal.pause()

    if __name__ == "__main__":
        ctx = mp.get_context("fork")
        ready = ctx.Event()
        p = ctx.Process(target=work, args=(ready,))
        p.start()
        assert ready.wait(60)
        os.kill(p.pid, signal.SIGKILL)   # no handler, no atexit, no flush
        p.join()
        assert p.exitcode == -signal.SIGKILL
"""


@pytest.mark.parametrize("mode", ["trace", "stats"])
def test_worker_killed_with_sigkill_loses_nothing(tmp_path, mode):
    # the worker's rings are durable (in stats mode its zone tallies and
    # its writer's checkpoint too): the run's report salvages the zones
    # its writer had not written when the kill came
    run, r = run_app(tmp_path, KILLED, mode=mode)
    j = summary_json(run)
    assert j["mode"] == mode
    assert zones_by_name(j)["task"]["count"] == 200
    ended = [p.get("ended") for p in j["processes"]]
    assert any(e and e.endswith("salvaged") for e in ended), ended
    assert not any(n.endswith(".rings") for n in os.listdir(run))
