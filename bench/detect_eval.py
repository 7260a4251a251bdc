#!/usr/bin/env python3
"""Scores shot-boundary detectors on the labelled set that bench/detect_set.py builds:
`vidprep detect` against PySceneDetect's detectors, each run as a user would run it.

Usage: python3 bench/detect_eval.py [--vidprep PATH] [--out DIR] [--only NAMES|field]

Builds (or reuses) the set, runs every tool on every video, prints the accuracy tables
(markdown) and writes DIR/details.md (default bench/work/detect_eval/): every miss and false
positive of every tool, vidprep's per-frame statistics around each of its errors, and the
raw boundaries of each tool per video. bench/run.py's `detect` task calls evaluate() and
markdown() for docs/benchmarks.md.

The tools:
- vidprep: `vidprep detect VIDEO -o proposals.jsonl --json --stats stats.csv` (defaults).
  Its `boundaries` are taken as they are: kind cut, fade or dissolve, [start, end).
- PySceneDetect (CLI, default settings, its automatic downscale): `scenedetect -i VIDEO
  detect-content list-scenes`, the same with detect-adaptive, with detect-threshold (which
  finds fades to and from black only), and with detect-content and detect-threshold
  together. Each scene after the first starts at a frame F (the CSV's 1-based "Start Frame"
  minus 1): that is a cut at F. (On the MPEG-4 AVI, PySceneDetect's frame numbers are one
  late throughout; the +-1 tolerance of cuts absorbs that.)

Matching (one to one, greedy by closeness): a detected cut matches a true cut within +-1
frame. A detected transition [s, e) matches a true transition it overlaps. A detected cut at
F matches a true transition [s, e) when s-1 <= F <= e (inside it or within one frame of it),
and likewise a detected transition matches a true cut at F. So a detector that marks a
gradual transition by a single cut frame gets it right; whether it named the kind right is
counted separately ("kind right", among the matched).

Per kind K (cut, fade, dissolve): TP = true boundaries of kind K matched, FN = those missed,
FP = unmatched detections the tool reported as kind K (PySceneDetect reports only cuts, so
all its false positives count against cuts). Overall: every matched, missed and unmatched.
"Hard negatives" counts the unmatched detections that overlap the hard-negative segments.
"""

import argparse
import csv
import json
import subprocess
import sys
import time
from pathlib import Path

import detect_set

ROOT = Path(__file__).resolve().parent.parent
SCENEDETECT = ROOT / "bench" / ".venv" / "bin" / "scenedetect"
KINDS = ("cut", "fade", "dissolve")
# Tool name -> PySceneDetect detectors (None: vidprep).
TOOLS = {"vidprep detect": None,
         "PySceneDetect detect-content": ["detect-content"],
         "PySceneDetect detect-adaptive": ["detect-adaptive"],
         "PySceneDetect detect-threshold": ["detect-threshold"],
         "PySceneDetect detect-content + detect-threshold": ["detect-content", "detect-threshold"]}


# --------------------------------------------------------------------------- running

def run_vidprep(vidprep, video, work):
    stats = work / f"{video.stem}.vidprep.csv"
    p = subprocess.run([str(vidprep), "detect", str(video), "-o", str(work / f"{video.stem}.jsonl"), "--json",
                        "--stats", str(stats)], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"vidprep detect failed ({p.returncode}): {vidprep} detect {video} ...\n{p.stderr[-2000:]}")
    out = json.loads(p.stdout)
    found = [{"kind": b["kind"], "start": b["start"], "end": b["end"]} for b in out["boundaries"]]
    return found, out["frames"]


def run_scenedetect(detectors, video, work):
    name = f"{video.stem}.{'+'.join(detectors)}.csv"
    p = subprocess.run([str(SCENEDETECT), "-q", "-i", str(video), "-o", str(work), *detectors, "list-scenes",
                        "--skip-cuts", "-f", name], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"scenedetect {' '.join(detectors)} failed on {video}:\n{p.stderr[-2000:]}")
    with open(work / name, newline="") as f:
        rows = list(csv.DictReader(f))
    starts = [int(r["Start Frame"]) - 1 for r in rows]
    frames = int(rows[-1]["End Frame"]) if rows else None
    # The first scene starts the video, not at a cut. (On the AVI its Start Frame is 2: AVI
    # keeps decode times, B-frames stamp the first frame 40 ms, and PySceneDetect counts
    # frames from timestamps.)
    return [{"kind": "cut", "start": s, "end": s} for s in starts[1:]], frames


# --------------------------------------------------------------------------- scoring

def closeness(t, f):
    """How well detection f fits true boundary t (lower is closer), or None if it does not."""
    t_point, f_point = t["kind"] == "cut", f["kind"] == "cut"
    if t_point and f_point:
        d = abs(t["start"] - f["start"])
        return d if d <= 1 else None
    if t_point or f_point:
        p, (s, e) = (t["start"], (f["start"], f["end"])) if t_point else (f["start"], (t["start"], t["end"]))
        if s <= p < e:
            return 0
        return 1 if s - 1 <= p <= e else None
    overlap = min(t["end"], f["end"]) - max(t["start"], f["start"])
    if overlap <= 0:
        return None
    return 1 - overlap / (max(t["end"], f["end"]) - min(t["start"], f["start"]))


def match(truth, found):
    """One-to-one pairs (truth index, found index), closest first."""
    cands = sorted((c, i, j) for i, t in enumerate(truth) for j, f in enumerate(found)
                   if (c := closeness(t, f)) is not None)
    used_t, used_f, pairs = set(), set(), []
    for _c, i, j in cands:
        if i not in used_t and j not in used_f:
            used_t.add(i)
            used_f.add(j)
            pairs.append((i, j))
    return pairs


def overlaps(f, span):
    return f["start"] < span["end"] and max(f["end"], f["start"] + 1) > span["start"]


def score_video(label, found):
    """Matches one video's detections to its truth; returns counts and the errors."""
    truth = label["boundaries"]
    pairs = match(truth, found)
    matched_t = {i for i, _ in pairs}
    matched_f = {j for _, j in pairs}
    misses = [truth[i] for i in range(len(truth)) if i not in matched_t]
    fps = [found[j] for j in range(len(found)) if j not in matched_f]
    negative_fps = [(f, n["kind"]) for f in fps for n in label["negatives"] if overlaps(f, n)]
    return {"pairs": [(truth[i], found[j]) for i, j in pairs], "misses": misses, "fps": fps,
            "negative_fps": negative_fps}


def prf(tp, fp, fn):
    p = tp / (tp + fp) if tp + fp else None
    r = tp / (tp + fn) if tp + fn else None
    f1 = 2 * p * r / (p + r) if p and r else (0.0 if p is not None and r is not None else None)
    return p, r, f1


def totals(scores):
    """Per kind and overall TP/FP/FN over every video of one tool."""
    out = {}
    for k in (*KINDS, "all"):
        want = (lambda b: True) if k == "all" else (lambda b, k=k: b["kind"] == k)
        tp = sum(want(t) for s in scores for t, _ in s["pairs"])
        fn = sum(want(t) for s in scores for t in s["misses"])
        fp = sum(want(f) for s in scores for f in s["fps"])
        out[k] = {"tp": tp, "fp": fp, "fn": fn, "prf": prf(tp, fp, fn)}
    matched = [(t, f) for s in scores for t, f in s["pairs"]]
    out["kind_right"] = (sum(t["kind"] == f["kind"] for t, f in matched), len(matched))
    negatives = {}
    for s in scores:
        for _f, kind in s["negative_fps"]:
            negatives[kind] = negatives.get(kind, 0) + 1
    out["negatives"] = negatives
    return out


# --------------------------------------------------------------------------- the run

def evaluate(vidprep, out_dir=None, only=None):
    """Runs every tool on every video of the set (or those named in `only`); returns {tool:
    {"videos": {name: score}, "found": {name: detections}, "seconds": wall time over the
    videos, "totals": ...}} and the labels."""
    index = detect_set.build(only=only)
    labels = [json.loads((index.parent / n).read_text()) for n in json.loads(index.read_text())]
    work = Path(out_dir or ROOT / "bench" / "work" / "detect_eval")
    work.mkdir(parents=True, exist_ok=True)
    results = {t: {"videos": {}, "found": {}, "seconds": 0.0} for t in TOOLS}
    for label in labels:
        video = index.parent / label["video"]
        for tool, detectors in TOOLS.items():
            began = time.perf_counter()
            if detectors is None:
                found, frames = run_vidprep(vidprep, video, work)
            else:
                found, frames = run_scenedetect(detectors, video, work)
            results[tool]["seconds"] += time.perf_counter() - began
            if frames is not None and frames != label["frames"]:
                print(f"  note: {tool} counted {frames} frames in {video.name}, the truth has {label['frames']}")
            results[tool]["videos"][label["video"]] = score_video(label, found)
            results[tool]["found"][label["video"]] = found
        v = results["vidprep detect"]["videos"][label["video"]]
        print(f"  {label['video']}: vidprep {len(v['pairs'])}/{len(label['boundaries'])} found, "
              f"{len(v['fps'])} false", flush=True)
    for tool in TOOLS:
        results[tool]["totals"] = totals(list(results[tool]["videos"].values()))
    (work / "details.md").write_text(details(results, labels, work))
    return results, labels


# --------------------------------------------------------------------------- reporting

def pct(x):
    return "-" if x is None else f"{x:.2f}"


def markdown(results, labels):
    """The accuracy tables for docs/benchmarks.md."""
    n = {k: sum(b["kind"] == k for l in labels for b in l["boundaries"]) for k in KINDS}
    frames = sum(l["frames"] for l in labels)
    neg = {}
    for l in labels:
        for s in l["negatives"]:
            neg[s["kind"]] = neg.get(s["kind"], 0) + 1
    lines = [f"{len(labels)} videos, {frames} frames: {n['cut']} hard cuts, {n['fade']} fades (through black), "
             f"{n['dissolve']} dissolves; {sum(neg.values())} hard-negative segments without any boundary. Each tool "
             "runs with its defaults; PySceneDetect reports scenes, and a scene starting at frame F is a cut at F.", "",
             "Matching is one to one, closest first: a detected cut matches a true cut within +-1 frame; a detected "
             "fade or dissolve [start, end) matches a true one it overlaps; **a single cut frame inside a true fade or "
             "dissolve, or within one frame of it, counts as finding that transition** (so PySceneDetect, which "
             "reports only cuts, gets credit for transitions it cuts through), and a detected transition over a true "
             "cut likewise finds the cut. \"kind right\": matched boundaries whose reported kind is the true one. "
             "Per kind, false positives count against the kind the tool reported (PySceneDetect: always a cut). "
             "P / R / F1 = precision / recall / F1.", "",
             "| tool | cuts P / R / F1 | fades P / R / F1 | dissolves P / R / F1 | all P / R / F1 | kind right | "
             "false positives on hard negatives | wall time over the set |", "|---|---|---|---|---|---|---|---|"]
    ours = results["vidprep detect"]["seconds"]
    for tool, res in results.items():
        t = res["totals"]
        cells = []
        for k in (*KINDS, "all"):
            p, r, f1 = t[k]["prf"]
            cells.append(f"{pct(p)} / {pct(r)} / **{pct(f1)}** ({t[k]['tp']} found, {t[k]['fn']} missed, {t[k]['fp']} false)")
        right, of = t["kind_right"]
        kind = f"{right}/{of}" if tool.startswith("vidprep") else "(cuts only)"
        negs = sum(t["negatives"].values())
        secs = res.get("seconds")
        speed = "" if not secs or tool.startswith("vidprep") else f" ({secs / ours:.1f}x vidprep's)"
        lines.append(f"| {tool} | {' | '.join(cells)} | {kind} | {negs} | {secs:.1f} s{speed} |")
    lines += ["", "False positives on the hard negatives, by segment kind (segments in the set):", "",
              "| hard negative | " + " | ".join(results) + " |", "|---|" + "---|" * len(results)]
    for kind, count in sorted(neg.items()):
        lines.append(f"| {kind} ({count}) | " + " | ".join(str(r["totals"]["negatives"].get(kind, 0))
                                                          for r in results.values()) + " |")
    lines += ["", "vidprep's errors in this run:", ""]
    ours = results["vidprep detect"]
    for l in labels:
        s = ours["videos"][l["video"]]
        errors = ([f"missed {describe(b)} ({between(l, b)})" for b in s["misses"]] +
                  [f"false {describe(f)} {where(l, f)}" for f in s["fps"]] +
                  [f"true {describe(t)} reported as {describe(f)}" for t, f in s["pairs"] if t["kind"] != f["kind"]])
        if errors:
            lines.append(f"- {l['video']}: {'; '.join(errors)}")
    lines += ["", "The videos (`python3 bench/detect_set.py`; truth frame-exact, checked by hashing the lossless master):", "",
              "| video | size, rate, codec | frames | cuts | fades | dissolves | hard negatives |", "|---|---|---|---|---|---|---|"]
    for l in labels:
        c = {k: sum(b["kind"] == k for b in l["boundaries"]) for k in KINDS}
        lines.append(f"| {l['video']} | {l['width']}x{l['height']}, {l['fps']} fps, {l['codec']} | {l['frames']} | "
                     f"{c['cut']} | {c['fade']} | {c['dissolve']} | {', '.join(s['kind'] for s in l['negatives']) or '-'} |")
    return "\n".join(lines)


def describe(b):
    return f"{b['kind']} {b['start']}" if b["kind"] == "cut" else f"{b['kind']} [{b['start']}, {b['end']})"


def shot(segment):
    effect = segment["effect"]
    return segment["source"] + (f" ({detect_set.EFFECT_NAMES.get(effect, effect)})" if effect else "")


def where(label, b):
    """The shot a detection falls in, for reading the errors."""
    for s in label["segments"]:
        if s["first"] <= b["start"] <= s["last"]:
            return f"in {shot(s)} (clean frames {s['first']}-{s['last']})"
    return "between shots"


def between(label, b):
    """The two shots a true boundary joins."""
    before = [s for s in label["segments"] if s["last"] < b["start"]]
    after = [s for s in label["segments"] if s["first"] >= b["end"]]
    return f"{shot(before[-1])} to {shot(after[0])}" if before and after else "at the edge"


def stats_rows(path, lo, hi):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    head, body = rows[0], rows[1:]
    keep = [i for i, h in enumerate(head) if h != "time_s"]
    out = ["    " + " ".join(f"{head[i]:>9s}" for i in keep)]
    for row in body[max(lo, 0):hi]:
        out.append("    " + " ".join(f"{row[i]:>9s}" for i in keep))
    return out


def details(results, labels, work):
    lines = ["# Shot detection: every error", "",
             "Generated by bench/detect_eval.py. Frames are 0-based; transitions are [start, end).", ""]
    for tool, res in results.items():
        lines += [f"## {tool}", ""]
        for l in labels:
            s = res["videos"][l["video"]]
            if not s["misses"] and not s["fps"]:
                continue
            lines.append(f"### {l['video']}")
            for b in s["misses"]:
                near = [f for f in res["found"][l["video"]] if abs(f["start"] - b["start"]) <= 30]
                lines.append(f"- MISSED {describe(b)} ({between(l, b)}); detections within 30 frames: "
                             f"{', '.join(describe(f) for f in near) or 'none'}")
                if tool.startswith("vidprep"):
                    lines += stats_rows(work / f"{Path(l['video']).stem}.vidprep.csv", b["start"] - 4, b["end"] + 4)
            for f in s["fps"]:
                near = [b for b in l["boundaries"] if abs(b["start"] - f["start"]) <= 30]
                lines.append(f"- FALSE {describe(f)} {where(l, f)}; true boundaries within 30 frames: "
                             f"{', '.join(describe(b) for b in near) or 'none'}")
                if tool.startswith("vidprep"):
                    lines += stats_rows(work / f"{Path(l['video']).stem}.vidprep.csv", f["start"] - 4, f["end"] + 4)
            for t, f in s["pairs"]:
                if tool.startswith("vidprep") and t["kind"] != f["kind"]:
                    lines.append(f"- kind: true {describe(t)} reported as {describe(f)}")
            lines.append("")
    lines += ["## Every boundary, per video", ""]
    for l in labels:
        lines.append(f"### {l['video']}")
        lines.append(f"- truth: {', '.join(describe(b) for b in l['boundaries'])}")
        for tool, res in results.items():
            lines.append(f"- {tool}: {', '.join(describe(f) for f in res['found'][l['video']]) or 'none'}")
        lines.append("")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vidprep", default=str(ROOT / "target" / "release" / "vidprep"), help="the vidprep binary")
    ap.add_argument("--out", help="where the tools' outputs and details.md go")
    ap.add_argument("--only", help="score only these videos (comma-separated names, or `field`: the real-footage ones)")
    args = ap.parse_args()
    results, labels = evaluate(args.vidprep, args.out, detect_set.only_list(args.only))
    print(markdown(results, labels))
    print(f"\nevery error: {Path(args.out or ROOT / 'bench' / 'work' / 'detect_eval') / 'details.md'}")


if __name__ == "__main__":
    sys.exit(main())
