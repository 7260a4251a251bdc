"""vidprep's loaders side by side with the loaders they replace, on the same videos in one run:
vLLM 0.34's qwen3_vl loader (OpenCV), transformers 5.25's load_video (torchcodec, its video
processors' reader) and lmms-eval 0.7.3's read_video (PyAV). Each pair is checked to give the
same pixels before it is timed; prints a Markdown table with the ratios.

    python bench/loaders.py VIDEO... [--repeat 3]

Needs the parity venv (scripts/parity-venv.sh) with vidprep installed.
"""

import argparse
import importlib.util
import os
import time
from pathlib import Path

import numpy as np


def best(fn, repeat):
    out, times = None, []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return out, min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("videos", nargs="+")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    from vllm.multimodal.video import VIDEO_LOADER_REGISTRY
    from transformers import video_utils as vu

    import vidprep.vllm as vv
    from vidprep import loaders

    vv.register()
    loaders.use_with_transformers(processors=False)
    where = Path(importlib.util.find_spec("lmms_eval").origin).parent / "models" / "model_utils" / "load_video.py"
    spec = importlib.util.spec_from_file_location("lmms_eval_load_video", where)
    lv = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lv)

    print("| video | pipeline | frames | theirs s | vidprep s | ratio | pixels |")
    print("|---|---|---|---|---|---|---|")
    for video in args.videos:
        data = Path(video).read_bytes()
        name = os.path.basename(video)
        cases = [
            ("vLLM qwen3_vl (OpenCV)",
             lambda: VIDEO_LOADER_REGISTRY.load("qwen3_vl").load_bytes(data)[0],
             lambda: VIDEO_LOADER_REGISTRY.load("vidprep_qwen3_vl").load_bytes(data)[0]),
            ("transformers torchcodec, 16",
             lambda: np.asarray(vu.load_video(video, num_frames=16, backend="torchcodec")[0]).transpose(0, 2, 3, 1),
             lambda: vu.load_video(video, num_frames=16, backend="vidprep")[0]),
            ("lmms-eval read_video, 8",
             lambda: lv.read_video(video, num_frm=8),
             lambda: loaders.read_video_pyav(video, num_frm=8)),
        ]
        for label, theirs_fn, ours_fn in cases:
            try:
                theirs, t_theirs = best(theirs_fn, args.repeat)
            except Exception as e:  # noqa: BLE001 - a failing loader is a result
                print(f"| {name} | {label} | - | fails: {e.__class__.__name__} | - | - | - |")
                continue
            ours, t_ours = best(ours_fn, args.repeat)
            same = theirs.shape == ours.shape and np.array_equal(theirs, ours)
            print(f"| {name} | {label} | {len(ours)} | {t_theirs:.3f} | {t_ours:.3f} | "
                  f"{t_theirs / t_ours:.2f}x | {'equal' if same else 'DIFFER'} |")


if __name__ == "__main__":
    main()
