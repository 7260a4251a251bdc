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


# The model types of the profiles that run a transformers processor: each runs the classes
# transformers' Auto mappings name for it (`AutoVideoProcessor`, `AutoProcessor`), so a
# profile that shares another's code is checked against the mapping too.
TRANSFORMERS_MODELS = {"qwen3-vl-hf": "qwen3_vl", "qwen3.5": "qwen3_5", "glm-4.6v": "glm46v"}


def run_transformers_video(profile, video, options):
    """The video processor and processor transformers maps `profile`'s model type to, with
    `do_sample_frames=True` (torchcodec decoding): the sampled indices, the uint8 frames its
    `resize` returns (patchify's rescale and normalisation are float maths after it), and the
    prompt text its processor's `replace_video_token` writes for them (the time strings and
    the visual tokens are read off that text)."""
    try:
        import re
        import types

        import torch  # noqa: F401
        import transformers
        from transformers.models.auto.processing_auto import PROCESSOR_MAPPING_NAMES
        from transformers.models.auto.video_processing_auto import VIDEO_PROCESSOR_MAPPING_NAMES
    except ImportError as e:
        missing(f"transformers' video processors ({e})")
    from importlib.metadata import version

    model_type = TRANSFORMERS_MODELS[profile]
    names = VIDEO_PROCESSOR_MAPPING_NAMES.get(model_type)
    if names is None or model_type not in PROCESSOR_MAPPING_NAMES:
        missing(f"transformers {transformers.__version__} with the model type {model_type!r}")
    name = names.get("torchvision") if isinstance(names, dict) else names
    processor_cls = getattr(transformers, name)
    text_cls = getattr(transformers, PROCESSOR_MAPPING_NAMES[model_type])
    installed = version("transformers")
    asked = options.get("transformers")
    if asked is not None and not installed.startswith(f"{asked:.2f}."):
        print(
            f"parity: the profile follows transformers {asked:.2f} (--profile-option transformers), "
            f"but {sys.executable} has transformers {installed} ({transformers.__file__})",
            file=sys.stderr,
        )
        sys.exit(4)

    kwargs = {}
    if "nframes" in options:
        # The processor's own fps (2) would conflict with a frame count.
        kwargs["num_frames"] = int(options["nframes"])
        kwargs["fps"] = None
    if "fps" in options:
        kwargs["fps"] = options["fps"]
    for k in ("min_frames", "max_frames", "max_video_tokens"):
        if k in options:
            kwargs[k] = int(options[k])
    if "cap_pixels_per_frame" in options:
        kwargs["cap_pixels_per_frame"] = bool(options["cap_pixels_per_frame"])
    processor = processor_cls()
    if "shortest_edge" in options or "longest_edge" in options:
        kwargs["size"] = {
            "shortest_edge": int(options.get("shortest_edge", processor.size["shortest_edge"])),
            "longest_edge": int(options.get("longest_edge", processor.size["longest_edge"])),
        }
    t0 = time.perf_counter()
    captured = []
    resize = processor.resize

    def keep(*a, **k):
        out = resize(*a, **k)
        captured.append(out)
        return out

    processor.resize = keep
    out = processor(
        videos=video, do_sample_frames=True, return_tensors="pt", return_metadata=True, **kwargs
    )
    seconds = time.perf_counter() - t0
    meta = out["video_metadata"][0]
    frames = captured[0][0].permute(0, 2, 3, 1).contiguous().numpy()
    # The processor's own prompt text for this video, from its replace_video_token (needs
    # only the video processor and the special tokens; no tokenizer).
    stub = types.SimpleNamespace(
        video_processor=processor,
        image_token="<|image|>",
        video_token="<|video_pad|>",
        vision_start_token="<|vision_start|>",
        vision_end_token="<|vision_end|>",
    )
    for method in ("_calculate_timestamps", "replace_frame_token_id"):
        if hasattr(text_cls, method):
            setattr(stub, method, types.MethodType(getattr(text_cls, method), stub))
    text = text_cls.replace_video_token(stub, out, 0)
    if model_type == "glm46v":
        stamps = re.findall(r"<\|end_of_image\|>([^<]*)", text)
        tokens = text.count("<|image|>")
    else:
        stamps = re.findall(r"<[^<>|]* seconds>", text)
        tokens = text.count("<|video_pad|>")
    return {
        "package": "transformers",
        "version": installed,
        "classes": [processor_cls.__name__, text_cls.__name__],
        "backend": meta.video_backend,
        "indices": [int(i) for i in meta.frames_indices],
        "fps": float(meta.fps),
        "total_frames": int(meta.total_num_frames),
        "duration": float(meta.duration) if meta.duration is not None else None,
        "timestamps": stamps,
        "tokens": tokens,
        "video_grid_thw": [int(v) for v in out["video_grid_thw"][0]],
        "seconds": seconds,
    }, frames


def run_qwen3_vl_hf(video, options):
    return run_transformers_video("qwen3-vl-hf", video, options)


# InternVL's video loader, copied from the model cards (InternVL2.5 / InternVL3 on Hugging
# Face; internvl_chat/README.md of OpenGVLab/InternVL at commit
# 2410d1dbf208f0e799459aff9376e5747dbf41a2, MIT licence): InternVL is not a pip package, so
# its few functions are here as the card gives them (only `load_video` is split so the
# indices and the uint8 tiles before `build_transform`'s float maths can be reported).
def internvl_code():
    try:
        import numpy as np
        import torch  # noqa: F401
        import torchvision.transforms as T
        from decord import VideoReader, cpu
        from PIL import Image
        from torchvision.transforms.functional import InterpolationMode
    except ImportError as e:
        missing(f"InternVL's loader's dependencies: decord, torchvision, Pillow ({e})")

    IMAGENET_MEAN = (0.485, 0.456, 0.406)
    IMAGENET_STD = (0.229, 0.224, 0.225)

    def build_transform(input_size):
        MEAN, STD = IMAGENET_MEAN, IMAGENET_STD
        transform = T.Compose([
            T.Lambda(lambda img: img.convert('RGB') if img.mode != 'RGB' else img),
            T.Resize((input_size, input_size), interpolation=InterpolationMode.BICUBIC),
            T.ToTensor(),
            T.Normalize(mean=MEAN, std=STD)
        ])
        return transform

    def find_closest_aspect_ratio(aspect_ratio, target_ratios, width, height, image_size):
        best_ratio_diff = float('inf')
        best_ratio = (1, 1)
        area = width * height
        for ratio in target_ratios:
            target_aspect_ratio = ratio[0] / ratio[1]
            ratio_diff = abs(aspect_ratio - target_aspect_ratio)
            if ratio_diff < best_ratio_diff:
                best_ratio_diff = ratio_diff
                best_ratio = ratio
            elif ratio_diff == best_ratio_diff:
                if area > 0.5 * image_size * image_size * ratio[0] * ratio[1]:
                    best_ratio = ratio
        return best_ratio

    def dynamic_preprocess(image, min_num=1, max_num=12, image_size=448, use_thumbnail=False):
        orig_width, orig_height = image.size
        aspect_ratio = orig_width / orig_height

        # calculate the existing image aspect ratio
        target_ratios = set(
            (i, j) for n in range(min_num, max_num + 1) for i in range(1, n + 1) for j in range(1, n + 1) if
            i * j <= max_num and i * j >= min_num)
        target_ratios = sorted(target_ratios, key=lambda x: x[0] * x[1])

        # find the closest aspect ratio to the target
        target_aspect_ratio = find_closest_aspect_ratio(
            aspect_ratio, target_ratios, orig_width, orig_height, image_size)

        # calculate the target width and height
        target_width = image_size * target_aspect_ratio[0]
        target_height = image_size * target_aspect_ratio[1]
        blocks = target_aspect_ratio[0] * target_aspect_ratio[1]

        # resize the image
        resized_img = image.resize((target_width, target_height))
        processed_images = []
        for i in range(blocks):
            box = (
                (i % (target_width // image_size)) * image_size,
                (i // (target_width // image_size)) * image_size,
                ((i % (target_width // image_size)) + 1) * image_size,
                ((i // (target_width // image_size)) + 1) * image_size
            )
            # split the image
            split_img = resized_img.crop(box)
            processed_images.append(split_img)
        assert len(processed_images) == blocks
        if use_thumbnail and len(processed_images) != 1:
            thumbnail_img = image.resize((image_size, image_size))
            processed_images.append(thumbnail_img)
        return processed_images, target_aspect_ratio  # (the one change: the grid too)

    def get_index(bound, fps, max_frame, first_idx=0, num_segments=32):
        if bound:
            start, end = bound[0], bound[1]
        else:
            start, end = -100000, 100000
        start_idx = max(first_idx, round(start * fps))
        end_idx = min(round(end * fps), max_frame)
        seg_size = float(end_idx - start_idx) / num_segments
        frame_indices = np.array([
            int(start_idx + (seg_size / 2) + np.round(seg_size * idx))
            for idx in range(num_segments)
        ])
        return frame_indices

    return VideoReader, cpu, Image, np, build_transform, dynamic_preprocess, get_index


def run_internvl(video, options):
    (VideoReader, cpu, Image, np, build_transform, dynamic_preprocess,
     get_index) = internvl_code()
    import decord
    import PIL

    input_size = int(options.get("input_size", 448))
    max_num = int(options.get("max_num", 1))
    min_num = int(options.get("min_num", 1))
    num_segments = int(options.get("nframes", 32))
    bound = None
    if "bound_start" in options:
        bound = (options["bound_start"], options["bound_end"])
    t0 = time.perf_counter()
    # load_video(video_path, bound, input_size, max_num, num_segments), up to the tiles.
    vr = VideoReader(video, ctx=cpu(0), num_threads=1)
    max_frame = len(vr) - 1
    fps = float(vr.get_avg_fps())
    transform = build_transform(input_size=input_size)
    frame_indices = get_index(bound, fps, max_frame, first_idx=0, num_segments=num_segments)
    grids, num_patches_list = [], []
    for frame_index in frame_indices:
        img = Image.fromarray(vr[frame_index].asnumpy()).convert('RGB')
        tiles, (cols, rows) = dynamic_preprocess(img, min_num=min_num, image_size=input_size,
                                                 use_thumbnail=True, max_num=max_num)
        # build_transform's Resize on each tile (a no-op at this size), before ToTensor.
        resized = [transform.transforms[1](transform.transforms[0](t)) for t in tiles]
        pixel_values = [transform(tile) for tile in tiles]
        num_patches_list.append(len(pixel_values))
        arrays = [np.asarray(t) for t in resized]
        # The grid the tiles were cut from, row by row (the thumbnail is not part of it).
        grid = np.concatenate(
            [np.concatenate(arrays[r * cols:(r + 1) * cols], axis=1) for r in range(rows)], axis=0)
        grids.append(grid)
    seconds = time.perf_counter() - t0
    video_prefix = [f'Frame{i+1}: <image>\n' for i in range(len(num_patches_list))]
    return {
        "package": "internvl (model card load_video)",
        "version": "internvl_chat/README.md@2410d1db",
        "backend": f"decord {decord.__version__}, Pillow {PIL.__version__}",
        "indices": [int(i) for i in frame_indices],
        "fps": fps,
        "total_frames": len(vr),
        "num_patches_list": num_patches_list,
        "timestamps": video_prefix,
        "seconds": seconds,
    }, np.ascontiguousarray(np.stack(grids))


# vLLM's video loaders (`vidprep parity --loader vllm-CODEC`): what a vLLM server does with a
# video file sent to it (lmms-eval's `pass_video_url`): `MediaConnector.fetch_video` builds a
# `VideoMediaIO` from the server's `--media-io-kwargs` (here the codec, `backend`) merged with
# the request's `media_io_kwargs` (`num_frames` or `fps`), and its loader (`video_backend`,
# else `VLLM_VIDEO_LOADER_BACKEND`, default `opencv`: uniform sampling) picks and decodes the
# frames. Reports the indices the loader's sampler computed, the ones it returned
# (`frames_indices`), the metadata it hands the model's processor (fps, total frames,
# duration) and the pictures, as they come (source size).
def run_vllm_loader(video, codec, options):
    try:
        import numpy as np
        import vllm
        from vllm.multimodal.media.image import ImageMediaIO
        from vllm.multimodal.media.video import VideoMediaIO
        from vllm.multimodal.video import VIDEO_LOADER_REGISTRY
        from vllm.multimodal import video_decoders
    except ImportError as e:
        missing(f"vllm's video loaders (pip install --no-deps vllm; scripts/parity-venv.sh) ({e})")
    codecs = list(getattr(video_decoders, "_BACKEND_OPTION_DEFAULTS", {}))
    if codecs and codec not in codecs:
        missing(f"a vLLM video codec {codec!r} (vllm {vllm.__version__} has {', '.join(codecs)})")
    loader_name = options.get("video_backend") or "opencv"
    if loader_name not in VIDEO_LOADER_REGISTRY.name2class:
        missing(f"a vLLM video loader {loader_name!r} (vllm {vllm.__version__} has "
                f"{', '.join(sorted(VIDEO_LOADER_REGISTRY.name2class))})")
    server = {"backend": codec, "video_backend": loader_name}
    request = {k: options[k] for k in ("num_frames", "fps") if k in options}
    merged = VideoMediaIO.merge_kwargs(server, request)
    io = VideoMediaIO(ImageMediaIO(), **merged)
    # The indices the loader's sampler computed (the loader returns only those it could read).
    cls = io.video_loader if isinstance(io.video_loader, type) else type(io.video_loader)
    sampled, sources = [], []
    compute = cls.compute_frames_index_to_sample

    def record(*a, **k):
        out = compute(*a, **k)
        sampled.append([int(i) for i in out])
        if "source" in k:
            sources.append(k["source"])
        return out

    cls.compute_frames_index_to_sample = staticmethod(record)
    with open(video, "rb") as f:
        data = f.read()
    t0 = time.perf_counter()
    loaded = io.load_bytes(data)
    seconds = time.perf_counter() - t0
    frames, meta = loaded.media if hasattr(loaded, "media") else loaded
    if hasattr(frames, "numpy"):
        frames = frames.cpu().numpy()
    frames = np.ascontiguousarray(np.asarray(frames, dtype=np.uint8))
    if codec == "torchcodec":
        import torchcodec

        decoder = f"torchcodec {torchcodec.__version__}"
    elif codec == "opencv":
        import cv2

        decoder = f"opencv {cv2.__version__}"
    else:
        decoder = codec
    from importlib.metadata import version

    src = sources[0] if sources else None
    return {
        "package": "vllm",
        "version": version("vllm"),
        "backend": decoder,
        "loader": loader_name,
        "codec": codec,
        "media_io_kwargs": {k: v for k, v in merged.items()},
        "num_frames": io.num_frames,
        "sampled_indices": sampled[0] if sampled else None,
        "indices": [int(i) for i in meta["frames_indices"]],
        "fps": float(meta["fps"]) if meta.get("fps") is not None else None,
        "total_frames": int(meta["total_num_frames"]),
        "duration": float(meta["duration"]) if meta.get("duration") is not None else None,
        "video_backend": meta.get("video_backend"),
        "do_sample_frames": meta.get("do_sample_frames"),
        "source_metadata": list(src) if src is not None else None,
        "seconds": seconds,
    }, frames


def main():
    profile, video, out_dir = sys.argv[1:4]
    options = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
    if profile.startswith("vllm-"):
        # A server's video loader (`--loader vllm-CODEC`), not a profile's package.
        finish(out_dir, *run_vllm_loader(video, profile[len("vllm-"):], options))
        return
    if profile in ("qwen2.5-vl", "qwen3-vl"):
        result, frames = run_qwen_vl_utils(video, options, 14 if profile == "qwen2.5-vl" else 16)
    elif profile in TRANSFORMERS_MODELS:
        result, frames = run_transformers_video(profile, video, options)
    elif profile == "llava-onevision":
        result, frames = run_llava_onevision(video, options)
    elif profile == "internvl":
        result, frames = run_internvl(video, options)
    elif profile == "lmms-eval":
        result, frames = run_lmms_eval(video, options)
    else:
        print(f"parity: no runner for {profile!r}", file=sys.stderr)
        sys.exit(2)
    finish(out_dir, result, frames)


def finish(out_dir, result, frames):
    """Writes `result.json` and `frames.u8`."""
    result["shape"] = list(frames.shape)
    torch = sys.modules.get("torch")
    if torch is not None:
        # The CPU kernels torch dispatched to (its resize sums differ between DEFAULT and
        # AVX2/AVX512 builds: src/profiles/resample.rs).
        cpu = getattr(getattr(torch.backends, "cpu", None), "get_cpu_capability", None)
        result["torch"] = {"version": torch.__version__, "cpu_capability": cpu() if cpu else None}
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "frames.u8"), "wb") as f:
        f.write(frames.tobytes())
    with open(os.path.join(out_dir, "result.json"), "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
