//! The `internvl` profile (`docs/profiles.md`): InternVL's model-card `load_video`, checked
//! against oracles that are not vidprep:
//!
//! - the indices, grids and prompt the model card's own Python (`get_index`,
//!   `dynamic_preprocess`, run by Python 3.11 / numpy 2.4, values pasted below) gives;
//! - `vidprep parity --profile internvl` against the model card's functions themselves
//!   (copied into `scripts/parity_runner.py`; InternVL is no pip package) over decord 0.6 and
//!   Pillow, in the interpreter of `VIDPREP_PYTHON` (else `python3`), over the format matrix
//!   and the real footage in `../shared/data`: indices and sizes equal, pixels bit-exact on
//!   the variants decord reads as vidprep does. Skipped, with a message, when that
//!   interpreter lacks decord, torchvision or Pillow (CI: `pip install decord torchvision
//!   pillow`; decord has wheels for x86-64 Linux only);
//! - the `vlmevalkit` sampler against VLMEvalKit's own `save_video_frames` index rules.

use crate::common;
use crate::profiles::parity::{frames_json, matrix, parity, python_with};
use crate::support;

use std::path::{Path, PathBuf};

use common::synth::SynthVideo;
use serde_json::Value;
use support::vidprep;

/// 320x240, 30 fps, 120 frames (4 s).
fn source() -> PathBuf {
    SynthVideo::new(320, 240)
        .fps(30, 1)
        .frames(120)
        .gop(30)
        .cached()
        .path
}

fn indices(j: &Value) -> Vec<u64> {
    j["sampled"]["indices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect()
}

fn export(src: &Path, dir: &Path, args: &[&str]) -> Value {
    vidprep()
        .args(["export", "frames"])
        .arg(src)
        .arg("--out-dir")
        .arg(dir)
        .args(["--profile", "internvl", "--format", "png"])
        .args(args)
        .assert()
        .success();
    frames_json(dir)
}

fn sizes(j: &Value) -> Vec<(u64, u64)> {
    j["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["width"].as_u64().unwrap(), r["height"].as_u64().unwrap()))
        .collect()
}

#[test]
fn internvl_profile_gives_the_model_cards_indices_size_and_prompt() {
    let src = source();
    let out = tempfile::tempdir().unwrap();
    let j = export(&src, &out.path().join("a"), &["--count", "8"]);
    // The model card's get_index(None, 30.0, 119, num_segments=8).tolist()
    assert_eq!(indices(&j), [7, 22, 37, 52, 67, 81, 96, 111]);
    let prof = &j["profile"];
    assert_eq!(prof["profile"], "internvl");
    assert!(prof["mirrors"]["version"]
        .as_str()
        .unwrap()
        .contains("2410d1dbf208f0e799459aff9376e5747dbf41a2"));
    assert_eq!(prof["resample"], "pil-bicubic");
    assert_eq!(sizes(&j), vec![(448, 448); 8]);
    let prompt: Vec<String> = (1..=8).map(|i| format!("Frame{i}: <image>\n")).collect();
    assert_eq!(prof["timestamps"], serde_json::json!(prompt));
    // 8 frames of one 448 tile, 256 tokens each.
    assert_eq!(prof["tokens"], 8 * 256);
    let rules: Vec<&str> = prof["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rule"].as_str().unwrap())
        .collect();
    for r in [
        "get_index",
        "find_closest_aspect_ratio",
        "resize",
        "thumbnail",
        "video_prefix",
    ] {
        assert!(rules.contains(&r), "{rules:?}");
    }
    // A bound: get_index((1.0, 3.0), 30.0, 119, num_segments=4).tolist()
    let j = export(
        &src,
        &out.path().join("b"),
        &[
            "--count",
            "4",
            "--profile-option",
            "bound_start=1",
            "--profile-option",
            "bound_end=3",
        ],
    );
    assert_eq!(indices(&j), [37, 52, 67, 82]);
    // The default: 32 segments.
    let j = export(&src, &out.path().join("c"), &[]);
    assert_eq!(indices(&j).len(), 32);
}

#[test]
fn internvl_profile_tiles_as_dynamic_preprocess_does() {
    let src = SynthVideo::new(640, 360)
        .fps(25, 1)
        .frames(30)
        .cached()
        .path;
    let out = tempfile::tempdir().unwrap();
    let j = export(
        &src,
        &out.path().join("t"),
        &["--count", "3", "--profile-option", "max_num=6"],
    );
    // dynamic_preprocess's find_closest_aspect_ratio for 640x360 with max_num=6: (2, 1).
    assert_eq!(sizes(&j), vec![(896, 448); 3]);
    let prof = &j["profile"];
    let rule = |name: &str| -> Value {
        prof["rules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["rule"] == name)
            .unwrap()["value"]
            .clone()
    };
    assert_eq!(rule("find_closest_aspect_ratio"), serde_json::json!([2, 1]));
    assert_eq!(
        rule("tiles"),
        serde_json::json!([[0, 0, 448, 448], [448, 0, 896, 448]])
    );
    assert_eq!(rule("thumbnail"), true);
    // 3 frames of 2 tiles and the thumbnail.
    assert_eq!(prof["tokens"], 3 * 3 * 256);
    // Refusals, all known from the request (exit 2): fps (load_video has none), a half
    // bound, a bad max_num or input_size.
    for (args, says, code) in [
        (&["--fps", "1"][..], "no fps rule", 2),
        (&["--profile-option", "bound_start=1"][..], "bound_end", 2),
        (&["--profile-option", "max_num=0.5"][..], "max_num", 2),
        (
            &["--profile-option", "input_size=1e30"][..],
            "input_size",
            2,
        ),
    ] {
        let o = vidprep()
            .args(["export", "frames"])
            .arg(&src)
            .arg("--out-dir")
            .arg(out.path().join("x"))
            .args(["--profile", "internvl"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(code), "{args:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(says),
            "{args:?}"
        );
        assert!(!out.path().join("x").exists());
    }
}

/// Variants decord 0.6 reads as vidprep does (it seeks by packet index; on AVI, MPEG-PS/TS,
/// raw MPEG and the last frames of HEVC in MP4 it returns other frames than the indices it
/// names: measured, `docs/profiles.md`): these must be bit-exact.
const MUST_AGREE: &[&str] = &[
    "h264_mp4.mp4",
    "h264_aac_mp4.mp4",
    "h264_mkv.mkv",
    "h264_mov.mov",
    "vp9_webm.webm",
    "mpeg4_mp4_bf.mp4",
    "ffv1_mkv.mkv",
    "y4m.y4m",
    "vfr_mkv.mkv",
    "start_10s_mp4.mp4",
    "rot90_mp4.mp4",
    "odd_size_mkv.mkv",
    "h263_3gp.3gp",
];

fn line(name: &str, rec: &Value) -> String {
    format!(
        "{name}: indices {}, size {}, prompt {}, bit-exact {}, min PSNR {}",
        rec["indices_equal"],
        rec["sizes_equal"],
        rec["timestamps_equal"],
        rec["bit_exact"],
        rec["min_psnr_db"]
    )
}

#[test]
fn internvl_parity_with_the_model_card_loader_over_the_format_matrix() {
    let Some(py) = python_with("decord, torchvision, PIL") else {
        return;
    };
    let (dir, names) = matrix();
    let (mut lines, mut wrong) = (Vec::new(), Vec::new());
    for name in names {
        let must = MUST_AGREE.contains(&name.as_str());
        match parity(&py, &dir.join(name), "internvl", &["--count", "8"]) {
            Err(e) if must => wrong.push(format!("{name}: {e}")),
            Err(e) => lines.push(format!(
                "{name}: refused: {}",
                common::cmd::tail_lines(&e, 1)
            )),
            Ok(rec) => {
                let l = line(name, &rec);
                let exact = rec["bit_exact"] == true && rec["indices_equal"] == true;
                if must && !exact {
                    wrong.push(l.clone());
                }
                lines.push(l);
            }
        }
    }
    eprintln!("internvl:\n  {}", lines.join("\n  "));
    assert!(wrong.is_empty(), "differences:\n  {}", wrong.join("\n  "));
}

#[test]
fn internvl_parity_on_real_footage() {
    let Some(py) = python_with("decord, torchvision, PIL") else {
        return;
    };
    let mut wrong = Vec::new();
    for (rel, extra) in [
        ("host/bag.avi", &["--count", "16"][..]),
        ("host/chaplin.mp4", &["--count", "16"][..]),
        ("pets09/vtest.avi", &["--count", "16"][..]),
        ("edge/video_0.mov", &["--count", "16"][..]),
        (
            "host/chaplin.mp4",
            &["--count", "8", "--profile-option", "max_num=6"][..],
        ),
    ] {
        let Some(path) = support::shared(rel) else {
            return;
        };
        match parity(&py, &path, "internvl", extra) {
            Err(e) => wrong.push(format!("{rel}: {e}")),
            Ok(rec) => {
                let l = line(rel, &rec);
                eprintln!("{l}");
                if rec["bit_exact"] != true || rec["indices_equal"] != true {
                    wrong.push(l);
                }
            }
        }
    }
    assert!(wrong.is_empty(), "differences:\n  {}", wrong.join("\n  "));
}

/// VLMEvalKit's own index rules (`vlmeval/dataset/video_base.py` at commit `e8e78f05`:
/// `save_video_frames` over decord, copied into a Python snippet since VLMEvalKit is not
/// installed here) against the `vlmevalkit` sampler, over the format matrix, in count
/// (`nframe=8`) and fps (`fps=1`) mode. Skipped, with a message, without decord.
#[test]
fn vlmevalkit_sampler_picks_save_video_frames_indices() {
    let Some(py) = python_with("decord") else {
        return;
    };
    const RULES: &str = r#"
import sys, json, decord
p, mode, val = sys.argv[1], sys.argv[2], float(sys.argv[3])
vid = decord.VideoReader(p)
if mode == "count":
    nframe = int(val)
    step_size = len(vid) / (nframe + 1)
    indices = [int(i * step_size) for i in range(1, nframe + 1)]
else:
    fps = val
    total_frames = len(vid)
    video_fps = vid.get_avg_fps()
    total_duration = total_frames / video_fps
    required_frames = int(total_duration * fps)
    step_size = video_fps / fps
    indices = [int(i * step_size) for i in range(required_frames)]
print(json.dumps(indices))
"#;
    let (dir, names) = matrix();
    let out = tempfile::tempdir().unwrap();
    let (mut equal, mut wrong) = (0, Vec::new());
    for name in names {
        for (mode, flag, val) in [("count", "--count", "8"), ("fps", "--fps", "1")] {
            let theirs = std::process::Command::new(&py)
                .args(["-c", RULES])
                .arg(dir.join(name))
                .args([mode, val])
                .output()
                .unwrap();
            if !theirs.status.success() {
                continue; // decord cannot open it
            }
            let theirs: Vec<u64> = serde_json::from_slice(&theirs.stdout).unwrap();
            let d = out.path().join(format!("{name}-{mode}"));
            let o = vidprep()
                .args(["export", "frames"])
                .arg(dir.join(name))
                .arg("--out-dir")
                .arg(&d)
                .args(["--sampler", "vlmevalkit", flag, val])
                .output()
                .unwrap();
            if !o.status.success() {
                // vidprep refuses repeats (one frame) and fps rules that pick nothing.
                let all_same = theirs.windows(2).all(|w| w[0] == w[1]);
                if !(theirs.is_empty() || all_same) {
                    wrong.push(format!(
                        "{name} {mode}: vidprep refused, VLMEvalKit {theirs:?}"
                    ));
                }
                continue;
            }
            let ours = indices(&frames_json(&d));
            if ours == theirs {
                equal += 1;
            } else {
                wrong.push(format!(
                    "{name} {mode}: vidprep {ours:?}, VLMEvalKit {theirs:?}"
                ));
            }
        }
    }
    eprintln!("vlmevalkit: {equal} equal");
    assert!(wrong.is_empty(), "differences:\n  {}", wrong.join("\n  "));
    assert!(equal >= 40, "{equal}");
}
