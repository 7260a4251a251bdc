"""vidprep.ray on a real local Ray cluster: a head and a second node started with `ray start`
on this machine (separate raylets, their own temp dirs), a manifest of synthetic items made
with the ffmpeg CLI, and the faults of docs/cluster.md: a worker SIGKILLed mid-item, an item
that hangs (a time limit), a straggler, a driver SIGKILLed mid-run and rerun with resume.
The oracle for every output is a clean `vidprep run` of the same manifest (the library's
batch engine through `vidprep.run`): every file's bytes must be identical.

Skipped with a message when Ray is not installed (`pip install "vidprep[ray]"`); .ci/run
installs it (VIDPREP_TEST_EXTRAS) and sets VIDPREP_REQUIRE_RAY=1, so CI runs them.
"""

from __future__ import annotations

import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

try:
    import ray
except ImportError:
    if os.environ.get("VIDPREP_REQUIRE_RAY") or os.environ.get("VIDPREP_REQUIRE_ALL"):
        raise  # CI (.ci/run) installs Ray: its absence there is a failure, not a skip
    pytest.skip("Ray is not installed (pip install 'vidprep[ray]'): the vidprep.ray tests need it",
                allow_module_level=True)

import vidprep  # noqa: E402
import vidprep.ray  # noqa: E402

from conftest import make_video  # noqa: E402

ITEMS = 8


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tree(roots):
    """The pids of `roots` and all their descendants (from /proc)."""
    children = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
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


def _pids_with(text: str):
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) != os.getpid():
            try:
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    if text.encode() in f.read():
                        pids.append(int(d))
            except OSError:
                pass
    return pids


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A head and a second node (`ray start`, 1 CPU each, own temp dirs); stopped by their pids
    (never `ray stop`, which would stop every Ray process on the machine)."""
    ray_cli = Path(sys.executable).parent / "ray"
    if not ray_cli.exists():
        pytest.skip(f"the ray command is not beside {sys.executable}")
    base = Path(f"/tmp/vidprep-ray-{os.getpid()}")  # short: Ray's socket paths must fit 107 bytes
    port = _free_port()
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
    common = ["--num-cpus", "1", "--disable-usage-stats", "--dashboard-agent-listen-port",
              str(_free_port()), "--metrics-export-port", str(_free_port())]
    started = time.monotonic()

    def start(cmd):
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        assert p.returncode == 0, f"{' '.join(cmd)} failed:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}"

    start([str(ray_cli), "start", "--head", "--port", str(port), "--temp-dir", str(base / "head"),
                    "--include-dashboard=false", *common])
    start([str(ray_cli), "start", "--address", f"127.0.0.1:{port}", "--temp-dir", str(base / "node2"),
           *common])
    ray.init(address=f"127.0.0.1:{port}", log_to_driver=False)
    deadline = time.monotonic() + 60
    while len([n for n in ray.nodes() if n["Alive"]]) < 2:
        assert time.monotonic() < deadline, "the second Ray node did not join"
        time.sleep(0.5)
    print(f"ray cluster of 2 nodes up in {time.monotonic() - started:.1f} s")
    try:
        yield base
    finally:
        ray.shutdown()
        pids = _tree(_pids_with(str(base)))
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        subprocess.run(["rm", "-rf", str(base)], check=False)


@pytest.fixture(scope="module")
def manifest(tmp_path_factory):
    """ITEMS synthetic items (clip + frames), each about a second of work."""
    d = tmp_path_factory.mktemp("ray-src")
    lines = []
    for i in range(ITEMS):
        v = make_video(d / f"v{i}.mp4", "-f", "lavfi", "-i",
                       f"testsrc2=size=320x240:rate=25:duration={3 + i % 3}", "-c:v", "libx264",
                       "-g", "12", "-pix_fmt", "yuv420p")
        lines.append(json.dumps({"id": f"item{i:02d}", "source": v.name,
                                 "exports": [{"kind": "clip"}, {"kind": "frames", "count": 6}]}))
    m = d / "m.jsonl"
    m.write_text("\n".join(lines) + "\n")
    return m


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("ray-work")


@pytest.fixture(scope="module")
def clean(manifest, work):
    """The oracle: `vidprep run` (the library's batch engine) of the manifest, 2 jobs, into
    the folder the tests then give vidprep.ray (`out`: sidecars name their own absolute
    path), moved aside."""
    result = vidprep.run(manifest, work / "out", jobs=2)
    assert result["ok"] == ITEMS, result
    (work / "out").rename(work / "clean")
    return work / "clean"


@pytest.fixture
def out(work):
    """The output folder of a test: the path the clean run wrote to, empty."""
    subprocess.run(["rm", "-rf", str(work / "out")], check=True)
    return work / "out"


def files(out: Path):
    """Every file under `out` but the report, as {relative path: bytes}."""
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and p.name != "report.jsonl"}


def assert_same_bytes(out: Path, clean: Path):
    got, want = files(out), files(clean)
    assert sorted(got) == sorted(want), "the outputs differ in their files"
    differ = [k for k in want if got[k] != want[k]]
    assert not differ, f"bytes differ from the clean run in {differ}"


def assert_exactly_once(out: Path, statuses=("ok",)):
    rows = [json.loads(l) for l in (out / "report.jsonl").read_text().splitlines()]
    ids = [r["id"] for r in rows]
    assert sorted(ids) == [f"item{i:02d}" for i in range(ITEMS)], ids
    assert all(r["status"] in statuses for r in rows), rows
    assert [r["line"] for r in rows] == sorted(r["line"] for r in rows)
    return rows


def errors(result) -> str:
    return "\n".join(f"{r['id']}: {r['status']}: {r['error']}" for r in result["reports"] if r["status"] != "ok")


def assert_nothing_half_written(out: Path):
    left = [str(p) for p in out.rglob(".vidprep-*")]
    assert not left, f"temporaries or locks left: {left}"


def assert_no_item_queued_at_the_end(result, workers):
    """From the run's timeline: an item handed to a worker still making another (queued
    behind it) only while at least `workers` items were left to hand out, so that at the end
    no item waits behind another while a worker is idle."""
    calls = result["timeline"]["items"]  # [line, worker, handed, began, ended, received]
    assert len(calls) == ITEMS, calls
    for line, worker, handed, began, ended, received in calls:
        busy = [c for c in calls if c[1] == worker and c[3] < began and c[4] > handed]
        left = sum(1 for c in calls if c[2] >= handed)
        assert not busy or left >= workers, (
            f"line {line} was queued on worker {worker} behind line {busy[0][0]} with only "
            f"{left} item(s) left to hand out")


def test_a_ray_worker_does_not_import_numpy():
    # A worker's start-up is on the run's critical path: vidprep (and Ray) without numpy.
    code = "import sys, ray, vidprep, vidprep._vidprep; print(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'pandas', 'pyarrow'}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out
    # ... and numpy is there when an array is made, and vidprep.loaders when it is used.
    code = "import vidprep; vidprep.loaders.load_video_decord; import numpy"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_ray_run_writes_the_bytes_and_report_of_vidprep_run(cluster, manifest, clean, out):
    result = vidprep.ray.run(manifest, out, workers=2, on_progress=None)
    assert result["ok"] == ITEMS and result["failed"] == 0, result
    assert_same_bytes(out, clean)
    rows = assert_exactly_once(out)
    want = [json.loads(l) for l in (clean / "report.jsonl").read_text().splitlines()]
    # The same schema and the same lines but for the time taken and the folder's name.
    for r, w in zip(rows, want):
        assert list(r) == list(w)
        for k in ("seconds",):
            r.pop(k), w.pop(k)
        w["outputs"] = [o.replace(str(clean), str(out)) for o in w["outputs"]]
        assert r == w
    assert [p["event"] for p in result["progress"]][-1] == "done"
    assert result["progress"][-1]["fps"] > 0
    assert_no_item_queued_at_the_end(result, workers=2)
    # --resume semantics: a rerun skips every item, as `vidprep run --resume` does.
    again = vidprep.ray.run(manifest, out, workers=2, resume=True, on_progress=None)
    assert again["skipped"] == ITEMS, again
    assert_same_bytes(out, clean)
    ref = vidprep.run(manifest, out, jobs=2, resume=True)
    assert [r["status"] for r in again["reports"]] == [r["status"] for r in ref["reports"]]
    assert_nothing_half_written(out)


def test_a_dataset_of_plans_and_a_list_of_plans(cluster, manifest, clean, out, monkeypatch):
    # Relative sources resolve against the current directory for plans given as objects.
    monkeypatch.chdir(manifest.parent)
    lines = manifest.read_text().splitlines()
    ds = ray.data.from_items([{"plan": l} for l in lines])
    result = vidprep.ray.run(ds, out, workers=2, on_progress=None)
    assert result["ok"] == ITEMS, result
    assert_same_bytes(out, clean)
    subprocess.run(["rm", "-rf", str(out)], check=True)
    result = vidprep.ray.run([vidprep.Plan.from_json(l) for l in lines], out, workers=2, on_progress=None)
    assert result["ok"] == ITEMS, result
    assert_same_bytes(out, clean)


def _killer(out: Path, kills: int, stop: threading.Event, killed: list):
    """SIGKILLs the process writing a temporary in `out` (its pid is in the temporary's
    name: `.vidprep-tmp-<tag>-<pid>-<n>.<what>`), `kills` times, each a different process."""
    while not stop.is_set() and len(killed) < kills:
        try:
            names = os.listdir(out)
        except FileNotFoundError:
            names = []
        for n in names:
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


def test_workers_killed_mid_item_retry_it_exactly_once(cluster, manifest, clean, out):
    out.mkdir()
    stop, killed = threading.Event(), []
    t = threading.Thread(target=_killer, args=(out, 3, stop, killed))
    t.start()
    try:
        result = vidprep.ray.run(manifest, out, workers=2, on_progress=None)
    finally:
        stop.set()
        t.join()
    assert len(killed) >= 2, f"the test killed only {killed}"
    failed = [r for r in result["reports"] if r["status"] != "ok"]
    assert result["ok"] == ITEMS, "\n".join(f"{r['id']}: {r['error']}" for r in failed)
    assert result["retries"] >= 2, result
    assert_exactly_once(out)
    assert_same_bytes(out, clean)
    assert_nothing_half_written(out)


class _Stalling(http.server.BaseHTTPRequestHandler):
    """Serves a file with ranges, but never more than its first `cut` bytes: a read past them
    hangs (a stalled network share)."""

    path_on_disk = ""
    cut = 0

    def log_message(self, *a):
        pass

    def do_HEAD(self):
        self._serve(body=False)

    def do_GET(self):
        self._serve(body=True)

    def _serve(self, body):
        data = Path(self.path_on_disk).read_bytes()
        start, end = 0, len(data) - 1
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes="):
            a, _, b = rng[6:].partition("-")
            start = int(a or 0)
            end = int(b) if b else end
        self.send_response(206 if rng else 200)
        self.send_header("Content-Length", str(end - start + 1))
        self.send_header("Accept-Ranges", "bytes")
        if rng:
            self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
        self.send_header("Last-Modified", "Tue, 01 Dec 2026 00:00:00 GMT")
        self.end_headers()
        if not body:
            return
        try:
            self.wfile.write(data[start:min(end + 1, self.cut)])
            self.wfile.flush()
            if end + 1 > self.cut:
                time.sleep(120)
        except OSError:
            pass


def test_a_hanging_item_is_failed_at_its_time_limit_and_the_run_goes_on(cluster, manifest, tmp_path):
    src = make_video(tmp_path / "slow.mp4", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=8",
                     "-c:v", "libx264", "-g", "12", "-pix_fmt", "yuv420p", "-movflags", "+faststart")
    handler = type("H", (_Stalling,), {"path_on_disk": str(src), "cut": src.stat().st_size // 3})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    out = tmp_path / "out"
    seen, stop = set(), threading.Event()

    def watch():  # the hanging item's temporaries, while it hangs
        while not stop.is_set():
            if out.exists():
                seen.update(n for n in os.listdir(out) if n.startswith(".vidprep-tmp-") and ".hangs." in n)
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        lines = manifest.read_text().splitlines()[:3]
        url = f"http://127.0.0.1:{server.server_address[1]}/slow.mp4"
        lines.insert(1, json.dumps({"id": "hangs", "source": url, "exports": [{"kind": "clip"}]}))
        m = manifest.parent / "hang.jsonl"
        m.write_text("\n".join(lines) + "\n")
        t0 = time.monotonic()
        result = vidprep.ray.run(m, out, workers=2, time_limit=6, on_progress=None)
        took = time.monotonic() - t0
    finally:
        stop.set()
        watcher.join()
        server.shutdown()
    assert seen, "the hanging item wrote no temporary: the test proves nothing about their removal"
    rows = {r["id"]: r for r in result["reports"]}
    assert rows["hangs"]["status"] == "failed" and rows["hangs"]["error_kind"] == "cancelled", rows["hangs"]
    assert "time limit of 6 s" in rows["hangs"]["error"]
    assert result["timed_out"] == ["hangs"]
    assert [rows[f"item{i:02d}"]["status"] for i in range(3)] == ["ok"] * 3
    assert took < 40, f"the run waited {took:.0f} s"
    assert not (out / "hangs").exists()
    assert_nothing_half_written(out)


def test_a_driver_killed_mid_run_resumes(cluster, manifest, clean, out):
    script = (
        "import sys, ray, vidprep.ray\n"
        f"ray.init(address={ray.get_runtime_context().gcs_address!r}, log_to_driver=False)\n"
        f"vidprep.ray.run({str(manifest)!r}, {str(out)!r}, workers=2, on_progress=None)\n"
    )
    driver = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 120
        while len(list(out.glob("*/item.json"))) < 2:
            assert driver.poll() is None, "the driver ended before it was killed"
            assert time.monotonic() < deadline, "no item was made"
            time.sleep(0.02)
        driver.send_signal(signal.SIGKILL)
    finally:
        driver.wait()
    made = len(list(out.glob("*/item.json")))
    assert made < ITEMS, "the driver finished before it was killed"
    result = vidprep.ray.run(manifest, out, workers=2, resume=True, on_progress=None)
    assert result["failed"] == 0, result
    assert result["skipped"] >= 2 and result["ok"] + result["skipped"] == ITEMS, result
    assert_exactly_once(out, statuses=("ok", "skipped"))
    assert_same_bytes(out, clean)
    assert_nothing_half_written(out)


def test_a_straggler_is_reported_and_reissued_once(cluster, manifest, clean, out):
    # The manifest's items, then one of five times their length, handed out last.
    long = make_video(manifest.parent / "long.mp4", "-f", "lavfi", "-i",
                      "testsrc2=size=320x240:rate=25:duration=20", "-c:v", "libx264", "-g", "12",
                      "-pix_fmt", "yuv420p")
    m = manifest.parent / "straggler.jsonl"
    m.write_text(manifest.read_text() + json.dumps(
        {"id": "long", "source": long.name, "exports": [{"kind": "clip"}, {"kind": "frames", "count": 6}]}) + "\n")
    lines = []
    result = vidprep.ray.run(m, out, workers=2, straggler_factor=1.5, straggler_min_seconds=0.5,
                             on_progress=lines.append)
    assert result["ok"] == ITEMS + 1, errors(result)
    assert "long" in result["stragglers"], result["stragglers"]
    events = [l for l in lines if l["event"] == "straggler"]
    assert {e["id"] for e in events} == set(result["stragglers"])
    assert all(e["reissued"] for e in events), events
    rows = [json.loads(l) for l in (out / "report.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in rows) == sorted([f"item{i:02d}" for i in range(ITEMS)] + ["long"])
    subprocess.run(["rm", "-rf", str(out / "long")], check=True)
    assert_same_bytes(out, clean)
    assert_nothing_half_written(out)
