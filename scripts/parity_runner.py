"""Runs a mirrored package's own video preprocessing for `vidprep parity` and writes what
it gave: `result.json` (indices, size, timestamps, backend, versions) and `frames.u8` (the
frames as packed uint8 RGB, N x H x W x 3, row by row).

Usage: python3 parity_runner.py PACKAGE_PROFILE VIDEO OUT_DIR [JSON_OPTIONS]
Exit code 3: the package is not installed (the caller skips). Needs only the package's own
dependencies (torch, torchvision, numpy) plus this file; it imports nothing of vidprep.
"""

import json
import os
import sys
import time


def missing(what):
    print(f"parity: {what} is not installed in {sys.executable}", file=sys.stderr)
    sys.exit(3)


def run_qwen_vl_utils(video, options, patch):
    try:
        import qwen_vl_utils
        from qwen_vl_utils import vision_process
    except ImportError as e:
        missing(f"qwen-vl-utils ({e})")
    from importlib.metadata import version

    ele = {"video": video}
    ele.update(options)
    t0 = time.perf_counter()
    out, sample_fps = vision_process.fetch_video(
        ele, image_patch_size=patch, return_video_sample_fps=True, return_video_metadata=True
    )
    seconds = time.perf_counter() - t0
    tensor, meta = out
    idx = meta["frames_indices"]
    idx = idx.tolist() if hasattr(idx, "tolist") else list(idx)
    frames = tensor.round().clamp(0, 255).to(dtype=__import__("torch").uint8)
    frames = frames.permute(0, 2, 3, 1).contiguous().numpy()
    stamps = None
    if patch == 16:
        # Qwen3VLProcessor._calculate_timestamps(indices, fps, 2) and its format.
        ind = list(idx)
        if len(ind) % 2:
            ind.append(ind[-1])
        ts = [i / meta["fps"] for i in ind]
        stamps = [f"<{(ts[i] + ts[i + 1]) / 2:.1f} seconds>" for i in range(0, len(ts), 2)]
    result = {
        "package": "qwen-vl-utils",
        "version": version("qwen-vl-utils"),
        "backend": meta.get("video_backend") or vision_process.get_video_reader_backend(),
        "indices": [int(i) for i in idx],
        "fps": float(meta["fps"]),
        "total_frames": int(meta["total_num_frames"]),
        "sample_fps": float(sample_fps),
        "timestamps": stamps,
        "seconds": seconds,
        "exact_float": bool((tensor == tensor.round()).all()),
    }
    return result, frames


def run_lmms_eval(video, options):
    try:
        from lmms_eval.models.model_utils.load_video import read_video_pyav
    except ImportError as e:
        missing(f"lmms-eval's loader ({e})")
    from importlib.metadata import version

    n = int(options.get("nframes", 8))
    t0 = time.perf_counter()
    frames = read_video_pyav(video, num_frm=n)
    seconds = time.perf_counter() - t0
    import numpy as np

    frames = np.ascontiguousarray(frames)
    return {
        "package": "lmms-eval",
        "version": version("lmms-eval"),
        "backend": "pyav",
        "indices": None,
        "seconds": seconds,
    }, frames


def main():
    profile, video, out_dir = sys.argv[1:4]
    options = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
    if profile in ("qwen2.5-vl", "qwen3-vl"):
        result, frames = run_qwen_vl_utils(video, options, 14 if profile == "qwen2.5-vl" else 16)
    elif profile == "lmms-eval":
        result, frames = run_lmms_eval(video, options)
    else:
        print(f"parity: no runner for {profile!r}", file=sys.stderr)
        sys.exit(2)
    result["shape"] = list(frames.shape)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "frames.u8"), "wb") as f:
        f.write(frames.tobytes())
    with open(os.path.join(out_dir, "result.json"), "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
