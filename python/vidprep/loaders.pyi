from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

def read_video_pyav(
    video_path: Union[str, Sequence[str]],
    num_frm: int = ...,
    fps: Optional[float] = ...,
    format: str = ...,
    max_image_size: Union[None, int, Tuple[int, int]] = ...,
    resize_strategy: str = ...,
) -> npt.NDArray[np.uint8]: ...
def load_video_decord(video_path: Union[str, Sequence[str]], max_frames_num: int) -> npt.NDArray[np.uint8]: ...
lmms_eval_read_video = read_video_pyav
def vlmevalkit_load_video(video_path: str, nframe: int = ..., fps: float = ...) -> List[Any]: ...
def vlmevalkit_save_video_frames(video_path: str, frame_paths: Sequence[str], nframe: int = ..., fps: float = ...) -> List[str]: ...
class QwenApi:
    vp: Any
    returns: int
    size_param: str
    merge: int
    version: str
    def __init__(self, vp: Any) -> None: ...

class QwenBackend:
    api: QwenApi
    calls: int
    failures: List[BaseException]
    def __init__(self) -> None: ...
    def restore(self) -> None: ...
    def __enter__(self) -> "QwenBackend": ...
    def __exit__(self, *exc: Any) -> None: ...

def qwen_api() -> Optional[QwenApi]: ...
def use_with_qwen_vl_utils() -> QwenBackend: ...
def qwen_read_video(ele: Dict[str, Any]) -> Any: ...
def qwen_fetch_video(
    ele: Dict[str, Any],
    image_factor: Optional[int] = ...,
    return_video_sample_fps: bool = ...,
    *,
    image_patch_size: Optional[int] = ...,
    return_video_metadata: bool = ...,
) -> Any: ...
