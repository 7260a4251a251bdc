"""`profile=` in `vidprep.sample`: the qwen3-vl profile's frames, size and record, against
qwen-vl-utils' formulas written out here (and against the package itself when installed)."""

import math

import numpy as np
import pytest

import vidprep


def smart_resize(h, w, factor, min_pixels, max_pixels):
    """qwen-vl-utils 0.0.14's smart_resize, as written in vision_process.py."""
    hb = max(factor, round(h / factor) * factor)
    wb = max(factor, round(w / factor) * factor)
    if hb * wb > max_pixels:
        beta = math.sqrt(h * w / max_pixels)
        hb = math.floor(h / beta / factor) * factor
        wb = math.floor(w / beta / factor) * factor
    elif hb * wb < min_pixels:
        beta = math.sqrt(min_pixels / (h * w))
        hb = math.ceil(h * beta / factor) * factor
        wb = math.ceil(w * beta / factor) * factor
    return hb, wb


def test_qwen3_vl_profile(street):
    frames, facts = vidprep.sample(street, profile="qwen3-vl")
    # 300 frames at 25 fps, fps 2: smart_nframes gives 24.
    n = 24
    f = 32
    min_pixels = 128 * f * f
    max_pixels = max(min(768 * f * f, 128000 * f * f * 0.9 / n * 2), int(min_pixels * 1.05))
    h, w = smart_resize(240, 320, f, min_pixels, max_pixels)
    assert frames.shape == (n, h, w, 3) and frames.dtype == np.uint8
    assert facts["profile"]["profile"] == "qwen3-vl"
    assert facts["profile"]["mirrors"]["package"] == "qwen-vl-utils"
    assert len(facts["profile"]["timestamps"]) == n // 2
    _, plain = vidprep.sample(street, n=n, sampler="qwen")
    assert facts["sampled"]["indices"] == plain["sampled"]["indices"]


def test_profile_refuses_a_sampler(street):
    with pytest.raises(Exception, match="sampler"):
        vidprep.sample(street, profile="qwen3-vl", sampler="lmms-eval")


def test_against_the_package(street):
    vp = pytest.importorskip("qwen_vl_utils.vision_process")
    video, meta = vp.fetch_video({"video": str(street)}, image_patch_size=16, return_video_metadata=True)
    frames, facts = vidprep.sample(street, profile="qwen3-vl")
    assert list(meta["frames_indices"]) == facts["sampled"]["indices"]
    ref = video.round().clamp(0, 255).byte().permute(0, 2, 3, 1).numpy()
    assert ref.shape == frames.shape
    diff = np.abs(ref.astype(int) - frames.astype(int))
    mse = (diff.astype(float) ** 2).mean()
    assert mse == 0 or 10 * math.log10(255 ** 2 / mse) >= 45
