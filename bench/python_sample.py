#!/usr/bin/env python3
"""16 uniform frames of the 10-minute 720p30 video into a NumPy (16, H, W, 3) uint8 RGB array:
vidprep's Python API against decord, PyAV and OpenCV (and torchcodec when it imports), in the
same run. Each tool runs in a fresh interpreter per repeat (opening the file is part of the
work), interleaved; the time is measured inside the child around open + sample, imports
excluded. Every tool's frames are compared with vidprep's (indices numpy.round(linspace)).

    python3 bench/python_sample.py [VIDEO] [--repeats 5]

VIDEO defaults to bench/media/720p30_600s.mp4 (made by bench/run.py). Prints a Markdown table
for docs/benchmarks.md. Needs the vidprep wheel installed (pip install ./python) and the
peers (pip install av decord opencv-python-headless [torchcodec]).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time
import numpy as np
tool, path, n, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]

def uniform(total):
    return np.round(np.linspace(0, total - 1, n)).astype(int).tolist()

if tool == "vidprep":
    import vidprep
    t = time.perf_counter()
    frames, facts = vidprep.sample(path, n=n)
    wall = time.perf_counter() - t
elif tool == "decord":
    import decord
    t = time.perf_counter()
    vr = decord.VideoReader(path, ctx=decord.cpu(0))
    frames = vr.get_batch(uniform(len(vr))).asnumpy()
    wall = time.perf_counter() - t
elif tool == "pyav":
    import av
    t = time.perf_counter()
    c = av.open(path)
    s = c.streams.video[0]
    s.thread_type = "AUTO"
    total = s.frames
    rate, tb = s.average_rate, s.time_base
    start = s.start_time or 0
    frames = []
    for i in uniform(total):
        # seek to the keyframe before the frame's pts, decode up to it
        target = start + int(round(i / rate / tb))
        c.seek(target, stream=s, backward=True)
        for f in c.decode(s):
            if f.pts is not None and f.pts >= target:
                frames.append(f.to_ndarray(format="rgb24"))
                break
    frames = np.stack(frames)
    wall = time.perf_counter() - t
elif tool == "opencv":
    import cv2
    t = time.perf_counter()
    cap = cv2.VideoCapture(path)
    total = int(cap.get(cv2.CAP_PROP_FRAME_COUNT))
    frames = []
    for i in uniform(total):
        cap.set(cv2.CAP_PROP_POS_FRAMES, i)
        ok, bgr = cap.read()
        frames.append(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
    frames = np.stack(frames)
    wall = time.perf_counter() - t
elif tool == "torchcodec":
    from torchcodec.decoders import VideoDecoder
    t = time.perf_counter()
    d = VideoDecoder(path, seek_mode="exact", num_ffmpeg_threads=0)
    batch = d.get_frames_at(indices=uniform(len(d)))
    frames = batch.data.permute(0, 2, 3, 1).numpy()
    wall = time.perf_counter() - t
np.save(out, frames)
import resource
print(json.dumps({"wall": wall, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def version(tool):
    mod = {"vidprep": "vidprep", "decord": "decord", "pyav": "av", "opencv": "cv2", "torchcodec": "torchcodec"}[tool]
    r = subprocess.run([sys.executable, "-c", f"import {mod}; print({mod}.__version__)"], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("video", nargs="?", default=str(ROOT / "bench" / "media" / "720p30_600s.mp4"))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("-n", type=int, default=16)
    args = ap.parse_args()
    import numpy as np

    tools = [t for t in ("vidprep", "decord", "pyav", "opencv", "torchcodec") if version(t)]
    walls = {t: [] for t in tools}
    rss = {t: 0.0 for t in tools}
    verdict = {}
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.repeats):
            for t in tools:
                out = os.path.join(tmp, f"{t}.npy")
                r = subprocess.run([sys.executable, "-c", CHILD, t, args.video, str(args.n), out],
                                   capture_output=True, text=True)
                if r.returncode != 0:
                    verdict[t] = "failed: " + r.stderr.strip().splitlines()[-1][:120]
                    continue
                m = json.loads(r.stdout.strip().splitlines()[-1])
                walls[t].append(m["wall"])
                rss[t] = max(rss[t], m["rss_mb"])
        ref = np.load(os.path.join(tmp, "vidprep.npy"))
        for t in tools:
            if t in verdict or t == "vidprep":
                continue
            got = np.load(os.path.join(tmp, f"{t}.npy"))
            if got.shape != ref.shape:
                verdict[t] = f"shape {got.shape}"
            else:
                d = np.abs(got.astype(int) - ref.astype(int))
                verdict[t] = "same pixels" if d.max() == 0 else f"mean abs diff {d.mean():.2f} (max {d.max()})"
        verdict["vidprep"] = "reference (equal to ffmpeg's decode)"
    ours = statistics.median(walls["vidprep"])
    print(f"16 frames ({args.n}) of {Path(args.video).name} into a (N, H, W, 3) uint8 array, "
          f"{args.repeats} repeats; versions: " + ", ".join(f"{t} {version(t)}" for t in tools))
    print()
    print("| tool | median s | runs | peak RSS MB | vs vidprep | frames |")
    print("|---|---|---|---|---|---|")
    for t in tools:
        if not walls[t]:
            print(f"| {t} | - | - | - | - | {verdict.get(t)} |")
            continue
        med = statistics.median(walls[t])
        runs = " ".join(f"{w:.2f}" for w in walls[t])
        print(f"| {t} | {med:.3f} | {runs} | {rss[t]:.0f} | {med / ours:.2f}x | {verdict.get(t, '')} |")


if __name__ == "__main__":
    main()
