#!/usr/bin/env python3
"""CPU time and wall time of n uniform frames as JPEG: vidprep binaries against OpenCV
(`CAP_PROP_POS_FRAMES` + `read`, bench/peers.py's `sample-opencv`), interleaved, with the
load average before each run (issue 26's "Sampling at the decode limit" in docs/benchmarks.md).
CPU time is user + system of the process and its threads (`os.wait4`), which a loaded machine
changes less than wall time.

    python3 bench/sparse_cpu.py VIDEO REPEATS NAME=BINARY [NAME=BINARY ...]

The peers' Python is $VIDPREP_BENCH_VENV's (default /work/venvs/ml); n is $N (default 16).
Outputs go to a temporary folder, deleted at the end.
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PEERS = Path(__file__).resolve().parent / "peers.py"


def main():
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    video, repeats, bins = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    n = os.environ.get("N", "16")
    py = Path(os.environ.get("VIDPREP_BENCH_VENV", "/work/venvs/ml")) / "bin" / "python"
    tools = []
    for b in bins:
        name, path = b.split("=", 1)
        tools.append((name, lambda d, p=path: [p, "export", "frames", video, "--count", n, "--out-dir", d]))
    tools.append(("OpenCV", lambda d: [py, PEERS, "sample-opencv", video, d, n]))
    runs = {name: [] for name, _ in tools}
    work = Path(tempfile.mkdtemp(prefix="sparse_cpu_"))
    try:
        for r in range(repeats):
            for name, cmd in tools:
                out = work / name
                shutil.rmtree(out, ignore_errors=True)
                out.mkdir()
                load = os.getloadavg()[0]
                t0 = time.perf_counter()
                p = subprocess.Popen([str(a) for a in cmd(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                _, status, usage = os.wait4(p.pid, 0)
                wall = time.perf_counter() - t0
                if status != 0:
                    raise SystemExit(f"{name} failed ({status}): {p.stderr.read().decode()[-2000:]}")
                cpu = usage.ru_utime + usage.ru_stime
                runs[name].append((wall, cpu, load))
                print(f"run {r + 1} {name}: wall {wall:.2f} s, CPU {cpu:.2f} s, load {load:.1f}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    med = {k: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)) for k, v in runs.items()}
    print("| tool | CPU s (runs) | wall s (runs) | OpenCV / tool, CPU | wall |\n|---|---|---|---|---|")
    for k, v in runs.items():
        ratio = "-" if k == "OpenCV" else f"{med['OpenCV'][1] / med[k][1]:.2f}x | {med['OpenCV'][0] / med[k][0]:.2f}x"
        print(f"| {k} | {' '.join(f'{x[1]:.2f}' for x in v)} | {' '.join(f'{x[0]:.2f}' for x in v)} | {ratio}"
              + (" | - |" if k == "OpenCV" else " |"))
    loads = [x[2] for v in runs.values() for x in v]
    print(f"load average (1 min) {min(loads):.1f} to {max(loads):.1f}")


if __name__ == "__main__":
    main()
