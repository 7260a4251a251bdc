"""Requests too big for memory raise ``MemoryError`` up front, naming the size needed.

The oracle is arithmetic on the request (``N * H * W * 3`` bytes, the example being 320x240)
and the clock: the refusal comes before any frame is decoded, and a call inside the budget
still gives the ffmpeg CLI's frames.
"""

import time

import numpy as np
import pytest

import vidprep


def test_many_repeats_raise_memory_error_before_decoding(street):
    began = time.monotonic()
    with pytest.raises(MemoryError) as caught:
        vidprep.sample(street, n=200000, allow_repeats=True)
    text = str(caught.value)
    needed = 200000 * 320 * 240 * 3
    assert "200000 frames of 320x240" in text, text
    assert f"{needed} bytes" in text, text
    assert f"{4 << 30} bytes" in text, text
    assert "memory_budget" in text, text
    assert time.monotonic() - began < 10


def test_every_frame_at_25_fps_over_a_budget_raises_memory_error(street):
    # 300 frames of 320x240 RGB: 69 MB, over a 10 MB budget.
    with pytest.raises(MemoryError) as caught:
        vidprep.sample(street, fps=25, memory_budget=10_000_000)
    assert f"{300 * 320 * 240 * 3} bytes" in str(caught.value)
    # Within the budget the same request works and matches the ffmpeg CLI.
    frames, facts = vidprep.sample(street, fps=25, memory_budget=300 * 320 * 240 * 3)
    assert frames.shape == (300, 240, 320, 3)
    assert facts["sampled"]["indices"] == list(range(300))


def test_the_budget_is_exact(street, street_rgb):
    frames, facts = vidprep.sample(street, n=2, memory_budget=2 * 320 * 240 * 3)
    np.testing.assert_array_equal(frames, street_rgb[facts["sampled"]["indices"]])
    with pytest.raises(MemoryError):
        vidprep.sample(street, n=2, memory_budget=2 * 320 * 240 * 3 - 1)
