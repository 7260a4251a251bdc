"""The drop-in loaders pick what the toolkits' own readers pick (formulas written out here)."""

import numpy as np
import pytest

import vidprep
from vidprep import loaders


def test_read_video_pyav(street, street_rgb):
    frames = loaders.read_video_pyav(street, num_frm=8)
    idx = np.linspace(0, 299, 8, dtype=int)
    np.testing.assert_array_equal(frames, street_rgb[idx])
    # lists of paths, as lmms-eval passes them
    np.testing.assert_array_equal(loaders.read_video_pyav([str(street)], num_frm=8), frames)


def test_read_video_pyav_clamps_to_the_frame_count(street, street_rgb):
    frames = loaders.read_video_pyav(street, num_frm=500)
    np.testing.assert_array_equal(frames, street_rgb)


def test_read_video_takes_lmms_eval_0_7_arguments(street, street_rgb):
    # lmms-eval 0.7.3's read_video(..., force_include_last_frame=, backend=): with one frame,
    # the last one instead of the first; the linspace already ends on it otherwise.
    one = loaders.read_video_pyav(street, num_frm=1, force_include_last_frame=True, backend="pyav")
    np.testing.assert_array_equal(one, street_rgb[[299]])
    np.testing.assert_array_equal(loaders.read_video_pyav(street, num_frm=1), street_rgb[[0]])
    eight = loaders.read_video_pyav(street, num_frm=8, force_include_last_frame=True, backend="torchcodec")
    np.testing.assert_array_equal(eight, street_rgb[np.linspace(0, 299, 8, dtype=int)])


def test_load_video_decord_repeats_like_decord(street, street_rgb):
    frames = loaders.load_video_decord(street, 8)
    np.testing.assert_array_equal(frames, street_rgb[np.linspace(0, 299, 8, dtype=int)])
    assert loaders.load_video_decord(street, 400).shape[0] == 400


def test_vlmevalkit(street, street_rgb, tmp_path):
    pytest.importorskip("PIL")
    images = loaders.vlmevalkit_load_video(street, nframe=8)
    step = 300 / 9
    idx = [int(i * step) for i in range(1, 9)]
    np.testing.assert_array_equal(np.stack([np.asarray(i) for i in images]), street_rgb[idx])
    paths = [str(tmp_path / f"frame-{i}-of-8.jpg") for i in range(1, 9)]
    assert loaders.vlmevalkit_save_video_frames(street, paths, nframe=8) == paths
    assert all((tmp_path / f"frame-{i}-of-8.jpg").is_file() for i in range(1, 9))


def test_qwen_read_video(street, street_rgb):
    video, sample_fps = loaders.qwen_read_video({"video": f"file://{street}", "nframes": 8})
    video = np.asarray(video)
    assert video.shape == (8, 3, 240, 320)
    # qwen: torch.linspace(0, 299, 8).round().long()
    idx = [0, 43, 85, 128, 171, 214, 256, 299]
    np.testing.assert_array_equal(video.transpose(0, 2, 3, 1), street_rgb[idx])
    assert sample_fps == pytest.approx(8 / 300 * 25)
    video, sample_fps = loaders.qwen_read_video({"video": str(street)})  # fps=2 default
    assert np.asarray(video).shape[0] == 24 and sample_fps == pytest.approx(2.0)
    with pytest.raises(vidprep.UsageError):
        loaders.qwen_read_video({"video": str(street), "video_start": 1.0})
