"""vidprep.sample of RGB-coded sources: arrays byte-equal to `ffmpeg -pix_fmt rgb24`.

GIF (bgra), APNG, QTRLE, PNG in MOV (rgb24), FFV1 RGB (bgr0), Cinepak (FFmpeg's decoder
outputs rgb24 itself) and folders of PNGs are never converted through YUV 4:2:0, which cost
23-38 dB before; scaled, they are scaled in RGB as `-vf scale=W:H:flags=bicubic` does.
"""

import functools
import subprocess

import numpy as np
import pytest

import vidprep
from conftest import make_video, passthrough

TESTSRC = ["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10:duration=2"]

CASES = {
    "gif": ("a.gif", ["-c:v", "gif"]),
    "apng": ("a.apng", ["-c:v", "apng"]),
    "qtrle": ("a.mov", ["-c:v", "qtrle"]),
    "png_mov": ("a.mov", ["-c:v", "png"]),
    "ffv1_rgb": ("a.mkv", ["-c:v", "ffv1", "-pix_fmt", "bgr0"]),
    "cinepak": ("a.avi", ["-c:v", "cinepak"]),
}


@functools.lru_cache(maxsize=None)
def passthrough():
    """`-fps_mode passthrough` (FFmpeg 5.1 on), `-vsync passthrough` for older ffmpeg."""
    help_text = subprocess.run(["ffmpeg", "-hide_banner", "-h", "full"], capture_output=True, text=True).stdout
    return ["-fps_mode" if "-fps_mode" in help_text else "-vsync", "passthrough"]


def ffmpeg_rgb24(path, w, h, vf=()):
    raw = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", str(path), *vf, *passthrough(), "-pix_fmt", "rgb24",
         "-f", "rawvideo", "-"], check=True, capture_output=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, h, w, 3)


@pytest.mark.parametrize("case", sorted(CASES))
def test_rgb_source_arrays_equal_ffmpeg_rgb24(tmp_path, case):
    name, encode = CASES[case]
    src = make_video(tmp_path / name, *TESTSRC, *encode)
    ref = ffmpeg_rgb24(src, 160, 120)
    frames, facts = vidprep.sample(src, n=6)
    assert facts["total_frames"] == len(ref) == 20
    np.testing.assert_array_equal(frames, ref[facts["sampled"]["indices"]])


@pytest.mark.parametrize("case", ["gif", "cinepak"])
def test_scaled_rgb_source_equals_ffmpeg_bicubic_scale(tmp_path, case):
    name, encode = CASES[case]
    src = make_video(tmp_path / name, *TESTSRC, *encode)
    ref = ffmpeg_rgb24(src, 80, 60, ["-vf", "scale=80:60:flags=bicubic"])
    frames, facts = vidprep.sample(src, n=4, size=(80, 80))
    assert frames.shape == (4, 60, 80, 3)
    np.testing.assert_array_equal(frames, ref[facts["sampled"]["indices"]])


def test_png_folder_arrays_equal_the_files(tmp_path):
    folder = tmp_path / "seq"
    folder.mkdir()
    make_video(folder / "%04d.png", *TESTSRC)
    frames, facts = vidprep.sample(folder, n=5, source_fps=10)
    for i, f in zip(facts["sampled"]["indices"], frames):
        ref = ffmpeg_rgb24(folder / f"{i + 1:04d}.png", 160, 120)
        np.testing.assert_array_equal(f, ref[0])
