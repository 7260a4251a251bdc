#!/usr/bin/env python3
"""Keyframe propagation on GOT-10k-layout sequences (every frame annotated): keep every K-th
box as a key, fill the rest with `vidprep track --fill F`, and score the filled boxes against
the held-out ground truth.

For each sequence, K (10, 25, 50) and fill (hold, linear, cubic, track = CSRT, track-kcf):
mean IoU and success rate (IoU >= 0.5) over the held-out frames strictly between the first and
the last key (where every fill gives a box), and, for the trackers, the same over the frames
after the last key (forward only: hold, linear and cubic give none there). Tracker speed is
what `vidprep track` reports: tracker updates per second (forward and backward updates, the
tracker's own time, decoding apart), the best of `--repeat` runs.

Usage:
    python3 bench/track_eval.py [--vidprep target/release/vidprep] [--data ../shared/data/got10k]
        [--ks 10,25,50] [--repeat 3] [--json results.json]

Needs a vidprep built with the `tracking` feature (`cargo build --features tracking`).
Pure Python (no packages).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

FILLS = ["hold", "linear", "cubic", "track", "track-kcf"]
NAMES = {"track": "track (CSRT)", "track-kcf": "track (KCF)"}


def iou(a, b):
    iw = min(a[2], b[2]) - max(a[0], b[0])
    ih = min(a[3], b[3]) - max(a[1], b[1])
    if iw <= 0 or ih <= 0:
        return 0.0
    inter = iw * ih
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def truth_of(seq):
    out = []
    with open(os.path.join(seq, "groundtruth.txt")) as f:
        for line in f:
            if line.strip():
                x, y, w, h = (float(v) for v in line.split(",")[:4])
                out.append([x, y, x + w, y + h])
    return out


def write_keys(path, keys):
    track = {"id": "1", "keys": [{"frame": f, "box": b} for f, b in keys]}
    with open(path, "w") as f:
        json.dump({"vidprep_annotations": 1, "coords": "pixels", "tracks": [track]}, f)


def run_fill(vidprep, seq, keys, fill, out):
    p = subprocess.run(
        [vidprep, "track", seq, "--boxes", keys, "--fill", fill, "-o", out],
        capture_output=True,
        text=True,
    )
    if p.returncode != 0:
        sys.exit(f"vidprep track --fill {fill} failed on {seq}:\n{p.stderr}")
    with open(out) as f:
        doc = json.load(f)
    boxes = {k["frame"]: k["box"] for k in doc["tracks"][0]["keys"] if "box" in k}
    m = re.search(r"tracker: (\d+) updates in ([0-9.]+) s", p.stderr)
    fps = int(m.group(1)) / float(m.group(2)) if m and float(m.group(2)) > 0 else None
    gaps = doc.get("meta", {}).get("fields", {}).get("tracked_gaps", [])
    return boxes, fps, gaps


def score(boxes, truth, frames):
    if not frames:
        return None, None
    ious = [iou(boxes[f], truth[f]) if f in boxes else 0.0 for f in frames]
    return sum(ious) / len(ious), sum(1 for v in ious if v >= 0.5) / len(ious)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    # The dev build is as fast here: the trackers, the decoder and the colour conversion are
    # the system's OpenCV and FFmpeg.
    default = os.path.join(here, "..", "target", "release", "vidprep")
    if not os.path.exists(default):
        default = os.path.join(here, "..", "target", "debug", "vidprep")
    ap.add_argument("--vidprep", default=default)
    ap.add_argument("--data", default=os.path.join(here, "..", "..", "shared", "data", "got10k"))
    ap.add_argument("--ks", default="10,25,50")
    ap.add_argument("--repeat", type=int, default=3, help="runs per tracker for its speed (best)")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    if not os.path.isdir(args.data):
        sys.exit(f"skipping: {args.data} is absent")
    ks = [int(k) for k in args.ks.split(",")]
    seqs = sorted(d for d in os.listdir(args.data) if os.path.isfile(os.path.join(args.data, d, "groundtruth.txt")))
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in seqs:
            seq = os.path.join(args.data, name)
            truth = truth_of(seq)
            n = len(truth)
            for k in ks:
                keyed = list(range(0, n, k))
                last = keyed[-1]
                between = [f for f in range(1, last) if f % k]
                after = list(range(last + 1, n))
                keys = os.path.join(tmp, f"{name}-{k}.json")
                write_keys(keys, [(f, truth[f]) for f in keyed])
                for fill in FILLS:
                    out = os.path.join(tmp, f"{name}-{k}-{fill}.json")
                    boxes, fps, gaps = run_fill(args.vidprep, seq, keys, fill, out)
                    if fps is not None:
                        for _ in range(args.repeat - 1):
                            fps = max(fps, run_fill(args.vidprep, seq, keys, fill, out)[1] or 0)
                    m, s = score(boxes, truth, between)
                    ma, sa = score(boxes, truth, after) if fill.startswith("track") else (None, None)
                    flagged = sum(1 for g in gaps if g.get("flagged"))
                    results.append(dict(seq=name, k=k, fill=fill, mean_iou=m, success=s, after_mean_iou=ma,
                                        after_success=sa, fps=fps, gaps=len(gaps), flagged=flagged,
                                        between=len(between), after=len(after)))
                    print(f"{name} K={k} {fill}: mean IoU {m:.3f}, success {s:.3f}"
                          + (f", after the last key {ma:.3f}/{sa:.3f}" if ma is not None else "")
                          + (f", {fps:.0f} fps" if fps else "")
                          + (f", {flagged}/{len(gaps)} gaps flagged" if gaps else ""), file=sys.stderr)
    print("| sequence | K | fill | mean IoU | success (IoU >= 0.5) | after the last key | tracker fps | gaps flagged |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        after = f"{r['after_mean_iou']:.3f} / {r['after_success']:.2f} ({r['after']} frames)" if r["after_mean_iou"] is not None else "-"
        fps = f"{r['fps']:.0f}" if r["fps"] else "-"
        flagged = f"{r['flagged']} of {r['gaps']}" if r["gaps"] else "-"
        print(f"| {r['seq']} | {r['k']} | {NAMES.get(r['fill'], r['fill'])} | {r['mean_iou']:.3f} | {r['success']:.3f} | {after} | {fps} | {flagged} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
