#!/usr/bin/env python3
"""vidprep.ray against `vidprep run` with the same worker count, on a local two-node Ray
cluster (`ray start` head + second node on this machine, 1 CPU each, their own temp dirs),
then a run under SIGKILLs of workers mid-item checked against a clean run.

    python3 bench/ray_batch.py [--items 32] [--repeats 3] [--workers 2]

`vidprep run` is timed through `vidprep.run` (the Python door of the same batch engine,
`run_batch`, in the same wheel), with `jobs=WORKERS`; vidprep.ray with `workers=WORKERS`
(the tasks' worker processes' start-up included, cluster start-up not; Ray keeps them for the driver's later runs, so the first run is reported apart). Runs alternate, repeat after repeat, into the
same output path (sidecars name their own absolute path), moved aside after each run. Needs
the vidprep wheel and Ray (`pip install "./python[ray]"`). Prints Markdown for
docs/benchmarks.md. Stops its cluster by the pids of its processes, never `ray stop`.
The Ray workers run at nice 0 like `vidprep run` (`--worker-niceness`; Ray's default is 15),
and CPU seconds of the driver and every cluster process are counted beside wall time; each
vidprep.ray run's wall time is broken down from its `timeline`.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import ray

import vidprep
import vidprep.ray


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tree(roots):
    children = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                ppid = int(open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d))
    out, todo = set(), list(roots)
    while todo:
        p = todo.pop()
        if p not in out:
            out.add(p)
            todo.extend(children.get(p, []))
    return out


def stop_cluster(base):
    roots = []
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) != os.getpid():
            try:
                if str(base).encode() in open(f"/proc/{d}/cmdline", "rb").read():
                    roots.append(int(d))
            except OSError:
                pass
    for p in tree(roots):
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    shutil.rmtree(base, ignore_errors=True)


def start_cluster(base, niceness):
    ray_cli = str(Path(sys.executable).parent / "ray")
    port = free_port()
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
    if niceness is not None:
        # Ray runs its workers at nice 15 (its raylet's `worker_niceness`): on a host where
        # other jobs want the CPU too they get far less of it than `vidprep run` at nice 0.
        env["RAY_worker_niceness"] = str(niceness)
    common = ["--num-cpus", "1", "--disable-usage-stats", "--dashboard-agent-listen-port",
              str(free_port()), "--metrics-export-port", str(free_port())]
    subprocess.run([ray_cli, "start", "--head", "--port", str(port), "--temp-dir", f"{base}/head",
                    "--include-dashboard=false", *common], check=True, env=env, capture_output=True)
    subprocess.run([ray_cli, "start", "--address", f"127.0.0.1:{port}", "--temp-dir", f"{base}/node2",
                    *common], check=True, env=env, capture_output=True)
    ray.init(address=f"127.0.0.1:{port}", log_to_driver=False)
    while len([n for n in ray.nodes() if n["Alive"]]) < 2:
        time.sleep(0.5)


class CpuMeter:
    """CPU seconds (user+sys) of the Ray cluster's processes (every process under `base` and
    their descendants, workers included), sampled every 0.1 s in a thread: a pid's last
    sample counts, so a worker killed at the end of a run loses at most its last 0.1 s."""

    def __init__(self, base):
        self.base, self.seen, self.stop = str(base).encode(), {}, threading.Event()
        self.tick = os.sysconf("SC_CLK_TCK")
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def pids(self):
        roots = []
        for d in os.listdir("/proc"):
            if d.isdigit() and int(d) != os.getpid():
                try:
                    if self.base in open(f"/proc/{d}/cmdline", "rb").read():
                        roots.append(int(d))
                except OSError:
                    pass
        return tree(roots)

    def loop(self):
        pids, n = set(), 0
        while not self.stop.is_set():
            if n % 10 == 0:
                pids = self.pids()
            n += 1
            for p in pids:
                try:
                    f = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
                    self.seen[p] = (int(f[11]) + int(f[12])) / self.tick
                except (OSError, IndexError, ValueError):
                    pass
            time.sleep(0.1)

    def total(self):
        return sum(self.seen.values())


def own_cpu():
    t = os.times()
    return t.user + t.system


def breakdown(res, wall):
    """Where a vidprep.ray run's wall time went, from its timeline (seconds)."""
    tl = res["timeline"]
    t0 = tl["started"]
    # Worker processes whose first task was in this run (Ray keeps its worker processes for
    # the driver's next tasks: a later run finds them there and lists none).
    ws = tl["workers"]
    items = sorted(tl["items"], key=lambda r: r[3])
    by_worker = {}
    for line, pid, handed, began, ended, received in items:
        by_worker.setdefault(pid, []).append((handed, began, ended, received))
    gaps = []  # a worker idle between the end of one item and the start of its next
    for calls in by_worker.values():
        calls.sort(key=lambda c: c[1])
        gaps += [b[1] - a[2] for a, b in zip(calls, calls[1:])]
    first_began = min(r[3] for r in items)
    last_end = max(r[4] for r in items)
    idle_tail = sum(last_end - max(c[2] for c in calls) for calls in by_worker.values())
    return {
        "connect": tl["connected"] - t0,
        "read": tl["read"] - tl["connected"],
        "new_worker_processes": float(len(ws)),
        # Before the run (negative): prestarted by Ray or kept from an earlier run.
        "process_started": statistics.median(w["process"] - t0 for w in ws) if ws else 0.0,
        "startup_cpu": sum(w["cpu"] for w in ws),
        "first_item": first_began - t0,
        "handed_to_began": statistics.median(r[3] - r[2] for r in items),
        "gaps_sum": sum(gaps), "gaps_max": max(gaps) if gaps else 0.0,
        "items_calls": sum(r[4] - r[3] for r in items),
        "tail_idle": idle_tail,
        "last_to_loop_end": tl["loop_end"] - last_end,
        "cancel": tl["killed"] - tl["loop_end"],
        "report": tl["report"] - tl["killed"],
        "after_report": wall - (tl["report"] - t0),
    }


def files(out):
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and p.name != "report.jsonl"}


def killer(out, kills, stop, killed):
    while not stop.is_set() and len(killed) < kills:
        for n in os.listdir(out) if out.exists() else []:
            if n.startswith(".vidprep-tmp-"):
                try:
                    pid = int(n[len(".vidprep-tmp-"):].split(".")[0].split("-")[-2])
                except (IndexError, ValueError):
                    continue
                if pid not in killed and pid != os.getpid():
                    try:
                        os.kill(pid, signal.SIGKILL)
                        killed.append(pid)
                    except ProcessLookupError:
                        pass
                    break
        time.sleep(0.01)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--kills", type=int, default=4)
    ap.add_argument("--worker-niceness", type=int, default=0,
                    help="the Ray workers' nice value (0: that of `vidprep run`; -1: Ray's default, 15)")
    args = ap.parse_args()
    global args_workers
    args_workers = args.workers
    work = Path(tempfile.mkdtemp(prefix="vidprep-ray-bench-"))
    base = Path(f"/tmp/vidprep-raybench-{os.getpid()}")
    try:
        lines = []
        for i in range(args.items):
            v = work / f"v{i}.mp4"
            subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
                            f"testsrc2=size=320x240:rate=25:duration={3 + i % 3}", "-c:v", "libx264",
                            "-g", "12", "-pix_fmt", "yuv420p", str(v)], check=True)
            lines.append(json.dumps({"id": f"item{i:02d}", "source": v.name,
                                     "exports": [{"kind": "clip"}, {"kind": "frames", "count": 6}]}))
        manifest = work / "m.jsonl"
        manifest.write_text("\n".join(lines) + "\n")
        t0 = time.monotonic()
        start_cluster(base, None if args.worker_niceness < 0 else args.worker_niceness)
        cluster_s = time.monotonic() - t0
        out = work / "out"
        times = {"run": [], "ray": []}
        busy = {"run": [], "ray": []}
        cpu = {"run": [], "ray": []}
        cluster_cpu = {"run": [], "ray": []}
        loads = []
        parts = []
        startup = []
        clean = None
        meter = CpuMeter(base)
        time.sleep(1)
        for r in range(args.repeats):
            # ABBA: the order alternates, so a drift in the machine's load falls on both.
            for tool in (("run", "ray") if r % 2 == 0 else ("ray", "run")):
                shutil.rmtree(out, ignore_errors=True)
                loads.append(os.getloadavg()[0])
                c0, k0 = own_cpu(), meter.total()
                t0 = time.monotonic()
                if tool == "run":
                    res = vidprep.run(manifest, out, jobs=args.workers)
                else:
                    res = vidprep.ray.run(manifest, out, workers=args.workers, on_progress=None, progress=False)
                wall = time.monotonic() - t0
                time.sleep(0.25)  # the meter's last samples
                times[tool].append(wall)
                cpu[tool].append(own_cpu() - c0)
                cluster_cpu[tool].append(meter.total() - k0)
                busy[tool].append(sum(x["seconds"] for x in res["reports"]))
                print(f"repeat {r} {tool}: {wall:.2f} s wall, driver CPU {cpu[tool][-1]:.2f} s, "
                      f"cluster CPU {cluster_cpu[tool][-1]:.2f} s, items {busy[tool][-1]:.1f} s, "
                      f"load {loads[-1]:.1f}", file=sys.stderr, flush=True)
                if tool == "ray":
                    startup.append(res["startup_s"])
                    parts.append(breakdown(res, wall))
                assert res["ok"] == args.items, res
                if clean is None:
                    clean = work / "clean"
                    out.rename(clean)
                else:
                    got, want = files(out), files(clean)
                    assert got == want, f"{tool} repeat {r}: bytes differ from the first run"
        # Under kills.
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        stop, killed = threading.Event(), []
        t = threading.Thread(target=killer, args=(out, args.kills, stop, killed))
        t.start()
        t0 = time.monotonic()
        res = vidprep.ray.run(manifest, out, workers=args.workers, on_progress=None, progress=False)
        kill_s = time.monotonic() - t0
        stop.set()
        t.join()
        rows = [json.loads(l) for l in (out / "report.jsonl").read_text().splitlines()]
        ids = [r["id"] for r in rows]
        once = sorted(ids) == sorted(f"item{i:02d}" for i in range(args.items)) and all(r["status"] == "ok" for r in rows)
        same = files(out) == files(clean)
        left = [str(p) for p in out.rglob(".vidprep-*")]
        meter.stop.set()
        run_s, ray_s = statistics.median(times["run"]), statistics.median(times["ray"])
        nice = 15 if args.worker_niceness < 0 else args.worker_niceness
        tot = {t: [a + b for a, b in zip(cpu[t], cluster_cpu[t])] for t in cpu}
        run_c, ray_c = statistics.median(tot["run"]), statistics.median(tot["ray"])
        print(f"{args.items} items (a clip and 6 frames of a 3-5 s 320x240 video each), {args.workers} workers; "
              f"two-node local Ray cluster of 1 CPU per node, started in {cluster_s:.1f} s, its workers at nice {nice}; load average "
              f"{os.getloadavg()[0]:.1f} at the end (the 2-core machine was shared with other jobs)\n")
        print("| tool | median s | runs (s) | vs vidprep run |\n|---|---|---|---|")
        print(f"| vidprep run --jobs {args.workers} (vidprep.run) | {run_s:.2f} | {' '.join(f'{x:.2f}' for x in times['run'])} | - |")
        print(f"| vidprep.ray.run(workers={args.workers}) | {ray_s:.2f} | {' '.join(f'{x:.2f}' for x in times['ray'])} | {ray_s / run_s:.3f}x |")
        print(f"\nCPU seconds (user+sys; the driver process and every process of the Ray cluster), median: "
              f"vidprep run {run_c:.2f} (of which the idle cluster {statistics.median(cluster_cpu['run']):.2f}), "
              f"vidprep.ray {ray_c:.2f} (driver {statistics.median(cpu['ray']):.2f}, cluster "
              f"{statistics.median(cluster_cpu['ray']):.2f}): {ray_c / run_c:.3f}x. Load average at the "
              f"runs' starts: {min(loads):.1f}-{max(loads):.1f}.")
        later = ", ".join(str(int(p["new_worker_processes"])) for p in parts[1:])
        print(f"\nThe first vidprep.ray run (its worker processes started, or found prestarted by Ray): "
              f"{times['ray'][0]:.2f} s, {int(parts[0]['new_worker_processes'])} new worker processes, "
              f"first item began {parts[0]['first_item']:.2f} s after the call; new worker processes "
              f"in the later runs: {later or '-'}.")
        print("\nvidprep.ray's wall time, median of each part (s): " + ", ".join(
            f"{k} {statistics.median(p[k] for p in parts):.3f}" for k in parts[0]))
        print(f"\nSum of the items' own seconds (report.jsonl), median: vidprep run {statistics.median(busy['run']):.1f} s, "
              f"vidprep.ray {statistics.median(busy['ray']):.1f} s; vidprep.ray's start-up (until its first "
              f"worker process was up and had imported vidprep), median {statistics.median(startup):.2f} s.")
        print(f"\nUnder {len(killed)} SIGKILLs of workers mid-item: {kill_s:.1f} s, {res['retries']} retries; "
              f"every item ok exactly once in report.jsonl: {once}; outputs byte-identical to the clean run: {same}; "
              f"temporaries or locks left: {len(left)}")
    finally:
        try:
            ray.shutdown()
        finally:
            stop_cluster(base)
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
