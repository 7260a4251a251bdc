"""Drop-in video readers with the signatures of the toolkits' own, backed by :func:`vidprep.sample`.

Each picks the frames the toolkit's formula picks (the same sampler ``vidprep export frames
--sampler NAME`` uses, checked against the toolkits in ``fixtures/sampling/golden.json``), over
the true frame count rather than the container's claim, and decodes only those frames.

lmms-eval (``lmms_eval/models/model_utils/load_video.py``)::

    import lmms_eval.models.model_utils.load_video as lv
    from vidprep import loaders
    lv.read_video_pyav = loaders.read_video_pyav
    lv.load_video_decord = loaders.load_video_decord
    # models that imported the names directly need theirs replaced too, e.g.
    # import lmms_eval.models.simple.llava_vid as m; m.load_video_decord = loaders.load_video_decord

VLMEvalKit (a video dataset's ``save_video_frames``)::

    from vidprep import loaders
    frames = loaders.vlmevalkit_load_video("video.mp4", nframe=8)   # list of PIL images
    # or write the frame files VLMEvalKit's frame_paths() names:
    loaders.vlmevalkit_save_video_frames("video.mp4", dataset.frame_paths(video), nframe=8)

qwen-vl-utils (``qwen_vl_utils/vision_process.py``, a reader backend)::

    import os, qwen_vl_utils.vision_process as vp
    from vidprep import loaders
    vp.VIDEO_READER_BACKENDS["vidprep"] = loaders.qwen_read_video
    os.environ["FORCE_QWENVL_VIDEO_READER"] = "vidprep"
    # fetch_video / process_vision_info now read with vidprep (resizing stays qwen's)
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import InputError, UsageError, probe, sample

__all__ = [
    "read_video_pyav",
    "load_video_decord",
    "lmms_eval_read_video",
    "vlmevalkit_load_video",
    "vlmevalkit_save_video_frames",
    "qwen_read_video",
    "qwen_fetch_video",
]


def _path(video_path: Any) -> str:
    # lmms-eval passes a path or a one-element list of paths.
    if isinstance(video_path, (list, tuple)):
        video_path = video_path[0]
    return os.fspath(video_path)


def _size_cap(max_image_size: Union[None, int, Tuple[int, int]]) -> Optional[Tuple[int, int]]:
    if max_image_size is None:
        return None
    if isinstance(max_image_size, int):
        return (max_image_size, max_image_size)
    return (int(max_image_size[0]), int(max_image_size[1]))


def read_video_pyav(
    video_path: Union[str, Sequence[str]],
    num_frm: int = 8,
    fps: Optional[float] = None,
    format: str = "rgb24",
    max_image_size: Union[None, int, Tuple[int, int]] = None,
    resize_strategy: str = "resize",
) -> np.ndarray:
    """lmms-eval's ``read_video_pyav``: ``num_frm`` frames by ``np.linspace(0, total - 1,
    num_frm, dtype=int)`` with ``num_frm`` clamped to the frame count; returns ``(N, H, W, 3)``
    ``uint8`` RGB. ``max_image_size`` keeps the aspect inside the box (lmms-eval's ``resize``
    strategy stretches; only the aspect-keeping cap is available here)."""
    if format != "rgb24":
        raise UsageError(f"read_video_pyav: only format='rgb24' is supported, not {format!r}")
    path = _path(video_path)
    kwargs: Dict[str, Any] = {"sampler": "lmms-eval", "size": _size_cap(max_image_size)}
    if fps is not None:
        kwargs.update(fps=fps, max_frames=num_frm)
        frames, _ = sample(path, **kwargs)
        return frames
    try:
        frames, _ = sample(path, n=num_frm, **kwargs)
    except InputError as e:
        # Fewer frames than asked: read_video_pyav clamps num_frm to the frame count.
        if "allow_repeats" not in str(e):
            raise
        total = probe(path)["video"]["frames"]
        frames, _ = sample(path, n=min(num_frm, total), **kwargs)
    return frames


def load_video_decord(video_path: Union[str, Sequence[str]], max_frames_num: int) -> np.ndarray:
    """lmms-eval's ``load_video_decord``: ``np.linspace(0, total - 1, max_frames_num,
    dtype=int)`` without clamping (a short video repeats frames, as decord's loader does);
    returns ``(N, H, W, 3)`` ``uint8`` RGB."""
    frames, _ = sample(_path(video_path), n=max_frames_num, sampler="lmms-eval", allow_repeats=True)
    return frames


#: The name the issue asks for: lmms-eval's default reader.
lmms_eval_read_video = read_video_pyav


def _vlmevalkit_frames(video_path: str, nframe: int, fps: float) -> np.ndarray:
    if nframe > 0 and fps > 0:
        raise UsageError("VLMEvalKit samples either nframe or fps, not both")
    if fps > 0:
        frames, _ = sample(video_path, sampler="vlmevalkit", fps=fps)
    else:
        frames, _ = sample(video_path, n=nframe or 8, sampler="vlmevalkit")
    return frames


def vlmevalkit_load_video(video_path: str, nframe: int = 8, fps: float = -1) -> List[Any]:
    """The frames VLMEvalKit's ``save_video_frames`` picks (count mode: ``int(i * total /
    (nframe + 1))`` for ``i`` in ``1..nframe``; fps mode: steps of the container's rate), as
    PIL images (Pillow needed) in time order."""
    from PIL import Image

    return [Image.fromarray(f) for f in _vlmevalkit_frames(os.fspath(video_path), nframe, fps)]


def vlmevalkit_save_video_frames(
    video_path: str, frame_paths: Sequence[str], nframe: int = 0, fps: float = -1
) -> List[str]:
    """VLMEvalKit's ``save_video_frames`` for one video: writes the picked frames to
    ``frame_paths`` (the dataset's ``frame_paths(video)``), skipping files that exist, and
    returns the paths."""
    from PIL import Image

    frames = _vlmevalkit_frames(os.fspath(video_path), nframe, fps)
    if len(frames) != len(frame_paths):
        raise UsageError(f"{video_path}: {len(frames)} frames picked for {len(frame_paths)} frame paths")
    for f, p in zip(frames, frame_paths):
        if not os.path.exists(p):
            Image.fromarray(f).save(p)
    return list(frame_paths)


def qwen_read_video(ele: Dict[str, Any]) -> Tuple[Any, float]:
    """A qwen-vl-utils reader backend (as ``_read_video_decord(ele)``): the frames
    ``smart_nframes`` and qwen's ``torch.linspace(...).round()`` pick, as a ``(T, C, H, W)``
    ``uint8`` tensor (a NumPy array when torch is not installed), and the sample fps.

    ``ele`` keys: ``video`` (a path or ``file://`` URL), ``nframes``, or ``fps`` (default 2.0)
    with ``max_frames``. ``video_start``/``video_end`` and ``min_frames`` are not supported yet
    and raise :class:`UsageError` rather than be ignored.
    """
    for key in ("video_start", "video_end", "min_frames"):
        if ele.get(key) is not None:
            raise UsageError(f"qwen_read_video: {key!r} is not supported yet")
    path = ele["video"]
    if isinstance(path, str) and path.startswith("file://"):
        path = path[len("file://"):]
    if "nframes" in ele:
        frames, facts = sample(path, n=int(ele["nframes"]), sampler="qwen")
    else:
        frames, facts = sample(
            path, sampler="qwen", fps=float(ele.get("fps", 2.0)), max_frames=ele.get("max_frames")
        )
    total = facts["total_frames"]
    video_fps = _avg_fps(facts)
    sample_fps = len(frames) / max(total, 1e-6) * video_fps
    video = np.ascontiguousarray(frames.transpose(0, 3, 1, 2))
    try:
        import torch

        video = torch.from_numpy(video)
    except ImportError:
        pass
    return video, sample_fps


def _avg_fps(facts: Dict[str, Any]) -> float:
    """The source's average frame rate (decord's ``get_avg_fps``), from ``frames.json``."""
    for source in facts.get("sources", []):
        rate = source.get("avg_frame_rate") or source.get("frame_rate")
        if rate:
            num, _, den = str(rate).partition("/")
            return float(num) / float(den or 1)
    raise UsageError("the source's frame rate is unknown")


def qwen_fetch_video(ele: Dict[str, Any], image_factor: int = 28, return_video_sample_fps: bool = False):
    """qwen-vl-utils' ``fetch_video`` for a video path: reads with :func:`qwen_read_video`,
    then resizes with qwen-vl-utils' own ``smart_resize`` and torchvision (both needed)."""
    from qwen_vl_utils import vision_process as vp  # the resize stays qwen's own

    backends = vp.VIDEO_READER_BACKENDS
    saved = dict(backends)
    saved_env = os.environ.get("FORCE_QWENVL_VIDEO_READER")
    backends["vidprep"] = qwen_read_video
    os.environ["FORCE_QWENVL_VIDEO_READER"] = "vidprep"
    try:
        vp.get_video_reader_backend.cache_clear() if hasattr(vp.get_video_reader_backend, "cache_clear") else None
        return vp.fetch_video(ele, image_factor=image_factor, return_video_sample_fps=return_video_sample_fps)
    finally:
        backends.clear()
        backends.update(saved)
        if saved_env is None:
            os.environ.pop("FORCE_QWENVL_VIDEO_READER", None)
        else:
            os.environ["FORCE_QWENVL_VIDEO_READER"] = saved_env
