"""Run in a fresh interpreter per qwen-vl-utils release (test_qwen_releases.py): the drop-in
loaders against that release's own ``fetch_video`` and ``process_vision_info``.

argv: VIDEO EXPECTED_RETURNS. Prints one JSON line of measurements; any failed check raises.
The oracle is the release's own code path with its own torchvision reader (PyAV decoding):
the same frames must come out of its resize whichever reader fed it.
"""

import json
import sys

import numpy as np
import torch
from qwen_vl_utils import vision_process as vp

import vidprep
from vidprep import loaders

video, expected_returns = sys.argv[1], int(sys.argv[2])
out = {}

api = loaders.qwen_api()
assert api is not None and api.returns == expected_returns, (api and api.returns, expected_returns)
out["returns"] = api.returns
out["size_param"] = api.size_param


def unpack(result, with_fps):
    """fetch_video's output: the tensor, and the metadata where the release gives it."""
    meta = None
    if with_fps:
        result, _fps = result
    if isinstance(result, tuple):
        result, meta = result
    return result, meta


kw = {"return_video_sample_fps": True} if api.returns >= 2 else {}
if api.returns == 3:
    kw["return_video_metadata"] = True
ele = {"video": video, "nframes": 8}

# The release's own reader (torchvision): the oracle.
vp.FORCE_QWENVL_VIDEO_READER = "torchvision"
loaders._clear_backend_cache(vp)
ref, ref_meta = unpack(vp.fetch_video(dict(ele), **kw), api.returns >= 2)

# vidprep as its reader, installed after the import (FORCE_QWENVL_VIDEO_READER was read then).
with loaders.use_with_qwen_vl_utils() as backend:
    got, meta = unpack(vp.fetch_video(dict(ele), **kw), api.returns >= 2)
    assert backend.calls == 1, f"vidprep's reader was called {backend.calls} times"
    # process_vision_info goes through the same fetch_video.
    messages = [{"role": "user", "content": [{"type": "video", "video": video, "nframes": 8}]}]
    _, videos = vp.process_vision_info(messages)[:2]
    assert backend.calls == 2, "process_vision_info did not read with vidprep"
    v0 = videos[0][0] if isinstance(videos[0], tuple) else videos[0]
    assert torch.equal(v0, got), "process_vision_info gave other frames than fetch_video"

    # An error in vidprep's reader is raised, not replaced by torchvision's frames.
    saved = loaders.sample

    def broken(*a, **k):
        raise vidprep.InputError("injected read failure")

    loaders.sample = broken
    try:
        vp.fetch_video(dict(ele), **kw)
    except vidprep.InputError as e:
        assert "injected" in str(e)
        out["fallback_refused"] = True
    else:
        raise AssertionError("qwen fell back to torchvision without raising vidprep's error")
    finally:
        loaders.sample = saved

assert vp.VIDEO_READER_BACKENDS.get("vidprep") is None, "restore() left the backend registered"
assert got.shape == ref.shape, (got.shape, ref.shape)
if meta is not None:
    assert meta["video_backend"] == "vidprep"
    assert list(meta["frames_indices"]) == [int(i) for i in ref_meta["frames_indices"]], (meta, ref_meta)
    out["indices"] = list(meta["frames_indices"])
diff = (got - ref).abs()
out["shape"] = list(got.shape)
out["max_diff"] = float(diff.max())
out["mean_diff"] = float(diff.mean())
# The same frames through qwen's bicubic resize: the readers' RGB conversions may differ by
# rounding (PyAV vs vidprep), never by a frame.
assert out["mean_diff"] < 1.0 and out["max_diff"] < 32, out

# The size argument of either release is accepted by qwen_fetch_video.
for size_kw in ({"image_factor": 28}, {"image_patch_size": 14}):
    r = loaders.qwen_fetch_video(dict(ele), **size_kw)
    assert torch.equal(r, got), f"qwen_fetch_video({size_kw}) differs"

# qwen_read_video alone returns what this release's backends return.
r = loaders.qwen_read_video(dict(ele))
n = 1 if not isinstance(r, tuple) else len(r)
assert n == api.returns, (n, api.returns)
print(json.dumps(out))
