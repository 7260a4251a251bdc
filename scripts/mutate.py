#!/usr/bin/env python3
"""Media mutation campaign: damaged and lying files through every vidprep command that reads
media, under a watchdog, with ffmpeg's own decode of each mutant as the oracle.

It takes source files (synthetic ones it generates with the ffmpeg CLI from lavfi, the real
footage in ../shared/data, a corpus folder such as the one scripts/fetch-corpus.py fills, or
files named on the command line), makes mutants of them, and runs vidprep commands on each:

  mutations   truncate (at a random byte), flip (random bits), zero (a zeroed block), noise
              (FFmpeg's `noise` bitstream filter: corrupted packets), drop (its `drop`
              expression: lost packets), dup/skip (H.264 access units duplicated or left out,
              cut at the delimiters `h264_metadata=aud=insert` puts in), setts (wrong
              timestamps: jumps, repeats, reversed DTS, zero durations, through the `setts`
              filter), header (lying MP4 and AVI headers: timescales, sample sizes and counts,
              durations, frame counts patched in place)
  commands    probe, cut, smart (cut --smart), video (export video), frames (export frames,
              PNG, checked against ffmpeg), overlay (MOT boxes), detect, and check when the
              binary has it

Each command runs in its own process group under a time limit and a memory limit (its RSS
is polled; the peak comes from wait4). A run is classified as

  hang        still running at the time limit (killed)
  crash       exit 101 (a Rust panic), 134 (abort) or a signal
  memory      RSS over the limit (killed)
  unnamed     an error (exit 1 or 2) whose message does not name the mutant's file
  leftover    `.vidprep-tmp-*` files or folders left beside the output or the mutant
  half        an output named on the command line left behind by a failed command
  frames      an exported frame unlike ffmpeg's decode of the same frame of the mutant (PSNR
              under --psnr dB) that frames.json does not list as damaged (`damage` of its source),
              or `check --json` reporting `differs` (vidprep's reads unlike its plain decode);
              check's exit 1 with a report is its answer, not an error (a `failed` source must
              name the file)
  ok          anything else (success, or a clean error naming the file)

and the findings (with the command line that reproduces each and the mutant, kept under
WORK/findings/) go to WORK/summary.json and WORK/summary.md.

Examples:
  python3 scripts/mutate.py --budget 60 --synthetic-only              # the CI smoke (about 1-2 min)
  nice -n 19 python3 scripts/mutate.py --budget 600 --seed 7 --corpus ~/.cache/vidprep-corpus
"""

import argparse
import json
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("VIDPREP_SHARED_DATA") or ROOT.parent / "shared" / "data")
VIDEO_EXTS = {".mp4", ".mov", ".m4v", ".mkv", ".webm", ".avi", ".ts", ".mts", ".m2ts", ".ogv",
              ".ogg", ".mpg", ".mpeg", ".flv", ".3gp", ".wmv", ".asf", ".gif", ".y4m", ".dv",
              ".mxf", ".nut", ".vob", ".avif", ".rmvb", ".rm", ".mpv", ".m1v", ".m2v", ".h264",
              ".264", ".h265", ".265", ".hevc"}
EXIT_CRASH = {101, 134}

# Synthetic sources: (name, ffmpeg output arguments). testsrc2 moves every frame, so a wrong
# frame is far from the right one (PSNR well under the threshold).
SYNTHETIC = [
    ("h264_bframes.mp4", ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=3",
                          "-f", "lavfi", "-i", "sine=frequency=440:duration=3",
                          "-c:v", "libx264", "-bf", "3", "-g", "25", "-pix_fmt", "yuv420p",
                          "-c:a", "aac", "-shortest"]),
    ("h264_opengop.mkv", ["-f", "lavfi", "-i", "testsrc2=size=256x144:rate=30000/1001:duration=3",
                          "-c:v", "libx264", "-x264-params", "open-gop=1:keyint=30:bframes=2",
                          "-pix_fmt", "yuv420p"]),
    ("mpeg4_asp.avi", ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=3",
                       "-c:v", "mpeg4", "-bf", "2", "-q:v", "4"]),
    ("mpeg2.ts", ["-f", "lavfi", "-i", "testsrc2=size=352x288:rate=25:duration=3",
                  "-f", "lavfi", "-i", "sine=duration=3", "-c:v", "mpeg2video", "-bf", "2",
                  "-c:a", "mp2", "-shortest"]),
    ("vp9.webm", ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=24:duration=2",
                  "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-g", "12"]),
    ("odd_size.mp4", ["-f", "lavfi", "-i", "testsrc2=size=193x109:rate=15:duration=3",
                      "-c:v", "libx264", "-pix_fmt", "yuv444p"]),
    ("mjpeg.mov", ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=10:duration=3",
                   "-c:v", "mjpeg", "-q:v", "5"]),
]


def sh(args, **kw):
    return subprocess.run([str(a) for a in args], capture_output=True, **kw)


def ffprobe_json(path):
    p = sh(["ffprobe", "-v", "error", "-print_format", "json", "-show_streams", "-show_format", path],
           timeout=60)
    try:
        return json.loads(p.stdout or b"{}")
    except ValueError:
        return {}


def make_synthetic(folder):
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for name, args in SYNTHETIC:
        path = folder / name
        if not path.exists():
            tmp = folder / ("tmp-" + name)
            p = sh(["ffmpeg", "-v", "error", "-y", *args, tmp], timeout=300)
            if p.returncode != 0:
                print(f"synthetic {name}: ffmpeg cannot make it ({p.stderr.decode(errors='replace').strip()[-200:]}); left out",
                      file=sys.stderr)
                continue
            tmp.rename(path)
        out.append(path)
    return out


def find_sources(args, work):
    sources = make_synthetic(work.parent / "synthetic" if args.synthetic_dir is None else Path(args.synthetic_dir))
    if not args.synthetic_only:
        roots = [Path(p) for p in args.sources]
        if args.corpus:
            roots.append(Path(args.corpus).expanduser())
        if args.shared and SHARED.is_dir():
            roots.append(SHARED)
        for root in roots:
            files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
            for f in files:
                # (An empty file has nothing to mutate: a 0-byte `.mp4` of the corpus.)
                if f.suffix.lower() in VIDEO_EXTS and 0 < f.stat().st_size <= args.max_source_mb << 20:
                    sources.append(f)
    return sources


# ---------------------------------------------------------------------------------------
# Mutations: each takes (rng, source, destination without suffix) and returns (path, how)
# or None when it does not apply to the source.


def m_truncate(rng, src, dst):
    data = src.read_bytes()
    cut = rng.randrange(len(data) // 8, len(data))
    out = dst.with_suffix(src.suffix)
    out.write_bytes(data[:cut])
    return out, f"truncated at byte {cut} of {len(data)}"


def m_flip(rng, src, dst):
    data = bytearray(src.read_bytes())
    n = rng.choice([1, 4, 32, 256])
    start = min(len(data) - 1, rng.choice([0, 512, len(data) // 10]))
    spots = sorted(rng.randrange(start, len(data)) for _ in range(n))
    for i in spots:
        data[i] ^= 1 << rng.randrange(8)
    out = dst.with_suffix(src.suffix)
    out.write_bytes(bytes(data))
    return out, f"{n} bits flipped at bytes {spots[:8]}{'...' if n > 8 else ''}"


def m_zero(rng, src, dst):
    data = bytearray(src.read_bytes())
    size = rng.choice([16, 188, 4096, 65536])
    at = rng.randrange(0, max(1, len(data) - size))
    data[at:at + size] = bytes(min(size, len(data) - at))
    out = dst.with_suffix(src.suffix)
    out.write_bytes(bytes(data))
    return out, f"{size} bytes zeroed at {at}"


def remux(src, out, extra, how):
    p = sh(["ffmpeg", "-v", "error", "-y", "-i", src, "-map", "0", "-c", "copy", *extra, out], timeout=120)
    if p.returncode != 0 or not out.exists() or out.stat().st_size == 0:
        return None
    return out, how


def copy_suffix(src):
    # Containers that take any codec back: keep MP4/MOV/MKV/TS; others go to MKV.
    s = src.suffix.lower()
    return s if s in {".mp4", ".mov", ".mkv", ".ts", ".webm", ".avi"} else ".mkv"


def m_noise(rng, src, dst):
    amount = rng.choice([1000, 10000, 100000])
    return remux(src, dst.with_suffix(copy_suffix(src)), ["-bsf:v", f"noise=amount={amount}"],
                 f"noise bsf amount={amount} (one byte in {amount} of each packet corrupted)")


def m_drop(rng, src, dst):
    k = rng.choice([5, 13, 40])
    expr = rng.choice([f"not(mod(n\\,{k}))", f"gte(n\\,{k})*lt(n\\,{k + 3})"])
    return remux(src, dst.with_suffix(copy_suffix(src)), ["-bsf:v", f"noise=drop={expr}"],
                 f"noise bsf drop={expr} (video packets dropped)")


def m_setts(rng, src, dst):
    k = rng.randrange(2, 30)
    choice = rng.choice([
        (f"pts=if(eq(N\\,{k})\\,PTS+100000\\,PTS)", f"packet {k}'s PTS jumps ahead"),
        (f"pts=if(eq(N\\,{k})\\,PREV_OUTPTS\\,PTS)", f"packet {k} repeats the previous PTS"),
        (f"dts=if(eq(N\\,{k})\\,DTS+1000\\,DTS)", f"packet {k}'s DTS ahead of the next"),
        ("duration=0", "every packet's duration 0"),
        ("ts=TS*3/2", "timestamps scaled by 3/2"),
        (f"ts=if(gte(N\\,{k})\\,TS+900000\\,TS)", f"a 10 s gap in timestamps after packet {k}"),
    ])
    expr, how = choice
    return remux(src, dst.with_suffix(copy_suffix(src)), ["-bsf:v", f"setts={expr}"], f"setts {expr}: {how}")


def h264_units(src, folder):
    """The source's H.264 video as Annex B access units (AUD-delimited), or None."""
    info = ffprobe_json(src)
    v = [s for s in info.get("streams", []) if s.get("codec_type") == "video"]
    if not v or v[0].get("codec_name") != "h264":
        return None, info
    es = folder / "es.h264"
    p = sh(["ffmpeg", "-v", "error", "-y", "-i", src, "-map", "0:v:0", "-c", "copy",
            "-bsf:v", "h264_mp4toannexb,h264_metadata=aud=insert", "-f", "h264", es], timeout=120)
    if p.returncode != 0:
        return None, info
    data = es.read_bytes()
    es.unlink()
    starts = [m.start() for m in re.finditer(b"\x00\x00\x00\x01\x09", data)]
    units = [data[a:b] for a, b in zip(starts, starts[1:] + [len(data)])]
    return units, info


def m_units(rng, src, dst):
    units, info = h264_units(src, dst.parent)
    if not units or len(units) < 4:
        return None
    v = [s for s in info["streams"] if s.get("codec_type") == "video"][0]
    rate = v.get("avg_frame_rate") or v.get("r_frame_rate") or "25/1"
    if rate in ("0/0", "0/1"):
        rate = "25/1"
    i = rng.randrange(1, len(units) - 1)
    if rng.random() < 0.5:
        copies = rng.choice([1, 2])
        units = units[:i] + [units[i]] * copies + units[i:]
        how = f"access unit {i} repeated {copies} more time(s)"
    else:
        n = rng.choice([1, 3])
        units = units[:i] + units[i + n:]
        how = f"access units {i}..{i + n - 1} left out"
    es = dst.parent / (dst.name + ".h264")
    es.write_bytes(b"".join(units))
    out = dst.with_suffix(".mp4")
    p = sh(["ffmpeg", "-v", "error", "-y", "-r", rate, "-f", "h264", "-i", es, "-c", "copy", out], timeout=120)
    es.unlink()
    if p.returncode != 0 or not out.exists():
        return None
    return out, how + f" (Annex B, remuxed to MP4 at {rate})"


def mp4_boxes(data):
    """(type, offset of its payload, payload size) of every box, descending into containers."""
    containers = {b"moov", b"trak", b"mdia", b"minf", b"stbl", b"edts", b"dinf", b"udta"}
    out = []

    def walk(start, end):
        i = start
        while i + 8 <= end:
            size, kind = struct.unpack(">I4s", data[i:i + 8])
            head = 8
            if size == 1 and i + 16 <= end:
                size = struct.unpack(">Q", data[i + 8:i + 16])[0]
                head = 16
            elif size == 0:
                size = end - i
            if size < head or i + size > end:
                return
            out.append((kind, i + head, size - head))
            if kind in containers:
                walk(i + head, i + size)
            i += size

    walk(0, len(data))
    return out


def m_header(rng, src, dst):
    data = bytearray(src.read_bytes())
    s = src.suffix.lower()
    how = None
    if s in {".mp4", ".mov", ".m4v", ".3gp"}:
        boxes = [b for b in mp4_boxes(bytes(data)) if b[0] in
                 {b"mdhd", b"mvhd", b"tkhd", b"stts", b"stsz", b"stco", b"stss", b"ctts", b"elst", b"stsc"}]
        if not boxes:
            return None
        kind, at, size = rng.choice(boxes)
        if size < 16:
            return None
        # Patch one 32-bit field after the version/flags word with a lie.
        field = rng.randrange(1, max(2, min(size // 4, 8)))
        pos = at + 4 * field
        old = struct.unpack(">I", data[pos:pos + 4])[0]
        new = rng.choice([0, 1, old * 2 + 1, 0x7FFFFFFF, 0xFFFFFFFF, max(0, old - 1)])
        data[pos:pos + 4] = struct.pack(">I", new & 0xFFFFFFFF)
        how = f"{kind.decode()} word {field} (byte {pos}) {old} -> {new & 0xFFFFFFFF}"
    elif s == ".avi":
        at = bytes(data).find(b"avih")
        if at < 0:
            return None
        # avih: dwMicroSecPerFrame, ..., dwTotalFrames (+16), ...; strh's rate/scale follow.
        field = rng.choice([0, 16, 24, 32, 36])
        pos = at + 8 + field
        old = struct.unpack("<I", data[pos:pos + 4])[0]
        new = rng.choice([0, 1, 0xFFFFFFFF, old * 10 + 1])
        data[pos:pos + 4] = struct.pack("<I", new & 0xFFFFFFFF)
        how = f"avih field +{field} {old} -> {new}"
    else:
        return None
    out = dst.with_suffix(src.suffix)
    out.write_bytes(bytes(data))
    return out, "lying header: " + how


MUTATIONS = {
    "truncate": m_truncate,
    "flip": m_flip,
    "zero": m_zero,
    "noise": m_noise,
    "drop": m_drop,
    "setts": m_setts,
    "units": m_units,
    "header": m_header,
}

# ---------------------------------------------------------------------------------------
# Commands: each gives the argument list for a mutant and an output folder, and the outputs
# it names (which a failed command must not leave behind).


def c_probe(m, out):
    return ["probe", m, "--json", "--count-frames"], []


def c_cut(m, out):
    return ["cut", m, "--start", "0.2s", "--end", "1.6s", "-o", out / "cut.mp4"], [out / "cut.mp4"]


def c_smart(m, out):
    return ["cut", m, "--start", "0.3s", "--end", "1.9s", "--smart", "-o", out / "smart.mp4"], [out / "smart.mp4"]


def c_video(m, out):
    return ["export", "video", m, "-o", out / "video.mp4", "--max-size", "160x120"], [out / "video.mp4"]


def c_frames(m, out):
    return ["export", "frames", m, "--out-dir", out / "frames", "--count", "6", "--format", "png"], [out / "frames"]


def c_overlay(m, out):
    boxes = out / "gt.txt"
    boxes.write_text("".join(f"{f},1,{10 + f},{10 + f},40,30,1,-1,-1,-1\n" for f in range(1, 80)))
    return ["overlay", m, "--boxes", boxes, "--format", "mot", "-o", out / "overlay.mp4"], [out / "overlay.mp4"]


def c_detect(m, out):
    return ["detect", m, "-o", out / "events.jsonl"], [out / "events.jsonl"]


def c_check(m, out):
    return ["check", m, "--json"], []


COMMANDS = {
    "probe": c_probe,
    "cut": c_cut,
    "smart": c_smart,
    "video": c_video,
    "frames": c_frames,
    "overlay": c_overlay,
    "detect": c_detect,
    "check": c_check,
}


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def watch(argv, cwd, time_limit, mem_limit_mb, stdout_to=None):
    """Runs argv in its own process group: (status, returncode, stderr, seconds, peak RSS MB).
    Its standard output goes to the file `stdout_to` (else nowhere)."""
    start = time.monotonic()
    err = tempfile.TemporaryFile()
    out = open(stdout_to, "wb") if stdout_to else subprocess.DEVNULL
    proc = subprocess.Popen([str(a) for a in argv], cwd=cwd, stdout=out, stderr=err,
                            start_new_session=True)
    if stdout_to:
        out.close()
    status = None
    peak = 0
    while True:
        pid, wstatus, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            peak = max(peak, usage.ru_maxrss)
            rc = os.waitstatus_to_exitcode(wstatus)
            break
        peak = max(peak, rss_kb(proc.pid))
        elapsed = time.monotonic() - start
        if elapsed > time_limit:
            status = "hang"
        elif peak > mem_limit_mb * 1024:
            status = "memory"
        if status:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            _, wstatus, usage = os.wait4(proc.pid, 0)
            rc = os.waitstatus_to_exitcode(wstatus)
            break
        time.sleep(0.02)
    proc.returncode = rc
    err.seek(0)
    stderr = err.read().decode(errors="replace")
    err.close()
    return status, rc, stderr, time.monotonic() - start, peak / 1024


def leftovers(*folders):
    found = []
    for folder in folders:
        for p in Path(folder).rglob(".vidprep-tmp-*"):
            found.append(str(p))
    return found


def psnr(image, mutant, index):
    """PSNR (dB) of `image` against frame `index` of ffmpeg's decode of `mutant`, or None."""
    # Both as RGB (the PNG is; ffmpeg's frame is converted as `ffmpeg -pix_fmt rgb24` does), so
    # that the chroma of a real picture is not resampled on one side only.
    graph = (f"[1:v]select=eq(n\\,{index}),format=rgb24[ref];[0:v]format=rgb24[img];"
             "[img][ref]scale2ref=flags=neighbor[a][b];[a][b]psnr")
    # The mutant is decoded with one thread: where a stream is damaged, a frame-threaded
    # decode conceals differently from run to run, and vidprep promises `ffmpeg -threads 1`'s
    # pixels (a clean stream decodes the same with any threads).
    p = sh(["ffmpeg", "-v", "info", "-nostats", "-i", image, "-an", "-sn", "-dn",
            "-threads", "1", "-i", mutant,
            "-filter_complex", graph,
            "-frames:v", "1", "-f", "null", "-"], timeout=120)
    m = re.search(r"average:(inf|[0-9.]+)", p.stderr.decode(errors="replace"))
    if not m:
        return None
    return float("inf") if m.group(1) == "inf" else float(m.group(1))


def damaged_frames(frames_json):
    """The source frames frames.json says are damaged, and whether any damage is listed."""
    listed = set()
    any_damage = False
    for src in frames_json.get("sources", []):
        d = src.get("damage")
        if not d:
            continue
        any_damage = True
        listed.update(d.get("concealed_frames", []) or [])
        for kind in ("lost_packets", "undecodable_packets", "corrupt_packets", "demuxer_errors"):
            for entry in d.get(kind, []) or []:
                a, b = entry.get("suspect_frames", [0, 0])
                listed.update(range(a, b))
        listed.update(t.get("frame") for t in d.get("truncated_images", []) or [])
    return listed, any_damage


def check_frames(mutant, folder, threshold):
    """Frames unlike ffmpeg's decode that frames.json does not list as damaged."""
    try:
        fj = json.loads((folder / "frames.json").read_text())
    except (OSError, ValueError) as e:
        return [f"frames.json unreadable: {e}"], []
    listed, any_damage = damaged_frames(fj)
    bad, measured = [], []
    for entry in fj.get("frames", fj.get("images", [])):
        name = entry.get("file") or entry.get("path") or entry.get("name")
        frame = entry.get("source_frame")
        if frame is None:
            frame = (entry.get("origin") or {}).get("source_frame")
        if name is None or frame is None:
            continue
        value = psnr(folder / name, mutant, frame)
        measured.append((frame, value))
        if value is None or value < threshold:
            if frame in listed:
                continue
            bad.append(f"frame {frame} ({name}): PSNR {value} dB against ffmpeg's frame {frame}"
                       + (" (other damage listed)" if any_damage else " (no damage listed)"))
    return bad, measured


def names_file(stderr, mutant):
    return mutant.name in stderr


def check_report(path, mutant):
    """`vidprep check --json`'s report of the mutant (exit 1 means "not exact", its answer on
    standard output): the findings it holds. `differs` is vidprep's own oracle saying its reads
    give frames a plain decode does not (a "frames" finding); `failed` must name the file; a
    report that does not parse is None (the exit status and standard error decide then)."""
    try:
        report = json.loads(Path(path).read_text())
        sources = report["sources"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    findings = []
    for s in sources:
        verdict = s.get("verdict")
        if verdict == "differs":
            diffs = s.get("differences") or []
            first = "; ".join(f"{d.get('read')} {d.get('what')} frame {d.get('frame')}" for d in diffs[:3])
            findings.append(("frames", f"check: vidprep's reads differ from the plain decode "
                                       f"({s.get('differences_total', len(diffs))} differences: {first})"))
        elif verdict == "failed" and mutant.name not in json.dumps(s):
            findings.append(("unnamed", f"check failed without naming {mutant.name}: {json.dumps(s)[:400]}"))
    return findings


def run_one(args, vidprep, mutant, command, work, n):
    out = work / f"out-{n}-{command}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    argv, outputs = COMMANDS[command](mutant, out)
    stdout_to = out / "stdout.json" if command == "check" else None
    status, rc, stderr, seconds, peak = watch([vidprep, *argv], out, args.time_limit, args.mem_limit,
                                              stdout_to)
    findings = []
    report = check_report(stdout_to, mutant) if stdout_to and not status and rc in (0, 1) else None
    if status:
        findings.append((status, f"{status} after {seconds:.1f} s (peak {peak:.0f} MB)"))
    elif rc in EXIT_CRASH or rc < 0:
        findings.append(("crash", f"exit {rc}: {stderr.strip()[-400:]}"))
    elif report is not None:
        findings += report
    elif rc != 0 and not names_file(stderr, mutant):
        findings.append(("unnamed", f"exit {rc}, the message does not name {mutant.name}: {stderr.strip()[-400:]}"))
    # A command killed by the watchdog (SIGKILL) cannot clean up: its temporaries are the next
    # run's to remove, not a finding of their own.
    left = [] if status else leftovers(out, mutant.parent)
    if left:
        findings.append(("leftover", f"temporaries left: {left[:4]}"))
    if rc != 0 and not status:
        half = [str(o) for o in outputs if o.exists()]
        if half:
            findings.append(("half", f"exit {rc} but left {half}"))
    measured = []
    if command == "frames" and rc == 0 and not status:
        bad, measured = check_frames(mutant, out / "frames", args.psnr)
        findings += [("frames", b) for b in bad]
    record = {
        "command": command,
        "argv": ["vidprep", *[str(a) for a in argv]],
        "exit": rc,
        "seconds": round(seconds, 2),
        "peak_mb": round(peak, 1),
        "findings": [{"class": c, "detail": d} for c, d in findings],
    }
    if measured:
        record["psnr"] = [[f, v] for f, v in measured]
    if not findings:
        shutil.rmtree(out, ignore_errors=True)
    return record


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--vidprep", default=str(ROOT / "target" / "debug" / "vidprep"), help="the binary (default target/debug/vidprep)")
    ap.add_argument("--seed", type=int, default=1, help="random seed: the same seed and sources give the same mutants")
    ap.add_argument("--budget", type=float, default=600, help="seconds to spend on mutants (default 600)")
    ap.add_argument("--work", help="folder for sources, mutants, findings and the summary (default: a new temporary folder)")
    ap.add_argument("--synthetic-dir", help="where the synthetic sources are generated (default WORK/../synthetic)")
    ap.add_argument("--synthetic-only", action="store_true", help="only the generated synthetic sources (the smoke)")
    ap.add_argument("--no-shared", dest="shared", action="store_false", help="leave out ../shared/data")
    ap.add_argument("--corpus", help="a folder of real media to mutate too (scripts/fetch-corpus.py's cache)")
    ap.add_argument("--max-source-mb", type=int, default=64, help="leave out sources larger than this (default 64)")
    ap.add_argument("--mutations", default=",".join(MUTATIONS), help=f"which mutations (default all: {','.join(MUTATIONS)})")
    ap.add_argument("--commands", default=None, help=f"which commands (default all the binary has: {','.join(COMMANDS)})")
    ap.add_argument("--per-mutant", type=int, default=3, help="commands run on each mutant, probe always among them (default 3)")
    ap.add_argument("--time-limit", type=float, default=60, help="seconds before a command counts as a hang (default 60)")
    ap.add_argument("--mem-limit", type=int, default=2048, help="MB of RSS before a command counts as unbounded (default 2048)")
    ap.add_argument("--psnr", type=float, default=30.0, help="dB under which an exported frame is unlike ffmpeg's (default 30)")
    ap.add_argument("sources", nargs="*", help="more source files or folders")
    args = ap.parse_args()

    vidprep = Path(args.vidprep).resolve()
    if not vidprep.exists():
        ap.error(f"{vidprep}: no such binary; build it (cargo build) or give --vidprep PATH")
    work = Path(args.work).resolve() if args.work else Path(tempfile.mkdtemp(prefix="vidprep-mutate-"))
    work.mkdir(parents=True, exist_ok=True)
    mutants_dir = work / "mutants"
    findings_dir = work / "findings"
    shutil.rmtree(mutants_dir, ignore_errors=True)
    mutants_dir.mkdir()
    findings_dir.mkdir(exist_ok=True)
    rng = random.Random(args.seed)

    commands = args.commands.split(",") if args.commands else list(COMMANDS)
    has_check = sh([vidprep, "check", "--help"], timeout=30).returncode == 0
    if not has_check and "check" in commands:
        commands.remove("check")
    mutations = args.mutations.split(",")
    sources = find_sources(args, work)
    if not sources:
        sys.exit("no sources")
    print(f"{len(sources)} sources, mutations {mutations}, commands {commands}, budget {args.budget:.0f} s",
          file=sys.stderr)

    started = time.monotonic()
    cpu0 = os.times()
    records = []
    n = 0
    while time.monotonic() - started < args.budget:
        src = rng.choice(sources)
        kind = rng.choice(mutations)
        dst = mutants_dir / f"mut-{n:05d}-{kind}-{src.stem[:40]}"
        try:
            made = MUTATIONS[kind](rng, src, dst)
        except (subprocess.TimeoutExpired, OSError, ValueError, IndexError, struct.error) as e:
            print(f"mutation {kind} of {src}: {e}", file=sys.stderr)
            made = None
        if not made:
            n += 1
            continue
        mutant, how = made
        chosen = ["probe"] + rng.sample([c for c in commands if c != "probe"],
                                        min(args.per_mutant - 1, len(commands) - 1))
        runs = []
        for command in chosen:
            if time.monotonic() - started >= args.budget:
                break
            runs.append(run_one(args, vidprep, mutant, command, work, n))
        bad = any(r["findings"] for r in runs)
        if bad:
            kept = findings_dir / mutant.name
            shutil.copy2(mutant, kept)
            for r in runs:
                r["argv"] = [str(kept) if a == str(mutant) else a for a in r["argv"]]
        records.append({"mutant": mutant.name, "source": str(src), "mutation": kind, "how": how,
                        "kept": bad, "runs": runs})
        mutant.unlink(missing_ok=True)
        n += 1
        print(f"[{time.monotonic() - started:6.0f}s] {mutant.name}: {how}: "
              + ", ".join(f"{r['command']}={r['exit']}" + ("!" if r["findings"] else "") for r in runs),
              file=sys.stderr)

    cpu1 = os.times()
    summary = write_summary(work, args, sources, records, time.monotonic() - started,
                            (cpu1.children_user + cpu1.children_system) - (cpu0.children_user + cpu0.children_system))
    print(f"summary: {work / 'summary.md'} ({summary['runs']} runs of {summary['mutants']} mutants, "
          f"{sum(summary['classes'].values())} findings)", file=sys.stderr)
    return 1 if summary["classes"] else 0


def write_summary(work, args, sources, records, wall, cpu):
    classes = {}
    findings = []
    for rec in records:
        for run in rec["runs"]:
            for f in run["findings"]:
                classes[f["class"]] = classes.get(f["class"], 0) + 1
                findings.append({"class": f["class"], "detail": f["detail"], "mutant": rec["mutant"],
                                 "source": rec["source"], "how": rec["how"],
                                 "command": " ".join(run["argv"])})
    summary = {
        "seed": args.seed, "budget_s": args.budget, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
        "sources": [str(s) for s in sources], "mutants": len(records),
        "runs": sum(len(r["runs"]) for r in records), "classes": classes, "findings": findings,
        "records": records,
    }
    (work / "summary.json").write_text(json.dumps(summary, indent=1))
    lines = [f"# Mutation campaign: seed {args.seed}, {wall:.0f} s wall, {cpu:.0f} s CPU", "",
             f"{len(sources)} sources, {len(records)} mutants, {summary['runs']} command runs.", ""]
    runs_by = {}
    for rec in records:
        for run in rec["runs"]:
            k = run["command"]
            runs_by.setdefault(k, [0, 0])
            runs_by[k][0] += 1
            runs_by[k][1] += 1 if run["exit"] == 0 else 0
    lines += ["| command | runs | exit 0 |", "| --- | --- | --- |"]
    lines += [f"| {k} | {v[0]} | {v[1]} |" for k, v in sorted(runs_by.items())]
    lines += ["", "| class | findings |", "| --- | --- |"]
    lines += [f"| {k} | {v} |" for k, v in sorted(classes.items())] or ["| (none) | 0 |"]
    lines += [""]
    for f in findings:
        lines += [f"- **{f['class']}** `{f['command']}`: {f['detail']}  ",
                  f"  mutant of `{f['source']}`: {f['how']}"]
    (work / "summary.md").write_text("\n".join(lines) + "\n")
    return summary


if __name__ == "__main__":
    sys.exit(main())
