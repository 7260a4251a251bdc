#!/usr/bin/env python3
"""vidprep benchmark: vidprep against the tools a user would otherwise use (the ffmpeg CLI,
PyAV, decord, OpenCV, PySceneDetect, supervision), side by side in one run on one machine.

One command does everything: `python3 bench/run.py`. It installs the peers (Debian's ffmpeg
and hyperfine, and a Python venv in bench/.venv from PyPI), builds vidprep in release mode,
generates the media once (bench/media/, from ../shared/data/pets09/vtest.avi looped, with the
frame index painted into every frame), runs every task with repeats, interleaving the tools
so machine noise hits all alike, checks every output against the ffmpeg CLI (right frames,
right count), and writes docs/benchmarks.md: median wall time, throughput and peak RSS per
tool, vidprep's speed-up over each peer, the targets met or missed, and the machine.

The `detect` task (shot boundaries) writes its own section of docs/benchmarks.md, so
`python3 bench/run.py --tasks detect` runs it alone and leaves the other tables as they are:
the wall time of `vidprep detect` against PySceneDetect's `detect-content` on the 10-minute
video, then the accuracy of both on the labelled set of bench/detect_set.py, scored by
bench/detect_eval.py.

The `sparse` task (issue 26: sampling at the decode limit) writes its own section too: 16
frames of the 10-minute 720p video and 32 frames of a 1-hour 1080p host against torchcodec's
exact mode and OpenCV (timed as JPEG outputs, then every tool's frames compared pixel for pixel
as arrays), and the smart 10 s cut against ffmpeg's re-encoding cut.

Options: --tasks sample,decode,overlay,cut,cap,batch,memory,detect,smart,sparse  --repeats N  --quick
         --vidprep PATH (use this binary instead of building target/release/vidprep)
Environment: VIDPREP_BENCH_VENV=/path/to/venv uses that virtual environment for the peers
(one that has torch and torchcodec already, such as /work/venvs/ml) instead of making
bench/.venv and installing them there. VIDPREP_BENCH_MEDIA=/path/to/folder keeps the generated
media there instead of bench/media (a folder outside the checkout, shared by worktrees, so the
10-minute video is generated once). VIDPREP_BENCH_NO_HOUR=1 leaves the sparse task's 1-hour
host out (generating it takes long on 2 cores): its row then says it was not measured.
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
BENCH = ROOT / "bench"
MEDIA = Path(os.environ.get("VIDPREP_BENCH_MEDIA") or BENCH / "media")
WORK = BENCH / "work"
VENV = BENCH / ".venv"
# ../shared/data, or the folder VIDPREP_SHARED_DATA names (a git worktree elsewhere).
SHARED = Path(os.environ.get("VIDPREP_SHARED_DATA") or ROOT.parent / "shared" / "data")
VIDPREP = ROOT / "target" / "release" / "vidprep"
PEERS = BENCH / "peers.py"
REPORT = ROOT / "docs" / "benchmarks.md"
CODE_BITS = 15


def sh(args, **kw):
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise SystemExit(f"command failed ({p.returncode}): {' '.join(map(str, args))}\n{p.stderr[-3000:]}")
    return p


def py():
    """The peers' Python: $VIDPREP_BENCH_VENV's, else bench/.venv's."""
    other = os.environ.get("VIDPREP_BENCH_VENV")
    return Path(other) / "bin" / "python" if other else VENV / "bin" / "python"


# --------------------------------------------------------------------------- setup

def setup(build):
    """Installs what the benchmark needs: Debian's ffmpeg and hyperfine, the Python peers;
    builds vidprep in release mode if `build`."""
    if not shutil.which("ffmpeg") or not shutil.which("hyperfine"):
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        sh([*sudo, "apt-get", "update"])
        sh([*sudo, "apt-get", "install", "-y", "--no-install-recommends", "ffmpeg", "hyperfine"])
    if os.environ.get("VIDPREP_BENCH_VENV"):
        # A venv made elsewhere (torch is large): used as it is, nothing installed into it.
        if build:
            sh(["cargo", "build", "--release", "--quiet"], cwd=ROOT)
        return
    if not py().exists():
        sh([sys.executable, "-m", "venv", VENV])
    want = ["av", "decord", "opencv-python-headless", "scenedetect", "supervision", "numpy", "pillow"]
    probe = subprocess.run([py(), "-c", "import av, decord, cv2, scenedetect, supervision, numpy, PIL"], capture_output=True)
    if probe.returncode != 0:
        sh([py(), "-m", "pip", "install", "--quiet", *want])
    if build:
        sh(["cargo", "build", "--release", "--quiet"], cwd=ROOT)


def versions():
    out = subprocess.run([py(), "-c", "import importlib, numpy\n"
              "names = [('PyAV', 'av'), ('decord', 'decord'), ('OpenCV', 'cv2'), ('torchcodec', 'torchcodec'), ('torch', 'torch'),"
              " ('PySceneDetect', 'scenedetect'), ('supervision', 'supervision')]\n"
              "got = []\n"
              "for label, mod in names:\n"
              "    try: got.append(f'{label} {importlib.import_module(mod).__version__}')\n"
              "    except Exception: pass\n"
              "print(', '.join(got + [f'numpy {numpy.__version__}']))"], capture_output=True, text=True).stdout.strip()
    ff = sh(["ffmpeg", "-version"]).stdout.splitlines()[0]
    vp = sh([VIDPREP, "--version"]).stdout.strip()
    return f"{vp}; {ff}; {out}"


# --------------------------------------------------------------------------- media

def code_filter():
    """drawbox filters painting the frame index as 15 bits at the top-left (white = 1)."""
    boxes = ["drawbox=x=0:y=0:w=240:h=16:color=black:t=fill"]
    for b in range(CODE_BITS):
        boxes.append(f"drawbox=x={16 * b}:y=0:w=16:h=16:color=white:t=fill:enable='mod(floor(n/{1 << b}),2)'")
    return ",".join(boxes)


def ensure_media(hd_clip=True):
    MEDIA.mkdir(parents=True, exist_ok=True)
    pets = SHARED / "pets09" / "vtest.avi"
    src = ["-stream_loop", "-1", "-i", pets] if pets.exists() else ["-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30"]
    media = {}
    for name, secs in [("short", 10), ("long", 600)]:
        path = MEDIA / f"720p30_{secs}s.mp4"
        if not path.exists():
            print(f"generating {path.name} ...", flush=True)
            tmp = path.with_suffix(".tmp.mp4")
            sh(["ffmpeg", "-v", "error", "-y", *src, "-t", str(secs), "-vf", f"scale=1280:720,fps=30,{code_filter()}",
                "-c:v", "libx264", "-preset", "veryfast", "-crf", "23", "-g", "250", "-keyint_min", "250",
                "-sc_threshold", "0", "-bf", "3", "-pix_fmt", "yuv420p", "-an", tmp])
            tmp.rename(path)
        media[name] = path
    hd = MEDIA / "1080p30_60s_detail.mp4"
    if not hd.exists() and hd_clip:
        print(f"generating {hd.name} ...", flush=True)
        tmp = hd.with_suffix(".tmp.mp4")
        sh(["ffmpeg", "-v", "error", "-y", *src, "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", "60",
            "-map", "0:v", "-map", "1:a", "-vf", "scale=1920:1080,fps=30,noise=alls=6:allf=t",
            "-c:v", "libx264", "-preset", "veryfast", "-crf", "18", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "128k", tmp])
        tmp.rename(hd)
    media["hd"] = hd
    return media


def probe_frames(path):
    p = sh(["ffprobe", "-v", "error", "-select_streams", "v:0", "-count_packets", "-show_entries",
            "stream=nb_read_packets", "-of", "csv=p=0", path])
    return int(p.stdout.strip())


def codes_of_images(paths):
    out = []
    for p in paths:
        r = subprocess.run(["ffmpeg", "-v", "error", "-i", str(p), "-vf", "crop=240:16:0:0", "-pix_fmt", "gray",
                            "-f", "rawvideo", "-"], capture_output=True)
        if r.returncode != 0:
            out.append(None)
            continue
        out.append(decode_code(r.stdout, 240))
    return out


def codes_of_video(path, crop_w=240):
    r = subprocess.run(["ffmpeg", "-v", "error", "-i", str(path), "-vf", f"crop={crop_w}:16:0:0", "-fps_mode", "passthrough",
                        "-pix_fmt", "gray", "-f", "rawvideo", "-"], capture_output=True)
    if r.returncode != 0:
        raise SystemExit(f"cannot decode {path}: {r.stderr[-500:]}")
    size = crop_w * 16
    return [decode_code(r.stdout[i:i + size], crop_w) for i in range(0, len(r.stdout), size)]


def decode_code(gray, width):
    value = 0
    for b in range(CODE_BITS):
        # centre 8x8 of block b
        s = 0
        for y in range(4, 12):
            row = y * width + 16 * b
            s += sum(gray[row + 4:row + 12])
        if s / 64 > 128:
            value |= 1 << b
    return value


# --------------------------------------------------------------------------- measuring

def measure(args, cwd=None):
    start = time.perf_counter()
    proc = subprocess.Popen([str(a) for a in args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"benchmark command failed ({code}): {' '.join(map(str, args))}\n{err[-3000:]}")
    return wall, usage.ru_maxrss / 1024.0, usage.ru_utime + usage.ru_stime


class Result:
    def __init__(self, task, tool, walls, rss, units, unit_name, check, cpus=None):
        self.task, self.tool, self.walls, self.rss = task, tool, walls, rss
        self.units, self.unit_name, self.check, self.cpus = units, unit_name, check, cpus or []

    @property
    def cores_busy(self):
        """CPU time over wall time (user + system, the process and its threads), median over runs."""
        return statistics.median(c / w for c, w in zip(self.cpus, self.walls)) if self.cpus else None

    @property
    def median(self):
        return statistics.median(self.walls)


# A peer whose first run takes longer than this many times vidprep's (and over SLOW_SECONDS)
# runs once: noise of a few percent cannot change its verdict, and repeating it would push the
# whole benchmark past 20 minutes on 2 cores.
SLOW_RATIO, SLOW_SECONDS = 1.4, 8.0


def compare(task, tools, repeats, units, unit_name, slow_once=True):
    """Runs tools (name, prepare, args, check) interleaved `repeats` times; `prepare` empties
    the tool's output before each run; `check` returns a short verdict after the last run.
    The first tool is vidprep's; slow peers run once (see SLOW_RATIO) if `slow_once`."""
    walls = {t[0]: [] for t in tools}
    cpus = {t[0]: [] for t in tools}
    rss = {t[0]: 0.0 for t in tools}
    runs_once = set()
    for rep in range(repeats):
        if rep == 1 and slow_once:
            ours = walls[tools[0][0]][0]
            runs_once = {name for name, *_ in tools[1:] if walls[name][0] > max(SLOW_RATIO * ours, SLOW_SECONDS)}
        for name, prepare, args, _check in tools:
            if name in runs_once:
                continue
            if prepare:
                prepare()
            w, r, c = measure(args)
            walls[name].append(w)
            cpus[name].append(c)
            rss[name] = max(rss[name], r)
    results = []
    for name, _prepare, _args, check in tools:
        verdict = check() if check else "-"
        res = Result(task, name, walls[name], rss[name], units, unit_name, verdict, cpus[name])
        print(f"  {task:8s} {name:34s} {res.median:8.3f} s  peak {res.rss:7.1f} MiB  {verdict}", flush=True)
        results.append(res)
    return results


def fresh(path):
    def f():
        if path.exists():
            shutil.rmtree(path) if path.is_dir() else path.unlink()
        if path.suffix == "":
            path.mkdir(parents=True)
    return f


# --------------------------------------------------------------------------- tasks

def task_sample(media, repeats):
    """Sample 16 uniform frames from the 10-minute 720p30 video (GOP 250, B-frames) into JPEG
    images (quality 90)."""
    src = media["long"]
    total = probe_frames(src)
    # numpy.round(numpy.linspace(0, total - 1, 16)); no target here sits on .5
    want = [int(round(i * (total - 1) / 15)) for i in range(16)]
    select = "select='" + "+".join(f"eq(n\\,{i})" for i in want) + "'"
    runs = [
        ("vidprep export frames", "s_vidprep", lambda d: [VIDPREP, "export", "frames", src, "--count", "16", "--out-dir", d]),
        ("PyAV (decode all)", "s_pyav_all", lambda d: [py(), PEERS, "sample-pyav-decode", src, d, "16"]),
        ("PyAV (seek per frame)", "s_pyav_seek", lambda d: [py(), PEERS, "sample-pyav-seek", src, d, "16"]),
        ("decord get_batch", "s_decord", lambda d: [py(), PEERS, "sample-decord", src, d, "16"]),
        ("OpenCV (set position)", "s_opencv", lambda d: [py(), PEERS, "sample-opencv", src, d, "16"]),
        ("ffmpeg select", "s_ffmpeg", lambda d: ["ffmpeg", "-v", "error", "-y", "-i", src, "-vf", select, "-fps_mode", "passthrough",
                                                 "-q:v", "2", d / "%02d.jpg"]),
    ]
    tools = [(name, fresh(WORK / sub), make(WORK / sub), check_images(WORK / sub, want)) for name, sub, make in runs]
    return compare("sample", tools, repeats, 16, "frames")


def check_images(out_dir, want):
    def check():
        files = sorted(p for p in Path(out_dir).iterdir() if p.suffix == ".jpg")
        codes = codes_of_images(files)
        if len(files) != len(want):
            return f"WRONG: {len(files)} images, expected {len(want)}"
        bad = [(c, w) for c, w in zip(codes, want) if c != w]
        return "right frames" if not bad else f"WRONG frames: {len(bad)} of {len(want)} (e.g. got {bad[0][0]}, wanted {bad[0][1]})"
    return check


def task_decode(media, repeats):
    """Decode every frame of the 10-minute 720p30 video."""
    src = media["long"]
    total = probe_frames(src)

    def count_check(name, path):
        def check():
            n = int(Path(path).read_text().strip()) if Path(path).exists() else None
            return "right count" if n == total else f"WRONG count {n} (expected {total})"
        return check

    vp_out = WORK / "d_vidprep.json"
    tools = [
        ("vidprep (probe --count-frames)", None, ["sh", "-c", f"'{VIDPREP}' probe --count-frames --json '{src}' > '{vp_out}'"],
         lambda: "right count" if json.loads(vp_out.read_text())["video"]["frames_decoded"] == total else "WRONG count"),
        ("ffmpeg -f null", None, ["ffmpeg", "-v", "error", "-i", src, "-f", "null", "-"], lambda: "-"),
        ("PyAV", None, [py(), PEERS, "decode-pyav", src, WORK / "d_pyav.txt"], count_check("PyAV", WORK / "d_pyav.txt")),
        ("OpenCV", None, [py(), PEERS, "decode-opencv", src, WORK / "d_opencv.txt"], count_check("OpenCV", WORK / "d_opencv.txt")),
        ("decord", None, [py(), PEERS, "decode-decord", src, WORK / "d_decord.txt"], count_check("decord", WORK / "d_decord.txt")),
    ]
    return compare("decode", tools, repeats, total, "frames")


def task_overlay(media, repeats):
    """Draw one box on every frame of the 10 s 720p30 clip and encode H.264 (libx264 veryfast,
    CRF 23); supervision's VideoSink writes OpenCV's mp4v (MPEG-4 Part 2), it has no H.264."""
    src = media["short"]
    n = probe_frames(src)
    boxes = WORK / "box.csv"
    boxes.write_text(f"frame,x1,y1,x2,y2\n0,400,200,700,500\n{n - 1},400,200,700,500\n")
    outs = {k: WORK / f"o_{k}.mp4" for k in ["vidprep", "ffmpeg", "supervision"]}

    def check(path):
        def f():
            got = probe_frames(path)
            r = subprocess.run(["ffmpeg", "-v", "error", "-i", str(path), "-vf", "select=eq(n\\,150),crop=4:4:548:200",
                                "-frames:v", "1", "-pix_fmt", "rgb24", "-f", "rawvideo", "-"], capture_output=True)
            px = r.stdout[:3]
            red = len(px) == 3 and px[0] > 150 and px[1] < 100 and px[2] < 120
            return ("right count" if got == n else f"WRONG count {got}") + (", box drawn" if red else ", NO box found")
        return f

    return compare("overlay", [
        ("vidprep overlay", None, [VIDPREP, "overlay", src, "--boxes", boxes, "--no-labels", "--thickness", "4", "--color", "ff0000",
                                   "--preset", "veryfast", "--crf", "23", "--no-audio", "-o", outs["vidprep"]], check(outs["vidprep"])),
        ("ffmpeg drawbox", None, ["ffmpeg", "-v", "error", "-y", "-i", src, "-vf", "drawbox=x=400:y=200:w=300:h=300:color=red:t=4",
                                  "-c:v", "libx264", "-preset", "veryfast", "-crf", "23", "-an", outs["ffmpeg"]], check(outs["ffmpeg"])),
        ("supervision (mp4v writer)", None, [py(), PEERS, "overlay-supervision", src, outs["supervision"]], check(outs["supervision"])),
    ], repeats, n, "frames")


def task_cut(media, repeats):
    """Cut 10 s out of the middle of the 10-minute video, frame-accurately, starting off a
    keyframe (300.4 s = frame 9012; keyframes every 250 frames), re-encoding with libx264
    veryfast CRF 23. `-c copy` is shown for reference: it starts at the keyframe before."""
    src = media["long"]
    start, end = 300.4, 310.4
    first, count = 9012, 300
    outs = {k: WORK / f"c_{k}.mp4" for k in ["vidprep", "ffmpeg", "copy", "scenedetect"]}

    def check(path, exact=True):
        def f():
            codes = codes_of_video(path)
            want = list(range(first, first + count))
            if codes == want:
                return "right frames"
            return f"{'WRONG' if exact else 'as expected, wrong'}: {len(codes)} frames from {codes[0] if codes else None} (want {count} from {first})"
        return f

    return compare("cut", [
        ("vidprep cut", None, [VIDPREP, "cut", src, "--start", f"{start}s", "--end", f"{end}s", "--preset", "veryfast", "--crf", "23",
                               "--no-audio", "-o", outs["vidprep"]], check(outs["vidprep"])),
        ("ffmpeg -ss -to (re-encode)", None, ["ffmpeg", "-v", "error", "-y", "-ss", str(start), "-to", str(end), "-i", src,
                                              "-c:v", "libx264", "-preset", "veryfast", "-crf", "23", "-an", outs["ffmpeg"]], check(outs["ffmpeg"])),
        ("PySceneDetect split_video_ffmpeg", None, [py(), PEERS, "cut-scenedetect", src, outs["scenedetect"], str(start), str(end)],
         check(outs["scenedetect"])),
        ("ffmpeg -c copy (reference)", None, ["ffmpeg", "-v", "error", "-y", "-ss", str(start), "-to", str(end), "-i", src, "-c", "copy",
                                              "-an", outs["copy"]], check(outs["copy"], exact=False)),
    ], repeats, count, "frames")


def task_cap(media, repeats):
    """Fit the 60 s 1080p high-detail clip under a 10 MB Base64 budget (libx264 veryfast):
    vidprep's solver against a two-pass ffmpeg recipe that retries at 90% of the rate until
    it fits."""
    src = media["hd"]
    budget = 10_000_000
    out_v = WORK / "cap_vidprep.mp4"
    recipe = WORK / "cap_recipe.py"
    recipe.write_text(RECIPE)
    out_r = WORK / "cap_recipe.mp4"

    def check_v():
        side = json.loads(out_v.with_suffix(".json").read_text())
        b64 = (out_v.stat().st_size + 2) // 3 * 4
        frames = probe_frames(out_v)
        ok = b64 <= budget and frames == 1800
        return (f"{'fits' if ok else 'WRONG'}: {b64} Base64 bytes ({100 * b64 / budget:.1f}%), "
                f"{side['budget']['encodes']} encode(s), {frames} frames")

    def check_r():
        b64 = (out_r.stat().st_size + 2) // 3 * 4
        encodes = int((WORK / "cap_recipe.encodes").read_text())
        return f"{'fits' if b64 <= budget else 'WRONG'}: {b64} Base64 bytes ({100 * b64 / budget:.1f}%), {encodes} encode(s)"

    return compare("cap", [
        ("vidprep export video", None, [VIDPREP, "export", "video", src, "-o", out_v, "--preset", "veryfast", "--max-base64-bytes", str(budget)], check_v),
        ("ffmpeg two-pass + retry recipe", None, [sys.executable, recipe, src, out_r, str(budget)], check_r),
    ], repeats, 1800, "frames")


RECIPE = r'''
import os, subprocess, sys
src, out, budget = sys.argv[1], sys.argv[2], int(sys.argv[3])
dur = float(subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", src],
                           capture_output=True, text=True).stdout)
limit = budget // 4 * 3
rate = int(limit * 8 / dur - 128_000)  # the rate the budget allows after audio
encodes = 0
log = out + ".2pass"
while True:
    for p in (1, 2):
        dest = "/dev/null" if p == 1 else out
        fmt = ["-f", "mp4"] if p == 1 else []
        audio = ["-an"] if p == 1 else ["-c:a", "aac", "-b:a", "128k"]
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", src, "-c:v", "libx264", "-preset", "veryfast", "-b:v", str(rate),
                        "-pass", str(p), "-passlogfile", log, *audio, *fmt, dest], check=True)
        encodes += 1
    if (os.path.getsize(out) + 2) // 3 * 4 <= budget:
        break
    rate = int(rate * 0.9)
open(os.path.join(os.path.dirname(out), "cap_recipe.encodes"), "w").write(str(encodes))
'''


def task_batch(media, repeats):
    """16 items through `vidprep run` (each: a 5 s clip of the 10 s video with a box drawn,
    re-encoded, and 8 sampled frames), with --jobs 1 and with the default (one per core)."""
    src = media["short"]
    boxes = WORK / "box.csv"
    n = probe_frames(src)
    boxes.write_text(f"frame,x1,y1,x2,y2\n0,400,200,700,500\n{n - 1},400,200,700,500\n")
    manifest = WORK / "batch.jsonl"
    lines = []
    for i in range(16):
        start = (i % 5) * 0.9
        lines.append(json.dumps({
            "id": f"b{i:02d}", "source": str(src), "start": f"{start:.1f}s", "end": f"{start + 5:.1f}s",
            "boxes": {"path": str(boxes), "labels": False},
            "exports": [{"kind": "clip", "preset": "veryfast", "crf": 23}, {"kind": "frames", "count": 8}]}))
    manifest.write_text("\n".join(lines) + "\n")
    outs = {"1": WORK / "batch_j1", "default": WORK / "batch_jd"}

    def check(d):
        def f():
            rows = [json.loads(l) for l in (d / "report.jsonl").read_text().splitlines()]
            ok = sum(r["status"] == "ok" for r in rows)
            frames = [probe_frames(d / r["id"] / "clip.mp4") for r in rows[:4]]
            return f"{ok}/16 ok, clips of {frames[0]} frames" if ok == 16 and set(frames) == {150} else f"WRONG: {ok}/16 ok, {frames}"
        return f

    return compare("batch", [
        ("vidprep run --jobs 1", fresh(outs["1"]),
         [VIDPREP, "run", manifest, "--out-dir", outs["1"], "--jobs", "1"], check(outs["1"])),
        (f"vidprep run (default: {os.cpu_count()} jobs)", fresh(outs["default"]), [VIDPREP, "run", manifest, "--out-dir", outs["default"]],
         check(outs["default"])),
    ], repeats, 16, "items")


def task_memory(media, repeats):
    """Peak memory of a frame-exact cut (the first 5 s, re-encoded) and of 16-frame sampling,
    on the 10 s and the 10-minute video: flat when it does not grow with the length."""
    res = []
    for name, src in [("10 s", media["short"]), ("10 min", media["long"])]:
        res += compare("memory", [
            (f"vidprep cut, {name} input", None, [VIDPREP, "cut", src, "--end", "5s", "--preset", "veryfast", "--no-audio", "-o", WORK / "m_cut.mp4"], None),
            (f"vidprep export frames, {name} input", fresh(WORK / "m_frames"),
             [VIDPREP, "export", "frames", src, "--count", "16", "--out-dir", WORK / "m_frames"], None),
        ], repeats, 0, "")
    return res


def task_detect(media, repeats):
    """Find the shot boundaries (cuts, fades, dissolves) of the 10-minute 720p30 video:
    `vidprep detect` (defaults: spans between shot boundaries) against PySceneDetect's
    `detect-content` (default settings, its automatic downscale), each writing its list of
    shots; every tool runs every repeat. Then both are scored on the labelled set."""
    import detect_eval
    import detect_set

    src = media["long"]
    out_v, out_s = WORK / "det_vidprep.jsonl", WORK / "det_scenedetect"

    def shots_v():
        return f"{len(out_v.read_text().splitlines())} proposals (shots of 1 s or more)"

    def shots_s():
        return f"{len((out_s / f'{src.stem}-Scenes.csv').read_text().splitlines()) - 2} scenes"

    load = [os.getloadavg()[0]]
    speed = compare("detect", [
        ("vidprep detect", None, [VIDPREP, "detect", src, "-o", out_v], shots_v),
        ("PySceneDetect detect-content", fresh(out_s),
         [VENV / "bin" / "scenedetect", "-q", "-i", src, "-o", out_s, "detect-content", "list-scenes"], shots_s),
    ], repeats, probe_frames(src), "frames", slow_once=False)
    load.append(os.getloadavg()[0])
    accuracy = detect_eval.evaluate(VIDPREP) if detect_set.available() else None
    write_detect_section(speed, accuracy, load)
    return speed


def task_smart(media, repeats):
    """Smart encoding on the 10-minute 720p30 video (keyframes every 250 frames, B-frames):
    (1) a 10 s cut starting off a keyframe (307.0 s = frame 9210 to 317.0 s = frame 9510:
    one whole GOP inside, 9250..9500) by `vidprep cut --smart` against ffmpeg's re-encoding
    cut and `-c copy` (x264 medium CRF 18, the defaults of both); (2) the bundled GOT-10k-style
    needle inserted at a seeded position of the whole 10-minute host by `vidprep insert
    --smart` against the same insertion fully re-encoded (`vidprep insert`); the full
    re-encode runs once. Every output is checked with ffmpeg (frame codes / frame count)."""
    src = media["long"]
    needle = ROOT / "fixtures" / "example" / "needle"
    first, count = 9210, 300
    outs = {k: WORK / f"s_{k}.mp4" for k in ["smart", "ffmpeg", "copy", "ins_smart", "ins_full"]}

    def check_cut(path, exact=True):
        def f():
            codes = codes_of_video(path)
            if codes == list(range(first, first + count)):
                return "right frames"
            return f"{'WRONG' if exact else 'as expected, wrong'}: {len(codes)} frames from {codes[0] if codes else None} (want {count} from {first})"
        return f

    def smart_note(path):
        def f():
            side = json.loads(path.with_suffix(".json").read_text())["smart"]
            return f"{side['copied_frames']} copied, {side['encoded_frames']} re-encoded"
        return f

    def check_both(path, exact=True):
        a, b = check_cut(path, exact), smart_note(path)
        return lambda: f"{a()}; {b()}"

    cut = compare("smart-cut", [
        ("vidprep cut --smart", None, [VIDPREP, "cut", src, "--start", "307s", "--end", "317s", "--smart", "--no-audio",
                                       "-o", outs["smart"]], check_both(outs["smart"])),
        ("ffmpeg -ss -t (re-encode, medium)", None, ["ffmpeg", "-v", "error", "-y", "-ss", "307", "-t", "10", "-i", src,
                                                     "-c:v", "libx264", "-preset", "medium", "-crf", "18", "-an", outs["ffmpeg"]],
         check_cut(outs["ffmpeg"])),
        ("ffmpeg -c copy (reference)", None, ["ffmpeg", "-v", "error", "-y", "-ss", "307", "-t", "10", "-i", src, "-c", "copy",
                                              "-an", outs["copy"]], check_cut(outs["copy"], exact=False)),
    ], repeats, count, "frames", slow_once=False)
    host_frames = probe_frames(src)

    def check_insert(path, smart):
        def f():
            n = probe_frames(path)
            side = json.loads(path.with_suffix(".json").read_text())
            want = host_frames + side["resolved"]["insert"]["needle_frames"]
            note = f"; {side['smart']['copied_frames']} copied, {side['smart']['encoded_frames']} re-encoded" if smart else ""
            return (f"{n} frames" if n == want else f"WRONG: {n} frames, want {want}") + note
        return f

    ins = compare("smart-insert", [
        ("vidprep insert --smart", None, [VIDPREP, "insert", "--host", src, "--sequence", needle, "--seed", "7", "--smart",
                                          "--no-audio", "-o", outs["ins_smart"]], check_insert(outs["ins_smart"], True)),
        ("vidprep insert (full re-encode)", None, [VIDPREP, "insert", "--host", src, "--sequence", needle, "--seed", "7",
                                                   "--no-audio", "-o", outs["ins_full"]], check_insert(outs["ins_full"], False)),
    ], repeats, host_frames, "frames")
    write_smart_section(cut, ins)
    return cut + ins


SMART_BEGIN = ("<!-- generated by bench/run.py --tasks smart: everything up to the next marker is rewritten "
               "on each run of the smart task -->")
SMART_END = "<!-- end of generated smart part -->"


def write_smart_section(cut, ins):
    """The smart task's own section of docs/benchmarks.md."""
    v, f, c = cut
    vi, fi = ins
    r_enc, r_copy, r_ins = speedup(f, v), v.median / c.median, speedup(fi, vi)
    lines = [SMART_BEGIN, "", "## smart", "", " ".join(task_smart.__doc__.split()), "",
             f"Run: `python3 bench/run.py {' '.join(sys.argv[1:])}` on {platform.node()}: {os.cpu_count()} cores, "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; vidprep binary `{VIDPREP}`. Tools: {versions()}.", "",
             "| target | | measured |", "|---|---|---|",
             f"| 10 s cut off a keyframe: at least 5x faster than ffmpeg's re-encoding cut | {'met' if r_enc >= 5 else 'MISSED'} | "
             f"{r_enc:.2f}x (vidprep {v.median:.2f} s, ffmpeg {f.median:.2f} s); {v.check} |",
             f"| ... and within 3x of `-c copy` | {'met' if r_copy <= 3 else 'MISSED'} | "
             f"{r_copy:.2f}x the copy's time (copy {c.median:.2f} s, which starts at the keyframe before: {c.check}) |",
             f"| Needle into the 10-minute host: at least 10x faster than the full re-encode | {'met' if r_ins >= 10 else 'MISSED'} | "
             f"{r_ins:.1f}x (vidprep --smart {vi.median:.1f} s, full {fi.median:.1f} s); {vi.check} |",
             "", "### Cut", "", *timing_table(cut), "", "### Insertion", "", *timing_table(ins), "", SMART_END]
    replace_section(SMART_BEGIN, SMART_END, "\n".join(lines))
    print(f"wrote the smart section of {REPORT}")


def replace_section(begin, end, block):
    """Puts `block` (which starts with `begin` and ends with `end`) into docs/benchmarks.md in
    place of the previous one, or after the main generated part."""
    text = REPORT.read_text() if REPORT.exists() else "# Benchmarks\n\n<!-- end of generated part -->\n"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + block + rest.split(end, 1)[1]
    else:
        head, tail = text.split("<!-- end of generated part -->", 1)
        text = head + "<!-- end of generated part -->\n\n" + block + tail
    REPORT.write_text(text)


HOUR_HOST = MEDIA / "1080p30_3600s.mp4"


def hour_host():
    """A 1-hour 1080p30 host (the length V-STaR's hosts reach): 50 s of the looped pets video
    with painted frame codes, encoded once with x264 superfast (GOP 250, 3 B-frames), then
    copied 72 times end to end (the concat demuxer, no re-encode: every copy starts with a
    keyframe). Generating a true hour on 2 cores would take longer than the whole benchmark.
    Deleted after the task."""
    if HOUR_HOST.exists():
        return HOUR_HOST
    pets = SHARED / "pets09" / "vtest.avi"
    src = ["-stream_loop", "-1", "-i", pets] if pets.exists() else ["-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=30"]
    part = MEDIA / "1080p30_50s.mp4"
    if not part.exists():
        print(f"generating {part.name} ...", flush=True)
        sh(["ffmpeg", "-v", "error", "-y", *src, "-t", "50", "-vf", f"scale=1920:1080,fps=30,{code_filter()}",
            "-c:v", "libx264", "-preset", "superfast", "-crf", "23", "-g", "250", "-keyint_min", "250",
            "-sc_threshold", "0", "-bf", "3", "-pix_fmt", "yuv420p", "-an", part.with_suffix(".tmp.mp4")])
        part.with_suffix(".tmp.mp4").rename(part)
    listing = MEDIA / "hour.txt"
    listing.write_text("".join(f"file '{part.name}'\n" for _ in range(72)))
    tmp = HOUR_HOST.with_suffix(".tmp.mp4")
    sh(["ffmpeg", "-v", "error", "-y", "-f", "concat", "-safe", "0", "-i", listing, "-c", "copy", tmp])
    tmp.rename(HOUR_HOST)
    return HOUR_HOST


def load_average():
    return os.getloadavg()[0]


def sparse_rows(src, n, repeats, label, code_period=1 << CODE_BITS):
    """vidprep export frames against torchcodec (exact) and OpenCV, n uniform frames of src
    into JPEG images, interleaved; then every tool's frames as arrays, compared."""
    total = probe_frames(src)
    want = [int(round(i * (total - 1) / (n - 1))) for i in range(n)]
    runs = [
        ("vidprep export frames", "p_vidprep", lambda d: [VIDPREP, "export", "frames", src, "--count", str(n), "--out-dir", d]),
        ("torchcodec (exact mode)", "p_torchcodec", lambda d: [py(), PEERS, "sample-torchcodec", src, d, str(n)]),
        ("OpenCV (set position)", "p_opencv", lambda d: [py(), PEERS, "sample-opencv", src, d, str(n)]),
    ]
    tools = [(name, fresh(WORK / sub), make(WORK / sub), check_images(WORK / sub, [w % code_period for w in want]))
             for name, sub, make in runs]
    load_before = load_average()
    results = compare(f"sparse-{label}", tools, repeats, n, "frames", slow_once=False)
    load_after = load_average()
    # The pixel check (not timed): vidprep's PNGs against each peer's arrays.
    png = WORK / "p_png"
    fresh(png)()
    sh([VIDPREP, "export", "frames", src, "--count", str(n), "--format", "png", "--out-dir", png])
    sh([py(), PEERS, "arrays", "png", png, WORK / "p_ref.npy", str(n)])
    pixels = {}
    for tool, name in (("torchcodec", "torchcodec (exact mode)"), ("opencv", "OpenCV (set position)")):
        sh([py(), PEERS, "arrays", tool, src, WORK / f"p_{tool}.npy", str(n)])
        out = sh([py(), "-c", "import numpy as np, sys; a = np.load(sys.argv[1]).astype(int); b = np.load(sys.argv[2]).astype(int); "
                  "print('same pixels' if a.shape == b.shape and (a == b).all() else "
                  "(f'shape {b.shape}' if a.shape != b.shape else f'max abs diff {abs(a - b).max()}'))",
                  WORK / "p_ref.npy", WORK / f"p_{tool}.npy"]).stdout.strip()
        pixels[name] = out
    for r in results:
        if r.tool in pixels:
            r.check = f"{r.check}; {pixels[r.tool]} as vidprep's"
    return results, (load_before, load_after)


def task_sparse(media, repeats):
    """Sampling at the decode limit (issue 26): n uniform frames into JPEG images (quality 90)
    by `vidprep export frames` against torchcodec's exact mode (`VideoDecoder(seek_mode="exact", num_ffmpeg_threads=0)
    .get_frames_at`, images written by PIL) and OpenCV (`CAP_PROP_POS_FRAMES` + `read`), on the
    10-minute 720p30 video (16 frames) and a 1-hour 1080p30 host (32 frames); every tool's
    frames are then compared with vidprep's as RGB arrays (vidprep's as PNG). And the smart
    10 s cut off a keyframe (frame 9210 to 9510 of the 10-minute video) against ffmpeg's
    re-encoding cut (x264 medium CRF 18, the defaults of both)."""
    rows = {}
    loads = {}
    rows["720p"], loads["720p"] = sparse_rows(media["long"], 16, repeats, "720p")
    if not os.environ.get("VIDPREP_BENCH_NO_HOUR"):
        host = hour_host()
        try:
            rows["hour"], loads["hour"] = sparse_rows(host, 32, repeats, "hour", code_period=1500)
        finally:
            for p in (host, MEDIA / "1080p30_50s.mp4", MEDIA / "hour.txt"):
                if p.exists():
                    p.unlink()
    src = media["long"]
    first, count = 9210, 300
    outs = {k: WORK / f"p_{k}.mp4" for k in ["smart", "ffmpeg"]}

    def check_cut(path):
        def f():
            codes = codes_of_video(path)
            ok = codes == list(range(first, first + count))
            note = ""
            side = path.with_suffix(".json")
            if side.exists():
                sm = json.loads(side.read_text())["smart"]
                note = f"; {sm['copied_frames']} copied, {sm['encoded_frames']} re-encoded"
            return ("right frames" if ok else f"WRONG: {len(codes)} frames") + note
        return f

    load_before = load_average()
    rows["cut"] = compare("sparse-cut", [
        ("vidprep cut --smart", None, [VIDPREP, "cut", src, "--start", "307s", "--end", "317s", "--smart", "--no-audio",
                                       "-o", outs["smart"]], check_cut(outs["smart"])),
        ("ffmpeg -ss -t (re-encode, medium)", None, ["ffmpeg", "-v", "error", "-y", "-ss", "307", "-t", "10", "-i", src,
                                                     "-c:v", "libx264", "-preset", "medium", "-crf", "18", "-an", outs["ffmpeg"]],
         check_cut(outs["ffmpeg"])),
    ], repeats, count, "frames", slow_once=False)
    loads["cut"] = (load_before, load_average())
    write_sparse_section(rows, loads)
    return [r for rs in rows.values() for r in rs]


SPARSE_BEGIN = ("<!-- generated by bench/run.py --tasks sparse: everything up to the next marker is rewritten "
                "on each run of the sparse task -->")
SPARSE_END = "<!-- end of generated sparse part -->"


def write_sparse_section(rows, loads):
    v, t, o = rows["720p"]
    hour = rows.get("hour")
    cv, cf = rows["cut"]
    r_t, r_o, r_cut = speedup(t, v), speedup(o, v), speedup(cf, cv)
    lines = [SPARSE_BEGIN, "", "## sparse", "", " ".join(task_sparse.__doc__.split()), "",
             f"Run: `python3 bench/run.py {' '.join(sys.argv[1:])}` on {platform.node()}: {os.cpu_count()} cores, "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; vidprep binary `{VIDPREP}`. Tools: {versions()}. "
             "The machine was shared with other work: load average (1 min) "
             + ", ".join(f"{k} {a:.1f} before / {b:.1f} after" for k, (a, b) in loads.items())
             + f" on {os.cpu_count()} cores; the tools ran interleaved, so the ratios compare runs under the same load.", "",
             "| target | | measured |", "|---|---|---|",
             f"| 16 frames of the 10-minute 720p video: at least 3.5x torchcodec's exact mode | {'met' if r_t >= 3.5 else 'MISSED'} | "
             f"{r_t:.2f}x (vidprep {v.median:.2f} s, torchcodec {t.median:.2f} s) |",
             f"| ... and at least 4x OpenCV | {'met' if r_o >= 4 else 'MISSED'} | {r_o:.2f}x (OpenCV {o.median:.2f} s) |",
             (f"| 32 frames of a 1-hour 1080p host (measured) | - | torchcodec {speedup(hour[1], hour[0]):.2f}x, "
              f"OpenCV {speedup(hour[2], hour[0]):.2f}x (vidprep {hour[0].median:.2f} s, torchcodec {hour[1].median:.2f} s, "
              f"OpenCV {hour[2].median:.2f} s) |" if hour else
              "| 32 frames of a 1-hour 1080p host (measured) | - | not measured (VIDPREP_BENCH_NO_HOUR) |"),
             f"| Smart 10 s cut off a keyframe: at least 6x ffmpeg's re-encoding cut | {'met' if r_cut >= 6 else 'MISSED'} | "
             f"{r_cut:.2f}x (vidprep {cv.median:.2f} s, ffmpeg {cf.median:.2f} s); {cv.check} |",
             "", "### 16 frames, 10-minute 720p", "", *timing_table(rows["720p"]),
             *(["", "### 32 frames, 1-hour 1080p host", "", *timing_table(hour)] if hour else []),
             "", "### Smart cut", "", *timing_table(rows["cut"]), "", SPARSE_END]
    replace_section(SPARSE_BEGIN, SPARSE_END, "\n".join(lines))
    print(f"wrote the sparse section of {REPORT}")


TASKS = {"sample": task_sample, "decode": task_decode, "overlay": task_overlay, "cut": task_cut,
         "cap": task_cap, "batch": task_batch, "memory": task_memory, "detect": task_detect, "smart": task_smart,
         "sparse": task_sparse}
REPEATS = {"sample": 5, "decode": 2, "overlay": 9, "cut": 9, "cap": 1, "batch": 2, "memory": 1, "detect": 2, "smart": 3, "sparse": 5}


# --------------------------------------------------------------------------- report

def speedup(peer, ours):
    """The median of the per-repeat ratios peer / vidprep: the tools ran interleaved, so each
    repeat compares runs made under the same machine load."""
    return statistics.median(p / o for p, o in zip(peer.walls, ours.walls))


def by(results, task, prefix):
    for r in results:
        if r.task == task and r.tool.startswith(prefix):
            return r
    return None


def targets(results):
    rows = []

    def add(name, ok, detail):
        rows.append((name, "met" if ok else "MISSED", detail))

    s = [r for r in results if r.task == "sample"]
    if s:
        v = by(results, "sample", "vidprep")
        peers = [r for r in s if r is not v and "right frames" in r.check]
        best = min(peers, key=lambda r: r.median)
        add("Sampling 16 frames: at most half the fastest correct peer's time", speedup(best, v) >= 2,
            f"{speedup(best, v):.2f}x the fastest correct peer ({best.tool}: {best.median:.2f} s; vidprep {v.median:.2f} s)")
    if by(results, "decode", "vidprep"):
        v, f = by(results, "decode", "vidprep"), by(results, "decode", "ffmpeg")
        add("Decode at least 0.95x ffmpeg -f null", speedup(f, v) >= 0.95, f"{speedup(f, v):.2f}x (vidprep {v.median:.2f} s, ffmpeg {f.median:.2f} s)")
    if by(results, "overlay", "vidprep"):
        v, f = by(results, "overlay", "vidprep"), by(results, "overlay", "ffmpeg")
        add("Overlay + encode at least as fast as ffmpeg drawbox", speedup(f, v) >= 1.0, f"{speedup(f, v):.2f}x (vidprep {v.median:.2f} s, ffmpeg {f.median:.2f} s)")
    if by(results, "cut", "vidprep"):
        v, f = by(results, "cut", "vidprep"), by(results, "cut", "ffmpeg -ss")
        add("Frame-exact cut no slower than ffmpeg's re-encoding cut", speedup(f, v) >= 1.0 and "right frames" in v.check,
            f"{speedup(f, v):.2f}x (vidprep {v.median:.2f} s, ffmpeg {f.median:.2f} s); vidprep: {v.check}")
    if by(results, "cap", "vidprep"):
        v, r = by(results, "cap", "vidprep"), by(results, "cap", "ffmpeg")
        enc = int(v.check.split(" encode")[0].split(", ")[-1]) if "encode" in v.check else 99
        pct = float(v.check.split("(")[1].split("%")[0]) if "(" in v.check else 0
        add("Capped export: <= 2 encodes, <= half the recipe's time, >= 85% of the budget, never over",
            enc <= 2 and v.median <= r.median / 2 and 85 <= pct <= 100 and v.check.startswith("fits"),
            f"{enc} encode(s), {pct:.1f}% of the budget, {r.median / v.median:.2f}x faster than the recipe")
    b = [r for r in results if r.task == "batch"]
    if len(b) == 2:
        one, default = b
        n = os.cpu_count()
        # One worker already keeps the cores partly busy: x264 runs ENCODER_THREADS (4) frame
        # threads and decoding has its own thread. The batch gain is what is left to fill.
        add(f"Batch with {n} workers at least 1.2x faster than one worker (whose encoder is already threaded)",
            speedup(one, default) >= 1.2,
            f"{speedup(one, default):.2f}x ({one.median:.1f} s vs {default.median:.1f} s). "
            f"Cores busy: {one.cores_busy:.2f} with one worker, {default.cores_busy:.2f} with {n} workers")
    m = {r.tool: r for r in results if r.task == "memory"}
    if m:
        for what in ["cut", "export frames"]:
            a, z = m.get(f"vidprep {what}, 10 s input"), m.get(f"vidprep {what}, 10 min input")
            if a and z:
                add(f"Peak memory of {what}: 10 min input within 1.2x of the 10 s input", z.rss <= 1.2 * a.rss,
                    f"{z.rss:.0f} MiB vs {a.rss:.0f} MiB ({z.rss / a.rss:.2f}x)")
    return rows


def timing_table(rows):
    """One task's tools: times, throughput, CPU, memory, vidprep's speed-up, the check."""
    ours = next((r for r in rows if r.tool.startswith("vidprep")), None)
    lines = ["| tool | median s | runs (s) | throughput | cores busy | peak RSS MiB | vidprep speed-up | check |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ratio = f"{speedup(r, ours):.2f}x" if ours and r is not ours and not r.tool.startswith("vidprep") else "-"
        thr = f"{r.units / r.median:.0f} {r.unit_name}/s" if r.units else "-"
        busy = f"{r.cores_busy:.2f}" if r.cores_busy is not None else "-"
        lines.append(f"| {r.tool} | {r.median:.3f} | {' '.join(f'{w:.2f}' for w in r.walls)} | {thr} | {busy} | {r.rss:.0f} | {ratio} | {r.check} |")
    return lines


def write_report(results, argv, seconds):
    generated = ["<!-- generated by bench/run.py: everything up to the next marker is rewritten on each run -->", "",
                 f"Run: `python3 bench/run.py {' '.join(argv)}` on {platform.node()}: {os.cpu_count()} cores, "
                 f"{platform.machine()}, {platform.platform()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
                 f"the whole run took {seconds / 60:.1f} min.", "", f"Tools: {versions()}.", "",
                 "Each tool runs as its own process; the tools of a task run interleaved, repeat after repeat. "
                 "Median wall time; peak RSS is the largest resident set of the tool's process; "
                 "\"vidprep speed-up\" is the median over repeats of the peer's time over vidprep's in the same repeat; "
                 f"a peer whose first run took over {SLOW_RATIO}x vidprep's and over {SLOW_SECONDS:.0f} s runs once. "
                 "\"cores busy\" is CPU time (user + system) over wall time. Every output is checked "
                 "with the ffmpeg CLI (frame index painted into the source frames, frame counts).", "",
                 "## Targets", "", "| target | | measured |", "|---|---|---|"]
    for name, state, detail in targets(results):
        generated.append(f"| {name} | {state} | {detail} |")
    generated.append("")
    tasks = []
    for r in results:
        if r.task not in tasks:
            tasks.append(r.task)
    for task in tasks:
        generated += [f"## {task}", "", " ".join(TASKS[task].__doc__.split()), "",
                      *timing_table([r for r in results if r.task == task]), ""]
    generated.append("<!-- end of generated part -->")
    head = "# Benchmarks\n\n"
    tail = ""
    if REPORT.exists():
        text = REPORT.read_text()
        if "<!-- end of generated part -->" in text:
            tail = text.split("<!-- end of generated part -->", 1)[1]
    REPORT.write_text(head + "\n".join(generated) + tail)
    print(f"wrote {REPORT}")


DETECT_BEGIN = ("<!-- generated by bench/run.py --tasks detect: everything up to the next marker is rewritten "
                "on each run of the detect task -->")
DETECT_END = "<!-- end of generated detect part -->"


def write_detect_section(speed, accuracy, load):
    """The detect task's own section of docs/benchmarks.md (after the other tables)."""
    import detect_eval

    ours, peer = speed
    ratio = speedup(peer, ours)
    lines = [DETECT_BEGIN, "", "## detect", "", " ".join(task_detect.__doc__.split()), "",
             f"Run: `python3 bench/run.py {' '.join(sys.argv[1:])}` on {platform.node()}: {os.cpu_count()} cores, "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; vidprep binary `{VIDPREP}`. Tools: {versions()}. "
             f"The machine is shared: load average (1 min) {load[0]:.1f} just before the timing (other users' work) "
             f"and {load[1]:.1f} just after it (including the tools' own runs), on {os.cpu_count()} cores.", "",
             "| target | | measured |", "|---|---|---|",
             f"| At most half PySceneDetect detect-content's wall time | {'met' if ratio >= 2 else 'MISSED'} | "
             f"{ratio:.2f}x (vidprep {ours.median:.1f} s, PySceneDetect {peer.median:.1f} s) |"]
    if accuracy:
        results, labels = accuracy
        mine = results["vidprep detect"]["totals"]
        cut_f1, all_f1 = mine["cut"]["prf"][2] or 0, mine["all"]["prf"][2] or 0
        best, best_f1 = max(((t, r["totals"]["all"]["prf"][2] or 0) for t, r in results.items() if t != "vidprep detect"),
                            key=lambda x: x[1])
        lines += [f"| F1 on hard cuts at least 0.95 | {'met' if cut_f1 >= 0.95 else 'MISSED'} | {cut_f1:.2f} |",
                  f"| Accuracy at least PySceneDetect's (overall F1) | {'met' if all_f1 >= best_f1 else 'MISSED'} | "
                  f"vidprep {all_f1:.2f}, best PySceneDetect row {best_f1:.2f} ({best}) |"]
    lines += ["", "### Speed", "", *timing_table(speed), "", "### Accuracy", ""]
    if accuracy:
        lines += [detect_eval.markdown(*accuracy), "", "Every miss and false positive, with vidprep's per-frame "
                  "statistics around each: bench/work/detect_eval/details.md (`python3 bench/detect_eval.py`)."]
    else:
        lines.append("Not measured: the labelled set needs ../shared/data, which is absent.")
    lines += ["", DETECT_END]
    replace_section(DETECT_BEGIN, DETECT_END, "\n".join(lines))
    print(f"wrote the detect section of {REPORT}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", default=",".join(TASKS))
    ap.add_argument("--repeats", type=int, default=0, help="repeats per task (default: per-task)")
    ap.add_argument("--quick", action="store_true", help="one repeat each")
    ap.add_argument("--vidprep", help="use this vidprep binary instead of building target/release/vidprep")
    args = ap.parse_args()
    global VIDPREP
    if args.vidprep:
        VIDPREP = Path(args.vidprep).resolve()
    t0 = time.perf_counter()
    setup(build=not args.vidprep)
    media = ensure_media(hd_clip="cap" in args.tasks.split(","))
    WORK.mkdir(parents=True, exist_ok=True)
    results = []
    for t in args.tasks.split(","):
        n = 1 if args.quick else (args.repeats or REPEATS[t])
        print(f"{t} ({n} repeats)", flush=True)
        results += TASKS[t](media, n)
    others = [r for r in results if r.task not in ("detect", "smart-cut", "smart-insert") and not r.task.startswith("sparse")]
    if others:
        write_report(others, sys.argv[1:], time.perf_counter() - t0)


if __name__ == "__main__":
    main()
