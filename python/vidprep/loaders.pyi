from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

def read_video_pyav(
    video_path: Union[str, Sequence[str]],
    *,
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
def qwen_read_video(ele: Dict[str, Any]) -> Tuple[Any, float]: ...
def qwen_fetch_video(ele: Dict[str, Any], image_factor: int = ..., return_video_sample_fps: bool = ...) -> Any: ...
