#!/usr/bin/env python3
"""Reruns every command of a mutation campaign's summary that had a finding, on its kept
mutant, with another vidprep binary (after a fix), and prints what each gives now.

Usage: python3 scripts/rerun-findings.py WORK/summary.json VIDPREP OUT_DIR

The classification is scripts/mutate.py's own (`run_one`: the same time and memory limits,
the same ffmpeg oracle for exported frames, `check --json`'s report)."""
import json, sys, types, importlib.util
from pathlib import Path
spec = importlib.util.spec_from_file_location("mutate", Path(__file__).resolve().parent / "mutate.py")
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
summary = json.load(open(sys.argv[1]))
vidprep = sys.argv[2]
work = Path(sys.argv[3]); work.mkdir(parents=True, exist_ok=True)
findings_dir = Path(sys.argv[1]).parent / "findings"
args = types.SimpleNamespace(time_limit=60, mem_limit=2048, psnr=30.0)
before = after = 0
seen = set()
n = 0
classes = {}
for rec in summary["records"]:
    for run in rec["runs"]:
        if not run["findings"]:
            continue
        mutant = findings_dir / Path(rec["mutant"]).name
        key = (str(mutant), run["command"])
        if key in seen or not mutant.exists():
            continue
        seen.add(key)
        before += len(run["findings"])
        n += 1
        new = m.run_one(args, vidprep, mutant, run["command"], work, n)
        after += len(new["findings"])
        for f in new["findings"]:
            classes[f["class"]] = classes.get(f["class"], 0) + 1
        status = "fixed" if not new["findings"] else "; ".join(f["class"] + ": " + f["detail"][:160] for f in new["findings"])
        print(f"{mutant.name} {run['command']}: {len(run['findings'])} -> {len(new['findings'])} ({status})", flush=True)
print(f"runs {n}, findings before {before}, after {after}, classes now {classes}")
