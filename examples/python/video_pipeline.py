#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A PyTorch video pipeline on the CPU, profiled with pipeprof.

    decode -> [decoded] -> preprocess -> [preprocessed] -> infer
           -> [inferred] -> postprocess

First it writes a short synthetic video (moving shapes, encoded with
PyAV, Debian's python3-av), then runs four stages on four threads joined
by pipeprof.Queue (bounded queue.Queue objects that record every put,
get and wait): decode the video with PyAV, preprocess each frame with
torch (to a float tensor, resize to 224x224, normalise), infer in
batches with torchvision's resnet18(weights=None) (random weights, no
download) or, without torchvision, a small CNN defined here, and
postprocess (softmax, top-5, a frame mark). Each stage is a zone named
like its thread and its queues' ends, so the report's pipeline analysis
finds the stages, the queues between them and the stage that bounds
throughput. The inference runs in pipeprof.torch.stage (CUDA memory per
stage where CUDA is; on a CPU-only torch it says "unavailable").

Run it under the profiler (what `make demo-python` does):

    pipeprof run -o out -- python3 examples/python/video_pipeline.py

or alone, when it starts its own session and writes --out (default
video_pipeline.pptrace; then `pipeprof report video_pipeline.pptrace`).
"""

import argparse
import os
import queue
import sys
import tempfile
import threading
import time

import av
import numpy as np
import torch

import pipeprof
import pipeprof.torch as ppt

MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)
DONE = None  # end of stream, passed down the queues


class SmallCNN(torch.nn.Module):
    """The model when torchvision is not installed: five conv blocks."""

    def __init__(self, classes=1000):
        super().__init__()
        layers, cin = [], 3
        for cout in (16, 32, 64, 128, 256):
            layers += [torch.nn.Conv2d(cin, cout, 3, stride=2, padding=1),
                       torch.nn.BatchNorm2d(cout), torch.nn.ReLU()]
            cin = cout
        self.features = torch.nn.Sequential(*layers)
        self.head = torch.nn.Linear(cin, classes)

    def forward(self, x):
        x = self.features(x).mean((2, 3))
        return self.head(x)


def make_model(kind):
    if kind in ("auto", "resnet18"):
        try:
            import torchvision
            return "resnet18", torchvision.models.resnet18(weights=None)
        except ImportError:
            if kind == "resnet18":
                raise SystemExit("video_pipeline: --model resnet18 needs "
                                 "torchvision (Debian: python3-torchvision)")
    return "small-cnn", SmallCNN()


def make_video(path, frames, width, height, fps=30):
    """Encode frames of moving shapes into path (MPEG-4 part 2, which every
    FFmpeg build has)."""
    with av.open(path, "w") as out:
        s = out.add_stream("mpeg4", rate=fps)
        s.width, s.height, s.pix_fmt = width, height, "yuv420p"
        yy, xx = np.mgrid[0:height, 0:width]
        for i in range(frames):
            img = np.zeros((height, width, 3), np.uint8)
            img[..., 0] = (xx * 255 // max(width - 1, 1) + 3 * i) % 256
            img[..., 1] = (yy * 255 // max(height - 1, 1)) % 256
            cx = (i * 7) % width
            cy = height // 2 + int(height / 4 * np.sin(i / 9))
            img[(xx - cx) ** 2 + (yy - cy) ** 2 < (height // 6) ** 2] = 255
            frame = av.VideoFrame.from_ndarray(img, format="rgb24")
            for packet in s.encode(frame):
                out.mux(packet)
        for packet in s.encode():
            out.mux(packet)


def decode(path, q_out, limit):
    with av.open(path) as src:
        frames = src.decode(video=0)
        for i in range(limit):
            with pipeprof.zone("decode"):
                frame = next(frames, None)
                if frame is None:
                    break
                img = frame.to_ndarray(format="rgb24")
                pipeprof.flow_begin("frame", i)
            q_out.put((i, img))
    q_out.put(DONE)


def preprocess(q_in, q_out, size):
    while True:
        item = q_in.get()
        if item is DONE:
            break
        i, img = item
        with ppt.stage("preprocess"):
            pipeprof.flow_step("frame", i)
            x = torch.from_numpy(img).permute(2, 0, 1).unsqueeze(0)
            x = x.float().div_(255)
            x = torch.nn.functional.interpolate(
                x, size=(size, size), mode="bilinear", align_corners=False)
            x = (x - MEAN) / STD
        q_out.put((i, x))
    q_out.put(DONE)


def infer(q_in, q_out, model, batch):
    done = False
    while not done:
        items = [q_in.get()]
        # a batch of what is queued already, up to --batch: no waiting
        while len(items) < batch and items[-1] is not DONE:
            try:
                items.append(q_in.get_nowait())
            except queue.Empty:
                break
        if items[-1] is DONE:
            items.pop()
            done = True
        if not items:
            continue
        ids = [i for i, _ in items]
        with ppt.stage("infer"):
            for i in ids:
                pipeprof.flow_step("frame", i)
            with torch.no_grad():
                logits = model(torch.cat([x for _, x in items]))
            pipeprof.batch(len(items), batch)
        for k, i in enumerate(ids):
            q_out.put((i, logits[k]))
    q_out.put(DONE)


def postprocess(q_in, results):
    while True:
        item = q_in.get()
        if item is DONE:
            break
        i, logits = item
        with pipeprof.zone("postprocess"):
            p = logits.softmax(0)
            top = torch.topk(p, 5)
            results.append((i, top.indices.tolist(), float(top.values[0])))
            pipeprof.flow_end("frame", i)
            pipeprof.frame_mark("video")


def parse_args(argv):
    ap = argparse.ArgumentParser(
        description="A PyTorch CPU video pipeline profiled with pipeprof.")
    ap.add_argument("--frames", type=int, default=60,
                    help="frames to generate and run (default 60)")
    ap.add_argument("--width", type=int, default=320)
    ap.add_argument("--height", type=int, default=240)
    ap.add_argument("--size", type=int, default=224,
                    help="model input side in pixels (default 224)")
    ap.add_argument("--batch", type=int, default=1,
                    help="largest inference batch: what is queued, up to "
                    "this (default 1; the report's per-stage figures then "
                    "count batches as items for infer)")
    ap.add_argument("--model", choices=("auto", "resnet18", "small"),
                    default="auto",
                    help="auto: resnet18 when torchvision is installed")
    ap.add_argument("--threads", type=int, default=0,
                    help="torch intra-op threads (default: torch's)")
    ap.add_argument("--queue", type=int, default=8,
                    help="capacity of each queue (default 8)")
    ap.add_argument("--video", help="use this video file instead")
    ap.add_argument("--out", default="video_pipeline.pptrace",
                    help="trace file when not run under pipeprof run")
    a = ap.parse_args(argv)
    for k in ("frames", "width", "height", "size", "batch", "queue"):
        if getattr(a, k) < 1:
            ap.error("--%s must be at least 1" % k)
    return a


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    own = pipeprof.start(out=a.out, sample_hz=20) \
        if not pipeprof.running() else False
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    name, model = make_model(a.model)
    model.eval()
    params = sum(p.numel() for p in model.parameters())
    tmp = None
    path = a.video
    if not path:
        tmp = tempfile.TemporaryDirectory(prefix="pipeprof-video-")
        path = os.path.join(tmp.name, "input.mp4")
        with pipeprof.zone("generate video"):
            make_video(path, a.frames, a.width, a.height)

    q_dec = pipeprof.Queue("decoded", a.queue, "decode", "preprocess")
    q_pre = pipeprof.Queue("preprocessed", a.queue, "preprocess", "infer")
    q_inf = pipeprof.Queue("inferred", a.queue, "infer", "postprocess")
    results = []
    threads = [
        threading.Thread(target=decode, args=(path, q_dec, a.frames),
                         name="decode"),
        threading.Thread(target=preprocess, args=(q_dec, q_pre, a.size),
                         name="preprocess"),
        threading.Thread(target=infer, args=(q_pre, q_inf, model, a.batch),
                         name="infer"),
        threading.Thread(target=postprocess, args=(q_inf, results),
                         name="postprocess"),
    ]
    mem = ppt.MemorySampler(0.1).start()
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    mem.stop()
    if tmp:
        tmp.cleanup()
    n = len(results)
    print("video_pipeline: %d frames of %dx%d in %.2f s (%.1f frames/s); "
          "model %s (%.1f M parameters) at %dx%d, batch <= %d; torch %s, "
          "%d threads"
          % (n, a.width, a.height, wall, n / wall if wall else 0.0, name,
             params / 1e6, a.size, a.size, a.batch, torch.__version__,
             torch.get_num_threads()))
    print("video_pipeline: CUDA memory per stage: %s"
          % ppt.status()["stage_memory"])
    if results:
        top = {}
        for _, idx, _ in results:
            top[idx[0]] = top.get(idx[0], 0) + 1
        common = sorted(top.items(), key=lambda kv: -kv[1])[:3]
        print("video_pipeline: most frequent top-1 classes (random "
              "weights): %s" % ", ".join("%d x%d" % kv for kv in common))
    if own:
        print("video_pipeline: trace in %s (pipeprof report %s)"
              % (pipeprof.stop(), a.out))
    return 0 if n == a.frames or a.video else 1


if __name__ == "__main__":
    sys.exit(main())
