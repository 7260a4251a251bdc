"""vidprep's loaders for the model pipelines against the pipelines' own loaders, on the format
matrix (`scripts/format-matrix.sh`: one frame-coded 320x240 source, 100 frames, in ~40
codecs and containers), with the ffmpeg CLI's plain sequential decode as the oracle of which
frames a loader really returned:

- vLLM 0.34 (`vidprep.vllm`: `vidprep`, `vidprep_qwen2_vl`, `vidprep_qwen3_vl` against vLLM's
  `opencv`, `qwen2_vl`, `qwen3_vl`);
- transformers 5.25 (`loaders.use_with_transformers`: `load_video(backend="vidprep")` against
  `backend="torchcodec"`, what its video processors use, and `"pyav"`, its default);
- lmms-eval 0.7.3 (`loaders.read_video_pyav` against its default `read_video`, PyAV).

Where the pipeline's loader returns the frames the oracle has at the indices it names, over the
oracle's frame count, vidprep's indices and pixels must equal it; everywhere vidprep's frames
must be the oracle's at its indices. The videos where the pipeline's loader is wrong are listed
below (a change in either list fails the test, so it is noticed).

Needs vllm (`pip install --no-deps vllm==0.34.0` and the few modules its video import needs,
`scripts/parity-venv.sh`), opencv, torch, torchcodec, transformers, av and lmms-eval: skips
without them, and fails instead where ``VIDPREP_REQUIRE_PARITY`` is set. The matrix is made in
a temporary folder (about 12 s), or read from ``VIDPREP_FORMAT_MATRIX``.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import need_packages, passthrough

ROOT = Path(__file__).resolve().parents[2]


_need = need_packages


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    """The format matrix's videos, made on first use (after each test has checked its
    packages, so that an interpreter without them skips before any video is made)."""

    class Matrix:
        videos = None

        def __iter__(self):
            if self.videos is None:
                if shutil.which("ffmpeg") is None:
                    pytest.skip("the ffmpeg CLI is not installed")
                given = os.environ.get("VIDPREP_FORMAT_MATRIX")
                if given:
                    d = Path(given)
                else:
                    d = tmp_path_factory.mktemp("format-matrix")
                    subprocess.run(["bash", str(ROOT / "scripts" / "format-matrix.sh"), str(d)],
                                   check=True, capture_output=True)
                self.videos = sorted(p for p in d.iterdir() if p.suffix != ".txt")
                assert len(self.videos) >= 40, f"{d}: {len(self.videos)} videos, the matrix has 41"
            return iter(self.videos)

    return Matrix()


def ffmpeg_rgb(path):
    """Every frame of `path` as the ffmpeg CLI decodes it in order to rgb24, display matrix
    applied (the CLI's default autorotate): (N, H, W, 3)."""
    info = json.loads(subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
         "stream=width,height:stream_side_data=rotation", "-of", "json", str(path)],
        check=True, capture_output=True, text=True).stdout)["streams"][0]
    w, h = info["width"], info["height"]
    if any(abs(int(d.get("rotation", 0))) % 180 == 90 for d in info.get("side_data_list", [])):
        w, h = h, w
    raw = subprocess.run(["ffmpeg", "-v", "quiet", "-i", str(path), *passthrough(), "-pix_fmt", "rgb24",
                          "-f", "rawvideo", "-"], capture_output=True).stdout
    return np.frombuffer(raw, np.uint8)[: len(raw) // (w * h * 3) * w * h * 3].reshape(-1, h, w, 3)


@pytest.fixture(scope="module")
def oracle():
    cache = {}

    def get(path):
        if path not in cache:
            cache[path] = ffmpeg_rgb(path)
        return cache[path]

    return get


# vidprep's pictures are not the stored grid here, by design (both sides' frames are the same
# frames): square pixels (vidprep scales non-square-pixel video to square pixels: 64:45 and
# H.263's 12:11; OpenCV, PyAV and torchcodec return the stored grid), and 4:2:2 sources whose
# RGB vidprep converts from its 8-bit 4:2:0 pipeline (MJPEG, ProRes; docs/profiles.md).
SQUARE_PIXELS = {"sar_64_45_mp4.mp4", "h263_3gp.3gp"}
FROM_420 = {"mjpeg_avi.avi", "prores_mov.mov"}
# Damaged on purpose: which frames exist there is the decoders' choice, not a fact.
DAMAGED = {"damaged_h264_ts.ts", "damaged_ogv.ogv", "unreadable_ogv.ogv"}


def _psnr(a, b):
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float("inf") if mse == 0 else 10 * np.log10(255.0 ** 2 / mse)


def _true_frames(name, frames, indices, total, ref):
    """Whether `frames` are the oracle's frames at `indices`, over the oracle's frame count."""
    if total != len(ref) or not indices or max(indices) >= len(ref):
        return False
    want = ref[list(indices)]
    if frames.shape != want.shape:
        return False
    return bool(np.array_equal(frames, want))


def _compare(name, ours, ours_idx, ours_total, theirs, theirs_idx, theirs_total, ref):
    """Checks one video; returns whether the pipeline's loader gave true frames."""
    if name in DAMAGED:
        return None
    if name in SQUARE_PIXELS:
        assert ours_total == len(ref), name
        assert ours.shape[0] == len(ours_idx) and ours.shape[1] == ref.shape[1], name
    elif name in FROM_420:
        assert ours_total == len(ref), name
        assert _psnr(ours, ref[ours_idx]) > 35, name
    else:
        assert _true_frames(name, ours, ours_idx, ours_total, ref), f"{name}: vidprep's frames are not the ffmpeg CLI's at {ours_idx}"
    if theirs is None:
        return False
    theirs_ok = (_true_frames(name, theirs, theirs_idx, theirs_total, ref)
                 or (name in SQUARE_PIXELS | FROM_420 and theirs_total == len(ref)))
    if theirs_ok:
        assert list(ours_idx) == list(theirs_idx), f"{name}: indices {ours_idx} != {theirs_idx}"
        if name not in SQUARE_PIXELS | FROM_420:
            np.testing.assert_array_equal(ours, theirs, err_msg=name)
    return theirs_ok


# vLLM 0.34 with OpenCV 5.1 (FFmpeg backend): where its loaders return other frames than the
# ffmpeg CLI's at the indices they name, or count other than the true frame count.
#   h264_ts.ts, late_avi.avi: OpenCV counts 101 frames of 100 (duration x rate) and the last
#     index is never decoded (7 of 8 frames for opencv/qwen3_vl; qwen2_vl's 8 differ too);
#   vfr_mkv.mkv: 112 frames counted of 100 (the container's duration x 25), the indices run past
#     the video's end;
#   mpeg1_m1v.m1v: OpenCV reports 1 frame of 100, so one frame is returned (qwen2_vl divides by
#     zero: its rule floors 1 frame to 0 pairs).
VLLM_WRONG = {"h264_ts.ts", "late_avi.avi", "vfr_mkv.mkv", "mpeg1_m1v.m1v"}


def test_vllm_loaders_equal_vllms_own(matrix, oracle):
    _need("vllm.multimodal.video", "cv2", "torch")
    from vllm.multimodal.video import VIDEO_LOADER_REGISTRY

    import vidprep.vllm as vv

    vv.register()
    pairs = [("vidprep", "opencv", {"num_frames": 8}), ("vidprep_qwen2_vl", "qwen2_vl", {}),
             ("vidprep_qwen3_vl", "qwen3_vl", {})]
    wrong, checked, equal = {}, 0, 0
    for path in matrix:
        data = path.read_bytes()
        ref = oracle(path)
        for ours_name, theirs_name, kw in pairs:
            if path.name == "one_frame_mp4.mp4" and theirs_name == "qwen2_vl":
                # vLLM's qwen2_vl rule on 1 frame: n = floor(1 / 2) * 2 = 0, a division by zero;
                # vidprep says so, naming the rule.
                with pytest.raises(ZeroDivisionError):
                    VIDEO_LOADER_REGISTRY.load(theirs_name).load_bytes(data, **kw)
                with pytest.raises(vv.InputError, match="qwen2_vl"):
                    VIDEO_LOADER_REGISTRY.load(ours_name).load_bytes(data, **kw)
                continue
            ours, om = VIDEO_LOADER_REGISTRY.load(ours_name).load_bytes(data, **kw)
            assert om["video_backend"] == "vidprep"
            assert set(om) == {"total_num_frames", "fps", "duration", "video_backend", "frames_indices", "do_sample_frames"}
            try:
                theirs, tm = VIDEO_LOADER_REGISTRY.load(theirs_name).load_bytes(data, **kw)
            except ZeroDivisionError:
                theirs, tm = None, {"frames_indices": [], "total_num_frames": 0}
            ok = _compare(path.name, ours, om["frames_indices"], om["total_num_frames"], theirs,
                          tm["frames_indices"], tm["total_num_frames"], ref)
            checked += 1
            if ok is False:
                wrong.setdefault(path.name, []).append(theirs_name)
            elif ok:
                equal += 1
                assert om["fps"] == pytest.approx(tm["fps"]) and om["duration"] == pytest.approx(tm["duration"])
                assert om["do_sample_frames"] == tm["do_sample_frames"]
    print(f"vLLM: {checked} loader x video pairs, {equal} equal to vLLM's, vLLM wrong on {wrong}")
    assert set(wrong) == VLLM_WRONG, wrong
    assert equal >= 3 * 30


def test_vllm_plugin_is_declared_and_maps_qwen(monkeypatch):
    _need("vllm.multimodal.video", "cv2", "torch")
    import tomllib

    text = (ROOT / "python" / "pyproject.toml").read_text()
    assert tomllib.loads(text)["project"]["entry-points"]["vllm.general_plugins"] == {"vidprep": "vidprep.vllm:register"}
    from vllm.multimodal.video import VIDEO_LOADER_REGISTRY

    import vidprep.vllm as vv

    saved = dict(VIDEO_LOADER_REGISTRY.processor2backend)
    try:
        monkeypatch.setenv("VLLM_VIDEO_LOADER_BACKEND", "vidprep")
        vv.register()
        vv.register()  # vLLM may load plugins more than once
        m = VIDEO_LOADER_REGISTRY.processor2backend
        assert m["Qwen2VLVideoProcessor"] == "vidprep_qwen2_vl"
        assert m["Qwen3VLVideoProcessor"] == "vidprep_qwen3_vl"
        # vLLM's own selection path, as a chat request takes it (VideoMediaIO through the connector's rule)
        from vllm.multimodal.media.video import VideoMediaIO
        from vllm.multimodal.video import get_video_loader_backend_for_processor

        backend = get_video_loader_backend_for_processor("Qwen2VLVideoProcessor")
        io = VideoMediaIO(None, video_backend=backend)
        assert type(io.video_loader).__name__ == "VidprepQwen2VLVideoBackend"
        assert type(VideoMediaIO(None).video_loader).__name__ == "VidprepVideoBackend"
    finally:
        VIDEO_LOADER_REGISTRY.processor2backend.clear()
        VIDEO_LOADER_REGISTRY.processor2backend.update(saved)


# transformers 5.25: torchcodec (its processors' reader) and PyAV (load_video's default), where
# they return other frames than the ffmpeg CLI's or count other than the true count.
#   torchcodec 0.17: on AVI (H.264, MPEG-4 ASP, packed Xvid), MPEG-1/2 (raw, PS, TS, VOB) and
#     H.264 in TS it returns other frames than the indices it names; raw H.264/HEVC it cannot
#     open (its scan fails);
#   PyAV 18 (`stream.frames`): no frame count in the header (MKV, WebM, Ogg, TS, PS, raw
#     streams, y4m) is 0 frames, and load_video refuses; AVI counts 101 of 100 (late start) or
#     100 of 98 (packed B-frames); the rotated ones are not rotated (PyAV ignores the display
#     matrix).
TRANSFORMERS_WRONG = {
    "torchcodec": {"h264_annexb.h264", "h264_avi.avi", "h264_ts.ts", "hevc_annexb.hevc", "mpeg1_m1v.m1v",
                   "mpeg2_m2v.m2v", "mpeg2_ps.mpg", "mpeg2_ts.ts", "mpeg2_vob.vob", "mpeg4_avi_bf.avi",
                   "xvid_avi_packed.avi"},
    "pyav": {"audio_first_mkv.mkv", "av1_mkv.mkv", "ffv1_mkv.mkv", "h264_annexb.h264", "h264_mkv.mkv",
             "h264_ts.ts", "hevc_annexb.hevc", "late_avi.avi", "master.mkv", "mpeg1_m1v.m1v", "mpeg2_m2v.m2v",
             "mpeg2_ps.mpg", "mpeg2_ts.ts", "mpeg2_vob.vob", "odd_size_mkv.mkv", "rot180_mp4.mp4",
             "rot270_mov.mov", "rot90_mp4.mp4", "theora_ogv.ogv", "vfr_mkv.mkv", "vp9_webm.webm",
             "xvid_avi_packed.avi", "y4m.y4m"},
}


@pytest.mark.parametrize("backend", ["torchcodec", "pyav"])
def test_transformers_backend_equals_transformers_own(matrix, oracle, backend):
    _need("transformers", "torch", "torchcodec", "av")
    from transformers import video_utils as vu

    from vidprep import loaders

    wrong, equal = {}, 0
    with loaders.use_with_transformers():
        assert vu.VIDEO_DECODERS["vidprep"] is loaders.transformers_read_video
        for path in matrix:
            ref = oracle(path)
            n = min(8, len(ref))  # transformers refuses more frames than the video has
            ours, om = vu.load_video(str(path), num_frames=n, backend="vidprep")
            assert om.video_backend == "vidprep"
            try:
                theirs, tm = vu.load_video(str(path), num_frames=n, backend=backend)
                theirs = np.asarray(theirs)
                if theirs.ndim == 4 and theirs.shape[1] == 3 and theirs.shape[-1] != 3:
                    theirs = theirs.transpose(0, 2, 3, 1)
                t_idx, t_total = [int(i) for i in tm.frames_indices], int(tm.total_num_frames)
            except Exception as e:  # noqa: BLE001 - the package failing on a file is a finding
                theirs, t_idx, t_total = None, [], 0
                print(f"transformers {backend} fails on {path.name}: {e.__class__.__name__}: {str(e)[:100]}")
            ok = _compare(path.name, ours, [int(i) for i in om.frames_indices], om.total_num_frames,
                          theirs, t_idx, t_total, ref)
            if ok is False:
                wrong[path.name] = t_total
            elif ok:
                equal += 1
    assert vu.VIDEO_DECODERS.get("vidprep") is None
    print(f"transformers {backend}: {equal} equal, wrong on {wrong}")
    assert set(wrong) == TRANSFORMERS_WRONG[backend], wrong


# lmms-eval 0.7.3's read_video (PyAV): a path containing "mkv" or "webm", or a header without a
# frame count, gives every frame; elsewhere the header's count. The drop-in samples num_frm over
# the true count.
#   every frame (a path containing "mkv"/"webm", or no header count): 16 of the matrix;
#   wrong: raw H.264/HEVC fail (PermissionError from the seek of its fallback); late AVI and
#     packed Xvid return 7 frames (header 101 / 100 frames, past-the-end index dropped); the
#     rotated ones are not rotated (PyAV ignores the display matrix).
LMMS_WRONG = {"h264_annexb.h264", "hevc_annexb.hevc", "late_avi.avi", "rot180_mp4.mp4", "rot270_mov.mov",
              "rot90_mp4.mp4", "xvid_avi_packed.avi"}
LMMS_EVERY_FRAME = {"audio_first_mkv.mkv", "av1_mkv.mkv", "ffv1_mkv.mkv", "h264_mkv.mkv", "h264_ts.ts", "master.mkv",
                    "mpeg1_m1v.m1v", "mpeg2_m2v.m2v", "mpeg2_ps.mpg", "mpeg2_ts.ts", "mpeg2_vob.vob",
                    "odd_size_mkv.mkv", "theora_ogv.ogv", "vfr_mkv.mkv", "vp9_webm.webm", "y4m.y4m"}


def test_lmms_eval_read_video_equals_lmms_evals_own(matrix, oracle):
    _need("lmms_eval", "av")
    import importlib.util

    # The installed file itself (the package's __init__ needs the whole harness: loguru, ...),
    # as scripts/parity_runner.py loads it.
    where = Path(importlib.util.find_spec("lmms_eval").origin).parent / "models" / "model_utils" / "load_video.py"
    spec = importlib.util.spec_from_file_location("lmms_eval_load_video", where)
    lv = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lv)

    from vidprep import loaders

    wrong, every, equal = {}, {}, 0
    for path in matrix:
        ref = oracle(path)
        ours = loaders.read_video_pyav(str(path), num_frm=8)
        ours_idx = np.linspace(0, len(ref) - 1, min(8, len(ref)), dtype=int).tolist()
        try:
            theirs = lv.read_video(str(path), num_frm=8)
        except Exception as e:  # noqa: BLE001
            theirs = None
            print(f"lmms-eval fails on {path.name}: {e.__class__.__name__}: {str(e)[:100]}")
        # lmms-eval names no indices: the ones its rule picks over the header's count
        t_idx = []
        if theirs is not None:
            import av

            with av.open(str(path)) as c:
                header = c.streams.video[0].frames
            t_idx = (np.linspace(0, header - 1, min(8, header), dtype=int).tolist()
                     if header and len(theirs) == min(8, header) else list(range(len(theirs))))
        if theirs is not None and len(ref) > 8 and len(theirs) == len(ref) and path.name not in DAMAGED:
            # every frame: true frames, but not the 8 asked for
            if path.name not in SQUARE_PIXELS | FROM_420:
                np.testing.assert_array_equal(theirs, ref, err_msg=path.name)
            every[path.name] = len(theirs)
            continue
        ok = _compare(path.name, ours, ours_idx, len(ref), theirs, t_idx, len(ref), ref)
        if ok is False:
            wrong[path.name] = None if theirs is None else len(theirs)
        elif ok:
            equal += 1
    print(f"lmms-eval: {equal} equal, every frame on {every}, wrong on {wrong}")
    assert set(wrong) == LMMS_WRONG, wrong
    assert set(every) == LMMS_EVERY_FRAME, every
