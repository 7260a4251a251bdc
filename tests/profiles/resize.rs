//! The profiles' 8-bit resizes against the packages that run them (`docs/profiles.md`):
//!
//! - transformers 5.24's video processors resize uint8 frames with torchvision's v2
//!   `resize`, which on CPU runs torch's uint8 fixed-point bicubic (not the float one
//!   qwen-vl-utils reaches): `vidprep parity` of `llava-onevision` on real footage and of
//!   `qwen3-vl-hf` on the format matrix is bit-exact (0 differing values). Skipped, with a
//!   message, where `VIDPREP_PYTHON` (else `python3`) lacks transformers and torchcodec.
//! - Pillow 13.0 resamples the height first for some sizes (every portrait frame to a
//!   square), 12.x the width first: `internvl` follows the installed Pillow's order
//!   (`--profile-option pillow=12` for 12.x) and is bit-exact on the rotated phone clips and
//!   on sizes on both sides of 13's rule. Skipped without decord, torchvision and Pillow.
//!
//! The sidecar records the order followed (checked without Python).

use crate::common;
use crate::profiles::parity::{frames_json, matrix, parity, python_with};
use crate::support;

use common::synth::SynthVideo;
use serde_json::Value;
use support::vidprep;

fn line(name: &str, rec: &Value) -> String {
    format!(
        "{name}: indices {}, size {}, timestamps {}, bit-exact {}, min PSNR {}",
        rec["indices_equal"],
        rec["sizes_equal"],
        rec["timestamps_equal"],
        rec["bit_exact"],
        rec["min_psnr_db"]
    )
}

/// Runs each check and fails listing those not bit-exact with equal indices.
fn all_bit_exact(checks: Vec<(String, Result<Value, String>)>) {
    let mut wrong = Vec::new();
    for (name, rec) in checks {
        match rec {
            Err(e) => wrong.push(format!("{name}: {e}")),
            Ok(rec) => {
                let l = line(&name, &rec);
                eprintln!("{l}");
                if rec["bit_exact"] != true || rec["indices_equal"] != true {
                    wrong.push(l);
                }
            }
        }
    }
    assert!(wrong.is_empty(), "differences:\n  {}", wrong.join("\n  "));
}

#[test]
fn llava_onevision_is_bit_exact_with_transformers_on_real_footage() {
    let Some(py) = python_with("transformers, torchcodec") else {
        return;
    };
    let mut checks = Vec::new();
    for (rel, extra) in [
        ("host/chaplin.mp4", &["--count", "8"][..]),
        ("host/bag.avi", &["--count", "8"][..]),
        // Width up, height down (the passes' order and their rounding show).
        (
            "host/chaplin.mp4",
            &[
                "--count",
                "2",
                "--profile-option",
                "height=200",
                "--profile-option",
                "width=500",
            ][..],
        ),
    ] {
        let Some(path) = support::shared(rel) else {
            return;
        };
        checks.push((
            rel.to_string(),
            parity(&py, &path, "llava-onevision", extra),
        ));
    }
    all_bit_exact(checks);
}

#[test]
fn qwen3_vl_hf_is_bit_exact_with_transformers_over_the_format_matrix() {
    let Some(py) = python_with("transformers, torchcodec") else {
        return;
    };
    let (dir, _) = matrix();
    let checks = ["h264_mp4.mp4", "odd_size_mkv.mkv", "vp9_webm.webm"]
        .iter()
        .map(|name| {
            let rec = parity(&py, &dir.join(name), "qwen3-vl-hf", &["--count", "4"]);
            (name.to_string(), rec)
        })
        .collect();
    all_bit_exact(checks);
}

/// `--profile-option pillow=12` where the interpreter's Pillow is older than 13.
fn pillow_option(py: &str) -> Vec<&'static str> {
    let o = std::process::Command::new(py)
        .args(["-c", "import PIL; print(PIL.__version__.split('.')[0])"])
        .output()
        .unwrap();
    let major: u32 = String::from_utf8_lossy(&o.stdout)
        .trim()
        .parse()
        .unwrap_or(13);
    eprintln!("Pillow {major}");
    if major < 13 {
        vec!["--profile-option", "pillow=12"]
    } else {
        vec![]
    }
}

#[test]
fn internvl_follows_the_installed_pillows_pass_order() {
    let Some(py) = python_with("decord, torchvision, PIL") else {
        return;
    };
    let order = pillow_option(&py);
    let mut checks = Vec::new();
    // (width, height, input_size): Pillow 13 resamples the height first on the first two (a
    // portrait frame to a square; both shrinking, the height by more than twice as much), the
    // width first on the third (both shrinking, the height by less).
    for (w, h, size) in [(96, 170, 128), (100, 160, 80), (150, 130, 110)] {
        let video = SynthVideo::new(w, h)
            .fps(10, 1)
            .frames(4)
            .code_block(4)
            .cached()
            .path;
        let opt = format!("input_size={size}");
        let mut extra = vec!["--count", "2", "--profile-option", &opt];
        extra.extend(&order);
        checks.push((
            format!("{w}x{h} -> {size}"),
            parity(&py, &video, "internvl", &extra),
        ));
    }
    for rel in ["edge/video_90.mov"] {
        let Some(path) = support::shared(rel) else {
            break;
        };
        let mut extra = vec!["--count", "4"];
        extra.extend(&order);
        checks.push((rel.to_string(), parity(&py, &path, "internvl", &extra)));
    }
    all_bit_exact(checks);
}

#[test]
fn the_sidecar_records_the_pass_order_and_the_resampling() {
    let src = SynthVideo::new(320, 568)
        .fps(10, 1)
        .frames(4)
        .code_block(4)
        .cached()
        .path;
    let out = tempfile::tempdir().unwrap();
    let export = |profile: &str, opts: &[&str], name: &str| -> Value {
        let dir = out.path().join(name);
        vidprep()
            .args(["export", "frames"])
            .arg(&src)
            .arg("--out-dir")
            .arg(&dir)
            .args(["--profile", profile, "--count", "2"])
            .args(opts)
            .assert()
            .success();
        frames_json(&dir)["profile"].clone()
    };
    let rule = |p: &Value, name: &str| -> Value {
        p["rules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["rule"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no {name} rule in {p}"))
    };
    let p13 = export("internvl", &[], "13");
    assert_eq!(p13["resample"], "pil-bicubic");
    let r = rule(&p13, "pass_order");
    assert_eq!(r["value"], "height first", "{r}");
    assert!(
        r["formula"].as_str().unwrap().contains("Pillow 13.0"),
        "{r}"
    );
    let p12 = export("internvl", &["--profile-option", "pillow=12"], "12");
    assert_eq!(p12["resample"], "pil-bicubic-12");
    assert_eq!(rule(&p12, "pass_order")["value"], "width first");
    let l = export("llava-onevision", &[], "l");
    assert_eq!(l["resample"], "torch-bicubic-antialias-uint8");
    let q = export("qwen3-vl-hf", &[], "q");
    assert_eq!(q["resample"], "torch-bicubic-antialias-uint8");
    // qwen-vl-utils' v1 resize goes through float.
    let q = export("qwen3-vl", &[], "qu");
    assert_eq!(q["resample"], "torch-bicubic-antialias");
}
