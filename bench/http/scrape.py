# SPDX-License-Identifier: MIT
"""Scrape an HTTP endpoint from N threads as fast as it answers, until
killed or for --seconds; print how many requests got 200 and how many
failed (connection refused between pipeprof-bench's sessions counts as
failed, not fatal). Used by bench/http/load.sh."""
import argparse
import http.client
import signal
import sys
import threading
import time

ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--path", default="/metrics")
ap.add_argument("--threads", type=int, default=4)
ap.add_argument("--seconds", type=float, default=3600)
args = ap.parse_args()

ok = [0] * args.threads
bad = [0] * args.threads
stop = threading.Event()


def worker(k):
    while not stop.is_set():
        try:
            c = http.client.HTTPConnection("127.0.0.1", args.port, timeout=5)
            c.request("GET", args.path)
            r = c.getresponse()
            r.read()
            if r.status == 200:
                ok[k] += 1
            else:
                bad[k] += 1
            c.close()
        except OSError:
            bad[k] += 1
            time.sleep(0.005)


def finish(*_):
    stop.set()


signal.signal(signal.SIGTERM, finish)
threads = [threading.Thread(target=worker, args=(k,)) for k in range(args.threads)]
t0 = time.time()
for t in threads:
    t.start()
stop.wait(args.seconds)
stop.set()
for t in threads:
    t.join()
el = time.time() - t0
print(f"scrapes: {sum(ok)} answered ({sum(ok) / el:.0f}/s), "
      f"{sum(bad)} refused or failed, over {el:.1f} s")
sys.stdout.flush()
