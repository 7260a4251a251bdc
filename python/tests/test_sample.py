"""vidprep.sample: frames pixel-equal to the ffmpeg CLI's decode, the facts of frames.json."""

import json
import subprocess
import threading
import time

import numpy as np
import pytest

import vidprep
from conftest import REPO, ffmpeg_rgb, make_video


@pytest.mark.parametrize("sampler", ["uniform", "lmms-eval", "vlmevalkit", "qwen", "hf"])
def test_frames_equal_ffmpeg_decode(street, street_rgb, sampler):
    frames, facts = vidprep.sample(street, n=16, sampler=sampler)
    indices = facts["sampled"]["indices"]
    assert frames.shape == (len(indices), 240, 320, 3)
    assert frames.dtype == np.uint8 and frames.flags["C_CONTIGUOUS"]
    assert [f["source_frame"] for f in facts["frames"]] == indices
    # Exactly ffmpeg's pixels: the same decoder and swscale's yuv420p->rgb24 with the CLI's flags.
    np.testing.assert_array_equal(frames, street_rgb[indices])


def test_every_frame_equal_ffmpeg(street, street_rgb):
    frames, facts = vidprep.sample(street, n=300, sampler="uniform")
    assert facts["sampled"]["indices"] == list(range(300))
    np.testing.assert_array_equal(frames, street_rgb)


def test_mpeg4_avi_with_b_frames(tmp_path):
    # A DivX-style AVI (packed B-frames): frame numbering by decoding, still exact.
    src = make_video(tmp_path / "b.avi", "-f", "lavfi", "-i", "testsrc2=size=176x144:rate=25:duration=4",
                     "-c:v", "mpeg4", "-bf", "2", "-q:v", "4")
    ref = ffmpeg_rgb(src)
    frames, facts = vidprep.sample(src, n=12)
    assert facts["total_frames"] == len(ref)
    np.testing.assert_array_equal(frames, ref[facts["sampled"]["indices"]])


def test_size_cap_scales_like_ffmpeg_bicubic(street):
    frames, facts = vidprep.sample(street, n=4, size=(160, 160))
    assert frames.shape == (4, 120, 160, 3)
    ref = ffmpeg_rgb(street, size=(160, 120))
    idx = facts["sampled"]["indices"]
    # vidprep scales in YUV 4:2:0 (bicubic), then converts to RGB: the CLI doing the same
    # two steps gives the same pixels.
    np.testing.assert_array_equal(frames, ref[idx])


def test_orders(street):
    base, facts = vidprep.sample(street, n=6)
    rev, rfacts = vidprep.sample(street, n=6, order="reversed")
    np.testing.assert_array_equal(rev, base[::-1])
    last, _ = vidprep.sample(street, n=6, order="last")
    np.testing.assert_array_equal(last, base[-1:])
    shuf, sfacts = vidprep.sample(street, n=6, order="shuffled", seed=7)
    perm = sfacts["order"]["permutation"] if "permutation" in sfacts["order"] else None
    assert sorted(f["source_frame"] for f in sfacts["frames"]) == facts["sampled"]["indices"]
    by_frame = {f["source_frame"]: i for i, f in enumerate(facts["frames"])}
    for i, f in enumerate(sfacts["frames"]):
        np.testing.assert_array_equal(shuf[i], base[by_frame[f["source_frame"]]])
    del perm


def test_span_and_fps(street):
    frames, facts = vidprep.sample(street, fps=1.0, start="2s", end=150)
    assert facts["total_frames"] == 100
    assert frames.shape[0] == len(facts["frames"]) == 4
    assert [f["source_frame"] for f in facts["frames"]] == [50 + i for i in facts["sampled"]["indices"]]


def test_facts_match_the_cli_frames_json(street, tmp_path):
    # The same plan through the command line writes frames.json; the facts are the same
    # (but for the file-only fields).
    exe = REPO / "target" / "debug" / "vidprep"
    if not exe.is_file():
        pytest.skip("target/debug/vidprep is not built")
    out = tmp_path / "f"
    subprocess.run([str(exe), "export", "frames", str(street), "--out-dir", str(out), "--count", "8",
                    "--sampler", "qwen"], check=True, capture_output=True)
    cli = json.loads((out / "frames.json").read_text())
    _, facts = vidprep.sample(street, n=8, sampler="qwen")
    for key in ("total_frames", "sampled", "order", "sources"):
        assert facts[key] == cli[key], key
    assert facts["frames"] == cli["frames"]


def test_plan_sample_is_the_same_door(street):
    plan = vidprep.Plan("x", street, exports=[vidprep.frames_export(count=5, sampler="lmms-eval")])
    [(frames, facts)] = plan.sample()
    f2, facts2 = vidprep.sample(street, n=5, sampler="lmms-eval")
    np.testing.assert_array_equal(frames, f2)
    assert facts["sampled"] == facts2["sampled"]


def test_gil_released_while_decoding(street):
    ticks = 0
    done = threading.Event()

    def work():
        try:
            for _ in range(5):
                vidprep.sample(street, n=64, workers=1)
        finally:
            done.set()

    t = threading.Thread(target=work)
    t.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0)
    t.join()
    # With the GIL held for the whole decode this loop could barely run.
    assert ticks > 100, ticks


def test_probe(street):
    info = vidprep.probe(street)
    assert info["video"]["frames"] == 300
    assert info["video"]["width"] == 320 and info["video"]["avg_frame_rate"] == "25/1"


def test_label_and_subtitles_beside_the_frames(street, street_rgb, tmp_path):
    # NumPro's label (red, 40 px, bottom right): the frames are ffmpeg's decode everywhere
    # but the bottom-right corner, where they differ; each record names the text drawn.
    frames, facts = vidprep.sample(street, n=4, label="frame")
    indices = facts["sampled"]["indices"]
    ref = street_rgb[indices]
    corner = np.zeros(frames.shape[1:3], dtype=bool)
    corner[240 - 50:, 320 - 80:] = True
    np.testing.assert_array_equal(frames[:, ~corner], ref[:, ~corner])
    assert all((frames[k][corner] != ref[k][corner]).any() for k in range(len(indices)))
    assert [f["label"] for f in facts["frames"]] == [str(i) for i in indices]
    assert facts["label"]["em_px"] == 40.0
    # Subtitles: each frame's text by VLMEvalKit's rule (start < t < end).
    srt = tmp_path / "s.srt"
    srt.write_text("1\n00:00:00,000 --> 00:00:06,000\nhello\n\n2\n00:00:06,000 --> 00:00:20,000\nbye\n")
    _, facts = vidprep.sample(street, n=3, subtitles=srt)
    times = [f["time_s"] for f in facts["frames"]]
    want = ["hello" if 0 < t * 1000 < 6000 else "bye" if 6000 < t * 1000 < 20000 else "" for t in times]
    assert [f["subtitle"] for f in facts["frames"]] == want


def test_explicit_frames_in_the_order_given(street, street_rgb, tmp_path):
    frames, facts = vidprep.sample(street, frames=[17, 0, 5, 299])
    assert facts["sampled"]["sampler"] == "explicit"
    assert facts["sampled"]["requested"] == {"frames": [17, 0, 5, 299]}
    assert [f["source_frame"] for f in facts["frames"]] == [17, 0, 5, 299]
    np.testing.assert_array_equal(frames, street_rgb[[17, 0, 5, 299]])
    # The same request as the command line's --frames and a plan's "frames".
    exe = REPO / "target" / "debug" / "vidprep"
    if exe.is_file():
        out = tmp_path / "f"
        subprocess.run([str(exe), "export", "frames", str(street), "--out-dir", str(out),
                        "--frames", "17,0,5,299"], check=True, capture_output=True)
        cli = json.loads((out / "frames.json").read_text())
        for key in ("sampled", "order", "export"):
            assert facts[key] == cli[key], key
    plan = vidprep.Plan("x", street, exports=[vidprep.frames_export(frames=[17, 0, 5, 299])])
    [(f2, facts2)] = plan.sample()
    np.testing.assert_array_equal(frames, f2)
    assert facts2["sampled"] == facts["sampled"]


def test_explicit_frames_refusals(street):
    with pytest.raises(vidprep.InputError, match=r"source frame 300 .*300 frames \(0 to 299\)"):
        vidprep.sample(street, frames=[1, 300])
    with pytest.raises(vidprep.InputError, match="allow_repeats"):
        vidprep.sample(street, frames=[4, 4])
    frames, _ = vidprep.sample(street, frames=[4, 4], allow_repeats=True)
    np.testing.assert_array_equal(frames[0], frames[1])
    with pytest.raises(vidprep.UsageError, match="count"):
        vidprep.sample(street, frames=[1], n=3)
    with pytest.raises(vidprep.UsageError, match="follow_package"):
        vidprep.sample(street, follow_package="parity.json")


def _ffmpeg_full_range_rgb(path, size=None):
    """Every frame of a full-range `path` as `ffmpeg -pix_fmt rgb24` converts it, its range said
    outright (`in_range=pc`: FFmpeg 4.3's scale filter reads it only from `yuvj*` formats), scaled
    in the same pass where `size` is given."""
    from conftest import passthrough
    probe = subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
         "-of", "csv=p=0", str(path)], check=True, capture_output=True, text=True).stdout.strip()
    w, h = (int(x) for x in probe.split(",")[:2])
    scale = "scale=in_range=pc"
    if size is not None:
        w, h = size
        scale = f"scale={w}:{h}:flags=bicubic:in_range=pc"
    raw = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", str(path), "-vf", scale, *passthrough(), "-pix_fmt", "rgb24",
         "-f", "rawvideo", "-"], check=True, capture_output=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, h, w, 3)


@pytest.mark.parametrize("name,codec", [
    ("j.mp4", ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuvj420p"]),
    ("t.webm", ["-c:v", "libvpx-vp9", "-b:v", "0", "-crf", "30", "-pix_fmt", "yuv420p", "-color_range", "pc"]),
    ("m.avi", ["-c:v", "mjpeg", "-q:v", "3", "-pix_fmt", "yuvj420p"]),
])
def test_full_range_frames_are_ffmpegs_rgb(tmp_path, name, codec):
    # #52 item 1: a full-range source (webcam, phone, MJPEG) gives ffmpeg's RGB to the bit; vidprep
    # made it from its limited-range pipeline before (up to 3 levels off in 41% of values).
    src = make_video(tmp_path / name, "-f", "lavfi", "-i", "testsrc2=size=96x64:rate=25", "-frames:v", "12",
                     *codec)
    ref = _ffmpeg_full_range_rgb(src)
    frames, facts = vidprep.sample(src, n=5)
    np.testing.assert_array_equal(frames, ref[facts["sampled"]["indices"]])
    small, facts = vidprep.sample(src, n=3, size=(48, 48))
    assert small.shape == (3, 32, 48, 3)
    np.testing.assert_array_equal(small, _ffmpeg_full_range_rgb(src, size=(48, 32))[facts["sampled"]["indices"]])
