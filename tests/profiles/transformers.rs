//! The transformers-processor profiles of the benchmarks' open models (`docs/profiles.md`):
//! `glm-4.6v` (transformers' `Glm46VVideoProcessor`, its hardcoded rate table) and `qwen3.5`
//! (the `Qwen3VLVideoProcessor` transformers maps Qwen3.5 to), checked against oracles that
//! are not vidprep:
//!
//! - without Python: the frames `glm-4.6v` picks from a 20 s clip carry the frame codes of
//!   the indices transformers 5.25's `sample_frames` printed (pasted below: its float walk
//!   takes frame 56, not 55), with its `T seconds` strings and tokens; the requests the
//!   package ignores (`--count`, `--fps`) and releases the profiles do not know are refused;
//! - `vidprep parity` against the real transformers (the interpreter in `VIDPREP_PYTHON`,
//!   else `python3`; torchcodec decoding) on synthetic clips of several lengths and rates
//!   (either side of GLM's 30 s and 300 s steps, past its 2400 s / 640-frame cap, a clip too
//!   short to sample, odd sizes, 23.976 fps) and on the real footage: indices, sizes, time
//!   strings and tokens equal, pixels bit-exact. Skipped, with a message, without
//!   transformers and torchcodec (a failure under `VIDPREP_REQUIRE_PARITY`);
//! - the `transformers` option against both releases: the newest (the venv's 5.25) and
//!   5.21.1 (`VIDPREP_TRANSFORMERS_OLD`, the folder `scripts/transformers-release.sh 5.21.1`
//!   installs, put first on `PYTHONPATH`; `scripts/test.sh` makes it).

use crate::profiles::parity::{code_of, frames_json, parity, python_with};
use crate::support;

use std::path::{Path, PathBuf};

use common::synth::SynthVideo;
use serde_json::Value;
use support::vidprep;

use crate::common;

/// transformers 5.25: `Glm46VVideoProcessor().sample_frames(VideoMetadata(total_num_frames=600,
/// fps=30.0, duration=20.0)).tolist()`.
const GLM_20S_30FPS: &[u64] = &[
    0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 56, 60, 65, 70, 75, 80, 85, 90, 95, 100, 105, 110,
    115, 120, 125, 130, 135, 140, 145, 150, 155, 161, 166, 171, 176, 181, 186, 191, 196, 201, 206,
    211, 216, 221, 226, 231, 236, 241, 246, 251, 256, 261, 266, 271, 276, 280, 285, 290, 295, 300,
    305, 310, 315, 320, 325, 330, 335, 340, 345, 350, 355, 360, 365, 370, 375, 380, 385, 390, 395,
    400, 405, 410, 415, 420, 425, 430, 435, 440, 445, 450, 455, 460, 465, 470, 475, 480, 485, 490,
    495, 500, 505, 510, 515, 520, 525, 530, 535, 540, 545, 550, 555, 560, 565, 570, 575, 580, 585,
    590, 596,
];

fn indices(j: &Value) -> Vec<u64> {
    j["sampled"]["indices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect()
}

#[test]
fn glm_46v_picks_the_rate_tables_frames_with_its_time_strings() {
    // 20 s at 30 fps: 3 fps (up to 30 s), 120 frames, painted with their index.
    let src = SynthVideo::new(160, 120)
        .fps(30, 1)
        .frames(600)
        .gop(60)
        .cached()
        .path;
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("g");
    vidprep()
        .args(["export", "frames"])
        .arg(&src)
        .arg("--out-dir")
        .arg(&dir)
        .args(["--profile", "glm-4.6v", "--format", "png"])
        .assert()
        .success();
    let j = frames_json(&dir);
    assert_eq!(indices(&j), GLM_20S_30FPS);
    for (rec, idx) in j["frames"].as_array().unwrap().iter().zip(GLM_20S_30FPS) {
        let png = dir.join(rec["file"].as_str().unwrap());
        assert_eq!(code_of(&png), Some(*idx as u32), "{}", png.display());
    }
    let p = &j["profile"];
    assert_eq!(p["mirrors"]["package"], "transformers");
    assert_eq!(p["mirrors"]["version"], "5.25");
    assert_eq!(p["resample"], "torch-bicubic-antialias-uint8");
    // smart_resize(120, 120, 160, factor=28, min 112*112, max 28*28*2*30000): 112 x 168.
    assert_eq!(
        (p["width"].as_u64(), p["height"].as_u64()),
        (Some(168), Some(112))
    );
    // 60 temporal patches of (112/28) * (168/28) tokens.
    assert_eq!(p["tokens"], 60 * 4 * 6);
    let stamps: Vec<&str> = p["timestamps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(stamps.len(), 60);
    assert_eq!(&stamps[..3], ["0.0 seconds", "0.3 seconds", "0.7 seconds"]);
    assert_eq!(
        &stamps[57..],
        ["19.0 seconds", "19.3 seconds", "19.7 seconds"]
    );
    let rules: Vec<&str> = p["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rule"].as_str().unwrap())
        .collect();
    assert_eq!(
        rules,
        [
            "extract_t",
            "sample_frames",
            "smart_resize",
            "resize",
            "tokens"
        ]
    );
}

#[test]
fn requests_the_packages_ignore_or_releases_not_followed_are_refused() {
    let src = SynthVideo::new(160, 120)
        .fps(30, 1)
        .frames(60)
        .cached()
        .path;
    let run = |args: &[&str]| {
        let out = tempfile::tempdir().unwrap();
        let o = vidprep()
            .args(["export", "frames"])
            .arg(&src)
            .arg("--out-dir")
            .arg(out.path().join("x"))
            .args(args)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).to_string(),
        )
    };
    for extra in [&["--count", "8"][..], &["--fps", "1"][..]] {
        let (code, err) = run(&[&["--profile", "glm-4.6v"][..], extra].concat());
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains("ignores num_frames and fps"), "{err}");
    }
    let (code, err) = run(&[
        "--profile",
        "qwen3.5",
        "--profile-option",
        "transformers=5.19",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("from 5.21 to 5.25"), "{err}");
    let (code, err) = run(&["--profile", "glm-4.6v", "--profile-option", "min_pixels=3"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("shortest_edge"), "{err}");
}

/// The clips of the rate checks, made once per test run: `(file, size, rate, seconds)`.
/// GLM's table: 3 fps up to 30 s, 1 fps up to 300 s, 0.5 fps up to 2400 s, at most 640
/// frames; the long ones are tiny and slow so they cost little.
const CLIPS: &[(&str, &str, &str, &str)] = &[
    ("a20.mp4", "320x240", "30", "20"),
    ("c29.mp4", "176x144", "24000/1001", "29.9"),
    ("d31.mp4", "96x64", "5", "31"),
    ("b45.mp4", "161x97", "10", "45"),
    ("e400.mp4", "64x48", "1", "400"),
    ("f2600.mp4", "32x32", "1/2", "2600"),
    ("g1.mp4", "1280x720", "30", "1"),
    ("h03.mp4", "64x64", "30", "0.3"),
];

fn clips() -> &'static PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("transformers-clips");
        std::fs::create_dir_all(&dir).unwrap();
        for (name, size, rate, secs) in CLIPS {
            let path = dir.join(name);
            if path.exists() {
                continue;
            }
            let tmp = dir.join(format!("tmp-{name}"));
            let st = std::process::Command::new("ffmpeg")
                .args(["-v", "error", "-y", "-f", "lavfi", "-i"])
                .arg(format!("testsrc2=size={size}:rate={rate}:duration={secs}"))
                .args(["-pix_fmt", "yuv420p", "-c:v", "libx264", "-g", "30"])
                .arg(&tmp)
                .status()
                .unwrap();
            assert!(st.success(), "ffmpeg could not make {name}");
            std::fs::rename(&tmp, &path).unwrap();
        }
        dir
    })
}

fn line(name: &str, rec: &Value) -> String {
    format!(
        "{name}: {} {}: indices {}, size {}, time strings {}, tokens {}, bit-exact {}, min PSNR {} ({} frames)",
        rec["package"]["package"],
        rec["package"]["version"],
        rec["indices_equal"],
        rec["sizes_equal"],
        rec["timestamps_equal"],
        rec["tokens_equal"],
        rec["bit_exact"],
        rec["min_psnr_db"],
        rec["frames"].as_array().map_or(0, Vec::len),
    )
}

/// Fails listing every check not equal in all of indices, sizes, time strings, tokens and
/// pixels.
fn all_equal(checks: Vec<(String, Result<Value, String>)>) {
    let mut wrong = Vec::new();
    for (name, rec) in checks {
        match rec {
            Err(e) => wrong.push(format!("{name}: {e}")),
            Ok(rec) => {
                let l = line(&name, &rec);
                eprintln!("{l}");
                let equal = [
                    "indices_equal",
                    "sizes_equal",
                    "timestamps_equal",
                    "tokens_equal",
                ]
                .iter()
                .all(|k| rec[k] == true);
                if !(equal && rec["bit_exact"] == true && rec["pass"] == true) {
                    wrong.push(l);
                }
            }
        }
    }
    assert!(wrong.is_empty(), "differences:\n  {}", wrong.join("\n  "));
}

fn check_clips(py: &str, profile: &str, skip: &[&str]) -> Vec<(String, Result<Value, String>)> {
    let dir = clips();
    CLIPS
        .iter()
        .filter(|(name, ..)| !skip.contains(name))
        .map(|(name, ..)| {
            (
                format!("{profile} {name}"),
                parity(py, &dir.join(name), profile, &[]),
            )
        })
        .collect()
}

#[test]
fn glm_46v_equals_transformers_across_its_rate_table() {
    let Some(py) = python_with("transformers, torchcodec") else {
        return;
    };
    all_equal(check_clips(&py, "glm-4.6v", &[]));
}

#[test]
fn qwen35_equals_transformers_on_clips_of_several_lengths() {
    let Some(py) = python_with("transformers, torchcodec") else {
        return;
    };
    let mut checks = check_clips(&py, "qwen3.5", &["f2600.mp4"]);
    let dir = clips();
    // A frame count, an fps, and the per-frame cap.
    checks.push((
        "qwen3.5 a20 --count 9".into(),
        parity(&py, &dir.join("a20.mp4"), "qwen3.5", &["--count", "9"]),
    ));
    checks.push((
        "qwen3.5 b45 --fps 0.5".into(),
        parity(&py, &dir.join("b45.mp4"), "qwen3.5", &["--fps", "0.5"]),
    ));
    checks.push((
        "qwen3.5 g1 capped".into(),
        parity(
            &py,
            &dir.join("g1.mp4"),
            "qwen3.5",
            &[
                "--profile-option",
                "cap_pixels_per_frame=1",
                "--profile-option",
                "longest_edge=16777216",
            ],
        ),
    ));
    all_equal(checks);
}

#[test]
fn both_profiles_equal_transformers_on_real_footage() {
    let Some(py) = python_with("transformers, torchcodec") else {
        return;
    };
    let mut checks = Vec::new();
    // chaplin 9.64 s (3 fps), bag 7.84 s (an AVI torchcodec reads right), vtest 79.5 s (1 fps:
    // the walk gives 158 frames, linspace 159, the pad 160), the rotated phone clip.
    for rel in [
        "host/chaplin.mp4",
        "host/bag.avi",
        "pets09/vtest.avi",
        "edge/video_90.mov",
    ] {
        let Some(path) = support::shared(rel) else {
            return;
        };
        for profile in ["glm-4.6v", "qwen3.5"] {
            if profile == "glm-4.6v" && rel.starts_with("edge/") {
                continue;
            }
            checks.push((format!("{profile} {rel}"), parity(&py, &path, profile, &[])));
        }
    }
    all_equal(checks);
    // A 0.1-s clip: GLM's extract_t is int(0.1 * 3 * 2) = 0 and its processor fails
    // ("t:0 must be larger than temporal_factor:2"); vidprep refuses, saying so.
    let Some(path) = support::shared("edge/video_0.mov") else {
        return;
    };
    let err = parity(&py, &path, "glm-4.6v", &[]).unwrap_err();
    assert!(
        err.contains("extract_t") && err.contains("temporal_factor:2"),
        "{err}"
    );
}

/// `vidprep parity` with `--python py` and `PYTHONPATH=site` first.
fn parity_with_path(site: &Path, py: &str, video: &Path, profile: &str, extra: &[&str]) -> Value {
    let out = tempfile::tempdir().unwrap();
    let rec = out.path().join("parity.json");
    let path = std::env::var("PYTHONPATH").unwrap_or_default();
    let o = vidprep()
        .env("PYTHONPATH", format!("{}:{path}", site.display()))
        .arg("parity")
        .arg(video)
        .args(["--profile", profile, "--python", py])
        .args(extra)
        .arg("--out")
        .arg(&rec)
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&rec)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&o.stderr)));
    serde_json::from_str(&text).unwrap()
}

/// The one switch between the releases the profiles take (`transformers` option): a
/// `max_video_tokens` given with the call caps the frames from 5.25 and is ignored by 5.21-5.24,
/// which use the class's 768. And what did not change: `cap_pixels_per_frame` unset is uncapped
/// in 5.21.1 and 5.25 alike (its warning's announced 5.22 default was not released).
#[test]
fn the_transformers_option_follows_both_releases() {
    let Some(py) = python_with("transformers, torchcodec") else {
        return;
    };
    let Some(old) = std::env::var_os("VIDPREP_TRANSFORMERS_OLD").map(PathBuf::from) else {
        common::skip::skip(
            common::skip::Needs::Parity,
            "VIDPREP_TRANSFORMERS_OLD is unset (export \
             VIDPREP_TRANSFORMERS_OLD=$(bash scripts/transformers-release.sh 5.21.1))",
        );
        return;
    };
    let src = clips().join("g1.mp4");
    let cap = [
        "--profile-option",
        "cap_pixels_per_frame=1",
        "--profile-option",
        "max_video_tokens=200",
        "--profile-option",
        "longest_edge=16777216",
    ];
    let mut sizes = Vec::new();
    for (release, site) in [("5.25", None), ("5.21", Some(old.as_path()))] {
        let option = format!("transformers={release}");
        let uncapped: Vec<&str> = vec!["--profile-option", &option];
        let capped: Vec<&str> = [&uncapped[..], &cap[..]].concat();
        // glm-4.6v's video path is the same in both releases (no option to follow).
        for (profile, extra, is_capped) in [
            ("qwen3.5", &uncapped, false),
            ("qwen3.5", &capped, true),
            ("glm-4.6v", &vec![], false),
        ] {
            let rec = match site {
                Some(site) => parity_with_path(site, &py, &src, profile, extra),
                None => parity(&py, &src, profile, extra).unwrap(),
            };
            let l = line(&format!("{profile} {extra:?} on {release}"), &rec);
            eprintln!("{l}");
            let version = rec["package"]["version"].as_str().unwrap();
            assert!(version.starts_with(&format!("{release}.")), "{l}");
            assert_eq!(rec["pass"], true, "{l}");
            assert_eq!(rec["bit_exact"], true, "{l}");
            assert_eq!(rec["tokens_equal"], true, "{l}");
            if profile == "qwen3.5" {
                let p = &rec["profile"];
                sizes.push((
                    release,
                    is_capped,
                    (p["width"].as_u64().unwrap(), p["height"].as_u64().unwrap()),
                ));
            }
        }
    }
    // Uncapped: the same size from both releases. Capped at 200 tokens a frame: 5.25 follows
    // the call's max_video_tokens, 5.21 its class's 768 (a larger frame).
    let of = |r: &str, c: bool| sizes.iter().find(|s| s.0 == r && s.1 == c).unwrap().2;
    assert_eq!(of("5.25", false), of("5.21", false), "{sizes:?}");
    assert!(of("5.25", true).0 < of("5.21", true).0, "{sizes:?}");
    // Following the other release's rule is caught: 5.21's package against the 5.25 rule.
    let rec = parity_with_path(&old, &py, &src, "qwen3.5", &cap);
    assert_eq!(rec["pass"], false, "{}", line("5.25 rule on 5.21", &rec));
    assert_eq!(rec["tokens_equal"], false);
}
