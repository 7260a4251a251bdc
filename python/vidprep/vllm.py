"""vidprep as vLLM's video loader (vLLM 0.34, ``vllm/multimodal/video.py``).

Enabled by one setting, with vidprep installed where vLLM runs::

    VLLM_VIDEO_LOADER_BACKEND=vidprep vllm serve Qwen/Qwen3-VL-8B-Instruct

vLLM loads the ``vllm.general_plugins`` entry point ``vidprep`` (:func:`register`) in every
process; it adds three loaders to ``VIDEO_LOADER_REGISTRY``:

- ``vidprep``: vLLM's default ``opencv`` loader's sampling (``num_frames`` uniform,
  ``np.linspace(0, total - 1, n, dtype=int)``, fewer with ``fps``);
- ``vidprep_qwen2_vl`` and ``vidprep_qwen3_vl``: the sampling of vLLM's ``qwen2_vl`` and
  ``qwen3_vl`` loaders (Qwen2-VL / Qwen2.5-VL, Qwen3-VL), vLLM's own
  ``compute_frames_index_to_sample`` called on vidprep's frame count and rate.

vLLM picks the ``qwen2_vl``/``qwen3_vl`` loader for those models by their video processor,
ahead of ``VLLM_VIDEO_LOADER_BACKEND``; where that variable says ``vidprep``, :func:`register`
points those processors at vidprep's loaders of the same sampling. A request's
``media_io_kwargs`` ``video_backend`` still wins, as in vLLM.

Each loader returns what vLLM's does: ``(frames, metadata)``, frames ``(N, H, W, 3)`` uint8
RGB of the sampled frames (sorted, without repeats, as vLLM's OpenCV reader returns them),
metadata ``create_hf_metadata``'s dict (``total_num_frames``, ``fps``, ``duration``,
``video_backend`` ``"vidprep"``, ``frames_indices``, ``do_sample_frames``). The frame count
is the true one (every packet), the rate the stream's average rate; vidprep decodes, so the
codec options (``backend``, ``num_ffmpeg_threads``, ``seek_mode``, ...) and
``frame_recovery`` are accepted and have no effect, and ``device`` other than ``"cpu"`` is
refused.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any, Dict, Optional, Tuple

import numpy as np

from . import InputError, UsageError, probe
from .loaders import read_frames

__all__ = ["BACKEND", "LOADERS", "register", "loader_class"]

#: The name ``VLLM_VIDEO_LOADER_BACKEND`` takes.
BACKEND = "vidprep"

#: vidprep's loader names -> vLLM's loader whose sampling each keeps.
LOADERS: Dict[str, str] = {
    "vidprep": "opencv",
    "vidprep_qwen2_vl": "qwen2_vl",
    "vidprep_qwen3_vl": "qwen3_vl",
}

# The decoder options of vLLM's codecs (video_decoders._BACKEND_OPTION_DEFAULTS): accepted, unused.
_CODEC_OPTIONS = ("num_ffmpeg_threads", "seek_mode", "device", "hw_decoders", "max_width",
                  "max_height", "pool_size", "timeout_sec")

_classes: Dict[str, type] = {}


def _rate(video: Dict[str, Any]) -> float:
    for key in ("avg_frame_rate", "nominal_frame_rate"):
        num, _, den = str(video.get(key) or "0/0").partition("/")
        if float(num) > 0 and float(den or 1) > 0:
            return float(num) / float(den or 1)
    return 0.0  # vLLM's "unknown" (OpenCV's CAP_PROP_FPS of 0)


def loader_class(name: str) -> type:
    """vidprep's loader class ``name`` (a key of :data:`LOADERS`): a subclass of vLLM's loader
    whose sampling it keeps, with vidprep's ``load_bytes``. Needs vLLM."""
    if name in _classes:
        return _classes[name]
    from vllm.multimodal.video import VIDEO_LOADER_REGISTRY
    from vllm.multimodal.video_decoders import VideoSourceMetadata, VideoTargetMetadata, check_frame_pixel_limit

    base_name = LOADERS[name]
    base = VIDEO_LOADER_REGISTRY.name2class.get(base_name)
    if base is None:
        raise UsageError(f"vLLM has no video loader {base_name!r} for vidprep's {name!r} (vLLM 0.34's names)")
    default_fps = -1 if base_name == "opencv" else 2  # vLLM's defaults: opencv -1, qwen 2

    def load_bytes(cls, data: bytes, num_frames: int = -1, fps: float = default_fps,
                   max_duration: float = 300, frame_recovery: bool = False, *,
                   backend: Optional[str] = None, **kwargs: Any) -> Tuple[np.ndarray, Dict[str, Any]]:
        device = kwargs.get("device")
        if device not in (None, "cpu"):
            raise UsageError(f"vidprep's vLLM loader decodes on the CPU; device={device!r} needs vLLM's torchcodec loader")
        sampling = {k: v for k, v in kwargs.items() if k not in _CODEC_OPTIONS}
        fd, tmp = tempfile.mkstemp(prefix="vidprep-vllm-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            video = probe(tmp)["video"]
            check_frame_pixel_limit(int(video["width"]), int(video["height"]))
            total = int(video["frames"])
            if total <= 0:
                raise InputError(f"the video ({len(data)} bytes) has no frames")
            rate = _rate(video)
            source = cls._prepare_source(VideoSourceMetadata(total, rate, total / rate if rate > 0 else 0))
            target = VideoTargetMetadata(num_frames=num_frames, fps=fps, max_duration=max_duration)
            try:
                picked = cls.compute_frames_index_to_sample(source, target, **sampling)
            except ZeroDivisionError as e:  # qwen2_vl's rule on a 1-frame video: n = 0
                raise InputError(f"vLLM's {base_name!r} sampling fails on this video of {total} frames ({e})") from e
            # Sorted and without repeats, as vLLM's OpenCV reader returns them.
            wanted = sorted(set(int(i) for i in picked))
            frames = read_frames(tmp, wanted, total)
        finally:
            os.unlink(tmp)
        return frames, cls.create_hf_metadata(source=source, valid_frame_indices=wanted, video_backend=BACKEND)

    cls = type(f"Vidprep{base.__name__}", (base,), {
        "__doc__": f"vidprep's reader with the sampling of vLLM's {base_name!r} loader ({base.__name__}).",
        "load_bytes": classmethod(load_bytes),
    })
    _classes[name] = cls
    return cls


def register() -> None:
    """The ``vllm.general_plugins`` entry point: registers :data:`LOADERS` in vLLM's
    ``VIDEO_LOADER_REGISTRY`` and, when ``VLLM_VIDEO_LOADER_BACKEND`` is ``vidprep``, points
    the video processors vLLM maps to ``qwen2_vl``/``qwen3_vl`` at vidprep's loaders of the same
    sampling. Safe to call more than once."""
    from vllm.multimodal.video import VIDEO_LOADER_REGISTRY

    for name in LOADERS:
        VIDEO_LOADER_REGISTRY.register(name)(loader_class(name))
    if os.environ.get("VLLM_VIDEO_LOADER_BACKEND") == BACKEND:
        ours = {base: name for name, base in LOADERS.items() if name != BACKEND}
        mapping = VIDEO_LOADER_REGISTRY.processor2backend
        for processor, backend in list(mapping.items()):
            if backend in ours:
                mapping[processor] = ours[backend]
