import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import loaders as loaders

__version__: str
SAMPLERS: Tuple[str, ...]
ORDERS: Tuple[str, ...]

PathLike = Union[str, os.PathLike[str]]
Size = Union[str, Tuple[int, int]]
TimeValue = Union[int, float, str]

class VidprepError(Exception): ...
class UsageError(VidprepError): ...
class InputError(VidprepError): ...
class OutputError(VidprepError): ...
class EncodeError(VidprepError): ...
class TrackerError(VidprepError): ...
class InternalError(VidprepError): ...
class CancelledError(VidprepError): ...

def probe(path: PathLike, count_frames: bool = ..., source_fps: Union[None, float, str] = ...) -> Dict[str, Any]: ...
def check(
    sources: Union[PathLike, Sequence[PathLike]] = ...,
    manifest: Optional[PathLike] = ...,
    source_fps: Union[None, float, str] = ...,
    full: bool = ...,
    samples: int = ...,
    time_limit: Optional[float] = ...,
    jobs: int = ...,
    list_frames: bool = ...,
) -> Dict[str, Any]: ...
def sample(
    path: PathLike,
    n: Optional[int] = ...,
    sampler: str = ...,
    fps: Optional[float] = ...,
    max_frames: Optional[int] = ...,
    order: str = ...,
    size: Optional[Size] = ...,
    *,
    start: Optional[TimeValue] = ...,
    end: Optional[TimeValue] = ...,
    decision: Optional[TimeValue] = ...,
    seed: int = ...,
    allow_repeats: bool = ...,
    source_fps: Union[None, float, str] = ...,
    boxes: Optional[PathLike] = ...,
    workers: int = ...,
    memory_budget: Optional[int] = ...,
    profile: Optional[str] = ...,
    profile_options: Optional[Dict[str, float]] = ...,
    label: Optional[str] = ...,
    subtitles: Optional[PathLike] = ...,
    frames: Optional[Sequence[int]] = ...,
    follow_package: Optional[PathLike] = ...,
) -> Tuple[npt.NDArray[np.uint8], Dict[str, Any]]: ...
def run(
    manifest: Union[PathLike, Sequence[Union["Plan", Dict[str, Any]]]],
    out_dir: PathLike,
    jobs: Optional[int] = ...,
    *,
    resume: bool = ...,
    fail_fast: bool = ...,
    shard: Optional[Tuple[int, int]] = ...,
    strict: bool = ...,
) -> Dict[str, Any]: ...
def frames_export(**options: Any) -> Dict[str, Any]: ...
def clip_export(**options: Any) -> Dict[str, Any]: ...
def video_export(**options: Any) -> Dict[str, Any]: ...

class Plan:
    def __init__(self, id: str, source: PathLike, exports: Optional[Sequence[Dict[str, Any]]] = ..., **fields: Any) -> None: ...
    @classmethod
    def from_json(cls, text: Union[str, Dict[str, Any]]) -> Plan: ...
    def to_json(self) -> str: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def normalized(self) -> Plan: ...
    def execute(self, out_dir: PathLike) -> Dict[str, Any]: ...
    def sample(self, workers: int = ...) -> List[Tuple[npt.NDArray[np.uint8], Dict[str, Any]]]: ...
    def __getattr__(self, name: str) -> Any: ...
