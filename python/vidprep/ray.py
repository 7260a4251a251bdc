"""vidprep.ray: a manifest run on a Ray cluster, with the guarantees of ``vidprep run``.

    >>> import ray, vidprep.ray
    >>> ray.init(address="auto")
    >>> result = vidprep.ray.run("bench.jsonl", "/shared/out", workers=32, resume=True)

The driver reads the manifest (or a list of plans, or a Ray Dataset of plans) with the library,
and hands items out as Ray tasks, ``workers`` at a time; each task makes its item in one of
Ray's worker processes with the library's own batch engine (``vidprep._vidprep.run_item``:
the same item folder, ``item.json``, ``resume`` check and report line as ``vidprep run``,
under a lock of that item alone). Ray keeps its worker processes, with vidprep imported, for
the driver's next tasks, so only a driver's first items wait for a process to start. Outputs
are written straight into the shared ``out_dir``; only report lines travel back through Ray.
The driver writes ``out_dir/report.jsonl`` (the same schema, sorted by manifest line) at the
end.

Faults (``docs/cluster.md``):

- a worker process that dies mid-item (SIGKILL, OOM, a lost node) fails its task; the driver
  gives the item again (``max_retries``), Ray starts another process for it; the retry takes
  over the dead holder's item lock and removes its temporaries, and the item's folder only
  ever appears whole;
- ``time_limit`` seconds per item: a task past it has its worker process killed
  (``ray.cancel(force=True)``), its temporaries removed by a clean-up task (``clean_item``),
  the item reported ``failed`` (``error_kind`` ``cancelled``); the run goes on;
- stragglers (an item running ``straggler_factor`` times the median item time while nothing
  is left to hand out) are reported, and re-issued once (their worker is killed first, and a
  retry that finds the dying holder's lock asks again, so the item is never made by two
  workers at once);
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
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from . import _vidprep as _native
from . import Plan

__all__ = ["run"]

#: The library's message when an item's lock is held by a live run.
_BUSY = "is in use by another vidprep run"


#: Environment variables a run sets in its workers (`lock_lease_seconds`); a worker process
#: serves every run of its driver, so each task sets them, or puts back what the process had.
_MANAGED_ENV = ("VIDPREP_LOCK_LEASE_SECONDS",)
_ORIGINAL_ENV = {k: os.environ.get(k) for k in _MANAGED_ENV}
#: This worker process's start-up, given with its first task's answer (then None).
_FIRST_CALL: List[Optional[Dict[str, float]]] = []


def _set_env(env: Dict[str, str]) -> None:
    for k in _MANAGED_ENV:
        v = env.get(k, _ORIGINAL_ENV.get(k))
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def _started_info(now: float) -> Optional[Dict[str, float]]:
    """On a process's first task: its start (wall clock), the start of that first task and
    the CPU seconds the process had used by then; None on every later task."""
    if _FIRST_CALL:
        return None
    t = os.times()
    _FIRST_CALL.append(None)
    return {"process": _process_started(), "ready": now, "cpu": t.user + t.system}


@ray.remote(max_retries=0)
def _make_item(out_dir: str, manifest: Optional[str], line: int, plan_json: str, resume: bool,
               codec_threads: Optional[int], env: Dict[str, str]) -> tuple:
    """One item, made in a Ray worker process into the shared output folder:
    ``("row", report_line_json)``, or ``("busy", message)`` when a live run holds the item,
    or ``("refused", message)`` for a layout the library refuses; then the wall-clock times
    the call began and ended, the worker's pid, and its start-up (first task only)."""
    t0 = time.time()
    info = _started_info(t0)
    _set_env(env)
    try:
        row = _native.run_item(plan_json, line, out_dir, manifest, resume, codec_threads)
        return ("row", row, t0, time.time(), os.getpid(), info)
    except Exception as e:  # noqa: BLE001
        # By name: Ray may carry this class to the worker by value, with other classes.
        if type(e).__name__ != "UsageError":
            raise
        kind = "busy" if _BUSY in str(e) else "refused"
        return (kind, str(e), t0, time.time(), os.getpid(), info)


@ray.remote(max_retries=0)
def _clean_item(out_dir: str, item_id: str, manifest: Optional[str], env: Dict[str, str]) -> str:
    """Removes what a killed worker left of an item (its temporaries, its lock once its
    holder is gone); the library's message when that cannot be done yet, else ""."""
    _set_env(env)
    try:
        _native.clean_item(out_dir, item_id, manifest)
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
    prefetch: int = 0,
) -> Dict[str, Any]:
    """``vidprep run`` on a Ray cluster: every item of ``manifest`` (a JSONL/JSON file, a list
    of plans, or a ``ray.data.Dataset`` of plans) into ``out_dir/<id>/`` (a folder every node
    sees), ``workers`` items at a time (default: the cluster's CPUs divided by ``num_cpus``).

    Returns the summary ``vidprep.run`` returns (``items``, ``ok``, ``failed``, ``skipped``,
    ``not_run``, ``frames``, ``seconds``, ``report``, ``reports``) and ``retries`` (items given
    again after their worker died), ``startup_s`` (until the first item began in a worker), ``timed_out``, ``stragglers`` (ids) and ``progress`` (the
    progress lines). ``time_limit``: seconds an item may take before its worker is killed and
    the item failed. ``lock_lease_seconds``: the lease the workers give their item locks
    (``VIDPREP_LOCK_LEASE_SECONDS``; a retry on another host waits at most that long for the
    dead worker's lock). ``address``: for ``ray.init`` when Ray is not started yet.
    ``prefetch``: items queued in Ray per worker beyond those being made, while the items left
    to hand out are at least as many as the workers (a queued item's time limit counts from
    when an item before it ends). Default 0: an item is handed out when one ends, so it
    goes to the worker that is free (Ray may queue a prefetched task behind a busy worker
    while another is idle); Ray reuses the worker process, and the hand-out costs
    milliseconds. ``timeline`` in the result: wall-clock
    times (``time.time()``) of the run's steps (``started``, ``connected``, ``read``,
    ``tasks`` (ready to hand out), ``loop_end``, ``killed``, ``report``), the start-up of each
    worker process whose first task was in this run (``workers``: its process's start, its
    first task's start, the CPU seconds it had used by then, its pid, when the driver heard
    from it) and each item's call (``items``: ``[line, worker pid, handed out, began, ended,
    answer received]``), for benchmarks (``bench/ray_batch.py``).
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


class _Task:
    """A task in flight: an item's making (``run``) or a killed item's clean-up (``clean``)."""

    __slots__ = ("what", "item", "item_id", "since", "handed", "began", "node")

    def __init__(self, what: str, item: Optional[_Item], item_id: str, since: float,
                 handed: float, began: Optional[float], node: Optional[str] = None) -> None:
        self.what, self.item, self.item_id, self.since = what, item, item_id, since
        self.handed = handed  # wall clock, for the timeline
        self.began = began  # monotonic: when it is taken to have started (None: queued in Ray)
        self.node = node  # the node it was sent to (None: where Ray chose)


def _node_slots(num_cpus: float) -> Dict[str, int]:
    """Items each live node can make at once (its CPUs over ``num_cpus``); empty where
    ``num_cpus`` is 0 (no CPU to count by)."""
    if num_cpus <= 0:
        return {}
    slots = {}
    for n in ray.nodes():
        cpus = (n.get("Resources") or {}).get("CPU", 0)
        if n.get("Alive") and cpus >= num_cpus:
            slots[n["NodeID"]] = int(cpus // num_cpus)
    return slots


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
    make = _make_item.options(num_cpus=num_cpus)
    # Each item goes to a node where one of this run's items has just ended (or that has
    # a CPU this run has not used), so that it runs at once on a free worker: left to
    # itself, Ray's scheduler may queue it behind a busy worker on one node while another
    # node is idle (its view of the other nodes' load lags). Soft, and spilled where the
    # node is busy after all (other work on it) or gone.
    slots = _node_slots(num_cpus)
    slots_read = time.monotonic()
    placed: Dict[str, Any] = {}

    def sender(node: Optional[str]):
        if node is None:
            return make
        if node not in placed:
            placed[node] = _make_item.options(
                num_cpus=num_cpus, scheduling_strategy=NodeAffinitySchedulingStrategy(
                    node, soft=True, _spill_on_unavailable=True))
        return placed[node]

    def free_node(per_node: int) -> Optional[str]:
        """The node with the most room for another item (None: no node known to have room)."""
        used = collections.Counter(t.node for t in tasks.values() if t.what == "run")
        room = {n: k * per_node - used[n] for n, k in slots.items()}
        best = max(room, key=lambda n: room[n], default=None)
        return best if best is not None and room[best] > 0 else None
    clean = _clean_item.options(num_cpus=num_cpus)
    timeline["tasks"] = time.time()
    timeline["workers"] = []  # each worker process's start-up, from its first task's answer
    timeline["items"] = []  # each item's call: [line, worker pid, handed, began, ended, received]
    depth = 1 + max(0, int(prefetch))
    # Items are Ray tasks: up to `workers` being made, and while the queue has an item for
    # every worker, up to `prefetch` more each queued in Ray (at the end of a run an item is
    # handed out only when one ends, so that it goes to a free worker).
    # Ray runs a queued task when one of the run's tasks ends, in the order they were
    # handed out: a queued one is taken to start then (for its time limit).
    tasks: Dict[Any, _Task] = {}
    waiting: collections.deque = collections.deque()  # refs of "run" tasks queued in Ray
    cleanups: List[Tuple[str, float, float]] = []  # (item id, since, not before)
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
    first_began: Optional[float] = None  # wall clock: the first item's start in a worker

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
        return sum(1 for t in tasks.values() if t.what == "run" and t.began is not None)

    def progress_line(final: bool = False) -> None:
        elapsed = time.monotonic() - started
        line = {"event": "done" if final else "progress", "items": len(raw_items),
                "done": stats["ok"], "skipped": stats["skipped"], "failed": stats["failed"],
                "running": running(), "queued": len(queue) + len(waiting),
                "frames": frames, "fps": round(frames / elapsed, 1) if elapsed > 0 else 0.0,
                "elapsed_s": round(elapsed, 1)}
        bar.update(0, f"{line['done']} done, {line['failed']} failed, {line['running']} running, "
                      f"{line['fps']} frames/s")
        emit(line)

    def ended(ref: Any, now: float) -> Optional[_Task]:
        """Task `ref` is over (answered, failed, or stopped by the driver): the next queued
        item starts in its place."""
        task = tasks.pop(ref, None)
        if task is not None and task.what == "run" and task.began is not None and waiting:
            tasks[waiting.popleft()].began = now
        if ref in waiting:
            waiting.remove(ref)
        return task

    def stop(ref: Any, now: float) -> None:
        """Kills the worker process making `ref`'s item (Ray starts others as needed)."""
        ended(ref, now)
        try:
            ray.cancel(ref, force=True)
        except Exception:  # noqa: BLE001  (already over: nothing to stop)
            pass

    def hand_out(now: float) -> None:
        nonlocal slots, slots_read
        if now - slots_read > 10.0:  # nodes that joined or left
            slots, slots_read = _node_slots(num_cpus), now
        in_flight = sum(1 for t in tasks.values() if t.what == "run")
        while queue:
            per_node = depth if len(queue) >= workers else 1
            limit = workers * per_node
            if in_flight >= limit:
                break
            pick = next((k for k, it in enumerate(queue) if it.not_before <= now), None)
            if pick is None:
                break
            item = queue[pick]
            del queue[pick]
            item.attempts += 1
            node = free_node(per_node)
            ref = sender(node).remote(out_dir, origin, item.line, item.plan, resume,
                                      codec_threads, env)
            starts = running() < workers
            tasks[ref] = _Task("run", item, "", now, time.time(), now if starts else None, node)
            if not starts:
                waiting.append(ref)
            in_flight += 1
        due = [c for c in cleanups if c[2] <= now]
        for c in due:
            cleanups.remove(c)
            tasks[clean.remote(out_dir, c[0], origin, env)] = _Task(
                "clean", None, c[0], c[1], time.time(), now)

    def all_done() -> bool:
        return not queue and not tasks and not cleanups

    try:
        while not all_done():
            now = time.monotonic()
            hand_out(now)
            if tasks:
                # Wake at the first answer, then take every other answer already there.
                refs = list(tasks)
                done, rest = ray.wait(refs, num_returns=1, timeout=0.2)
                if done and rest:
                    done += ray.wait(rest, num_returns=len(rest), timeout=0)[0]
            else:
                done = []
                time.sleep(0.05)
            now = time.monotonic()
            for ref in done:
                if ref not in tasks:
                    continue  # stopped by the driver: already accounted for
                task = ended(ref, now)
                item = task.item
                try:
                    value = ray.get(ref)
                except ray.exceptions.RayTaskError as e:
                    # A Python fault in the task (not its process's death): the item fails.
                    if task.what == "run":
                        finish(item, _failed_row(item, f"{origin} line {item.line} (id {item.id}): the Ray worker failed: {e}", "internal"))
                    else:
                        cleanup_errors.append(f"{task.item_id}: {e}")
                    continue
                except ray.exceptions.RayError as e:
                    # The worker's process died (SIGKILL, OOM, a lost node): the item is given
                    # again, up to max_retries; its retry takes over the dead holder's lock.
                    slots, slots_read = _node_slots(num_cpus), now  # a node may be gone
                    if task.what == "clean":
                        cleanups.append((task.item_id, task.since, now + 0.5))
                    elif item.attempts <= max_retries:
                        retries += 1
                        queue.appendleft(item)
                    else:
                        finish(item, _failed_row(
                            item, f"{origin} line {item.line} (id {item.id}): its worker died "
                            f"{item.attempts} times while making it ({type(e).__name__})", "internal"))
                    continue
                if task.what == "clean":
                    if value and _BUSY in value and now - task.since < busy_wait_seconds:
                        # The killed process is not gone yet: ask again shortly.
                        cleanups.append((task.item_id, task.since, now + 0.5))
                    elif value:
                        cleanup_errors.append(f"{task.item_id}: {value}")
                    continue
                kind, payload, began, finished, pid, info = value
                if first_began is None or began < first_began:
                    first_began = began
                if info is not None:
                    timeline["workers"].append(dict(info, pid=pid, answered=time.time()))
                timeline["items"].append([item.line, pid, task.handed, began, finished, time.time()])
                if kind == "row":
                    finish(item, payload)
                elif kind == "busy":
                    # A live run holds the item (a worker of a crashed driver not yet gone,
                    # or a straggler's killed worker): ask again later, up to busy_wait_seconds.
                    item.attempts -= 1
                    item.busy_since = item.busy_since or now
                    if now - item.busy_since > busy_wait_seconds:
                        finish(item, _failed_row(item, payload, "usage"))
                    else:
                        item.not_before = now + 1.0
                        queue.append(item)
                else:
                    finish(item, _failed_row(item, payload, "usage"))
            # Time limits and stragglers: of the items being made.
            median = statistics.median(durations) if durations else None
            for ref, task in list(tasks.items()):
                if task.what != "run" or task.began is None:
                    continue
                item = task.item
                took = now - task.began
                if time_limit is not None and took > time_limit:
                    stop(ref, now)
                    timed_out.append(item.id)
                    finish(item, _failed_row(
                        item, f"{origin} line {item.line} (id {item.id}): not finished within "
                        f"the time limit of {time_limit:g} s; its worker was stopped and its "
                        "temporaries removed", "cancelled", took))
                    cleanups.append((item.id, now, now + 0.2))
                elif (straggler_factor is not None and not queue and median is not None
                      and took > max(straggler_min_seconds, straggler_factor * median)
                      and item.id not in stragglers):
                    stragglers.append(item.id)
                    reissue = item.attempts <= max_retries
                    emit({"event": "straggler", "id": item.id, "line": item.line,
                          "running_s": round(took, 1), "median_s": round(median, 2),
                          "reissued": reissue})
                    if reissue:
                        # Its worker is stopped first, so two never make the item at once (a
                        # retry that finds the dying holder's lock asks again); the retry takes
                        # over its lock and removes its temporaries.
                        stop(ref, now)
                        queue.appendleft(item)
            if on_progress is not None and now - last_line >= progress_interval:
                last_line = now
                progress_line()
    finally:
        timeline["loop_end"] = time.time()
        bar.close()
        for ref in list(tasks):  # only when the loop was interrupted
            try:
                ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001
                pass
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
            "startup_s": None if first_began is None else first_began - timeline["started"],
            "timeline": timeline, "progress": progress_lines}
