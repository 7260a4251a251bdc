"""vidprep: exact video frame sampling for multimodal-LLM pipelines.

A thin layer over vidprep's Rust library (the one the ``vidprep`` command line uses). Every call
builds a *plan* (the object a manifest line spells in JSON) and runs it through the library's
one executor, so ``vidprep.sample`` picks exactly the frames ``vidprep export frames`` picks,
and its facts are the ``frames.json`` that command writes. Decoding runs without the GIL.

    >>> import vidprep
    >>> frames, facts = vidprep.sample("video.mp4", n=16, sampler="lmms-eval")
    >>> frames.shape, frames.dtype          # (16, H, W, 3) uint8, RGB
    >>> [f["source_frame"] for f in facts["frames"]]

Errors are :class:`VidprepError` subclasses (one per kind of fault, as the library sorts them)
whose message names the file; no Rust panic ever reaches Python (it becomes
:class:`InternalError`).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union

if TYPE_CHECKING:
    # In annotations only: the library imports numpy when it makes an array, so a process
    # that only runs manifests (a vidprep.ray worker) never loads it.
    import numpy as np

from . import _vidprep as _native
from ._vidprep import (
    CancelledError,
    EncodeError,
    InputError,
    InternalError,
    OutputError,
    TrackerError,
    UsageError,
    VidprepError,
)

__version__ = _native.__version__

__all__ = [
    "sample",
    "probe",
    "check",
    "run",
    "Plan",
    "frames_export",
    "clip_export",
    "video_export",
    "SAMPLERS",
    "ORDERS",
    "VidprepError",
    "UsageError",
    "InputError",
    "OutputError",
    "EncodeError",
    "TrackerError",
    "InternalError",
    "CancelledError",
]

#: Sampler names: each reproduces one toolkit's frame-index formula (see docs/export.md).
SAMPLERS: Tuple[str, ...] = tuple(_native.samplers())
#: Frame orders.
ORDERS: Tuple[str, ...] = ("ordered", "shuffled", "reversed", "last")

PathLike = Union[str, "os.PathLike[str]"]
Size = Union[str, Tuple[int, int]]


def _size_text(size: Optional[Size]) -> Optional[str]:
    if size is None:
        return None
    if isinstance(size, str):
        return size
    w, h = size
    return f"{int(w)}x{int(h)}"


def _time_value(t: Union[None, int, float, str]) -> Union[None, int, float, str]:
    """Times as the manifest takes them: int = frame, float = seconds, str = time syntax."""
    if t is None or isinstance(t, (int, float, str)):
        return t
    raise UsageError(f"a time must be a frame (int), seconds (float) or text like '5s', not {t!r}")


def probe(path: PathLike, count_frames: bool = False, source_fps: Union[None, float, str] = None) -> Dict[str, Any]:
    """What a video (or image sequence, or URL) holds: the dict ``vidprep probe --json`` prints.

    ``count_frames`` also decodes every frame (as ``ffprobe -count_frames``).
    """
    rate = None if source_fps is None else str(source_fps)
    return json.loads(_native.probe(os.fspath(path), count_frames, rate))


def check(
    sources: Union[PathLike, Sequence[PathLike]] = (),
    manifest: Optional[PathLike] = None,
    source_fps: Union[None, float, str] = None,
    full: bool = False,
    samples: int = 32,
    time_limit: Optional[float] = None,
    jobs: int = 1,
    list_frames: bool = False,
) -> Dict[str, Any]:
    """Whether vidprep reads each source exactly: the dict ``vidprep check --json`` prints.

    Each source (a video, an image folder or pattern, a URL; and with ``manifest`` every
    source of that manifest) is decoded in order by a plain FFmpeg loop, and read every way
    vidprep reads it (frame table, seeks, a span, times, sparse reading); ``report["exact"]``
    says whether all agree, ``report["sources"]`` has a verdict (``exact``, ``damaged``, ``mended``,
    ``differs``, ``failed``, ``timed_out``) and the differences per source. A manifest's bad
    lines are in ``report["bad_lines"]``. ``time_limit``: seconds per source (default 900).
    """
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    rate = None if source_fps is None else str(source_fps)
    text, bad = _native.check(
        [os.fspath(s) for s in sources],
        None if manifest is None else os.fspath(manifest),
        rate,
        full,
        samples,
        time_limit,
        jobs,
        list_frames,
    )
    report = json.loads(text)
    report["bad_lines"] = bad
    if bad:
        report["exact"] = False
    return report


def frames_export(**options: Any) -> Dict[str, Any]:
    """A ``frames`` export of a plan (the manifest's ``{"kind": "frames", ...}``)."""
    return {"kind": "frames", **options}


def clip_export(**options: Any) -> Dict[str, Any]:
    """A ``clip`` export of a plan (an H.264 clip with its sidecar)."""
    return {"kind": "clip", **options}


def video_export(**options: Any) -> Dict[str, Any]:
    """A ``video`` export of a plan (a capped model input with a Base64 budget)."""
    return {"kind": "video", **options}


def _plan_text(data: Any, where: str = "the plan") -> str:
    """A plan's JSON, refusing what JSON cannot say with the argument and value named: a
    path given as bytes is read as UTF-8 (vidprep records every path in JSON), a NaN or an
    infinity is refused (before: "Object of type bytes is not JSON serializable", "bad plan:
    expected value at line 1 column 117")."""

    def clean(v: Any, at: str) -> Any:
        if isinstance(v, float) and not math.isfinite(v):
            raise UsageError(f"{at} is {v!r}: expected a finite number")
        if isinstance(v, os.PathLike):
            v = os.fspath(v)
        if isinstance(v, (bytes, bytearray)):
            try:
                return bytes(v).decode("utf-8")
            except UnicodeDecodeError:
                raise UsageError(
                    f"{at} is {bytes(v)!r}: the name is not valid UTF-8; vidprep records every "
                    "path in its JSON sidecars, which hold only UTF-8: rename it or give a UTF-8 "
                    "symbolic link to it"
                ) from None
        if isinstance(v, dict):
            return {k: clean(x, f"{at}[{k!r}]" if at != where else repr(k)) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [clean(x, f"{at}[{i}]") for i, x in enumerate(v)]
        return v

    return json.dumps(clean(data, where), allow_nan=False)


class Plan:
    """One item: a source and what to make of it; a manifest line is its JSON.

    Fields are the manifest's (``docs/manifest.md``): ``id``, ``source``, ``start``, ``end``,
    ``decision``, ``boxes``, ``insert``, ``exports``, ``strict``, ... Construction checks the
    plan with the library (unknown fields, bad values and contradictions raise
    :class:`UsageError`); relative paths are taken from the current directory when the plan
    runs.
    """

    __slots__ = ("_data",)

    def __init__(self, id: str, source: PathLike, exports: Optional[Sequence[Dict[str, Any]]] = None, **fields: Any) -> None:
        data: Dict[str, Any] = {"id": id, "source": source}
        data.update({k: v for k, v in fields.items() if v is not None})
        if exports is not None:
            data["exports"] = list(exports)
        self._data = json.loads(_native.check_plan(_plan_text(data)))

    @classmethod
    def from_json(cls, text: Union[str, Dict[str, Any]]) -> "Plan":
        """A plan from a manifest line (JSON text) or its dict."""
        data = json.loads(text) if isinstance(text, str) else dict(text)
        plan = cls.__new__(cls)
        plan._data = json.loads(_native.check_plan(_plan_text(data)))
        return plan

    def to_json(self) -> str:
        """The plan as one manifest line (compact JSON, no newline)."""
        return json.dumps(self._data, separators=(",", ":"))

    def to_dict(self) -> Dict[str, Any]:
        """The plan as a dict (a copy)."""
        return json.loads(json.dumps(self._data))

    def normalized(self) -> "Plan":
        """The canonical form sidecars record (box options with the boxes, defaults filled in)."""
        return Plan.from_json(_native.normalize_plan(self.to_json()))

    def __getattr__(self, name: str) -> Any:
        try:
            return self._data[name]
        except KeyError:
            raise AttributeError(name) from None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Plan) and other._data == self._data

    def __repr__(self) -> str:
        return f"Plan.from_json({self.to_json()!r})"

    def execute(self, out_dir: PathLike) -> Dict[str, Any]:
        """Runs the plan into the item folder ``out_dir`` (as one line of ``vidprep run``);
        returns what it made (exports, files, warnings)."""
        return json.loads(_native.execute_plan(self.to_json(), os.fspath(out_dir)))

    def sample(self, workers: int = 0) -> List[Tuple[np.ndarray, Dict[str, Any]]]:
        """Runs a plan whose exports are all ``frames`` exports with nothing written: one
        ``(frames, facts)`` per export (see :func:`sample`)."""
        out = []
        for _name, pixels, (n, h, w), facts in _native.sample_plan(self.to_json(), workers, 0):
            out.append((pixels.reshape(n, h, w, 3), json.loads(facts)))
        return out


def sample(
    path: PathLike,
    n: Optional[int] = None,
    sampler: str = "uniform",
    fps: Optional[float] = None,
    max_frames: Optional[int] = None,
    order: str = "ordered",
    size: Optional[Size] = None,
    *,
    start: Union[None, int, float, str] = None,
    end: Union[None, int, float, str] = None,
    decision: Union[None, int, float, str] = None,
    seed: int = 0,
    allow_repeats: bool = False,
    source_fps: Union[None, float, str] = None,
    boxes: Optional[PathLike] = None,
    workers: int = 0,
    memory_budget: Optional[int] = None,
    profile: Optional[str] = None,
    profile_options: Optional[Dict[str, float]] = None,
    label: Optional[str] = None,
    subtitles: Optional[PathLike] = None,
    frames: Optional[Sequence[int]] = None,
    follow_package: Optional[PathLike] = None,
) -> Tuple[np.ndarray, Dict[str, Any]]:
    """Samples frames of a video exactly as ``vidprep export frames`` does, into memory.

    - ``n`` frames (default 16), or ``fps`` frames per second (then ``n`` is ignored) with at most
      ``max_frames``; ``sampler`` names the toolkit formula (:data:`SAMPLERS`: ``uniform``,
      ``lmms-eval``, ``vlmevalkit``, ``qwen``, ``hf``, ...) applied to the true frame count.
    - ``order``: ``ordered``, ``shuffled`` (by ``seed``), ``reversed`` or ``last``.
    - ``size``: largest ``(width, height)`` or ``"WxH"`` (aspect kept, never upscaled).
    - ``start``/``end``/``decision``: the span and decision point (int = frame, float =
      seconds, str = ``"5s"``, ``"00:01:02.5"``, ``"75%"``), as in a manifest.
    - ``boxes``: an annotation file whose boxes are drawn on the frames.
    - ``frames``: these source frames instead, by 0-based index, in this order (``[0, 5, 17]``:
      the ``explicit`` sampler; not with ``n`` or ``fps``; a repeat needs ``allow_repeats``).
      With ``profile``, its size and token rules apply to these frames.
    - ``follow_package``: with ``profile``, a ``vidprep parity --out`` record of this source,
      profile and options: each position shows the frame the package really showed there
      (``docs/profiles.md``); ``facts["follow_package"]`` says which record.
    - ``workers``: parallel decoders (0: one per core).
    - ``memory_budget``: the most bytes the returned array may take (default 4 GiB); a
      request for more (``N * H * W * 3``) raises ``MemoryError``, naming the size needed,
      before a frame is decoded.

    - ``profile``: a model profile (``qwen2.5-vl``, ``qwen3-vl``, ``qwen3-vl-hf``, ``qwen3.5``, ``glm-4.6v``, ``lmms-eval``,
      ``llava-onevision``, ``internvl``, ``vlmevalkit``; see ``docs/profiles.md``): the frames, size and pixels that model's own preprocessing
      gives it (``n`` / ``fps`` are the package's ``nframes`` / ``fps``, its default rule when
      neither is given; ``sampler`` and ``size`` must be left out); ``profile_options`` the
      package's other options (``{"min_pixels": 50176, "video_start": 2.0}``). ``facts``
      then holds a ``profile`` block with every rule applied.

    - ``label``: ``"frame"`` or ``"time"`` drawn on each frame as NumPro does (red, 40 px,
      bottom right); ``subtitles``: an SRT/VTT file whose text each frame's record gets
      (``subtitle``, VLMEvalKit's Video-MME rule). Audio (``audio.wav``) exists only as a
      file: use ``run`` or ``vidprep export frames --audio``.

    Ctrl-C raises ``KeyboardInterrupt`` within about 0.1 s of the work stopping.

    Returns ``(frames, facts)``: ``frames`` a ``uint8`` array ``(N, H, W, 3)`` (RGB, in the
    asked order; square pixels, rotation applied), ``facts`` the dict ``frames.json`` holds
    (``total_frames``, ``sampled`` with the indices and formula, ``order``, and per image its
    ``source_frame``, ``time_s``, ``pts``, ...). Each record's ``file`` is the name the image
    would have in an export folder; nothing is written.
    """
    export: Dict[str, Any] = {"kind": "frames", "order": order}
    if profile is not None:
        export["profile"] = profile
        if profile_options:
            export["profile_options"] = dict(profile_options)
    if profile is None or sampler != "uniform":
        export["sampler"] = sampler
    if frames is not None:
        # The frames replace n and fps (given as well, the plan's check refuses them).
        export["frames"] = [int(i) for i in frames]
        if fps is not None:
            export["fps"] = fps
        if n is not None:
            export["count"] = n
    elif fps is not None:
        export["fps"] = fps
    elif n is not None:
        export["count"] = n
    if follow_package is not None:
        # As given (frames.json records it so, as the command line's --follow-package does).
        export["follow_package"] = follow_package
    if max_frames is not None:
        export["max_frames"] = max_frames
    if seed:
        export["seed"] = seed
    if allow_repeats:
        export["allow_repeats"] = True
    if size is not None:
        export["max_size"] = _size_text(size)
    if label is not None:
        export["label"] = label
    if subtitles is not None:
        # As given (frames.json records it so, as the command line's --subtitles does).
        export["subtitles"] = subtitles
    plan: Dict[str, Any] = {"id": "sample", "source": path, "exports": [export]}
    for key, value in (("start", start), ("end", end), ("decision", decision)):
        if value is not None:
            plan[key] = _time_value(value)
    if source_fps is not None:
        plan["source_fps"] = source_fps
    if boxes is not None:
        plan["boxes"] = boxes
    [(_name, pixels, (count, h, w), facts)] = _native.sample_plan(
        _plan_text(plan), workers, 0, memory_budget)
    return pixels.reshape(count, h, w, 3), json.loads(facts)


def run(
    manifest: Union[PathLike, Sequence[Union[Plan, Dict[str, Any]]]],
    out_dir: PathLike,
    jobs: Optional[int] = None,
    *,
    resume: bool = False,
    fail_fast: bool = False,
    shard: Optional[Tuple[int, int]] = None,
    strict: bool = False,
) -> Dict[str, Any]:
    """``vidprep run``: every item of a manifest (a JSONL/JSON file, or a list of plans) into
    ``out_dir/<id>/``, ``jobs`` at a time (``None``: one per core), with ``report.jsonl``.

    Returns the run's summary (``items``, ``ok``, ``failed``, ``skipped``, ``frames``,
    ``seconds``, ``report``) with ``reports``: one dict per item (its report line). A failed
    item does not raise: its report says why. Relative paths in a list of plans are taken
    from the current directory (in a file, from the file's folder).
    """
    if isinstance(manifest, (str, os.PathLike)):
        return _run_file(os.fspath(manifest), out_dir, jobs, resume, fail_fast, shard, strict)
    lines = [(p.to_json() if isinstance(p, Plan) else _plan_text(p)) for p in manifest]
    # The library reads manifests from files; relative paths resolve against the file's
    # folder, so the file goes in the current directory, named without a folder: the paths
    # stay as given (the sidecars record them so, as they do for a command or a manifest
    # file in the current directory), never made absolute.
    fd, name = tempfile.mkstemp(prefix=".vidprep-manifest-", suffix=".jsonl", dir=os.getcwd())
    try:
        with os.fdopen(fd, "w") as f:
            f.write("\n".join(lines) + "\n")
        return _run_file(os.path.basename(name), out_dir, jobs, resume, fail_fast, shard, strict)
    finally:
        os.unlink(name)


def _run_file(manifest, out_dir, jobs, resume, fail_fast, shard, strict) -> Dict[str, Any]:
    summary, reports = _native.run_manifest(
        manifest, os.fspath(out_dir), jobs or 0, resume, fail_fast, shard, strict
    )
    result = json.loads(summary)
    result["reports"] = [json.loads(r) for r in reports]
    return result


def __getattr__(name: str) -> Any:
    # `vidprep.loaders` (it imports numpy) is loaded when first used.
    if name == "loaders":
        import importlib

        return importlib.import_module(".loaders", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
