#!/usr/bin/env python3
"""Builds the labelled shot-boundary set that bench/detect_eval.py scores detectors on.

`python3 bench/detect_set.py [--force]` writes bench/work/detect_set/ (generated, gitignored):
one video per entry of VIDEOS and beside it NAME.json, its ground truth, plus set.json (the
list). Only ffmpeg is used. Each video joins segments of the real footage in
../shared/data (chaplin, bag, vtest, the GOT-10k sequences), of the benchmark media and of
lavfi sources, with hard cuts, fades through black and dissolves at known frames, and holds
hard negatives (fast pans, zooms, flashes, a dark scene, grain, a static camera with people
walking) that contain no boundary. Most videos are libx264 MP4s (GOP 250, B-frames, x264's
own scene-cut keyframes); one is MPEG-4 Part 2 in AVI.

How the truth is made and checked:

1. Every segment is rendered on its own to a lossless FFV1 file of exactly its frame count,
   already at the video's size and rate (a source frame becomes one output frame: the
   footage's own rate is reinterpreted, nothing is duplicated or dropped).
2. One filter graph joins them into a lossless master: `concat` for cuts, `xfade` for
   dissolves (`fade`: linear mix, `dissolve`: pixel dither) and `fadeblack`, and `fade`
   out/in filters (with `tpad` black frames between) for fades through black. The expected
   boundaries are computed from the segment lengths and transition lengths (the model).
3. The master is checked without the model: every master frame is hashed and looked up among
   the segments' frames. A frame equal to a segment's frame is clean; a boundary is where the
   clean frames switch segment: a cut when they are adjacent, else a gradual transition over
   the frames in between (mixed or darkened, found in no segment). The boundaries found this
   way must equal the model's, frame for frame, and within each segment the clean frames must
   follow the segment's own frame order. A fade must reach near-black (mean luma <= 24 in
   some frame) and a dissolve must not (each mixed frame's mean luma stays between its two
   shots' means, within a margin).
4. The master is encoded to the delivered file, whose frame count must equal the master's and
   whose every frame must match the master's frame of the same index (mean absolute luma
   difference on a 160x90 thumbnail small, and smaller than against either neighbour where
   the neighbours differ).

Conventions (vidprep's): frames are 0-based; a cut is {kind: "cut", start: F, end: F} with F
the first frame of the new shot; a fade or dissolve is {kind, start, end} covering
[first mixed or darkened frame, first clean frame of the next shot). `negatives` lists the
frame ranges of the hard-negative segments (their clean frames, 3 frames in from each edge):
any detection inside one is a false positive of that kind.
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
# ../shared/data, or the folder VIDPREP_SHARED_DATA names (a git worktree elsewhere).
SHARED = Path(os.environ.get("VIDPREP_SHARED_DATA") or ROOT.parent / "shared" / "data")
MEDIA = ROOT / "bench" / "media"
OUT = ROOT / "bench" / "work" / "detect_set"
VERSION = 1  # bump when the way videos are made changes: cached videos are rebuilt
MIN_CLEAN = 10  # every shot shows at least this many frames outside its transitions

# --------------------------------------------------------------------------- sources
# A source is a function (w, h, r, start, n) -> (ffmpeg input arguments, filter chain) that
# yields frames start.. of the source, fitted to w x h (scaled to cover, centre-cropped).

FIT = "scale={w}:{h}:force_original_aspect_ratio=increase,crop={w}:{h},setsar=1,format=yuv444p"
# After every step: frame i at time i/r, in 4:4:4 (segments and master stay 4:4:4 until the
# delivery, as xfade works in 4:4:4 only and converting back and forth would alter the
# chroma of clean frames).
RETIME = "settb=1/{r},setpts=N,fps={r},format=yuv444p"


def footage(path):
    """A video file; its frames are taken one for one (its own rate is reinterpreted)."""
    def make(w, h, r, start, n):
        return ["-i", path], f"trim=start_frame={start},settb=1/{r},setpts=N,{FIT.format(w=w, h=h)}"
    return make


def sequence(folder):
    """A GOT-10k folder of 00000001.jpg..., read as an image sequence."""
    def make(w, h, r, start, n):
        return (["-framerate", str(r), "-start_number", str(start + 1), "-i", folder / "%08d.jpg"],
                FIT.format(w=w, h=h))
    return make


def lavfi(graph, shrink=1, flags="bicubic"):
    """A lavfi source graph with {w} {h} {r}, rendered `shrink` times smaller and scaled up
    (cell patterns keep visible cells; the Mandelbrot renders faster)."""
    def make(w, h, r, start, n):
        src = graph.format(w=w // shrink, h=h // shrink, r=r)
        up = f",scale={w}:{h}:flags={flags}" if shrink > 1 else ""
        return ["-f", "lavfi", "-i", src], f"trim=start_frame={start},settb=1/{r},setpts=N{up},{FIT.format(w=w, h=h)}"
    return make


def moving_overlay(background):
    """A lavfi background with a small testsrc2 picture bouncing over it."""
    def make(w, h, r, start, n):
        bw, bh = w // 4, h // 4
        graph = (f"{background.format(w=w, h=h, r=r)}[bg];testsrc2=s={bw}x{bh}:r={r}[fg];"
                 f"[bg][fg]overlay=x='abs(mod(n*{w // 40},2*(W-w))-(W-w))':y='abs(mod(n*{h // 45},2*(H-h))-(H-h))'")
        return ["-f", "lavfi", "-i", graph], f"trim=start_frame={start},settb=1/{r},setpts=N,{FIT.format(w=w, h=h)}"
    return make


def pan(w, h, r, start, n):
    """Camera-like pan over a large detailed still (a deep Mandelbrot view, 2.25x the frame):
    a sweep that accelerates to a whip (at its fastest 5% of the width per frame over 150
    frames, 15% over 45), a vertical bob, and a 3-frame blur as a shutter would give."""
    big_w, big_h = w * 9 // 4, h * 9 // 4
    graph = (f"mandelbrot=s={big_w}x{big_h}:r={r}:start_x=-0.7436438870:start_y=0.1318259042:"
             f"start_scale=0.002:end_scale=0.002:maxiter=400,trim=end_frame=1,loop=loop=-1:size=1")
    x = f"(iw-ow)/2*(1-cos(PI*(n+{start})*(n+{start})/{n * n // 2}))"
    y = f"(ih-oh)/2*(1+0.6*sin((n+{start})/9))"
    return ["-f", "lavfi", "-i", graph], (f"settb=1/{r},setpts=N,crop={w}:{h}:x='{x}':y='{y}',tmix=frames=3,"
                                          f"{FIT.format(w=w, h=h)}")


def zoom(path):
    """Slow-then-fast zoom into one still (frame 60) of real footage (zoompan)."""
    def make(w, h, r, start, n):
        return (["-i", path], f"trim=start_frame=60:end_frame=61,scale={2 * w}:{2 * h},zoompan=z='1+0.0002*(on+{start})*(on+{start})':d={n + start}:"
                f"x='iw/2-iw/zoom/2+40*sin(on/15)':y='ih/2-ih/zoom/2':s={w}x{h}:fps={r},trim=start_frame={start},"
                f"settb=1/{r},setpts=N,{FIT.format(w=w, h=h)}")
    return make


def real_pan(path, start_frame=0):
    """A fast camera pan over moving real footage: the video scaled to twice the frame and a
    frame-sized window swept across it, accelerating to a whip (up to 7% of the width per
    frame), with a vertical bob and a 2-frame shutter blur."""
    def make(w, h, r, start, n):
        x = f"(iw-ow)/2*(1-cos(PI*(n+{start})/{max(n, 2)}))"
        y = f"(ih-oh)/2*(1+0.5*sin((n+{start})/7))"
        return ["-i", path], (f"trim=start_frame={start_frame + start},settb=1/{r},setpts=N,scale={2 * w}:{2 * h},"
                              f"crop={w}:{h}:x='{x}':y='{y}',tmix=frames=2,{FIT.format(w=w, h=h)}")
    return make


def slow_pan(path, frame, speed, blur=0):
    """A slow camera move over one still (frame `frame`) of real footage: the picture scaled
    to twice the frame (softened by a Gaussian blur of sigma `blur`, as an out-of-focus
    background) and a frame-sized window drifting right by `speed` pixels a frame (a third of
    that downwards), as a slow pan that opens a video."""
    def make(w, h, r, start, n):
        soft = f"gblur=sigma={blur}," if blur else ""
        return (["-i", path], f"trim=start_frame={frame}:end_frame={frame + 1},scale={2 * w}:{2 * h},{soft}"
                f"loop=loop=-1:size=1,settb=1/{r},setpts=N,crop={w}:{h}:x='(n+{start})*{speed}':"
                f"y='(n+{start})*{speed}/3',{FIT.format(w=w, h=h)}")
    return make


TITLE_FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"


def title_card(w, h, r, start, n):
    """An animated title card: a still dark-blue card on which a large title appears at frame
    25 (drawtext, 14% of the picture) and a yellow frame is drawn at frame 55 (9%), while a
    small mark slides across the bottom."""
    graph = (f"color=c=0x182848:s={w}x{h}:r={r},drawtext=fontfile={TITLE_FONT}:text='LONG WALK':"
             f"fontsize={h * 110 // 360}:fontcolor=white:x=(w-tw)/2:y=h*0.14:enable='gte(n,{25 - start})',"
             f"drawbox=x=iw*0.266:y=ih*0.528:w=iw*0.469:h=ih*0.361:color=0xF0C040:t=fill:enable='gte(n,{55 - start})',"
             f"drawbox=x=iw*0.312:y=ih*0.597:w=iw*0.375:h=ih*0.222:color=0x182848:t=fill:enable='gte(n,{55 - start})'[t];"
             f"color=c=white:s={w // 26}x{w // 26}:r={r}[d];[t][d]overlay=x='w*2.5+(n+{start})*{w / 160:.3f}':y=H*0.92-h")
    return ["-f", "lavfi", "-i", graph], f"settb=1/{r},setpts=N,{FIT.format(w=w, h=h)}"


CHAPLIN = SHARED / "host" / "chaplin.mp4"
BAG = SHARED / "host" / "bag.avi"
VTEST = SHARED / "pets09" / "vtest.avi"
SOURCES = {
    "chaplin": footage(CHAPLIN),
    "bag": footage(BAG),
    "vtest": footage(VTEST),
    "vot_bag": sequence(SHARED / "got10k" / "VOT_bag"),
    "otb_crossing": sequence(SHARED / "got10k" / "OTB_Crossing"),
    "media_720p": footage(MEDIA / "720p30_10s.mp4"),
    "media_hd_grain": footage(MEDIA / "1080p30_60s_detail.mp4"),
    "testsrc2": lavfi("testsrc2=s={w}x{h}:r={r}"),
    "mandelbrot": lavfi("mandelbrot=s={w}x{h}:r={r}:start_scale=2:end_scale=0.05:end_pts=20:maxiter=400", shrink=2),
    "life": lavfi("life=s={w}x{h}:r={r}:mold=5:ratio=0.35:seed=3:life_color=#FFD700:death_color=#203080:"
                  "mold_color=#FF3030", shrink=4, flags="neighbor"),
    "cellauto": lavfi("cellauto=s={w}x{h}:r={r}:rule=110:random_fill_ratio=0.4:seed=5:scroll=1,format=rgb24,"
                      "colorchannelmixer=rr=1:gg=0.7:bb=0.2", shrink=4, flags="neighbor"),
    "bars": moving_overlay("smptehdbars=s={w}x{h}:r={r}"),
    "gradients": moving_overlay("gradients=s={w}x{h}:r={r}:speed=0.03:seed=7"),
    "pan": pan,
    "zoom_street": zoom(MEDIA / "1080p30_60s_detail.mp4"),
    "pan_vtest": real_pan(VTEST, 200),
    "pan_chaplin": real_pan(CHAPLIN),
    "slow_pan_chaplin": slow_pan(CHAPLIN, 60, 4, blur=12),
    "slow_pan_bag": slow_pan(BAG, 40, 2),
    "title_card": title_card,
}

# Effects applied to a segment (hard negatives among them).
FLASH = ("eq=brightness=0.35:enable='between(n,30,31)',eq=brightness=0.15:enable='eq(n,32)',"
         "eq=brightness=0.8:enable='eq(n,80)'")  # a camera flash (3 frames decaying), a 1-frame lightning
DARK = "eq=brightness=-0.18:contrast=0.55:gamma=0.8"  # a dark scene whose detail stays visible
GRAIN = "noise=alls=24:allf=t+u:all_seed=11"  # heavy film grain, new every frame
# Black bars, as delivered footage has them (after fitting to the frame; even sizes).
PILLAR_PHONE = "crop=trunc(ih*9/32)*2:ih,pad=ih*16/9:ih:(ow-iw)/2:0:black,setsar=1"  # a 9:16 phone picture
PILLAR_43 = "scale=trunc(ih*4/6)*2:ih,pad=ih*16/9:ih:(ow-iw)/2:0:black,setsar=1"  # 4:3 in 16:9
LETTER_239 = "scale=iw:trunc(iw/2.39/2)*2,pad=iw:iw*9/16:0:(oh-ih)/2:black,setsar=1"  # 2.39:1 scope in 16:9


def damage(at, frames):
    """Frames at..at+frames-1 of the segment as a broken stream decodes them: flat green,
    magenta or grey blocks over bands of the picture (a new band each frame) and grain."""
    boxes = []
    for k in range(frames):
        colour = ("0x00C000", "0xC000C0", "0x808080")[k % 3]
        top, height = (k * 29) % 55, 25 + (k * 17) % 30
        boxes.append(f"drawbox=x=0:y=ih*{top / 100:.2f}:w=iw:h=ih*{height / 100:.2f}:color={colour}:t=fill:"
                     f"enable='eq(n,{at + k})'")
        boxes.append(f"drawbox=x=iw*{(k * 13) % 50 / 100:.2f}:y=0:w=iw*0.3:h=ih:color={colour}:t=fill:"
                     f"enable='eq(n,{at + k})'")
    return ",".join(boxes) + f",noise=alls=40:allf=u:enable='between(n,{at},{at + frames - 1})'"


# A dark shot that brightens (a light coming on, an exposure change): dark for its first 30
# frames (over which the dissolve into it runs), brightening over the next 40.
BRIGHTEN = "eq=brightness='-0.25*(1-clip((n-30)/40,0,1))':eval=frame"
# Issue 52 (a trailer): something fading in over a part of the picture 20 frames after a
# dissolve into the shot, over its frames 50..61 (a 30-frame dissolve mixes frames 0..29):
# a white caption over a tenth of the picture, a lower-third banner over a quarter, or the
# whole shot brightening (an exposure ramp). None is a boundary.
def fading_in(colour, w, h, x, y):
    return (f"split[m][o];[o]crop=iw*{w}:ih*{h},drawbox=x=0:y=0:w=iw:h=ih:color={colour}:t=fill,format=yuva444p,"
            f"fade=in:s=50:n=12:alpha=1[c];[m][c]overlay=x=W*{x}:y=H*{y}")


CAPTION = fading_in("white", 0.32, 0.31, 0.63, 0.63)
BANNER = fading_in("0x203050", 1, 0.255, 0, 0.745)
RAMP = "eq=brightness='0.2*clip((n-50)/11,0,1)':eval=frame"
DAMAGE_AFTER_CUT = damage(2, 4)  # damaged frames 2..5 of the new shot: a cut two frames before them
DAMAGE_MID = damage(40, 5)  # damaged frames inside a shot (no boundary)
EFFECT_NAMES = {FLASH: "flashes", DARK: "darkened", GRAIN: "grain", PILLAR_PHONE: "9:16 pillarbox",
                PILLAR_43: "4:3 pillarbox", LETTER_239: "2.39:1 letterbox", DAMAGE_AFTER_CUT: "damaged frames 2-5",
                DAMAGE_MID: "damaged frames 40-44", f"{PILLAR_43},{FLASH}": "4:3 pillarbox, flashes",
                f"{LETTER_239},{FLASH}": "2.39:1 letterbox, flashes",
                f"{PILLAR_PHONE},{DAMAGE_AFTER_CUT}": "9:16 pillarbox, damaged frames 2-5",
                BRIGHTEN: "dark, brightening over frames 30-70", CAPTION: "caption fading in over frames 50-61",
                BANNER: "lower-third banner fading in over frames 50-61", RAMP: "brightening over frames 50-61"}


def seg(source, start, n, effect="", negative=None):
    """A segment: n frames of a source from its frame `start`, an optional filter chain after
    fitting, and the hard-negative kind it stands for (None: an ordinary shot)."""
    return {"source": source, "start": start, "frames": n, "effect": effect, "negative": negative}


def cut():
    return {"t": "cut"}


def dissolve(frames, style="fade"):
    """xfade over `frames` frames: style "fade" mixes linearly, "dissolve" dithers pixels."""
    return {"t": "xfade", "kind": "dissolve", "style": style, "frames": frames}


def fadeblack(frames):
    """xfade fadeblack: through (nearly) black within `frames` frames."""
    return {"t": "xfade", "kind": "fade", "style": "fadeblack", "frames": frames}


def fade(out, hold, into):
    """Fade out over `out` frames, `hold` black frames, fade in over `into` frames."""
    return {"t": "fade", "out": out, "hold": hold, "in": into}


# Each video: name, width, height, rate, codec ("x264" or "mpeg4"), then segments with a
# transition between each two.
VIDEOS = [
    ("real_360p25", 640, 360, 25, "x264", [
        seg("chaplin", 0, 100), cut(), seg("bag", 0, 80), cut(),
        seg("vtest", 100, 120, negative="static camera, people walking"), dissolve(25),
        seg("otb_crossing", 0, 110), fade(12, 6, 12), seg("chaplin", 130, 111), cut(),
        seg("vot_bag", 110, 86)]),
    ("synthetic_720p30", 1280, 720, 30, "x264", [
        seg("testsrc2", 0, 90), cut(), seg("mandelbrot", 0, 100), dissolve(15, "dissolve"),
        seg("life", 0, 90), cut(), seg("cellauto", 0, 75), fadeblack(30), seg("bars", 0, 150),
        dissolve(60), seg("gradients", 0, 130), cut(), seg("testsrc2", 400, 70, GRAIN)]),
    ("negatives_720p30", 1280, 720, 30, "x264", [
        seg("pan", 0, 150, negative="fast pan (whip) over a detailed still"), cut(),
        seg("vtest", 300, 160, negative="static camera, people walking"), cut(),
        seg("chaplin", 0, 130, FLASH, negative="flashes (3-frame flash, 1-frame lightning)"), dissolve(30),
        seg("zoom_street", 0, 120, negative="accelerating zoom into a still"), cut(),
        seg("bag", 0, 150, DARK, negative="dark scene (not black)"), fade(15, 0, 15), seg("testsrc2", 0, 80)]),
    ("mixed_360p25_mpeg4", 640, 360, 25, "mpeg4", [
        seg("bag", 60, 136), dissolve(8), seg("chaplin", 0, 120), cut(), seg("life", 50, 70), fadeblack(15),
        seg("otb_crossing", 0, 120), cut(), seg("mandelbrot", 60, 90), dissolve(30, "dissolve"),
        seg("vtest", 500, 120), cut(), seg("testsrc2", 100, 80)]),
    ("montage_720p25", 1280, 720, 25, "x264", [
        seg("chaplin", 20, 25), cut(), seg("bag", 10, 20), cut(), seg("testsrc2", 0, 18), cut(),
        seg("mandelbrot", 40, 22), cut(), seg("otb_crossing", 10, 30), cut(), seg("vtest", 200, 16), cut(),
        seg("cellauto", 0, 20), cut(), seg("gradients", 0, 12), cut(), seg("chaplin", 200, 16), cut(),
        seg("vot_bag", 40, 24), cut(), seg("media_hd_grain", 300, 20), cut(), seg("life", 20, 10), cut(),
        seg("bars", 30, 28), cut(), seg("chaplin", 120, 40), cut(), seg("bag", 150, 30)]),
    ("fades_360p30", 640, 360, 30, "x264", [
        seg("chaplin", 0, 90), fade(20, 30, 20), seg("bag", 0, 90), fade(8, 0, 8), seg("mandelbrot", 0, 90),
        fadeblack(45), seg("vtest", 0, 100), fade(30, 3, 10), seg("bag", 100, 96, DARK), dissolve(45),
        seg("otb_crossing", 0, 120), cut(), seg("life", 0, 60)]),
    ("dissolves_720p30", 1280, 720, 30, "x264", [
        seg("media_hd_grain", 0, 120), dissolve(10), seg("chaplin", 0, 100), dissolve(60), seg("bag", 0, 120),
        dissolve(20, "dissolve"), seg("otb_crossing", 0, 110), dissolve(40), seg("vot_bag", 0, 120), cut(),
        seg("testsrc2", 0, 60), dissolve(9), seg("gradients", 0, 90)]),
    ("hard_720p25", 1280, 720, 25, "x264", [
        seg("media_720p", 0, 150, negative="static camera, people walking"), cut(),
        seg("chaplin", 0, 120, GRAIN, negative="heavy film grain"), dissolve(20), seg("bag", 0, 120, FLASH,
                                                                                         negative="flashes (3-frame flash, 1-frame lightning)"),
        cut(), seg("pan", 40, 110, negative="fast pan (whip) over a detailed still"), fade(10, 5, 25),
        seg("chaplin", 100, 141, DARK, negative="dark scene (not black)"), cut(), seg("cellauto", 0, 60)]),
    ("cuts_360p30", 640, 360, 30, "x264", [  # hard cuts of every sort: a jump cut, dark to dark, grain to grain
        seg("chaplin", 0, 40), cut(), seg("chaplin", 180, 40), cut(), seg("bag", 0, 30, DARK), cut(),
        seg("chaplin", 60, 30, DARK), cut(), seg("vot_bag", 0, 25), cut(), seg("otb_crossing", 0, 30), cut(),
        seg("vtest", 0, 30), cut(), seg("testsrc2", 0, 20), cut(), seg("media_hd_grain", 600, 30), cut(),
        seg("bag", 100, 40, GRAIN), cut(), seg("chaplin", 100, 40, GRAIN), cut(), seg("life", 0, 25), cut(),
        seg("cellauto", 0, 25), cut(), seg("bars", 0, 25), cut(), seg("gradients", 0, 30), cut(),
        seg("pan", 0, 45)]),
    # Field footage (issue 23): black bars, damaged frames, dissolves of real footage of 10-60
    # frames, flashes and fast pans over real footage.
    ("pillarbox_360p25", 640, 360, 25, "x264", [
        seg("chaplin", 0, 60, PILLAR_PHONE), cut(), seg("chaplin", 150, 50, PILLAR_PHONE), cut(),
        seg("bag", 0, 50, PILLAR_PHONE), cut(), seg("chaplin", 130, 20, PILLAR_PHONE), cut(),
        seg("vtest", 0, 60, PILLAR_PHONE), dissolve(19), seg("otb_crossing", 0, 60, PILLAR_PHONE), cut(),
        seg("chaplin", 70, 60, f"{PILLAR_PHONE},{DAMAGE_AFTER_CUT}"), cut(),
        seg("bag", 60, 50, PILLAR_43), cut(), seg("chaplin", 210, 30, PILLAR_43), cut(),
        seg("vtest", 300, 100, f"{PILLAR_43},{FLASH}", negative="flashes (3-frame flash, 1-frame lightning)"),
        cut(), seg("otb_crossing", 60, 60, PILLAR_43), dissolve(30), seg("vot_bag", 0, 70, PILLAR_43), cut(),
        seg("vtest", 500, 50, PILLAR_43)]),
    ("letterbox_360p25", 640, 360, 25, "x264", [
        seg("chaplin", 0, 70, LETTER_239), cut(), seg("vtest", 600, 60, LETTER_239), cut(),
        seg("otb_crossing", 0, 50, LETTER_239), dissolve(12), seg("bag", 0, 60, LETTER_239), cut(),
        seg("vtest", 100, 100, f"{LETTER_239},{FLASH}", negative="flashes (3-frame flash, 1-frame lightning)"),
        cut(), seg("vot_bag", 60, 60, LETTER_239), dissolve(40), seg("chaplin", 170, 71, LETTER_239), cut(),
        seg("pan_vtest", 0, 90, LETTER_239, negative="fast pan over real footage"), fade(10, 4, 10),
        seg("bag", 100, 60, LETTER_239), cut(), seg("vtest", 400, 60, LETTER_239)]),
    ("damaged_360p25", 640, 360, 25, "x264", [
        seg("chaplin", 0, 60), cut(), seg("bag", 0, 60, DAMAGE_AFTER_CUT), cut(),
        seg("vtest", 0, 80, DAMAGE_MID, negative="damaged frames inside a shot"), cut(),
        seg("chaplin", 80, 60, DAMAGE_AFTER_CUT), cut(), seg("otb_crossing", 0, 60, DAMAGE_AFTER_CUT), cut(),
        seg("vot_bag", 100, 60), dissolve(20), seg("vtest", 200, 60, DAMAGE_AFTER_CUT), cut(),
        seg("chaplin", 160, 70, DAMAGE_MID, negative="damaged frames inside a shot"), cut(),
        seg("bag", 80, 60, DAMAGE_AFTER_CUT), cut(), seg("vtest", 400, 60)]),
    ("real_dissolves_360p25", 640, 360, 25, "x264", [
        seg("chaplin", 0, 50), dissolve(10), seg("bag", 0, 50), dissolve(14), seg("vtest", 0, 60),
        dissolve(19), seg("chaplin", 60, 60), dissolve(25), seg("otb_crossing", 0, 70), dissolve(33),
        seg("vot_bag", 60, 90), dissolve(45), seg("chaplin", 120, 121), dissolve(60), seg("vtest", 200, 100),
        dissolve(19, "dissolve"), seg("bag", 100, 96), dissolve(50), seg("vtest", 400, 90)]),
    ("pans_flashes_360p25", 640, 360, 25, "x264", [
        seg("pan_chaplin", 0, 100, negative="fast pan over real footage"), cut(),
        seg("bag", 0, 100, FLASH, negative="flashes (3-frame flash, 1-frame lightning)"), cut(),
        seg("pan_vtest", 0, 110, negative="fast pan over real footage"), dissolve(19),
        seg("chaplin", 100, 100, FLASH, negative="flashes (3-frame flash, 1-frame lightning)"), cut(),
        seg("pan_vtest", 120, 90, negative="fast pan over real footage"), cut(),
        seg("otb_crossing", 0, 100, FLASH, negative="flashes (3-frame flash, 1-frame lightning)")]),
    # Issue 40: a slow camera move opening the video, a dissolve into a dark shot that then
    # brightens within the shot, an animated title card whose drawing changes.
    ("edges_ramps_360p25", 640, 360, 25, "x264", [
        seg("slow_pan_chaplin", 0, 110, negative="slow camera move at the video's start"), cut(),
        seg("bag", 0, 80), dissolve(30), seg("chaplin", 60, 150, BRIGHTEN, negative="brightening inside one shot"),
        cut(), seg("title_card", 0, 100, negative="animated title card (text appearing, a moving mark)"), cut(),
        seg("vtest", 0, 80), dissolve(40), seg("otb_crossing", 0, 120, BRIGHTEN, negative="brightening inside one shot"),
        cut(), seg("vot_bag", 0, 60)]),
    ("slow_start_360p25", 640, 360, 25, "x264", [
        seg("slow_pan_bag", 0, 90, negative="slow camera move at the video's start"), dissolve(20),
        seg("title_card", 0, 100, negative="animated title card (text appearing, a moving mark)"), fade(10, 5, 10),
        seg("chaplin", 100, 100), cut(), seg("vtest", 300, 80)]),
    # Issue 52 (item 9): in a trailer a cross-fade was followed 20 frames later by a false
    # 11-frame dissolve where a caption faded in. Cross-fades into a shot on which something
    # fades in over part of the picture (or the whole shot brightens) 20 frames after the mix,
    # and two cross-fades 20 frames apart.
    ("trailer_360p25", 640, 360, 25, "x264", [
        seg("chaplin", 0, 100), dissolve(30),
        seg("bag", 0, 120, CAPTION, negative="caption fading in over a tenth of the picture after a dissolve"), cut(),
        seg("chaplin", 100, 100), dissolve(30),
        seg("vtest", 0, 120, BANNER, negative="banner fading in over a quarter of the picture after a dissolve"), cut(),
        seg("vot_bag", 0, 100), dissolve(30),
        seg("bag", 120, 76, RAMP, negative="brightening ramp after a dissolve"), cut(),
        seg("otb_crossing", 0, 100), dissolve(30), seg("vtest", 200, 80), dissolve(12), seg("vot_bag", 100, 90)]),
]


# --------------------------------------------------------------------------- building

def ff(*args):
    p = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", *map(str, args)], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"ffmpeg failed: {' '.join(map(str, args))}\n{p.stderr[-2000:]}")


def count_frames(path):
    p = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-count_frames", "-show_entries",
                        "stream=nb_read_frames", "-of", "csv=p=0", str(path)], capture_output=True, text=True)
    return int(p.stdout.strip())


def frames_of(path, w, h, fmt="yuv444p"):
    """Yields the decoded frames of `path` as bytes (at w x h in `fmt`)."""
    size = w * h * (1 if fmt == "gray" else 3)
    proc = subprocess.Popen(["ffmpeg", "-v", "error", "-nostdin", "-i", str(path), "-vf", f"scale={w}:{h}:flags=area",
                             "-fps_mode", "passthrough", "-pix_fmt", fmt, "-f", "rawvideo", "-"], stdout=subprocess.PIPE)
    while True:
        buf = proc.stdout.read(size)
        if len(buf) < size:
            break
        yield buf
    proc.wait()


def thumbs(path):
    """Luma of every frame at 160x90, as a float array (frames, 90, 160)."""
    return np.array([np.frombuffer(b, np.uint8).reshape(90, 160) for b in frames_of(path, 160, 90, "gray")], np.float32)


def render_segment(s, w, h, r, path):
    inputs, chain = SOURCES[s["source"]](w, h, r, s["start"], s["frames"])
    if s["effect"]:
        chain += "," + s["effect"]
    chain += "," + RETIME.format(r=r)
    ff(*inputs, "-vf", chain, "-frames:v", s["frames"], "-an", "-c:v", "ffv1", "-fps_mode", "passthrough", path)
    got = count_frames(path)
    if got != s["frames"]:
        raise SystemExit(f"segment {s} rendered {got} frames, wanted {s['frames']}")


def compose(parts, r, seg_paths, master):
    """Joins the segments into the master; returns the model's boundaries and the master's
    length in frames."""
    segs, trans = parts[0::2], parts[1::2]
    graph = []
    for i, s in enumerate(segs):
        chain = f"[{i}:v]settb=1/{r},setpts=N"
        if i > 0 and trans[i - 1]["t"] == "fade":
            chain += f",fade=t=in:s=0:n={trans[i - 1]['in']}"
        if i < len(trans) and trans[i]["t"] == "fade":
            t = trans[i]
            chain += f",fade=t=out:s={s['frames'] - t['out']}:n={t['out']}"
            if t["hold"]:
                chain += f",tpad=stop={t['hold']}:stop_mode=add:color=black"
        graph.append(f"{chain},{RETIME.format(r=r)}[s{i}]")
    length = segs[0]["frames"] + (trans[0]["hold"] if trans and trans[0]["t"] == "fade" else 0)
    truth = []
    cur = "s0"
    for i, t in enumerate(trans, start=1):
        nxt = segs[i]["frames"] + (trans[i]["hold"] if i < len(trans) and trans[i]["t"] == "fade" else 0)
        if t["t"] == "xfade":
            d = t["frames"]
            off = length - d
            # A gets 2 spare frames (dropped by xfade): the last overlapped frame is then
            # mixed like the others instead of depending on when xfade sees A's end.
            graph.append(f"[{cur}]tpad=stop=2:stop_mode=clone[p{i}];[p{i}][s{i}]xfade=transition={t['style']}:"
                         f"duration={d / r:.6f}:offset={off / r:.6f},{RETIME.format(r=r)}[c{i}]")
            # xfade's first overlapped frame is still all A; B is clean from its frame d on.
            truth.append({"kind": t["kind"], "start": off + 1, "end": length})
            length += nxt - d
        else:
            graph.append(f"[{cur}][s{i}]concat=n=2:v=1:a=0,{RETIME.format(r=r)}[c{i}]")
            if t["t"] == "cut":
                truth.append({"kind": "cut", "start": length, "end": length})
            else:
                a_end = length - t["hold"]
                truth.append({"kind": "fade", "start": a_end - t["out"] + 1, "end": length + t["in"]})
            length += nxt
        cur = f"c{i}"
    args = []
    for p in seg_paths:
        args += ["-i", p]
    ff(*args, "-filter_complex", ";".join(graph), "-map", f"[{cur}]", "-c:v", "ffv1", "-fps_mode", "passthrough", master)
    return truth, length


def measured_boundaries(master, seg_paths, w, h):
    """Boundaries found by hashing: which master frames equal which segment frames."""
    where = {}
    for k, p in enumerate(seg_paths):
        for j, f in enumerate(frames_of(p, w, h)):
            where.setdefault(hashlib.md5(f).digest(), []).append((k, j))
    owner = []  # per master frame: (segment, set of offsets i - j) or None
    for i, f in enumerate(frames_of(master, w, h)):
        hits = where.get(hashlib.md5(f).digest(), [])
        segs = {k for k, _ in hits}
        if len(segs) > 1:
            raise SystemExit(f"{master}: frame {i} equals frames of several segments {sorted(segs)}")
        owner.append((segs.pop(), {i - j for _, j in hits}) if segs else None)
    runs = []  # [segment, first, last, offsets]
    for i, o in enumerate(owner):
        if o is None:
            continue
        k, offs = o
        if runs and runs[-1][0] == k:
            runs[-1][2] = i
            runs[-1][3] &= offs
        else:
            runs.append([k, i, i, set(offs)])
    for k, first, last, offs in runs:
        if not offs:
            raise SystemExit(f"{master}: segment {k}'s frames {first}..{last} are not in its order")
    if [r[0] for r in runs] != list(range(len(seg_paths))):
        raise SystemExit(f"{master}: segments appear in the order {[r[0] for r in runs]}")
    found = []
    for a, b in zip(runs, runs[1:]):
        if b[1] == a[2] + 1:
            found.append({"kind": "cut", "start": b[1], "end": b[1]})
        else:
            found.append({"kind": "gradual", "start": a[2] + 1, "end": b[1]})
    return found, [(first, last) for _, first, last, _ in runs], len(owner)


def check_kinds(truth, luma):
    """A fade reaches near-black; a dissolve's frames stay between its two shots' means."""
    means = luma.mean(axis=(1, 2))
    for b in truth:
        if b["kind"] == "cut":
            continue
        inside = means[b["start"]:b["end"]]
        lo, hi = sorted((means[b["start"] - 1], means[b["end"]]))
        if b["kind"] == "fade" and inside.min() > 24:
            raise SystemExit(f"fade {b} never reaches black (darkest mean luma {inside.min():.1f})")
        if b["kind"] == "dissolve" and (inside.min() < lo - 12 or inside.max() > hi + 12):
            raise SystemExit(f"dissolve {b} leaves the range of its shots ({inside.min():.1f}..{inside.max():.1f} "
                             f"vs {lo:.1f}..{hi:.1f})")


def deliver(master, codec, r, out):
    if codec == "x264":
        ff("-i", master, "-c:v", "libx264", "-preset", "fast", "-crf", "23", "-g", "250", "-bf", "3",
           "-pix_fmt", "yuv420p", "-r", r, "-fps_mode", "passthrough", "-movflags", "+faststart", out)
    else:
        ff("-i", master, "-c:v", "mpeg4", "-q:v", "4", "-g", "250", "-bf", "2", "-pix_fmt", "yuv420p", "-r", r, "-fps_mode", "passthrough", out)


def check_delivery(master_luma, out):
    got = thumbs(out)
    if len(got) != len(master_luma) or count_frames(out) != len(master_luma):
        raise SystemExit(f"{out}: {len(got)} frames, the master has {len(master_luma)}")
    same = np.abs(got - master_luma).mean(axis=(1, 2))
    if same.max() > 6:
        i = int(same.argmax())
        raise SystemExit(f"{out}: frame {i} differs from the master's by {same[i]:.1f} (mean abs luma)")
    for shift in (1, -1):
        other = np.abs(got - np.roll(master_luma, shift, axis=0)).mean(axis=(1, 2))
        apart = np.abs(master_luma - np.roll(master_luma, shift, axis=0)).mean(axis=(1, 2))
        bad = [i for i in range(1, len(got) - 1) if apart[i] > 4 and other[i] <= same[i]]
        if bad:
            raise SystemExit(f"{out}: frames {bad[:5]} look more like their neighbours in the master")
    return float(same.max())


def build_video(name, w, h, r, codec, parts, force):
    ext = "avi" if codec == "mpeg4" else "mp4"
    out, label = OUT / f"{name}.{ext}", OUT / f"{name}.json"
    segs = parts[0::2]
    recipes = [[list(map(str, a)) for a in SOURCES[s["source"]](w, h, r, s["start"], s["frames"])] for s in segs]
    spec = json.dumps([VERSION, w, h, r, codec, parts, recipes], sort_keys=True)
    if not force and out.exists() and label.exists() and json.loads(label.read_text()).get("spec") == spec:
        print(f"  {name}: up to date")
        return label
    tmp = OUT / "tmp" / name
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    seg_paths = [tmp / f"seg{i:02d}.nut" for i in range(len(segs))]
    for s, p in zip(segs, seg_paths):
        render_segment(s, w, h, r, p)
    master = tmp / "master.nut"
    truth, length = compose(parts, r, seg_paths, master)
    found, runs, frames = measured_boundaries(master, seg_paths, w, h)
    if frames != length:
        raise SystemExit(f"{name}: the master has {frames} frames, the model says {length}")
    short = [(s["source"], a, b) for s, (a, b) in zip(segs, runs) if b - a + 1 < MIN_CLEAN]
    if short:
        raise SystemExit(f"{name}: shots with fewer than {MIN_CLEAN} clean frames: {short}")
    model = [{"kind": "gradual" if b["kind"] != "cut" else "cut", "start": b["start"], "end": b["end"]} for b in truth]
    if found != model:
        diff = [(m, f) for m, f in zip(model, found) if m != f]
        raise SystemExit(f"{name}: boundaries in the master differ from the model: {diff}")
    luma = thumbs(master)
    check_kinds(truth, luma)
    deliver(master, codec, r, out)
    worst = check_delivery(luma, out)
    negatives = [{"kind": s["negative"], "start": first + 3, "end": last - 2}
                 for s, (first, last) in zip(segs, runs) if s["negative"]]
    label.write_text(json.dumps({
        "video": out.name, "frames": frames, "fps": r, "width": w, "height": h,
        "codec": "MPEG-4 Part 2 (AVI)" if codec == "mpeg4" else "H.264 (libx264 fast, CRF 23, GOP 250, 3 B-frames)",
        "boundaries": truth, "negatives": negatives,
        "segments": [{"source": s["source"], "from": s["start"], "effect": s["effect"], "first": a, "last": b}
                     for s, (a, b) in zip(segs, runs)],
        "spec": spec}, indent=1) + "\n")
    shutil.rmtree(tmp)
    kinds = {k: sum(b["kind"] == k for b in truth) for k in ("cut", "fade", "dissolve")}
    print(f"  {name}: {frames} frames, {kinds['cut']} cuts, {kinds['fade']} fades, {kinds['dissolve']} dissolves, "
          f"{len(negatives)} hard negatives; verified (delivery within {worst:.1f} luma of the master)", flush=True)
    return label


def available():
    """Whether the real footage the set is made of is there."""
    return all(p.exists() for p in (CHAPLIN, BAG, VTEST))


FIELD = ["real_360p25", "pillarbox_360p25", "letterbox_360p25", "damaged_360p25", "real_dissolves_360p25",
         "pans_flashes_360p25", "edges_ramps_360p25", "slow_start_360p25", "trailer_360p25"]  # the real-footage videos (`--only field`): quick to build


def build(force=False, only=None):
    """Builds (or reuses) every video (or those named in `only`); returns the path of set.json,
    which lists them."""
    if not available():
        raise SystemExit(f"the shot-detection set needs the footage in {SHARED}, which is absent")
    OUT.mkdir(parents=True, exist_ok=True)
    print(f"building the shot-detection set in {OUT} ...", flush=True)
    names = [v[0] for v in VIDEOS]
    unknown = [n for n in only or [] if n not in names]
    if unknown:
        raise SystemExit(f"no video named {unknown} in the set (videos: {', '.join(names)})")
    labels = [build_video(*v, force) for v in VIDEOS if not only or v[0] in only]
    shutil.rmtree(OUT / "tmp", ignore_errors=True)
    index = OUT / "set.json"
    index.write_text(json.dumps([p.name for p in labels], indent=1) + "\n")
    return index


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--force", action="store_true", help="rebuild every video")
    ap.add_argument("--only", help="build only these videos (comma-separated names, or `field`)")
    args = ap.parse_args()
    build(args.force, only_list(args.only))


def only_list(text):
    """`--only` as a list of names (`field`: the real-footage videos), or None."""
    if not text:
        return None
    return [n for part in text.split(",") for n in (FIELD if part == "field" else [part])]


if __name__ == "__main__":
    sys.exit(main())
