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


def lmms_eval_load_video():
    """lmms-eval's installed `load_video.py` module, and how it was loaded: by its package
    path when lmms-eval's own dependencies are installed, else the same installed file by
    its location (its package's `__init__` imports loguru and the model registry; the file
    itself imports only av and numpy)."""
    try:
        from lmms_eval.models.model_utils import load_video

        return load_video, "import"
    except Exception:  # its package's registry needs loguru and more: load the file itself
        pass
    import importlib.util

    try:
        spec = importlib.util.find_spec("lmms_eval")
    except ImportError:
        spec = None
    if spec is None or not spec.submodule_search_locations:
        missing("lmms-eval (pip install --no-deps lmms-eval==0.7.3)")
    path = os.path.join(
        list(spec.submodule_search_locations)[0], "models", "model_utils", "load_video.py"
    )
    if not os.path.exists(path):
        missing(f"lmms-eval's load_video.py ({path})")
    try:
        import av  # noqa: F401
        import numpy  # noqa: F401
    except ImportError as e:
        missing(f"lmms-eval's loader's dependencies ({e})")
    mod_spec = importlib.util.spec_from_file_location("lmms_eval_load_video", path)
    module = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(module)
    return module, "file " + path


def run_lmms_eval(video, options):
    load_video, how = lmms_eval_load_video()
    from importlib.metadata import version

    # The indices the package itself passes to its frame collectors.
    seen = {}
    stream = load_video.record_video_length_stream
    packet = load_video.record_video_length_packet

    def record_stream(container, indices):
        frames = stream(container, indices)
        chosen = sorted(set(int(i) for i in indices))
        seen["indices"] = chosen[: len(frames)]
        return frames

    def record_packet(container):
        frames = packet(container)
        seen["indices"] = list(range(len(frames)))
        return frames

    load_video.record_video_length_stream = record_stream
    load_video.record_video_length_packet = record_packet
    n = int(options.get("nframes", options.get("num_frm", 8)))
    fps = options.get("fps")
    force = bool(options.get("force_include_last_frame", 0))
    t0 = time.perf_counter()
    frames = load_video.read_video(
        video, num_frm=n, fps=fps, force_include_last_frame=force, backend="pyav"
    )
    seconds = time.perf_counter() - t0
    import av
    import numpy as np

    frames = np.ascontiguousarray(frames)
    return {
        "package": "lmms-eval",
        "version": version("lmms-eval"),
        "backend": "pyav " + av.__version__,
        "loaded": how,
        "indices": seen.get("indices"),
        "seconds": seconds,
    }, frames


def run_llava_onevision(video, options):
    try:
        import torch
        from transformers import LlavaOnevisionVideoProcessor
    except ImportError as e:
        missing(f"transformers' LlavaOnevisionVideoProcessor ({e})")
    from importlib.metadata import version

    kwargs = {}
    if "nframes" in options:
        kwargs["num_frames"] = int(options["nframes"])
    if "fps" in options:
        kwargs["fps"] = options["fps"]
    if "height" in options or "width" in options:
        kwargs["size"] = {
            "height": int(options.get("height", 384)),
            "width": int(options.get("width", 384)),
        }
    processor = LlavaOnevisionVideoProcessor()
    t0 = time.perf_counter()
    # Up to the uint8 resize: the rescale and CLIP normalisation that follow are float maths
    # on these values.
    out = processor(
        videos=video,
        do_sample_frames=True,
        do_rescale=False,
        do_normalize=False,
        return_tensors="pt",
        return_metadata=True,
        **kwargs,
    )
    seconds = time.perf_counter() - t0
    meta = out["video_metadata"][0]
    v = out["pixel_values_videos"][0]
    frames = v.round().clamp(0, 255).to(torch.uint8) if v.is_floating_point() else v
    frames = frames.permute(0, 2, 3, 1).contiguous().numpy()
    return {
        "package": "transformers",
        "version": version("transformers"),
        "backend": meta.video_backend,
        "indices": [int(i) for i in meta.frames_indices],
        "fps": float(meta.fps) if meta.fps is not None else None,
        "total_frames": int(meta.total_num_frames),
        "seconds": seconds,
    }, frames


def main():
    profile, video, out_dir = sys.argv[1:4]
    options = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
    if profile in ("qwen2.5-vl", "qwen3-vl"):
        result, frames = run_qwen_vl_utils(video, options, 14 if profile == "qwen2.5-vl" else 16)
    elif profile == "llava-onevision":
        result, frames = run_llava_onevision(video, options)
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
