//! The `vlmevalkit` profile (`docs/profiles.md`): an export that VLMEvalKit takes for its own
//! frame cache. Checked against oracles that are not vidprep:
//!
//! - every frame decoded by the ffmpeg CLI to rgb24 (`-fps_mode passthrough`) with
//!   swscale's bilinear flags (`-vf scale=flags=bilinear`: decord's conversion, libavfilter's
//!   default flags; on even sizes the same bytes as the CLI's default bicubic), the frames
//!   picked and named by VLMEvalKit's own lines (`vlmeval/dataset/video_base.py` at commit
//!   `e8e78f05f3080fe28154f2130321f17951c3be94`, copied into [`VLMEVALKIT`] with `len(vid)`
//!   and `vid.get_avg_fps()` read from ffmpeg and ffprobe), and saved by the Pillow in
//!   `VIDPREP_PYTHON` (else `python3`) with `Image.fromarray(frame).save(path)`: the export's
//!   folder holds exactly those file names with exactly those bytes, in count and fps mode,
//!   on an H.264 clip and an odd-sized MPEG-4 one (edge blocks, padding). Skipped, with a
//!   message, without Pillow and numpy (CI: Debian's python3-pil and python3-numpy);
//! - where decord is installed there too, decord's `len`, `get_avg_fps()` and frames at
//!   those indices equal ffmpeg's (the pixels VLMEvalKit would have saved);
//! - a manifest line gives the same files as the command;
//! - the requests the cache cannot honour are refused before any decoding.

use crate::common;
use crate::profiles::parity::{frames_json, python_with};
use crate::support;

use std::path::{Path, PathBuf};

use common::synth::{Codec, SynthVideo};
use serde_json::Value;
use support::vidprep;

/// VLMEvalKit's lines (`VideoBaseDataset.__init__`'s templates, `frame_paths`,
/// `frame_paths_fps`, `save_video_frames`), verbatim but for the reader: `vid` is every frame
/// ffmpeg decoded, `video_fps` ffprobe's `avg_frame_rate` (decord's `get_avg_fps()`).
/// Prints what it compared as JSON.
const VLMEVALKIT: &str = r#"
import ast, json, os, sys, tempfile
import numpy as np
from PIL import Image
raw, w, h, num, den, mode, literal, ours, video = sys.argv[1:10]
w, h, num, den = int(w), int(h), int(num), int(den)
vid = np.fromfile(raw, np.uint8).reshape(-1, h, w, 3)

# vlmeval/dataset/video_base.py @ e8e78f05
frame_tmpl = 'frame-{}-of-{}.jpg'
frame_tmpl_fps = 'frame-{}-of-{}-{}fps.jpg'
if mode == 'fps':
    fps = ast.literal_eval(literal)  # the dataset's fps, int or float as configured
    total_frames = len(vid)
    video_fps = num / den
    total_duration = total_frames / video_fps
    required_frames = int(total_duration * fps)
    step_size = video_fps / fps
    indices = [int(i * step_size) for i in range(required_frames)]
    frame_paths = [frame_tmpl_fps.format(i, len(indices), fps) for i in range(1, len(indices) + 1)]
else:
    nframe = ast.literal_eval(literal)
    frame_paths = [frame_tmpl.format(i, nframe) for i in range(1, nframe + 1)]
    step_size = len(vid) / (nframe + 1)
    indices = [int(i * step_size) for i in range(1, nframe + 1)]
images = [vid[i] for i in indices]
images = [Image.fromarray(arr) for arr in images]

tmp = tempfile.mkdtemp()
differ = []
for im, pth in zip(images, frame_paths):
    p = os.path.join(tmp, pth)
    im.save(p)
    q = os.path.join(ours, pth)
    if not os.path.exists(q) or open(q, 'rb').read() != open(p, 'rb').read():
        differ.append(pth)
    os.remove(p)
os.rmdir(tmp)
out = {"indices": indices, "names": frame_paths, "differ": differ,
       "present": sorted(f for f in os.listdir(ours) if f.endswith('.jpg')),
       "pillow": Image.__version__}
try:
    import decord
except ImportError:
    decord = None
if decord is not None:
    vr = decord.VideoReader(video)
    out["decord"] = {
        "len": len(vr), "fps": vr.get_avg_fps(),
        "frames_equal": all(np.array_equal(vr[i].asnumpy(), vid[i]) for i in indices),
    }
print(json.dumps(out))
"#;

/// 176x144 H.264 at 30 fps, 75 frames (2.5 s).
fn h264() -> PathBuf {
    SynthVideo::new(176, 144)
        .fps(30, 1)
        .frames(75)
        .gop(25)
        .cached()
        .path
}

/// 161x97 MPEG-4 Part 2 (odd sides: 4:2:0 edge columns and rows, dummy blocks on both edges)
/// at 30000/1001 fps, 64 frames.
fn odd_mpeg4() -> PathBuf {
    SynthVideo::new(161, 97)
        .fps(30000, 1001)
        .frames(64)
        .codec(Codec::Mpeg4)
        .container("avi")
        .cached()
        .path
}

/// Every frame of `video` as ffmpeg decodes it to rgb24 with bilinear swscale flags (as
/// decord does), into `raw`; its size.
fn decode_rgb(video: &Path, raw: &Path) -> (u32, u32) {
    let (w, h) = common::oracle::dimensions(video);
    let pass = common::cmd::passthrough();
    let args = [
        "-v",
        "error",
        "-i",
        &video.display().to_string(),
        "-map",
        "0:v:0",
        "-vf",
        "scale=flags=bilinear",
        pass[0],
        pass[1],
        "-pix_fmt",
        "rgb24",
        "-f",
        "rawvideo",
        &raw.display().to_string(),
    ];
    common::cmd::run_ok("ffmpeg", &args);
    (w, h)
}

/// `vidprep export frames VIDEO --profile vlmevalkit ARGS` into `dir`.
fn export(video: &Path, dir: &Path, args: &[&str]) -> Value {
    vidprep()
        .args(["export", "frames"])
        .arg(video)
        .arg("--out-dir")
        .arg(dir)
        .args(["--profile", "vlmevalkit"])
        .args(args)
        .assert()
        .success();
    frames_json(dir)
}

#[test]
fn vlmevalkit_export_is_the_cache_vlmevalkit_writes() {
    let Some(py) = python_with("PIL, numpy") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    // (video, mode, the dataset's value as its config writes it, vidprep's flags)
    let cases: [(PathBuf, &str, &str, &[&str]); 6] = [
        (h264(), "count", "8", &["--count", "8"]),
        (h264(), "fps", "1.0", &["--fps", "1"]),
        (
            h264(),
            "fps",
            "2",
            &["--fps", "2", "--profile-option", "int_fps=1"],
        ),
        (odd_mpeg4(), "count", "5", &["--count", "5"]),
        (odd_mpeg4(), "fps", "0.5", &["--fps", "0.5"]),
        (odd_mpeg4(), "fps", "2.0", &["--fps", "2"]),
    ];
    let mut decord_seen = false;
    // Each video decoded once (a case reuses the decode of the case before on its video).
    let mut decoded: Option<(PathBuf, PathBuf, (u32, u32))> = None;
    for (k, (video, mode, literal, flags)) in cases.iter().enumerate() {
        if decoded.as_ref().is_none_or(|d| &d.0 != video) {
            if let Some((_, old, _)) = decoded.take() {
                std::fs::remove_file(old).unwrap();
            }
            let raw = work.path().join(format!("{k}.rgb"));
            let size = decode_rgb(video, &raw);
            decoded = Some((video.clone(), raw, size));
        }
        let (_, raw, (w, h)) = decoded.clone().unwrap();
        let (num, den) =
            common::oracle::ratio(&common::oracle::video_stream(video)["avg_frame_rate"]).unwrap();
        let dir = work.path().join(format!("out{k}"));
        let j = export(video, &dir, flags);
        let o = std::process::Command::new(&py)
            .args(["-c", VLMEVALKIT])
            .arg(&raw)
            .args([
                w.to_string(),
                h.to_string(),
                num.to_string(),
                den.to_string(),
            ])
            .args([mode, literal])
            .arg(&dir)
            .arg(video)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let theirs: Value = serde_json::from_slice(&o.stdout).unwrap();
        let what = format!("{video:?} {mode} {literal}");
        let names: Vec<&str> = theirs["names"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert!(!names.is_empty(), "{what}");
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(
            theirs["present"],
            serde_json::json!(sorted),
            "{what}: file names"
        );
        assert_eq!(
            theirs["differ"],
            serde_json::json!([]),
            "{what}: bytes differ from Pillow {}",
            theirs["pillow"]
        );
        // The sidecar says where each file came from.
        let frames = j["frames"].as_array().unwrap();
        let files: Vec<&str> = frames.iter().map(|f| f["file"].as_str().unwrap()).collect();
        assert_eq!(files, names, "{what}");
        let ours: Vec<u64> = frames
            .iter()
            .map(|f| f["source_frame"].as_u64().unwrap())
            .collect();
        assert_eq!(serde_json::json!(ours), theirs["indices"], "{what}");
        assert_eq!(j["profile"]["profile"], "vlmevalkit");
        assert_eq!(j["profile"]["encoding"], "pillow-jpeg");
        assert!(j["profile"]["mirrors"]["version"]
            .as_str()
            .unwrap()
            .contains("e8e78f05f3080fe28154f2130321f17951c3be94"));
        if let Some(d) = theirs.get("decord") {
            decord_seen = true;
            assert_eq!(d["len"], frames_len(video), "{what}: decord's len");
            assert_eq!(
                d["fps"].as_f64().unwrap(),
                num as f64 / den as f64,
                "{what}: decord's get_avg_fps"
            );
            assert_eq!(
                d["frames_equal"], true,
                "{what}: decord's pixels differ from ffmpeg's"
            );
        }
    }
    if !decord_seen {
        crate::common::skip::skip(
            crate::common::skip::Needs::Parity,
            format!("{py} has no decord; decord's frames were not compared with ffmpeg's"),
        );
    }
}

fn frames_len(video: &Path) -> u64 {
    common::oracle::count_frames(video)
}

#[test]
fn vlmevalkit_manifest_line_writes_the_same_files() {
    let work = tempfile::tempdir().unwrap();
    let video = h264();
    let cli = work.path().join("cli");
    export(&video, &cli, &["--fps", "1"]);
    let line = serde_json::json!({
        "id": "a",
        "source": video,
        "exports": [{"kind": "frames", "profile": "vlmevalkit", "fps": 1.0}],
    });
    std::fs::write(work.path().join("m.jsonl"), format!("{line}\n")).unwrap();
    vidprep()
        .current_dir(work.path())
        .args(["run", "m.jsonl", "--out-dir", "run"])
        .assert()
        .success();
    let run = work.path().join("run/a/frames");
    let jpgs = |d: &Path| {
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "jpg"))
            .map(|p| {
                (
                    p.file_name().unwrap().to_string_lossy().into_owned(),
                    std::fs::read(&p).unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let (a, b) = (jpgs(&cli), jpgs(&run));
    let names: Vec<&str> = a.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["frame-1-of-2-1.0fps.jpg", "frame-2-of-2-1.0fps.jpg"]
    );
    assert!(a == b, "the manifest's files differ from the command's");
}

#[test]
fn vlmevalkit_refuses_what_its_cache_cannot_be() {
    let work = tempfile::tempdir().unwrap();
    let video = h264();
    let run = |args: &[&str]| {
        let o = vidprep()
            .args(["export", "frames"])
            .arg(&video)
            .arg("--out-dir")
            .arg(work.path().join("x"))
            .args(["--profile", "vlmevalkit"])
            .args(args)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    for args in [
        &["--count", "4", "--format", "png"][..],
        &["--count", "4", "--quality", "75"],
        &["--count", "4", "--order", "reversed"],
    ] {
        let (code, err) = run(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains("Pillow saves it"), "{args:?}: {err}");
    }
    let (code, err) = run(&[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("nframe or fps"), "{err}");
    let (code, err) = run(&["--fps", "0.5", "--profile-option", "int_fps=1"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("not a whole number"), "{err}");
    let (code, err) = run(&["--count", "4", "--profile-option", "int_fps=2"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("0 or 1"), "{err}");
    assert!(!work.path().join("x").exists());
}

/// Writes, for each size, a folder of two PNGs of random RGB noise (noise is the hardest
/// input for the quantizer and the Huffman coder) and the JPEG Pillow saves of the second.
const NOISE: &str = r#"
import os, sys
import numpy as np
from PIL import Image
root = sys.argv[1]
rng = np.random.default_rng(27)
for w, h in [(1, 1), (7, 5), (8, 8), (17, 9), (16, 33), (61, 47), (200, 3)]:
    d = os.path.join(root, f"{w}x{h}")
    os.makedirs(d)
    for k in range(2):
        a = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        if k == 1 and w > 8:
            a[:, : w // 2] = a[:, : w // 2] // 8 * 8  # a smoother half: long zero runs
        Image.fromarray(a).save(os.path.join(d, f"{k:03}.png"))
    Image.fromarray(a).save(os.path.join(root, f"{w}x{h}.jpg"))
print(Image.__version__)
"#;

/// The encoder alone, on noise of awkward sizes (one pixel, odd sides, partial MCUs, a
/// single MCU row): an RGB folder source is exported as is (`--count 1` picks image 1), and
/// each file equals Pillow's `Image.fromarray(a).save(path)` of the same pixels.
#[test]
fn vlmevalkit_jpeg_equals_pillow_on_noise() {
    let Some(py) = python_with("PIL, numpy") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let o = std::process::Command::new(&py)
        .args(["-c", NOISE])
        .arg(work.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let pillow = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let mut checked = 0;
    for e in std::fs::read_dir(work.path()).unwrap() {
        let p = e.unwrap().path();
        if !p.is_dir() {
            continue;
        }
        let size = p.file_name().unwrap().to_string_lossy().into_owned();
        let out = work.path().join(format!("out-{size}"));
        export(&p, &out, &["--count", "1", "--source-fps", "1"]);
        let ours = std::fs::read(out.join("frame-1-of-1.jpg")).unwrap();
        let theirs = std::fs::read(work.path().join(format!("{size}.jpg"))).unwrap();
        assert!(
            ours == theirs,
            "{size}: {} bytes, Pillow {pillow} {} bytes",
            ours.len(),
            theirs.len()
        );
        checked += 1;
    }
    assert_eq!(checked, 7);
}
