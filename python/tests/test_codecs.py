"""Codecs beyond the example's H.264, pixel for pixel against the ffmpeg CLI's decode: AV1
(8- and 10-bit, an odd size, film grain), VP9 profile 2 and HEVC Main 10 (10-bit).

The wheel's FFmpeg (scripts/build-wheel.sh) decodes AV1 with dav1d, as Debian's does; its
10-bit pictures give their RGB straight from yuv420p10le (`keeps_own_rgb`), as `ffmpeg -pix_fmt
rgb24` does. Each clip is made with the ffmpeg CLI into tmp; a case skips, saying so, when the
CLI has none of the encoders it can use.
"""

import functools
import shutil
import subprocess

import numpy as np
import pytest

import vidprep
from conftest import ffmpeg_rgb

# testsrc2: moving colour bars, a counter and a gradient; 1 s at 25 fps (25 frames, keyframes
# at 0, 12 and 24): short, as Debian 11's libaom 1.0 encodes slowly.
TESTSRC = "testsrc2=s={w}x{h}:r=25:d=1"

# Per encoder: fast settings, keyframes every 12 frames (so that sampling seeks). (libaom is
# "experimental" to FFmpeg 4.3, Debian 11's CLI.)
AOM = ["-c:v", "libaom-av1", "-strict", "experimental", "-cpu-used", "8", "-crf", "40", "-b:v", "0",
       "-g", "12"]
SVT = ["-c:v", "libsvtav1", "-preset", "12", "-crf", "45", "-g", "12"]
RAV1E = ["-c:v", "librav1e", "-speed", "10", "-qp", "120", "-g", "12"]


@functools.lru_cache(maxsize=None)
def encoders() -> frozenset:
    """The ffmpeg CLI's encoder names."""
    if shutil.which("ffmpeg") is None:
        return frozenset()
    out = subprocess.run(["ffmpeg", "-hide_banner", "-encoders"], capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        # " V....D libaom-av1   libaom AV1 (codec av1)"
        if len(parts) >= 2 and len(parts[0]) == 6 and parts[0][0] in "VAS":
            names.add(parts[1])
    return frozenset(names)


def first_encoder(*choices):
    """The first of `choices` ((name, args) pairs) the CLI has; skips the test if none."""
    if shutil.which("ffmpeg") is None:
        pytest.skip("the ffmpeg CLI is not installed")
    for name, args in choices:
        if name in encoders():
            return name, args
    pytest.skip(f"the ffmpeg CLI has none of the encoders {', '.join(n for n, _ in choices)}")


def encode(path, *args):
    """A clip made with the ffmpeg CLI; skips the test when the CLI's encoder cannot make it
    (Debian 11's libvpx has no VP9 profile 2: "Profile > 1 not supported in this build")."""
    run = subprocess.run(["ffmpeg", "-v", "error", "-y", *args, str(path)], capture_output=True, text=True)
    if run.returncode != 0:
        last = (run.stderr.strip().splitlines() or ["no message"])
        pytest.skip(f"the ffmpeg CLI could not make the clip: {' / '.join(last[-3:])}")
    return path


def check_exact(src, codec, pixel_format, size):
    """vidprep reads every frame of `src` as the ffmpeg CLI decodes it (rgb24)."""
    info = vidprep.probe(src)
    assert info["video"]["codec"] == codec, info["video"]
    assert info["video"]["pixel_format"] == pixel_format, info["video"]
    assert (info["video"]["width"], info["video"]["height"]) == size
    ref = ffmpeg_rgb(src)
    assert ref.shape[1:3] == (size[1], size[0])
    # Every frame, in order (a full decode), then a sparse sample (seeks to keyframes).
    frames, facts = vidprep.sample(src, n=len(ref))
    assert facts["total_frames"] == len(ref)
    assert facts["sampled"]["indices"] == list(range(len(ref)))
    np.testing.assert_array_equal(frames, ref)
    frames, facts = vidprep.sample(src, n=7, order="reversed")
    np.testing.assert_array_equal(frames, ref[facts["sampled"]["indices"]][::-1])
    return ref


@pytest.mark.parametrize(
    "pix_fmt,size,expect",
    [
        ("yuv420p", (320, 240), "yuv420p"),
        ("yuv420p10le", (320, 240), "yuv420p10le"),
        ("yuv420p", (321, 241), "yuv420p"),  # odd: chroma of half-pixels at the edges
        ("yuv420p10le", (321, 241), "yuv420p10le"),
    ],
    ids=["8bit", "10bit", "8bit-odd", "10bit-odd"],
)
def test_av1(tmp_path, pix_fmt, size, expect):
    w, h = size
    choices = [("libaom-av1", AOM), ("librav1e", RAV1E)]
    if w % 2 == 0 and h % 2 == 0:
        choices.append(("libsvtav1", SVT))  # (SVT-AV1 takes even sizes only)
    _, args = first_encoder(*choices)
    # (testsrc2 and a 4:2:0 crop round a size down to even: an odd one is cropped in RGB from
    # the next even size.)
    src = encode(tmp_path / "av1.mp4", "-f", "lavfi", "-i", TESTSRC.format(w=w + w % 2, h=h + h % 2),
                 "-vf", f"format=rgb24,crop={w}:{h}:0:0", *args, "-pix_fmt", pix_fmt)
    check_exact(src, "av1", expect, size)


@pytest.mark.parametrize("pix_fmt", ["yuv420p", "yuv420p10le"], ids=["8bit", "10bit"])
def test_av1_film_grain(tmp_path, pix_fmt):
    # Grain is synthesised by the decoder from parameters in the stream (normative, so dav1d's
    # grain is the same everywhere): vidprep's frames have it, as the CLI's do. libaom
    # estimates the grain of a noisy source; SVT-AV1 too (film-grain=N).
    _, args = first_encoder(
        ("libaom-av1", AOM + ["-denoise-noise-level", "20"]),
        ("libsvtav1", SVT + ["-svtav1-params", "film-grain=10"]),
    )
    # (176x144: libaom's estimate of the grain is slow, over a minute at 320x240 with libaom 1.0.)
    src = encode(tmp_path / "grain.mkv", "-f", "lavfi", "-i", TESTSRC.format(w=176, h=144),
                 "-vf", "noise=alls=25:allf=t", *args, "-pix_fmt", pix_fmt)
    ref = check_exact(src, "av1", pix_fmt, (176, 144))
    # The stream does carry grain: the CLI's decode without applying it (the parameters
    # exported instead; FFmpeg 4.4 and later) is other pixels.
    plain = subprocess.run(
        ["ffmpeg", "-v", "error", "-export_side_data", "film_grain", "-i", str(src),
         "-pix_fmt", "rgb24", "-f", "rawvideo", "-"], capture_output=True)
    if plain.returncode == 0 and len(plain.stdout) == ref.nbytes:
        assert not np.array_equal(np.frombuffer(plain.stdout, np.uint8).reshape(ref.shape), ref), \
            "the clip has no film grain: the test would not test it"


def test_vp9_profile2_10bit(tmp_path):
    _, args = first_encoder(("libvpx-vp9", ["-c:v", "libvpx-vp9", "-profile:v", "2", "-deadline", "realtime",
                                            "-cpu-used", "8", "-b:v", "400k", "-g", "12"]))
    src = encode(tmp_path / "vp9.webm", "-f", "lavfi", "-i", TESTSRC.format(w=320, h=240),
                 *args, "-pix_fmt", "yuv420p10le")
    check_exact(src, "vp9", "yuv420p10le", (320, 240))


def test_hevc_main10(tmp_path):
    _, args = first_encoder(("libx265", ["-c:v", "libx265", "-preset", "ultrafast", "-crf", "30",
                                         "-x265-params", "log-level=error:keyint=12:min-keyint=12"]))
    src = encode(tmp_path / "hevc.mp4", "-f", "lavfi", "-i", TESTSRC.format(w=320, h=240),
                 *args, "-pix_fmt", "yuv420p10le")
    check_exact(src, "hevc", "yuv420p10le", (320, 240))
