#!/usr/bin/env python3
"""vidprep benchmark: runs vidprep and the tools a user would otherwise use side by side on
the same machine, in the same run, checks every output against the ffmpeg CLI, and writes
docs/benchmarks.md (median wall time, throughput, peak RSS, vidprep's ratio to each peer).

Usage: python3 bench/run.py [--tasks overlay,...] [--repeats 3] [--quick] [--out docs/benchmarks.md]
Media is generated under bench/media/ (git-ignored) from ../shared/data or lavfi sources.
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MEDIA = ROOT / "bench" / "media"
WORK = ROOT / "bench" / "work"
SHARED = ROOT.parent / "shared" / "data"
VIDPREP = ROOT / "target" / "release" / "vidprep"


def sh(args, **kw):
    """Runs a command, failing loudly with its stderr."""
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise SystemExit(f"command failed ({p.returncode}): {' '.join(map(str, args))}\n{p.stderr[-3000:]}")
    return p


def measure(args, env=None, cwd=None):
    """Wall seconds and peak RSS (MiB) of one run of `args` (the child's own maximum)."""
    start = time.perf_counter()
    proc = subprocess.Popen([str(a) for a in args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"benchmark command failed ({code}): {' '.join(map(str, args))}\n{err[-3000:]}")
    return wall, usage.ru_maxrss / 1024.0


def ffprobe_frames(path):
    p = sh(["ffprobe", "-v", "error", "-select_streams", "v:0", "-count_frames", "-show_entries",
            "stream=nb_read_frames", "-of", "csv=p=0", path])
    return int(p.stdout.strip())


def ensure_media(quick):
    """Generates the benchmark inputs once (cached in bench/media)."""
    MEDIA.mkdir(parents=True, exist_ok=True)
    media = {}
    pets = SHARED / "pets09" / "vtest.avi"
    base = pets if pets.exists() else None
    ten_s = MEDIA / "720p30_10s.mp4"
    if not ten_s.exists():
        src = ["-stream_loop", "-1", "-i", str(base)] if base else ["-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30"]
        sh(["ffmpeg", "-v", "error", "-y", *src, "-t", "10", "-vf", "scale=1280:720,fps=30",
            "-c:v", "libx264", "-preset", "medium", "-crf", "20", "-g", "250", "-bf", "3", "-pix_fmt", "yuv420p",
            "-an", ten_s])
    media["10s"] = ten_s
    return media


class Result:
    def __init__(self, task, tool, walls, rss, frames, note=""):
        self.task, self.tool, self.walls, self.rss, self.frames, self.note = task, tool, walls, rss, frames, note

    @property
    def median(self):
        return statistics.median(self.walls)


def compare(task, tools, repeats, frames):
    """Runs each tool `repeats` times, interleaved (A B C, A B C, ...) so that machine noise
    hits all of them alike; then runs each tool's output check. `tools` is a list of
    (name, args, check or None, note)."""
    walls = {name: [] for name, *_ in tools}
    rss = {name: 0.0 for name, *_ in tools}
    for _ in range(repeats):
        for name, args, _check, _note in tools:
            w, r = measure(args)
            walls[name].append(w)
            rss[name] = max(rss[name], r)
    results = []
    for name, _args, check, note in tools:
        if check:
            check()
        res = Result(task, name, walls[name], rss[name], frames, note)
        print(f"  {task:10s} {name:28s} median {res.median:7.3f} s  ({', '.join(f'{w:.2f}' for w in res.walls)})  peak {res.rss:7.1f} MiB", flush=True)
        results.append(res)
    return results


def task_overlay(media, repeats):
    """Draw one box on every frame and encode H.264 (libx264 veryfast, CRF 23)."""
    src = media["10s"]
    n = ffprobe_frames(src)
    WORK.mkdir(parents=True, exist_ok=True)
    boxes = WORK / "box.csv"
    boxes.write_text(f"frame,x1,y1,x2,y2\n0,400,200,700,500\n{n - 1},400,200,700,500\n")
    ours, theirs = WORK / "overlay_vidprep.mp4", WORK / "overlay_ffmpeg.mp4"

    def check_count(path):
        def f():
            got = ffprobe_frames(path)
            if got != n:
                raise SystemExit(f"{path}: {got} frames, expected {n}")
        return f

    return compare("overlay", [
        ("vidprep overlay", [VIDPREP, "overlay", src, "--boxes", boxes, "--no-labels", "--thickness", "4",
                             "--preset", "veryfast", "--crf", "23", "--no-audio", "-o", ours], check_count(ours), ""),
        ("ffmpeg drawbox", ["ffmpeg", "-v", "error", "-y", "-i", src, "-vf",
                            "drawbox=x=400:y=200:w=300:h=300:color=red:t=4",
                            "-c:v", "libx264", "-preset", "veryfast", "-crf", "23", "-an", theirs], check_count(theirs), ""),
    ], repeats, n)


TASKS = {"overlay": task_overlay}


def write_report(results, path, argv):
    lines = ["# Benchmarks", "",
             f"Generated by `python3 bench/run.py {' '.join(argv)}` on {platform.node()} "
             f"({os.cpu_count()} cores, {platform.machine()}, {platform.platform()}), "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.",
             "Median wall time over the repeats; peak RSS is the largest resident set of the tool's process.", ""]
    by_task = {}
    for r in results:
        by_task.setdefault(r.task, []).append(r)
    for task, rows in by_task.items():
        ours = [r for r in rows if r.tool.startswith("vidprep")]
        lines += [f"## {task}", "", TASKS[task].__doc__.strip(), "",
                  "| tool | median s | runs (s) | frames/s | peak RSS MiB | vidprep speed-up |", "|---|---|---|---|---|---|"]
        for r in rows:
            ratio = f"{r.median / ours[0].median:.2f}x" if ours and r is not ours[0] else "-"
            fps = f"{r.frames / r.median:.0f}" if r.frames else "-"
            lines.append(f"| {r.tool} | {r.median:.3f} | {' '.join(f'{w:.2f}' for w in r.walls)} | {fps} | {r.rss:.0f} | {ratio} |")
        lines.append("")
    Path(path).write_text("\n".join(lines) + "\n")
    print(f"wrote {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", default=",".join(TASKS))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="smaller media, one repeat")
    ap.add_argument("--out", default=str(ROOT / "docs" / "benchmarks.md"))
    args = ap.parse_args()
    if not shutil.which("ffmpeg"):
        raise SystemExit("ffmpeg is not installed (see scripts/debian-packages.txt)")
    sh(["cargo", "build", "--release", "--quiet"], cwd=ROOT)
    media = ensure_media(args.quick)
    repeats = 1 if args.quick else args.repeats
    results = []
    for t in args.tasks.split(","):
        results += TASKS[t](media, repeats)
    write_report(results, args.out, sys.argv[1:])


if __name__ == "__main__":
    main()
