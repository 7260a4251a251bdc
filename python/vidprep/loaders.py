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

transformers 5.25 (``transformers.video_utils.VIDEO_DECODERS``, the backends of ``load_video``)::

    from vidprep import loaders
    loaders.use_with_transformers()
    # load_video(path, backend="vidprep") works, and the video processors (which call
    # load_video with backend="torchcodec") read with vidprep; .restore() undoes it

qwen-vl-utils 0.0.8 to 0.0.14 (``qwen_vl_utils/vision_process.py``, a reader backend)::

    from vidprep import loaders
    loaders.use_with_qwen_vl_utils()
    # fetch_video / process_vision_info now read with vidprep (resizing stays qwen's); a read
    # error is raised instead of qwen's silent fallback to torchvision
"""

from __future__ import annotations

import functools
import inspect
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
    "qwen_api",
    "QwenApi",
    "QwenBackend",
    "use_with_qwen_vl_utils",
    "read_frames",
    "transformers_read_video",
    "TransformersBackend",
    "use_with_transformers",
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
    force_include_last_frame: bool = False,
    backend: Optional[str] = None,
) -> np.ndarray:
    """lmms-eval's ``read_video_pyav``: ``num_frm`` frames by ``np.linspace(0, total - 1,
    num_frm, dtype=int)`` with ``num_frm`` clamped to the frame count; returns ``(N, H, W, 3)``
    ``uint8`` RGB. ``max_image_size`` keeps the aspect inside the box (lmms-eval's ``resize``
    strategy stretches; only the aspect-keeping cap is available here).

    lmms-eval 0.7's ``read_video`` arguments are taken too: ``force_include_last_frame`` (the
    linspace ends on the last frame already; with one frame it is the last instead of the
    first, as lmms-eval does) and ``backend`` (lmms-eval's decoder choice: vidprep decodes
    whatever it names)."""
    if format != "rgb24":
        raise UsageError(f"read_video_pyav: only format='rgb24' is supported, not {format!r}")
    path = _path(video_path)
    if force_include_last_frame and fps is None and num_frm == 1:
        total = probe(path)["video"]["frames"]
        frames, _ = sample(path, n=1, sampler="lmms-eval", size=_size_cap(max_image_size), start=max(0, total - 1))
        return frames
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


class QwenApi:
    """What the installed qwen-vl-utils expects of a reader backend, read from its own
    signatures (``inspect``), not from its version number.

    - ``returns``: how many values its backends return: 1 (0.0.8: the video), 2 (0.0.9 to
      0.0.11: video and sample fps), 3 (0.0.13 on: video, metadata dict, sample fps).
    - ``size_param``: ``fetch_video``'s size argument, ``image_factor`` (pixels, up to 0.0.11)
      or ``image_patch_size`` (0.0.13 on; ``image_factor = image_patch_size * SPATIAL_MERGE_SIZE``).
    - ``version``: the distribution's version, for messages only.
    """

    def __init__(self, vp: Any) -> None:
        self.vp = vp
        params = inspect.signature(vp.fetch_video).parameters
        if "return_video_metadata" in params:
            self.returns = 3
        elif "return_video_sample_fps" in params:
            self.returns = 2
        else:
            self.returns = 1
        self.size_param = "image_patch_size" if "image_patch_size" in params else "image_factor"
        self.merge = int(getattr(vp, "SPATIAL_MERGE_SIZE", 2))
        try:
            from importlib.metadata import version

            self.version = version("qwen-vl-utils")
        except Exception:  # a source checkout on sys.path has no metadata
            self.version = "unknown"


def qwen_api() -> Optional[QwenApi]:
    """The installed qwen-vl-utils' reader contract (:class:`QwenApi`), or ``None`` when it
    is not importable."""
    try:
        from qwen_vl_utils import vision_process as vp
    except ImportError:
        return None
    return QwenApi(vp)


def _qwen_path(ele: Dict[str, Any]) -> str:
    path = ele["video"]
    if not isinstance(path, (str, os.PathLike)):
        raise UsageError(f"qwen_read_video: 'video' must be a path or file:// URL, not {type(path).__name__}")
    path = os.fspath(path)
    if path.startswith("file://"):
        path = path[len("file://"):]
    return path


def _qwen_pick(ele: Dict[str, Any], api: Optional[QwenApi]) -> Tuple[np.ndarray, Dict[str, Any], List[int], int, float]:
    """Reads the frames qwen's decord/torchcodec backend would pick: the installed release's own
    ``calculate_video_frame_range`` (0.0.11 on) and ``smart_nframes`` over the true frame
    count and the average rate, then ``torch.linspace(start, end, nframes).round()`` (the
    ``qwen`` sampler over that span). Without qwen-vl-utils installed, the 0.0.14 rules."""
    path = _qwen_path(ele)
    if api is None:
        for key in ("video_start", "video_end", "min_frames"):
            if ele.get(key) is not None:
                raise UsageError(f"qwen_read_video: {key!r} needs qwen-vl-utils installed (its own rules are applied)")
        if "nframes" in ele:
            frames, facts = sample(path, n=int(ele["nframes"]), sampler="qwen")
        else:
            frames, facts = sample(path, sampler="qwen", fps=float(ele.get("fps", 2.0)), max_frames=ele.get("max_frames"))
        idx = [int(r["source_frame"]) for r in facts["frames"]]
        return frames, facts, idx, facts["total_frames"], _avg_fps(facts)
    info = probe(path)
    total = int(info["video"]["frames"])
    video_fps = _probe_fps(info)
    vp = api.vp
    if hasattr(vp, "calculate_video_frame_range"):
        start, end, total = vp.calculate_video_frame_range(ele, total, video_fps)
    else:
        for key in ("video_start", "video_end"):
            if ele.get(key) is not None:
                raise UsageError(f"qwen_read_video: qwen-vl-utils {api.version} has no {key!r}")
        start, end = 0, total - 1
    nframes = int(vp.smart_nframes(ele, total_frames=total, video_fps=video_fps))
    frames, facts = sample(path, n=nframes, sampler="qwen", start=int(start), end=int(end) + 1)
    idx = [int(r["source_frame"]) for r in facts["frames"]]
    return frames, facts, idx, total, video_fps


def qwen_read_video(ele: Dict[str, Any]):
    """A qwen-vl-utils reader backend (as its ``_read_video_decord(ele)``), returning what the
    installed release's backends return (read from its signatures, :func:`qwen_api`):
    ``video`` (0.0.8), ``(video, sample_fps)`` (0.0.9 to 0.0.11, and when qwen-vl-utils is
    not installed), or ``(video, video_metadata, sample_fps)`` (0.0.13 on, with
    ``video_backend`` ``"vidprep"``).

    ``video`` is the frames the release's ``smart_nframes`` (and, from 0.0.11,
    ``calculate_video_frame_range`` for ``video_start``/``video_end``) and
    ``torch.linspace(...).round()`` pick over the true frame count, a ``(T, C, H, W)``
    ``uint8`` tensor (a NumPy array when torch is not installed).
    """
    api = qwen_api()
    frames, facts, idx, total, video_fps = _qwen_pick(ele, api)
    sample_fps = len(frames) / max(total, 1e-6) * video_fps
    video = np.ascontiguousarray(frames.transpose(0, 3, 1, 2))
    try:
        import torch

        video = torch.from_numpy(video)
    except ImportError:
        pass
    returns = api.returns if api is not None else 2
    if returns == 1:
        return video
    if returns == 2:
        return video, sample_fps
    metadata = dict(fps=video_fps, frames_indices=idx, total_num_frames=total, video_backend="vidprep")
    return video, metadata, sample_fps


def _probe_fps(info: Dict[str, Any]) -> float:
    """The average frame rate decord's ``get_avg_fps`` gives (the stream's ``avg_frame_rate``,
    else its nominal rate), from :func:`vidprep.probe`."""
    video = info["video"]
    for key in ("avg_frame_rate", "nominal_frame_rate"):
        num, _, den = str(video.get(key) or "0/0").partition("/")
        if float(num) > 0 and float(den or 1) > 0:
            return float(num) / float(den or 1)
    raise UsageError("the source's frame rate is unknown")


def _avg_fps(facts: Dict[str, Any]) -> float:
    """The source's average frame rate (decord's ``get_avg_fps``), from ``frames.json``."""
    for source in facts.get("sources", []):
        rate = source.get("avg_frame_rate") or source.get("frame_rate")
        if rate:
            num, _, den = str(rate).partition("/")
            return float(num) / float(den or 1)
    raise UsageError("the source's frame rate is unknown")


class _QwenReaderFailed(Exception):
    pass


class QwenBackend:
    """vidprep as the installed qwen-vl-utils' video reader, for ``fetch_video`` and
    ``process_vision_info``: registers :func:`qwen_read_video` as backend ``"vidprep"``, forces
    it (the module's ``FORCE_QWENVL_VIDEO_READER``, which qwen reads at import, and its cached
    ``get_video_reader_backend``), and wraps ``fetch_video`` so that an error in vidprep's reader
    is raised instead of qwen's silent fallback to torchvision. ``restore()`` (or leaving the
    ``with`` block) undoes all of it.
    """

    def __init__(self) -> None:
        api = qwen_api()
        if api is None:
            raise UsageError("qwen-vl-utils is not installed (pip install qwen-vl-utils)")
        self.api = api
        vp = api.vp
        self._saved = (dict(vp.VIDEO_READER_BACKENDS), vp.FORCE_QWENVL_VIDEO_READER, vp.fetch_video)
        self.failures: List[BaseException] = []
        self.calls = 0
        original = vp.fetch_video

        def reader(ele: Dict[str, Any]):
            self.calls += 1
            try:
                return qwen_read_video(ele)
            except BaseException as e:  # qwen catches Exception and falls back: keep it
                self.failures.append(e)
                raise

        @functools.wraps(original)
        def fetch_video(*args: Any, **kwargs: Any):
            before = len(self.failures)
            out = original(*args, **kwargs)
            if len(self.failures) > before:
                raise self.failures[-1]
            return out

        vp.VIDEO_READER_BACKENDS["vidprep"] = reader
        vp.FORCE_QWENVL_VIDEO_READER = "vidprep"
        vp.fetch_video = fetch_video
        _clear_backend_cache(vp)

    def restore(self) -> None:
        vp = self.api.vp
        backends, forced, fetch = self._saved
        vp.VIDEO_READER_BACKENDS.clear()
        vp.VIDEO_READER_BACKENDS.update(backends)
        vp.FORCE_QWENVL_VIDEO_READER = forced
        vp.fetch_video = fetch
        _clear_backend_cache(vp)

    def __enter__(self) -> "QwenBackend":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.restore()


def _clear_backend_cache(vp: Any) -> None:
    cached = getattr(vp, "get_video_reader_backend", None)
    if hasattr(cached, "cache_clear"):
        cached.cache_clear()


def use_with_qwen_vl_utils() -> QwenBackend:
    """Makes vidprep the video reader of the installed qwen-vl-utils (0.0.8 to 0.0.14) for
    this process: ``fetch_video`` and ``process_vision_info`` then read every video path with
    vidprep, and an error in the read is raised, never replaced by torchvision's frames.
    Returns the :class:`QwenBackend`; its ``restore()`` undoes it."""
    return QwenBackend()


def qwen_fetch_video(
    ele: Dict[str, Any],
    image_factor: Optional[int] = None,
    return_video_sample_fps: bool = False,
    *,
    image_patch_size: Optional[int] = None,
    return_video_metadata: bool = False,
):
    """qwen-vl-utils' ``fetch_video`` for a video path, read by vidprep (:class:`QwenBackend`,
    for this one call), resized by the installed qwen-vl-utils itself. Takes either release's
    size argument: ``image_factor`` (pixels: 28) or ``image_patch_size`` (14; 0.0.13 on,
    where ``image_factor = image_patch_size * 2``), converted to the one the installed
    ``fetch_video`` takes; ``return_video_metadata`` needs 0.0.13 or later."""
    if image_factor is not None and image_patch_size is not None:
        raise UsageError("qwen_fetch_video: give image_factor or image_patch_size, not both")
    with QwenBackend() as backend:
        api = backend.api
        kwargs: Dict[str, Any] = {}
        if api.size_param == "image_patch_size":
            if image_factor is not None:
                if image_factor % api.merge:
                    raise UsageError(f"image_factor {image_factor} is not a multiple of qwen's merge size {api.merge}")
                image_patch_size = image_factor // api.merge
            if image_patch_size is not None:
                kwargs["image_patch_size"] = image_patch_size
        else:
            if image_patch_size is not None:
                image_factor = image_patch_size * api.merge
            if image_factor is not None:
                kwargs["image_factor"] = image_factor
        if return_video_sample_fps:
            if api.returns == 1:
                raise UsageError(f"qwen-vl-utils {api.version}'s fetch_video returns no sample fps")
            kwargs["return_video_sample_fps"] = True
        if return_video_metadata:
            if api.returns < 3:
                raise UsageError(f"qwen-vl-utils {api.version}'s fetch_video returns no metadata (0.0.13 on)")
            kwargs["return_video_metadata"] = True
        out = api.vp.fetch_video(ele, **kwargs)
        if backend.calls == 0 and isinstance(ele.get("video"), (str, os.PathLike)):
            raise UsageError(f"qwen-vl-utils {api.version} did not call vidprep's reader")
        return out


def _formula_indices(sampler: str, total: int, n: int) -> Optional[List[int]]:
    """What vidprep's ``sampler`` picks for ``n`` of ``total`` frames, computed here as the
    toolkit writes it (``None`` where that needs torch and torch is missing)."""
    if sampler == "uniform":
        return np.round(np.linspace(0, total - 1, n)).astype(int).tolist()
    if sampler == "lmms-eval":
        return np.linspace(0, total - 1, n, dtype=int).tolist()
    if sampler == "hf-default":
        return (np.arange(n, dtype=int) * total // n).tolist()
    if sampler == "hf-processor":
        try:
            import torch
        except ImportError:
            return None
        return torch.arange(0, total, total / n).int().tolist()
    return None


def read_frames(path: Union[str, "os.PathLike[str]"], indices: Sequence[int], total: Optional[int] = None) -> np.ndarray:
    """The frames ``indices`` of ``path`` (frame numbers from 0 in presentation order, any
    order, repeats allowed), as ``(N, H, W, 3)`` uint8 RGB in that order.

    One pass where a sampler's formula over the true frame count (``total``, else probed)
    picks exactly the distinct indices (``uniform``, ``lmms-eval``, ``hf-default``,
    ``hf-processor``: the rules of vLLM's and transformers' Qwen and default samplers), else one
    pass per run of consecutive indices; the frames read are checked to be the ones asked for.
    """
    path = os.fspath(path)
    wanted = sorted(set(int(i) for i in indices))
    if not wanted:
        raise UsageError(f"{path}: no frames to read")
    if total is None:
        total = int(probe(path)["video"]["frames"])
    if wanted[0] < 0 or wanted[-1] >= total:
        raise UsageError(f"{path}: frame {wanted[0] if wanted[0] < 0 else wanted[-1]} asked for, the video has frames 0..{total - 1}")
    frames = None
    for sampler in ("uniform", "lmms-eval", "hf-default", "hf-processor"):
        if _formula_indices(sampler, total, len(wanted)) == wanted:
            got, facts = sample(path, n=len(wanted), sampler=sampler)
            if [int(r["source_frame"]) for r in facts["frames"]] == wanted:
                frames = got
            break
    if frames is None:
        runs: List[List[int]] = []
        for i in wanted:
            if runs and runs[-1][1] == i:
                runs[-1][1] = i + 1
            else:
                runs.append([i, i + 1])
        parts = []
        for a, b in runs:
            part, facts = sample(path, n=b - a, sampler="uniform", start=a, end=b)
            got_idx = [int(r["source_frame"]) for r in facts["frames"]]
            if got_idx != list(range(a, b)):
                raise InputError(f"{path}: frames {a}..{b - 1} were read as {got_idx}")
            parts.append(part)
        frames = np.concatenate(parts)
    if list(indices) == wanted:
        return frames
    pos = {i: k for k, i in enumerate(wanted)}
    return frames[[pos[int(i)] for i in indices]]


def _avg_rate(video: Dict[str, Any]) -> Optional[float]:
    for key in ("avg_frame_rate", "nominal_frame_rate"):
        num, _, den = str(video.get(key) or "0/0").partition("/")
        if float(num) > 0 and float(den or 1) > 0:
            return float(num) / float(den or 1)
    return None


def transformers_read_video(video_path: Any, sample_indices_fn: Any, **kwargs: Any):
    """A transformers ``VIDEO_DECODERS`` backend (as ``read_video_pyav(video_path,
    sample_indices_fn, **kwargs)``): ``VideoMetadata`` over the true frame count and the
    stream's average rate, the indices ``sample_indices_fn(metadata=..., **kwargs)`` picks,
    those frames read by vidprep. Returns ``(video, metadata)``: ``(N, H, W, 3)`` uint8 RGB in
    the order of the indices (repeats kept), ``metadata.video_backend`` ``"vidprep"``."""
    from transformers.video_utils import VideoMetadata

    if not isinstance(video_path, (str, os.PathLike)):
        raise UsageError(f"transformers_read_video: vidprep reads a path, not {type(video_path).__name__} (a URL is downloaded by load_video into memory)")
    path = os.fspath(video_path)
    video = probe(path)["video"]
    total = int(video["frames"])
    fps = _avg_rate(video)
    metadata = VideoMetadata(
        total_num_frames=total, fps=fps, duration=total / fps if fps else 0.0, video_backend="vidprep",
        height=int(video["height"]), width=int(video["width"]),
    )
    indices = [int(i) for i in sample_indices_fn(metadata=metadata, **kwargs)]
    frames = read_frames(path, indices, total)
    metadata.frames_indices = indices
    return frames, metadata


class TransformersBackend:
    """vidprep as a transformers video backend: ``VIDEO_DECODERS["vidprep"]``
    (:func:`transformers_read_video`), so ``load_video(path, backend="vidprep")`` reads with
    vidprep; with ``processors`` (the default) the video processors' ``fetch_videos``, which
    call ``load_video`` with ``backend="torchcodec"``, read with vidprep too (transformers
    5.25 has no setting for that backend: ``video_processing_utils.load_video`` is wrapped).
    ``restore()`` (or leaving the ``with`` block) undoes it."""

    def __init__(self, processors: bool = True) -> None:
        try:
            from transformers import video_processing_utils as vpu
            from transformers import video_utils as vu
        except ImportError as e:
            raise UsageError(f"transformers is not installed ({e}): pip install transformers") from e
        if not isinstance(getattr(vu, "VIDEO_DECODERS", None), dict):
            raise UsageError("this transformers has no video_utils.VIDEO_DECODERS (5.x has): vidprep cannot add its backend")
        self._vu, self._vpu = vu, vpu
        self._saved = (dict(vu.VIDEO_DECODERS), vpu.load_video)
        vu.VIDEO_DECODERS["vidprep"] = transformers_read_video
        if processors:
            original = vpu.load_video

            @functools.wraps(original)
            def load_video(video: Any, *args: Any, **kw: Any):
                kw["backend"] = "vidprep"
                return original(video, *args, **kw)

            vpu.load_video = load_video

    def restore(self) -> None:
        decoders, load_video = self._saved
        self._vu.VIDEO_DECODERS.clear()
        self._vu.VIDEO_DECODERS.update(decoders)
        self._vpu.load_video = load_video

    def __enter__(self) -> "TransformersBackend":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.restore()


def use_with_transformers(processors: bool = True) -> TransformersBackend:
    """Adds vidprep to transformers' video backends (``backend="vidprep"``) and, with
    ``processors``, makes it the reader of the video processors; returns the
    :class:`TransformersBackend` (``restore()`` undoes it)."""
    return TransformersBackend(processors)
