"""vidprep.ray: a manifest run on a Ray cluster, with the guarantees of ``vidprep run``.

    >>> import ray, vidprep.ray
    >>> ray.init(address="auto")
    >>> result = vidprep.ray.run("bench.jsonl", "/shared/out", workers=32, resume=True)

The driver reads the manifest (or a list of plans, or a Ray Dataset of plans) with the library,
and hands items one at a time to a pool of Ray actors; each actor holds one vidprep worker and
makes its item with the library's own batch engine (``vidprep._vidprep.run_item``: the same
item folder, ``item.json``, ``resume`` check and report line as ``vidprep run``, under a lock
of that item alone). Outputs are written straight into the shared ``out_dir``; only report
lines travel back through Ray. The driver writes ``out_dir/report.jsonl`` (the same schema,
sorted by manifest line) at the end.

Faults (``docs/cluster.md``):

- a worker process that dies mid-item (SIGKILL, a lost node) is restarted by Ray and the item
  is given again (``max_retries``); the retry takes over the dead holder's item lock and
  removes its temporaries, and the item's folder only ever appears whole;
- ``time_limit`` seconds per item: a worker past it is killed, its temporaries removed
  (``clean_item``), the item reported ``failed`` (``error_kind`` ``cancelled``), the run goes on;
- stragglers (an item running ``straggler_factor`` times the median item time while nothing
  is left to hand out) are reported, and re-issued once (their worker is killed first, so the
  item is never made by two workers at once);
- a driver that crashed is rerun with ``resume=True``: complete items are skipped, as
  ``vidprep run --resume`` skips them.

Progress (items done, failed, running; frames per second) is drawn as Ray's progress bar
(``ray.experimental.tqdm_ray``) and given as progress lines (dicts) to ``on_progress``
(default: one JSON line on stderr every ``progress_interval`` seconds).

Needs ``pip install "vidprep[ray]"``; nothing else in vidprep imports this module.
"""

from __future__ import annotations

import collections
import json
import os
import statistics
import sys
import tempfile
import time
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import ray

from . import _vidprep as _native
from . import Plan

__all__ = ["run"]

#: The library's message when an item's lock is held by a live run.
_BUSY = "is in use by another vidprep run"


@ray.remote(max_restarts=-1, max_task_retries=0)
class _Worker:
    """One vidprep worker: makes the items it is handed into the shared output folder."""

    def __init__(self, out_dir: str, manifest: Optional[str], resume: bool,
                 codec_threads: Optional[int], env: Dict[str, str]) -> None:
        os.environ.update(env)
        self.out_dir = out_dir
        self.manifest = manifest
        self.resume = resume
        self.codec_threads = codec_threads
        self.ready_at = time.time()

    def where(self) -> Tuple[int, str, Dict[str, float]]:
        """Its pid, node and start-up (wall-clock times: its process's start, the end of
        its construction; the CPU seconds its process has used)."""
        t = os.times()
        return os.getpid(), ray.get_runtime_context().get_node_id(), {
            "process": _process_started(), "ready": self.ready_at, "cpu": t.user + t.system}

    def run(self, line: int, plan_json: str, resume: bool) -> Tuple[str, str]:
        """``("row", report_line_json)``, or ``("busy", message)`` when a live run holds the
        item, or ``("refused", message)`` for a layout the library refuses; then the
        wall-clock times the call began and ended."""
        t0 = time.time()
        try:
            return ("row", _native.run_item(plan_json, line, self.out_dir, self.manifest,
                                           resume, self.codec_threads), t0, time.time())
        except Exception as e:  # noqa: BLE001
            # By name: Ray may carry this class to the worker by value, with other classes.
            if type(e).__name__ != "UsageError":
                raise
            return ("busy" if _BUSY in str(e) else "refused"), str(e), t0, time.time()

    def clean(self, item_id: str) -> str:
        try:
            _native.clean_item(self.out_dir, item_id, self.manifest)
            return ""
        except Exception as e:  # noqa: BLE001  (reported, never fatal)
            return str(e)


def _process_started() -> float:
    """When this process started (wall clock), from /proc; 0.0 where that cannot be read."""
    try:
        with open("/proc/self/stat") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return time.time() - uptime + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


class _Item:
    __slots__ = ("line", "id", "plan", "attempts", "busy_since", "not_before")

    def __init__(self, line: int, item_id: str, plan: str) -> None:
        self.line, self.id, self.plan = line, item_id, plan
        self.attempts = 0
        self.busy_since: Optional[float] = None
        self.not_before = 0.0


def _failed_row(item: _Item, error: str, kind: str, seconds: float = 0.0) -> str:
    return json.dumps({"id": item.id, "line": item.line, "status": "failed", "outputs": [],
                       "error": error, "error_kind": kind, "seconds": seconds, "frames": 0})


def _strip_nulls(value: Any) -> Any:
    """A Dataset row without the nulls Arrow fills in for fields other rows have."""
    if isinstance(value, dict):
        return {k: _strip_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_strip_nulls(v) for v in value]
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return _strip_nulls(value.tolist())
    return value


def _plan_lines(rows: Iterable[Any]) -> List[str]:
    """Manifest lines of plans: Plan objects, dicts, JSON text, or Dataset rows (a ``plan``
    column of JSON text or dicts, a ``text`` column of manifest lines, or the plan's fields)."""
    lines = []
    for row in rows:
        if isinstance(row, Plan):
            lines.append(row.to_json())
        elif isinstance(row, str):
            lines.append(row.strip())
        elif isinstance(row, dict) and set(row) == {"text"}:
            lines.append(str(row["text"]).strip())
        elif isinstance(row, dict) and "plan" in row and len(row) == 1:
            p = row["plan"]
            lines.append(p.strip() if isinstance(p, str) else json.dumps(_strip_nulls(p)))
        else:
            lines.append(json.dumps(_strip_nulls(dict(row))))
    return lines


def _read(manifest: Any, strict: bool) -> Tuple[str, List[Tuple[int, str, str]], List[str], Optional[str]]:
    """``(origin, items, bad_rows, temporary_manifest)`` of what `run` was given."""
    if isinstance(manifest, (str, os.PathLike)):
        path = os.path.abspath(os.fspath(manifest))
        items, bad = _native.read_manifest_items(path, strict)
        return path, items, bad, None
    if hasattr(manifest, "iter_rows") and hasattr(manifest, "take_all"):  # a ray.data.Dataset
        manifest = manifest.iter_rows()
    lines = _plan_lines(manifest)
    # The library reads manifests from files and resolves relative paths against the file's
    # folder: the file goes in the current directory, as `vidprep.run` puts it.
    fd, name = tempfile.mkstemp(prefix=".vidprep-manifest-", suffix=".jsonl", dir=os.getcwd())
    with os.fdopen(fd, "w") as f:
        f.write("\n".join(lines) + "\n")
    items, bad = _native.read_manifest_items(name, strict)
    return name, items, bad, name


class _Bar:
    """Ray's progress bar in the driver (nothing when Ray's tqdm cannot be had)."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.bar = None
        if enabled:
            try:
                from ray.experimental import tqdm_ray
                self.bar = tqdm_ray.tqdm(total=total, desc="vidprep items", unit="item")
            except Exception:  # noqa: BLE001  (a progress bar is never worth failing for)
                self.bar = None

    def update(self, n: int, text: str) -> None:
        if self.bar is not None:
            if text:
                self.bar.set_description(f"vidprep items ({text})")
            if n:
                self.bar.update(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _print_progress(line: Dict[str, Any]) -> None:
    print("vidprep.ray: " + json.dumps(line), file=sys.stderr, flush=True)


def run(
    manifest: Union[str, "os.PathLike[str]", Sequence[Union[Plan, Dict[str, Any], str]], Any],
    out_dir: Union[str, "os.PathLike[str]"],
    *,
    workers: Optional[int] = None,
    resume: bool = False,
    strict: bool = False,
    time_limit: Optional[float] = None,
    max_retries: int = 3,
    num_cpus: float = 1,
    codec_threads: Optional[int] = 1,
    straggler_factor: Optional[float] = 4.0,
    straggler_min_seconds: float = 30.0,
    lock_lease_seconds: Optional[int] = None,
    busy_wait_seconds: float = 180.0,
    progress: bool = True,
    progress_interval: float = 5.0,
    on_progress: Optional[Callable[[Dict[str, Any]], None]] = _print_progress,
    address: Optional[str] = None,
    prefetch: int = 1,
) -> Dict[str, Any]:
    """``vidprep run`` on a Ray cluster: every item of ``manifest`` (a JSONL/JSON file, a list
    of plans, or a ``ray.data.Dataset`` of plans) into ``out_dir/<id>/`` (a folder every node
    sees), ``workers`` items at a time (default: the cluster's CPUs divided by ``num_cpus``).

    Returns the summary ``vidprep.run`` returns (``items``, ``ok``, ``failed``, ``skipped``,
    ``not_run``, ``frames``, ``seconds``, ``report``, ``reports``) and ``retries`` (items given
    again after their worker died), ``startup_s`` (until the first worker was ready), ``timed_out``, ``stragglers`` (ids) and ``progress`` (the
    progress lines). ``time_limit``: seconds an item may take before its worker is killed and
    the item failed. ``lock_lease_seconds``: the lease the workers give their item locks
    (``VIDPREP_LOCK_LEASE_SECONDS``; a retry on another host waits at most that long for the
    dead worker's lock). ``address``: for ``ray.init`` when Ray is not started yet.
    ``prefetch``: items queued on each worker beyond the one it makes (so it never waits for
    the driver between items; a time limit counts from when the item before ends), while
    the items left to hand out are at least as many as the workers (at the end of a run an
    item goes only to a worker with nothing to do). ``timeline`` in the result: wall-clock
    times (``time.time()``) of the run's steps (``started``, ``connected``, ``read``,
    ``actors``, ``loop_end``, ``killed``, ``report``), each worker's start-up
    (``workers``: its process's start, its construction, the CPU seconds it took, when the
    driver heard from it) and each item's call (``items``: ``[line, worker, handed out,
    began, ended, answer received]``), for benchmarks (``bench/ray_batch.py``).
    """
    started = time.monotonic()
    timeline: Dict[str, Any] = {"started": time.time()}
    if not ray.is_initialized():
        ray.init(address=address, log_to_driver=False)
    timeline["connected"] = time.time()
    out_dir = os.path.abspath(os.fspath(out_dir))
    os.makedirs(out_dir, exist_ok=True)
    origin, raw_items, bad_rows, temporary = _read(manifest, strict)
    timeline["read"] = time.time()
    try:
        return _drive(origin, raw_items, bad_rows, out_dir,
                      started, timeline, workers=workers, resume=resume, time_limit=time_limit,
                      max_retries=max_retries, num_cpus=num_cpus, codec_threads=codec_threads,
                      straggler_factor=straggler_factor,
                      straggler_min_seconds=straggler_min_seconds,
                      lock_lease_seconds=lock_lease_seconds, busy_wait_seconds=busy_wait_seconds,
                      progress=progress, progress_interval=progress_interval,
                      on_progress=on_progress, prefetch=prefetch)
    finally:
        if temporary is not None:
            os.unlink(temporary)


def _drive(origin, raw_items, bad_rows, out_dir, started, timeline, *, workers, resume, time_limit,
           max_retries, num_cpus, codec_threads, straggler_factor, straggler_min_seconds,
           lock_lease_seconds, busy_wait_seconds, progress, progress_interval, on_progress,
           prefetch):
    queue = collections.deque(_Item(line, i, p) for line, i, p in raw_items)
    rows: Dict[int, str] = {}
    if workers is None:
        cpus = ray.cluster_resources().get("CPU", 1)
        workers = max(1, int(cpus // max(num_cpus, 1e-9)))
    workers = max(1, min(int(workers), len(queue) or 1))
    env = {}
    if lock_lease_seconds is not None:
        env["VIDPREP_LOCK_LEASE_SECONDS"] = str(int(lock_lease_seconds))
    actors = [_Worker.options(num_cpus=num_cpus).remote(out_dir, origin, resume, codec_threads, env)
              for _ in range(workers if queue else 0)]
    timeline["actors"] = time.time()
    timeline["workers"] = []  # each probe's answer: start-up times, and when it came
    timeline["items"] = []  # each item's call: [line, actor, handed, began, ended, received]
    depth = 1 + max(0, int(prefetch))
    # An actor is ready (answered its probe, owes no clean-up) or not (its process died or
    # was killed: Ray restarts it, and it is asked `where` until it answers). A ready actor
    # has up to `depth` items: the one it makes (the first of `order`) and the next ones,
    # queued in Ray so that it never waits for the driver between items.
    ready_: List[bool] = [False] * len(actors)
    order: List[collections.deque] = [collections.deque() for _ in actors]
    restarting: Dict[int, float] = {}  # actor -> when to ask it again
    cleanups: Dict[int, List[Tuple[str, float]]] = collections.defaultdict(list)  # actor -> (id, since)
    # ref -> [what, actor, item (for "run"), item id (for "clean"), start time]; the start of
    # a queued item is set when the item before it on its actor ends.
    inflight: Dict[Any, list] = {}
    for index, actor in enumerate(actors):
        inflight[actor.where.remote()] = ["probe", index, None, "", time.monotonic()]
    stats = collections.Counter()
    frames = 0
    durations: List[float] = []
    retries = 0
    timed_out: List[str] = []
    stragglers: List[str] = []
    cleanup_errors: List[str] = []
    progress_lines: List[Dict[str, Any]] = []
    bar = _Bar(len(queue), progress)
    last_line = 0.0
    first_ready: Optional[float] = None  # seconds from the start until a worker answered

    def finish(item: _Item, row: str) -> None:
        nonlocal frames
        rows[item.line] = row
        r = json.loads(row)
        stats[r["status"]] += 1
        frames += int(r.get("frames") or 0)
        if r["status"] == "ok":
            durations.append(float(r.get("seconds") or 0.0))
        bar.update(1, "")

    def emit(line: Dict[str, Any]) -> None:
        progress_lines.append(line)
        if on_progress is not None:
            on_progress(line)

    def running() -> int:
        return sum(1 for q in order if q)

    def progress_line(final: bool = False) -> None:
        elapsed = time.monotonic() - started
        line = {"event": "done" if final else "progress", "items": len(raw_items),
                "done": stats["ok"], "skipped": stats["skipped"], "failed": stats["failed"],
                "running": running(), "queued": len(queue) + sum(max(0, len(q) - 1) for q in order),
                "frames": frames, "fps": round(frames / elapsed, 1) if elapsed > 0 else 0.0,
                "elapsed_s": round(elapsed, 1)}
        bar.update(0, f"{line['done']} done, {line['failed']} failed, {line['running']} running, "
                      f"{line['fps']} frames/s")
        emit(line)

    def lost(index: int, now: float, retry_started: bool, error: str) -> None:
        """Actor `index` is gone (died, or killed by the driver): its started item is given
        again (when `retry_started`, up to max_retries), its queued items go back unspent."""
        nonlocal retries
        ready_[index] = False
        restarting[index] = now + 0.5
        first = True
        while order[index]:
            ref = order[index].popleft()
            entry = inflight.pop(ref, None)
            if entry is None:
                first = False
                continue
            item = entry[2]
            if not first:
                item.attempts -= 1  # never started
                queue.appendleft(item)
            elif retry_started:
                if item.attempts <= max_retries:
                    retries += 1
                    queue.appendleft(item)
                else:
                    finish(item, _failed_row(
                        item, f"{origin} line {item.line} (id {item.id}): its worker died "
                        f"{item.attempts} times while making it ({error})", "internal"))
            first = False

    def kill(index: int, now: float) -> None:
        # Its process ends at once; Ray restarts the actor (max_restarts=-1).
        ray.kill(actors[index], no_restart=False)

    def ready_actor(index: int, now: float) -> None:
        """An actor that answered: a clean-up it owes first, else ready for items."""
        if cleanups[index]:
            item_id, since = cleanups[index].pop(0)
            inflight[actors[index].clean.remote(item_id)] = ["clean", index, None, item_id, since]
        else:
            ready_[index] = True

    def all_done() -> bool:
        return (not queue and not any(order) and not any(cleanups.values())
                and not any(e[0] == "clean" for e in inflight.values()))

    try:
        while not all_done():
            now = time.monotonic()
            for index, when in list(restarting.items()):
                if when <= now:
                    del restarting[index]
                    inflight[actors[index].where.remote()] = ["probe", index, None, "", now]
            # Hand out items to ready workers, the least loaded first; queued ones (beyond
            # the item an actor makes) only while the queue has an item for every actor, so
            # that at the end no item waits behind another while an actor is idle.
            for index in sorted(range(len(actors)), key=lambda k: len(order[k])):
                while (ready_[index] and queue
                       and len(order[index]) < (depth if len(queue) >= len(actors) else 1)):
                    pick = next((k for k, it in enumerate(queue) if it.not_before <= now), None)
                    if pick is None:
                        break
                    item = queue[pick]
                    del queue[pick]
                    item.attempts += 1
                    ref = actors[index].run.remote(item.line, item.plan, resume)
                    inflight[ref] = ["run", index, item, "", now, time.time()]
                    order[index].append(ref)
            if inflight:
                # Wake at the first answer, then take every other answer already there.
                refs = list(inflight)
                done, rest = ray.wait(refs, num_returns=1, timeout=0.2)
                if done and rest:
                    done += ray.wait(rest, num_returns=len(rest), timeout=0)[0]
            else:
                done = []
                time.sleep(0.2)
            now = time.monotonic()
            for ref in done:
                entry = inflight.get(ref)
                if entry is None:
                    continue  # dropped when its actor was lost
                what, index, item, item_id, t0 = entry[:5]
                try:
                    value = ray.get(ref)
                except ray.exceptions.RayTaskError as e:
                    # A Python fault in the worker (not its death): the item fails.
                    inflight.pop(ref)
                    if what == "run":
                        order[index].remove(ref)
                        if order[index]:
                            inflight[order[index][0]][4] = now
                        finish(item, _failed_row(item, f"{origin} line {item.line} (id {item.id}): the Ray worker failed: {e}", "internal"))
                    else:
                        ready_actor(index, now)
                    continue
                except ray.exceptions.RayError as e:
                    # The worker's process died (SIGKILL, a lost node) or is restarting.
                    inflight.pop(ref)
                    if what == "clean":
                        cleanups[index].insert(0, (item_id, t0))
                        ready_[index] = False
                        restarting[index] = now + 0.5
                    elif what == "probe":
                        ready_[index] = False
                        restarting[index] = now + 0.5
                    else:
                        # Every call of the actor fails; the item it was making is the first
                        # of `order[index]`, the others never started.
                        inflight[ref] = entry
                        lost(index, now, True, type(e).__name__)
                    continue
                inflight.pop(ref)
                if what == "probe":
                    if first_ready is None:
                        first_ready = now - started
                    timeline["workers"].append(dict(value[2], actor=index, pid=value[0],
                                                    answered=time.time()))
                    ready_actor(index, now)
                    continue
                if what == "clean":
                    if value and _BUSY in value and now - t0 < busy_wait_seconds:
                        # The killed process is not gone yet: ask again shortly.
                        cleanups[index].append((item_id, t0))
                        restarting[index] = now + 0.5
                        continue
                    if value:
                        cleanup_errors.append(f"{item_id}: {value}")
                    ready_actor(index, now)
                    continue
                order[index].remove(ref)
                if order[index]:
                    inflight[order[index][0]][4] = now  # the next item starts now
                kind, payload, began, ended = value
                timeline["items"].append([item.line, index, entry[5], began, ended, time.time()])
                if kind == "row":
                    finish(item, payload)
                elif kind == "busy":
                    # A live run holds the item (a worker of a crashed driver not yet gone):
                    # ask again later, up to busy_wait_seconds.
                    item.attempts -= 1
                    item.busy_since = item.busy_since or now
                    if now - item.busy_since > busy_wait_seconds:
                        finish(item, _failed_row(item, payload, "usage"))
                    else:
                        item.not_before = now + 1.0
                        queue.append(item)
                else:
                    finish(item, _failed_row(item, payload, "usage"))
            # Time limits and stragglers: of the item each actor is making.
            median = statistics.median(durations) if durations else None
            for index in range(len(actors)):
                if not order[index]:
                    continue
                what, _, item, _id, t0 = inflight[order[index][0]][:5]
                took = now - t0
                if time_limit is not None and took > time_limit:
                    kill(index, now)
                    timed_out.append(item.id)
                    inflight.pop(order[index].popleft())
                    finish(item, _failed_row(
                        item, f"{origin} line {item.line} (id {item.id}): not finished within "
                        f"the time limit of {time_limit:g} s; its worker was stopped and its "
                        "temporaries removed", "cancelled", took))
                    cleanups[index].append((item.id, now))
                    lost(index, now, False, "")
                elif (straggler_factor is not None and not queue and median is not None
                      and took > max(straggler_min_seconds, straggler_factor * median)
                      and item.id not in stragglers):
                    stragglers.append(item.id)
                    reissue = item.attempts <= max_retries
                    emit({"event": "straggler", "id": item.id, "line": item.line,
                          "running_s": round(took, 1), "median_s": round(median, 2),
                          "reissued": reissue})
                    if reissue:
                        # Its worker is stopped first, so two never make the item at once; the
                        # retry takes over its lock and removes its temporaries.
                        kill(index, now)
                        lost(index, now, True, "re-issued straggler")
            if on_progress is not None and now - last_line >= progress_interval:
                last_line = now
                progress_line()
    finally:
        timeline["loop_end"] = time.time()
        bar.close()
        for a in actors:
            ray.kill(a, no_restart=True)
        timeline["killed"] = time.time()
    reports = [json.loads(r) for r in bad_rows] + [json.loads(r) for r in rows.values()]
    report = _native.write_report(out_dir, [json.dumps(r) for r in reports])
    timeline["report"] = time.time()
    reports.sort(key=lambda r: r["line"])
    count = collections.Counter(r["status"] for r in reports)
    progress_line(final=True)
    return {"items": len(reports), "ok": count["ok"], "failed": count["failed"],
            "skipped": count["skipped"], "not_run": count["not_run"],
            "frames": sum(int(r.get("frames") or 0) for r in reports),
            "seconds": time.monotonic() - started, "report": report, "shard": None,
            "reports": reports, "retries": retries, "timed_out": timed_out,
            "stragglers": stragglers, "cleanup_errors": cleanup_errors,
            "startup_s": first_ready, "timeline": timeline,
            "progress": progress_lines}
