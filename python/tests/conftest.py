"""Shared fixtures: the repository's example video and the ffmpeg CLI as an independent oracle."""

import functools
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
STREET = REPO / "fixtures" / "example" / "street.mp4"  # 320x240, 300 frames, 25 fps, frame numbers painted in


@pytest.fixture(scope="session")
def street() -> Path:
    assert STREET.is_file(), f"{STREET} is missing"
    return STREET


@functools.lru_cache(maxsize=None)
def passthrough() -> tuple:
    """The ffmpeg CLI's option for one output frame per decoded frame: `-fps_mode passthrough`
    (FFmpeg 5.1 on; 9.0 has no `-vsync`), or `-vsync passthrough` before 5.1 (Debian 11's 4.3,
    where the wheel is tested)."""
    opts = subprocess.run(["ffmpeg", "-hide_banner", "-h", "full"], capture_output=True, text=True).stdout
    return ("-fps_mode", "passthrough") if "-fps_mode" in opts else ("-vsync", "passthrough")


def ffmpeg_rgb(path, size=None) -> np.ndarray:
    """Every frame of `path` as the ffmpeg CLI decodes it to rgb24: (N, H, W, 3)."""
    if shutil.which("ffmpeg") is None:
        pytest.skip("the ffmpeg CLI is not installed")
    probe = subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
         "-of", "csv=p=0", str(path)], check=True, capture_output=True, text=True).stdout.strip()
    w, h = (int(x) for x in probe.split(",")[:2])
    vf = []
    if size is not None:
        w, h = size
        # Scaled in YUV 4:2:0 first (as vidprep's pipeline), then converted to RGB.
        vf = ["-vf", f"scale={w}:{h}:flags=bicubic,format=yuv420p"]
    raw = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", str(path), *vf, *passthrough(), "-pix_fmt", "rgb24",
         "-f", "rawvideo", "-"], check=True, capture_output=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, h, w, 3)


@pytest.fixture(scope="session")
def street_rgb(street) -> np.ndarray:
    return ffmpeg_rgb(street)


def make_video(path: Path, *args: str) -> Path:
    """A synthetic video made with the ffmpeg CLI (testsrc2 input), for cases the example lacks."""
    if shutil.which("ffmpeg") is None:
        pytest.skip("the ffmpeg CLI is not installed")
    subprocess.run(["ffmpeg", "-v", "error", "-y", *args, str(path)], check=True)
    return path


def need_packages(*names: str) -> None:
    """Skips the test unless every package in `names` imports (scripts/parity-venv.sh makes an
    interpreter with all of them); fails instead where ``VIDPREP_REQUIRE_PARITY`` is set."""
    missing = []
    for name in names:
        try:
            __import__(name)
        except Exception as e:  # noqa: BLE001 - any import failure means "not usable here"
            missing.append(f"{name} ({e.__class__.__name__}: {e})")
    if missing:
        why = "needs " + ", ".join(missing) + " (scripts/parity-venv.sh)"
        if os.environ.get("VIDPREP_REQUIRE_PARITY") or os.environ.get("VIDPREP_REQUIRE_ALL"):
            pytest.fail(f"{why}, but VIDPREP_REQUIRE_PARITY or VIDPREP_REQUIRE_ALL is set")
        pytest.skip(why)
