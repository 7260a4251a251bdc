"""Ctrl-C during a call: ``KeyboardInterrupt`` within about a second, and the next call works.

The oracle is the process itself, seen from outside: a child Python runs ``vidprep.sample`` on a
long synthetic video, the test sends it SIGINT after 0.5 s and times how long the child takes
to report a ``KeyboardInterrupt`` (not a ``PanicException``, not the call's normal end); the
child then samples again, and those frames are compared with the ffmpeg CLI's.
"""

import signal
import subprocess
import sys
import textwrap
import time

import numpy as np

from conftest import ffmpeg_rgb, make_video

CHILD = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    import vidprep
    long_video, short_video = sys.argv[1], sys.argv[2]
    print("started", flush=True)
    try:
        vidprep.sample(long_video, fps=25, size=(32, 18), workers=1)
        print("finished", flush=True)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    except BaseException as e:
        print("other", type(e).__module__, type(e).__name__, flush=True)
    frames, facts = vidprep.sample(short_video, n=4)
    np.save(sys.argv[3], frames)
    print("again", facts["sampled"]["indices"], flush=True)
    """
)


def test_ctrl_c_raises_keyboard_interrupt_and_the_next_call_works(tmp_path):
    # 3000 frames of 1280x720: decoding them all takes seconds, far more than the 0.5 s.
    long_video = make_video(
        tmp_path / "long.mp4", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=25:duration=120",
        "-c:v", "libx264", "-preset", "ultrafast", "-g", "50", "-pix_fmt", "yuv420p")
    short_video = make_video(
        tmp_path / "short.mp4", "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25:duration=1",
        "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p")
    out = tmp_path / "again.npy"
    # The child's SIGINT is set to the default first: a test run started as a background job
    # (`cmd &` in a script) inherits SIGINT ignored, and Python then installs no handler.
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(long_video), str(short_video), str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert child.stdout.readline().strip() == "started"
    time.sleep(0.5)
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    reply = child.stdout.readline().strip()
    took = time.monotonic() - sent
    rest, err = child.communicate(timeout=60)
    assert reply == "interrupted", f"the child said {reply!r}; stderr:\n{err}"
    assert took < 1.5, f"KeyboardInterrupt came {took:.2f} s after SIGINT"
    assert "PanicException" not in err, err
    assert child.returncode == 0, err
    assert rest.startswith("again"), f"the next call failed: {rest!r}; stderr:\n{err}"
    # The call after the interrupt gives the frames the ffmpeg CLI decodes (4 of 25, uniform).
    frames = np.load(out)
    expected = ffmpeg_rgb(short_video)
    indices = [int(x) for x in rest[len("again"):].strip(" []\n").split(",")]
    assert frames.shape == (4, 48, 64, 3)
    for image, index in zip(frames, indices):
        assert np.array_equal(image, expected[index])
