#!/usr/bin/env python3
"""The peers vidprep is measured against, as a user would write them: PyAV, decord, OpenCV,
torchcodec, PySceneDetect and supervision. Run by bench/run.py inside its virtual environment, one task
per process (so wall time and peak memory are the task's own).

Usage: python peers.py TASK ARGS...
"""

import json
import os
import sys
from pathlib import Path


def save_rgb(arr, path):
    """Writes an RGB uint8 array as JPEG quality 90 (the same as vidprep's default)."""
    from PIL import Image

    Image.fromarray(arr).save(path, quality=90)


def uniform(total, n):
    import numpy as np

    return [int(i) for i in np.round(np.linspace(0, total - 1, n))]


def frame_count(path):
    import av

    with av.open(path) as c:
        return sum(1 for _ in c.demux(c.streams.video[0]) if _.size)  # packets with data


# --- 1. sampling 16 frames -------------------------------------------------------------

def sample_pyav_decode(path, out, n):
    """Decode every frame, keep the targets."""
    import av

    total = frame_count(path)
    want = set(uniform(total, int(n)))
    with av.open(path) as c:
        s = c.streams.video[0]
        s.thread_type = "AUTO"
        for i, f in enumerate(c.decode(s)):
            if i in want:
                save_rgb(f.to_ndarray(format="rgb24"), Path(out) / f"{i:06d}.jpg")


def sample_pyav_seek(path, out, n):
    """Seek to the keyframe before each target, decode forward to it."""
    import av

    with av.open(path) as c:
        s = c.streams.video[0]
        s.thread_type = "AUTO"
        # Frame index -> pts, from the packets (what a careful PyAV user does).
        pts = sorted(p.pts for p in c.demux(s) if p.size)
        for i in uniform(len(pts), int(n)):
            c.seek(pts[i], stream=s, backward=True, any_frame=False)
            for f in c.decode(s):
                if f.pts >= pts[i]:
                    save_rgb(f.to_ndarray(format="rgb24"), Path(out) / f"{i:06d}.jpg")
                    break


def sample_decord(path, out, n):
    import decord

    vr = decord.VideoReader(path, ctx=decord.cpu(0))
    idx = uniform(len(vr), int(n))
    batch = vr.get_batch(idx).asnumpy()
    for i, arr in zip(idx, batch):
        save_rgb(arr, Path(out) / f"{i:06d}.jpg")


def sample_opencv(path, out, n):
    import cv2

    cap = cv2.VideoCapture(path)
    total = int(cap.get(cv2.CAP_PROP_FRAME_COUNT))
    for i in uniform(total, int(n)):
        cap.set(cv2.CAP_PROP_POS_FRAMES, i)
        ok, frame = cap.read()
        if ok:
            cv2.imwrite(str(Path(out) / f"{i:06d}.jpg"), frame, [cv2.IMWRITE_JPEG_QUALITY, 90])


def sample_torchcodec(path, out, n):
    """torchcodec's exact mode (a scan of every packet at open, then seek per frame), with
    FFmpeg's automatic thread count (num_ffmpeg_threads=0, as the issue measured it; the
    default is one thread); frames as uint8 (N, 3, H, W) tensors."""
    from torchcodec.decoders import VideoDecoder

    d = VideoDecoder(path, seek_mode="exact", num_ffmpeg_threads=0)
    idx = uniform(len(d), int(n))
    batch = d.get_frames_at(indices=idx)
    for i, arr in zip(idx, batch.data.permute(0, 2, 3, 1).numpy()):
        save_rgb(arr, Path(out) / f"{i:06d}.jpg")


def arrays(tool, path, out, n):
    """The sampled frames of `tool` as one RGB uint8 array in `out` (.npy), for the pixel check
    (not timed)."""
    import numpy as np

    n = int(n)
    if tool == "torchcodec":
        from torchcodec.decoders import VideoDecoder

        d = VideoDecoder(path, seek_mode="exact", num_ffmpeg_threads=0)
        frames = d.get_frames_at(indices=uniform(len(d), n)).data.permute(0, 2, 3, 1).numpy()
    elif tool == "opencv":
        import cv2

        cap = cv2.VideoCapture(path)
        total = int(cap.get(cv2.CAP_PROP_FRAME_COUNT))
        frames = []
        for i in uniform(total, n):
            cap.set(cv2.CAP_PROP_POS_FRAMES, i)
            ok, bgr = cap.read()
            frames.append(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
        frames = np.stack(frames)
    elif tool == "png":
        # vidprep's PNG images (sorted by name: the source frame index)
        from PIL import Image

        frames = np.stack([np.asarray(Image.open(p).convert("RGB")) for p in sorted(Path(path).glob("*.png"))])
    np.save(out, frames)


# --- 2. decoding everything ------------------------------------------------------------

def decode_pyav(path, out):
    import av

    n = 0
    with av.open(path) as c:
        s = c.streams.video[0]
        s.thread_type = "AUTO"
        for _ in c.decode(s):
            n += 1
    Path(out).write_text(str(n))


def decode_opencv(path, out):
    import cv2

    cap = cv2.VideoCapture(path)
    n = 0
    while cap.grab():
        cap.retrieve()
        n += 1
    Path(out).write_text(str(n))


def decode_decord(path, out):
    import decord

    vr = decord.VideoReader(path, ctx=decord.cpu(0))
    n = 0
    for _ in range(len(vr)):
        vr.next()
        n += 1
    Path(out).write_text(str(n))


# --- 3. a box on every frame -----------------------------------------------------------

def overlay_supervision(path, out):
    import numpy as np
    import supervision as sv

    info = sv.VideoInfo.from_video_path(path)
    box = sv.BoxAnnotator(color=sv.Color(r=255, g=0, b=0), thickness=4, color_lookup=sv.ColorLookup.INDEX)
    det = sv.Detections(xyxy=np.array([[400, 200, 700, 500]], dtype=float))
    with sv.VideoSink(out, info) as sink:
        for frame in sv.get_video_frames_generator(path):
            sink.write_frame(box.annotate(frame.copy(), det))


# --- 4. cutting ------------------------------------------------------------------------

def cut_scenedetect(path, out, start, end):
    """PySceneDetect's splitter: ffmpeg re-encode with its default arguments replaced by ours."""
    from scenedetect import FrameTimecode
    from scenedetect.video_splitter import split_video_ffmpeg

    import av

    with av.open(path) as c:
        fps = float(c.streams.video[0].average_rate)
    scene = (FrameTimecode(float(start), fps), FrameTimecode(float(end), fps))
    split_video_ffmpeg(
        path,
        [scene],
        output_file_template=str(out),
        arg_override="-map 0:v:0 -c:v libx264 -preset veryfast -crf 23 -an",
        show_progress=False,
        show_output=False,
    )


TASKS = {
    "sample-pyav-decode": sample_pyav_decode,
    "sample-pyav-seek": sample_pyav_seek,
    "sample-decord": sample_decord,
    "sample-opencv": sample_opencv,
    "sample-torchcodec": sample_torchcodec,
    "arrays": arrays,
    "decode-pyav": decode_pyav,
    "decode-opencv": decode_opencv,
    "decode-decord": decode_decord,
    "overlay-supervision": overlay_supervision,
    "cut-scenedetect": cut_scenedetect,
}


if __name__ == "__main__":
    TASKS[sys.argv[1]](*sys.argv[2:])
