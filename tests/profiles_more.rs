//! More model profiles (`docs/profiles.md`): lmms-eval's `read_video`, checked against
//! oracles that are not vidprep:
//!
//! - the frames the `lmms-eval` profile picks carry the frame code of the source frame
//!   numpy's `np.linspace(0, total - 1, n, dtype=int)` names (values printed by numpy,
//!   pasted below), at the decoded size, and a path with `mkv` in it gives every frame, as
//!   `read_video` does;
//! - `vidprep parity --profile lmms-eval` against the real lmms-eval 0.7.3 loader (its
//!   installed `load_video.py`, run by the interpreter in `VIDPREP_PYTHON`, else `python3`)
//!   over the videos of the format matrix: indices, sizes equal and pixels bit-exact on
//!   the variants PyAV reads as vidprep does. Skipped, with a message, when that
//!   interpreter lacks lmms-eval (CI: `pip install --no-deps lmms-eval==0.7.3` over
//!   Debian's python3-av and python3-numpy).

use crate::common;
use crate::profiles::{code_of, frames_json, matrix, parity, python_with};
use crate::support;

use std::path::{Path, PathBuf};

use common::synth::SynthVideo;
use serde_json::Value;
use support::vidprep;

/// 320x240, 30 fps, 120 frames (4 s), the frame index painted in.
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

fn export(src: &Path, dir: &Path, args: &[&str]) {
    vidprep()
        .args(["export", "frames"])
        .arg(src)
        .arg("--out-dir")
        .arg(dir)
        .args(["--profile", "lmms-eval", "--format", "png"])
        .args(args)
        .assert()
        .success();
}

#[test]
fn lmms_eval_profile_gives_read_video_frames_at_the_decoded_size() {
    let src = source();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("l");
    export(&src, &dir, &["--count", "8"]);
    let j = frames_json(&dir);
    // numpy: np.linspace(0, 119, 8, dtype=int).tolist()
    let want: Vec<u64> = vec![0, 17, 34, 51, 68, 85, 102, 119];
    assert_eq!(indices(&j), want);
    let prof = &j["profile"];
    assert_eq!(prof["profile"], "lmms-eval");
    assert_eq!(prof["mirrors"]["package"], "lmms-eval");
    assert_eq!(prof["mirrors"]["version"], "0.7.3");
    assert_eq!(prof["resample"], "none");
    let rules: Vec<&str> = prof["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rule"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["indices", "to_ndarray"]);
    for (rec, idx) in j["frames"].as_array().unwrap().iter().zip(&want) {
        assert_eq!(
            (rec["width"].as_u64(), rec["height"].as_u64()),
            (Some(320), Some(240))
        );
        let png = dir.join(rec["file"].as_str().unwrap());
        assert_eq!(code_of(&png), Some(*idx as u32), "{}", png.display());
    }
    // fps 2 over 4 s: num_frm = min(32, int(120 / 30 * 2)) = 8, the same frames.
    let dir2 = out.path().join("f");
    export(
        &src,
        &dir2,
        &["--fps", "2", "--profile-option", "num_frm=32"],
    );
    assert_eq!(indices(&frames_json(&dir2)), want);
}

#[test]
fn lmms_eval_profile_reads_every_frame_of_an_mkv_as_read_video_does() {
    let out = tempfile::tempdir().unwrap();
    let mkv = out.path().join("clip.mkv");
    let st = std::process::Command::new("ffmpeg")
        .args(["-v", "error", "-i"])
        .arg(source())
        .args(["-c", "copy"])
        .arg(&mkv)
        .status()
        .unwrap();
    assert!(st.success());
    let dir = out.path().join("m");
    export(&mkv, &dir, &["--count", "8"]);
    let j = frames_json(&dir);
    assert_eq!(indices(&j), (0..120).collect::<Vec<u64>>());
    assert!(j["profile"]["rules"][0]["formula"]
        .as_str()
        .unwrap()
        .contains("record_video_length_packet"));
}

/// Variants PyAV reads as vidprep does (header frame count right, 8-bit 4:2:0, no
/// rotation): these must agree with lmms-eval's loader.
const MUST_AGREE: &[&str] = &[
    "h264_mp4.mp4",
    "h264_aac_mp4.mp4",
    "h264_mkv.mkv",
    "h264_mov.mov",
    "hevc_mp4.mp4",
    "mpeg4_mp4_bf.mp4",
    "odd_size_mkv.mkv",
];

#[test]
fn lmms_eval_parity_with_read_video_over_the_format_matrix() {
    let Some(py) = python_with("lmms_eval, av, numpy") else {
        return;
    };
    let (dir, names) = matrix();
    let mut agreed = Vec::new();
    let mut differ = Vec::new();
    let mut refused = Vec::new();
    let mut wrong = Vec::new();
    for name in names {
        let must = MUST_AGREE.contains(&name.as_str());
        match parity(&py, &dir.join(name), "lmms-eval", &["--count", "8"]) {
            Err(e) if must => wrong.push(format!("{name}: {e}")),
            Err(e) => refused.push(format!("{name}: {}", common::cmd::tail_lines(&e, 1))),
            Ok(rec) => {
                let line = format!(
                    "{name}: indices {}, size {}, bit-exact {}, min PSNR {}",
                    rec["indices_equal"], rec["sizes_equal"], rec["bit_exact"], rec["min_psnr_db"]
                );
                match rec["pass"].as_bool() == Some(true) {
                    true => agreed.push(line),
                    false if must => wrong.push(line),
                    false => differ.push(line),
                }
            }
        }
    }
    eprintln!(
        "lmms-eval: {} agree, {} differ, {} refused\nagree:\n  {}\ndiffer:\n  {}\nrefused:\n  {}",
        agreed.len(),
        differ.len(),
        refused.len(),
        agreed.join("\n  "),
        differ.join("\n  "),
        refused.join("\n  ")
    );
    assert!(
        wrong.is_empty(),
        "unexpected differences:\n  {}",
        wrong.join("\n  ")
    );
    assert!(agreed.len() >= MUST_AGREE.len());
}
