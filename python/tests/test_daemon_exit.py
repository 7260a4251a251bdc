"""The interpreter exits while a daemon thread is inside a vidprep call: the process ends with the
script's own exit code, the thread is dropped, nothing aborts.

A prefetching data loader's daemon thread is the common case. CPython before 3.14 ends a thread
that asks for the GIL back after finalisation began with ``pthread_exit``; its forced unwind
through the native module used to reach a ``catch_unwind`` and abort the process ("FATAL:
exception not rethrown", SIGABRT, exit 134), every time.

The oracle is the operating system: a child Python starts a daemon thread that calls one entry
point of the native module in a loop (every one that releases the GIL), waits until a call has
finished (so the loop is running), then exits; the test reads the child's exit status and
stderr. Each entry point is tried a few times, half of them with an exit code of the script's own.
"""

import json
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import make_video

CHILD = textwrap.dedent(
    """
    import json, os, sys, threading, time
    import vidprep
    from vidprep import _vidprep as native

    entry, video, work, code = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    out_dir = os.path.join(work, "out")
    os.makedirs(out_dir, exist_ok=True)
    manifest = os.path.join(work, "m.jsonl")
    plan = {"id": "a", "source": video,
            "exports": [{"kind": "frames", "count": 8, "max_size": "32x24"}]}
    plan_json = json.dumps(plan)
    calls = {
        "sample": lambda: vidprep.sample(video, n=16, size=(32, 24), workers=1),
        "probe": lambda: vidprep.probe(video, count_frames=True),
        "check": lambda: vidprep.check(video, samples=4),
        "run_manifest": lambda: vidprep.run(manifest, out_dir, jobs=1),
        "execute_plan": lambda: native.execute_plan(plan_json, os.path.join(out_dir, "one")),
        "run_item": lambda: native.run_item(plan_json, 1, out_dir),
        "read_manifest_items": lambda: native.read_manifest_items(manifest),
        "clean_item": lambda: native.clean_item(out_dir, "a"),
        "write_report": lambda: native.write_report(out_dir, []),
        "normalize_plan": lambda: native.normalize_plan(plan_json),
        "check_plan": lambda: native.check_plan(plan_json),
        "cli_main": lambda: native.cli_main(["vidprep", "probe", video, "--json"]),
    }
    call = calls[entry]
    # A thread running Python code keeps the GIL until it releases it itself: the thread's loop
    # then gives it up only inside a vidprep call, so that is where finalisation finds it.
    sys.setswitchinterval(1000)
    looping = threading.Event()
    failed = []

    def loop():
        while True:
            try:
                call()
            except BaseException as e:
                failed.append(repr(e))
                looping.set()
                return
            looping.set()

    threading.Thread(target=loop, daemon=True).start()
    if not looping.wait(120):
        sys.exit("the first call took more than 120 s")
    if failed:
        sys.exit("the call failed: " + failed[0])
    # The interpreter then finalises while the thread is inside a call, and lets the thread ask
    # for the GIL back (a program that printed something): the output still buffered is
    # written at finalisation into a pipe that is full until the test reads it, 0.5 s later
    # (the call looks at the GIL at least every 0.1 s).
    os.set_blocking(1, False)
    try:
        while True:
            os.write(1, b"x" * 4096)
    except BlockingIOError:
        pass
    os.set_blocking(1, True)
    # Buffered whatever PYTHONUNBUFFERED says: finalisation flushes it.
    sys.stdout = open(1, "w", buffering=65536, closefd=False)
    sys.stdout.write("written at finalisation\\n")
    print("exiting", file=sys.stderr, flush=True)
    sys.exit(code)
    """
)

ENTRIES = [
    "sample",
    "probe",
    "check",
    "run_manifest",
    "execute_plan",
    "run_item",
    "read_manifest_items",
    "clean_item",
    "write_report",
    "normalize_plan",
    "check_plan",
    "cli_main",
]

# It aborted every time; a few tries show it is not luck.
TRIES = 3


@pytest.fixture(scope="module")
def small_video(tmp_path_factory):
    # 2 s of 320x240: each call takes a few tens of milliseconds, so the thread is inside one
    # when the interpreter exits.
    path = tmp_path_factory.mktemp("daemon") / "small.mp4"
    return make_video(
        path, "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=2",
        "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-pix_fmt", "yuv420p")


def run_child(entry, video, work, code):
    """Runs the child for `entry`; returns its exit status and stderr."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, entry, str(video), str(work), str(code)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = child.stderr.readline()
    time.sleep(0.5)
    _, rest = child.communicate(timeout=180)
    return child.returncode, (first + rest).decode(errors="replace")


@pytest.mark.parametrize("entry", ENTRIES)
def test_the_interpreter_exits_cleanly_while_a_daemon_thread_is_in_a_call(entry, small_video, tmp_path):
    plan = {"id": "a", "source": str(small_video),
            "exports": [{"kind": "frames", "count": 8, "max_size": "32x24"}]}
    (tmp_path / "m.jsonl").write_text(json.dumps(plan) + "\n")
    for attempt in range(TRIES):
        code = 0 if attempt % 2 == 0 else 7
        status, err = run_child(entry, small_video, tmp_path, code)
        assert err.startswith("exiting"), f"{entry}: the child did not reach its exit; stderr:\n{err}"
        assert status == code, (
            f"{entry}, try {attempt + 1}: exit status {status}, expected {code}; stderr:\n{err}")
        assert "FATAL" not in err and "Fatal Python error" not in err, f"{entry}: {err}"
        assert "panicked" not in err, f"{entry}: {err}"
