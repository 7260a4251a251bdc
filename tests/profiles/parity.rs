//! Model profiles (`--profile`, `docs/profiles.md`) and `vidprep parity`, checked against
//! oracles that are not vidprep:
//!
//! - the frames a profile picks carry the frame code of the source frame its formula names,
//!   with the indices, size and `<t seconds>` strings qwen-vl-utils 0.0.14 gave for the same
//!   video (golden values from the package, pasted below);
//! - `vidprep parity` against the real qwen-vl-utils (run by the Python interpreter in
//!   `VIDPREP_PYTHON`, else `python3`) over the videos of the format matrix: indices, sizes
//!   and timestamps equal, pixels bit-exact or >= 45 dB. Skipped, with a message, when that
//!   interpreter lacks the package (CI: `pip install --no-deps qwen-vl-utils==0.0.14` over a
//!   torch and torchvision).

use crate::common;
use crate::support;

use std::path::{Path, PathBuf};

use common::code::read_code;
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

pub(crate) fn frames_json(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("frames.json")).unwrap()).unwrap()
}

/// The frame code painted into an RGB image (read from its green channel).
pub(crate) fn code_of(png: &Path) -> Option<u32> {
    let img = image::open(png).unwrap().to_rgb8();
    let (w, h) = img.dimensions();
    let g: Vec<u8> = img.pixels().map(|p| p.0[1]).collect();
    read_code(&g, w as usize, h as usize, w as usize)
}

#[test]
fn qwen3_vl_profile_gives_the_package_frames_size_and_timestamps() {
    let src = source();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("q");
    vidprep()
        .args(["export", "frames"])
        .arg(&src)
        .arg("--out-dir")
        .arg(&dir)
        .args(["--profile", "qwen3-vl", "--format", "png"])
        .assert()
        .success();
    let j = frames_json(&dir);
    // qwen-vl-utils 0.0.14 fetch_video({"video": ...}, image_patch_size=16) on this video:
    // torchcodec reader, 120 frames at 30 fps.
    let want: Vec<u64> = vec![0, 17, 34, 51, 68, 85, 102, 119];
    let got: Vec<u64> = j["sampled"]["indices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(got, want);
    let prof = &j["profile"];
    assert_eq!(prof["profile"], "qwen3-vl");
    assert_eq!(prof["mirrors"]["package"], "qwen-vl-utils");
    assert_eq!(prof["mirrors"]["version"], "0.0.14");
    assert_eq!(
        (prof["width"].as_u64(), prof["height"].as_u64()),
        (Some(448), Some(320))
    );
    assert_eq!(
        prof["timestamps"],
        serde_json::json!([
            "<0.3 seconds>",
            "<1.4 seconds>",
            "<2.5 seconds>",
            "<3.7 seconds>"
        ])
    );
    // 4 pairs of 14 x 10 merged patches.
    assert_eq!(prof["tokens"], 560);
    let rules: Vec<&str> = prof["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rule"].as_str().unwrap())
        .collect();
    for r in [
        "smart_nframes",
        "max_pixels",
        "smart_resize",
        "resize",
        "tokens",
    ] {
        assert!(rules.contains(&r), "rule {r} missing from {rules:?}");
    }
    let records = j["frames"].as_array().unwrap();
    assert_eq!(records.len(), 8);
    for (rec, idx) in records.iter().zip(&want) {
        assert_eq!(
            (rec["width"].as_u64(), rec["height"].as_u64()),
            (Some(448), Some(320))
        );
        let png = dir.join(rec["file"].as_str().unwrap());
        assert_eq!(code_of(&png), Some(*idx as u32), "{}", png.display());
    }
}

#[test]
fn profile_refusals_name_what_to_do() {
    let src = source();
    let out = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
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
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, err) = run(&["--profile", "qwen9"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("qwen3-vl") && err.contains("qwen2.5-vl"),
        "{err}"
    );
    let (code, err) = run(&["--profile", "qwen3-vl", "--sampler", "lmms-eval"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("sampler"), "{err}");
    let (code, err) = run(&["--profile", "qwen3-vl", "--profile-option", "min_pixel=3"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("min_pixels"), "{err}");
    // The package's own refusal: a 4-s video has no 300 frames.
    let (code, err) = run(&["--profile", "qwen3-vl", "--count", "300"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("nframes should in interval [2, 120]"), "{err}");
    assert!(!out.path().join("x").exists());
}

/// The interpreter with `module`, or `None` (with a message).
pub(crate) fn python_with(module: &str) -> Option<String> {
    let py = std::env::var("VIDPREP_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = std::process::Command::new(&py)
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        // CI sets VIDPREP_REQUIRE_PARITY with VIDPREP_PYTHON from scripts/parity-venv.sh: a
        // parity test that cannot run there is a failure, not a skip.
        common::skip::skip(
            common::skip::Needs::Parity,
            format!(
                "{py} cannot import {module} (set VIDPREP_PYTHON to an interpreter with it: \
                 bash scripts/parity-venv.sh makes one)"
            ),
        );
    }
    ok.then_some(py)
}

/// The format matrix (`scripts/format-matrix.sh`, as `decode/format_matrix.rs` makes it), made once
/// per test run (the tests here run in parallel; the script keeps what it already made).
pub(crate) fn matrix() -> &'static (PathBuf, Vec<String>) {
    static MATRIX: std::sync::OnceLock<(PathBuf, Vec<String>)> = std::sync::OnceLock::new();
    MATRIX.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("format-matrix");
        let script = crate::repo_root().join("scripts/format-matrix.sh");
        let out = std::process::Command::new("bash")
            .arg(&script)
            .arg(&dir)
            .output()
            .expect("run scripts/format-matrix.sh");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let list = std::fs::read_to_string(dir.join("list.txt")).unwrap();
        (dir, list.split_whitespace().map(str::to_string).collect())
    })
}

/// Runs `vidprep parity` and returns its record.
pub(crate) fn parity(
    py: &str,
    video: &Path,
    profile: &str,
    extra: &[&str],
) -> Result<Value, String> {
    let out = tempfile::tempdir().unwrap();
    let rec = out.path().join("parity.json");
    let o = vidprep()
        .arg("parity")
        .arg(video)
        .args(["--profile", profile, "--python", py])
        .args(extra)
        .arg("--out")
        .arg(&rec)
        .output()
        .unwrap();
    match std::fs::read_to_string(&rec) {
        Ok(text) => {
            // Every record a check writes is what `vidprep schema parity` describes.
            let record: Value = serde_json::from_str(&text).unwrap();
            let schema = crate::schema::validator(vidprep::records::SchemaKind::Parity);
            crate::schema::assert_valid(&schema, &record, "a parity record");
            Ok(record)
        }
        Err(_) => Err(String::from_utf8_lossy(&o.stderr).trim().to_string()),
    }
}

/// Variants of the format matrix on which qwen-vl-utils 0.0.14 and vidprep knowingly give
/// different frames, by the package's reader, and why (measured; `docs/profiles.md`).
const KNOWN: &[(&str, &str, &str)] = &[
    // torchcodec 0.17's frame index on containers without reliable timestamps: it returns
    // other frames than the indices it names (vidprep's are the frames named: decode/format_matrix.rs).
    (
        "torchcodec",
        "h264_avi.avi",
        "torchcodec returns other frames than the indices it names",
    ),
    (
        "torchcodec",
        "mpeg4_avi_bf.avi",
        "torchcodec returns other frames than the indices it names",
    ),
    (
        "torchcodec",
        "mpeg2_m2v.m2v",
        "torchcodec returns other frames than the indices it names",
    ),
    (
        "torchcodec",
        "mpeg1_m1v.m1v",
        "torchcodec returns other frames than the indices it names",
    ),
    (
        "torchcodec",
        "mpeg2_ps.mpg",
        "torchcodec returns other frames than the indices it names",
    ),
    (
        "torchcodec",
        "mpeg2_ts.ts",
        "torchcodec returns other frames than the indices it names",
    ),
    (
        "torchcodec",
        "mpeg2_vob.vob",
        "torchcodec returns other frames than the indices it names",
    ),
    (
        "torchcodec",
        "late_avi.avi",
        "torchcodec returns other frames than the indices it names",
    ),
    // Its float frame rate: average_fps from content 25.000000000000004, so smart_nframes
    // floors 100 / fps * 2 = 7.99999 to 6 where the container's 25 gives 8.
    (
        "torchcodec",
        "vp9_webm.webm",
        "torchcodec's average_fps is 25.000000000000004",
    ),
    // Packed B-frames: torchcodec counts the packets (100 + the packed ones).
    (
        "torchcodec",
        "xvid_avi_packed.avi",
        "torchcodec counts the packed B-frame packets",
    ),
    // Its timestamps divide by its average fps, which a variable-rate video does not have.
    (
        "torchcodec",
        "vfr_mkv.mkv",
        "timestamps from torchcodec's average fps of a variable-rate video",
    ),
    // Any reader: vidprep's frames pass through 8-bit 4:2:0 (its pipeline format), the
    // package converts 10-bit 4:2:2 straight to RGB: 36 dB.
    ("*", "prores_mov.mov", "vidprep's pipeline is 8-bit 4:2:0"),
];

/// Variants both readers of the package (torchcodec; torchvision's PyAV on Debian's torch)
/// read as vidprep does (reliable timestamps, 8-bit 4:2:0, no rotation): these must agree. The others are compared and printed with the
/// reason of any difference ([`KNOWN`]), since they depend on the package's reader.
const MUST_AGREE: &[&str] = &[
    "h264_mp4.mp4",
    "h264_aac_mp4.mp4",
    "h264_mkv.mkv",
    "h264_mov.mov",
    "hevc_mp4.mp4",
    "av1_mkv.mkv",
    "mpeg4_mp4_bf.mp4",
    "ffv1_mkv.mkv",
    "odd_size_mkv.mkv",
    "h263_3gp.3gp",
];

/// Variants not compared (damage, one frame: the package needs 2).
const NOT_COMPARED: &[&str] = &[
    "one_frame_mp4.mp4",
    "damaged_ogv.ogv",
    "damaged_h264_ts.ts",
    "unreadable_ogv.ogv",
];

fn parity_over_the_matrix(profile: &str) {
    let Some(py) = python_with("qwen_vl_utils") else {
        return;
    };
    let (dir, names) = matrix();
    let dir: &Path = dir;
    let mut agreed = Vec::new();
    let mut known = Vec::new();
    let mut refused = Vec::new();
    let mut wrong = Vec::new();
    // The variants that must agree, and those whose differences are known (to see that they
    // still are what docs/profiles.md says); `vidprep parity` on each of the others is in
    // docs/profiles.md.
    let chosen = |n: &&String| {
        !NOT_COMPARED.contains(&n.as_str())
            && (MUST_AGREE.contains(&n.as_str()) || KNOWN.iter().any(|k| k.1 == n.as_str()))
    };
    for name in names.iter().filter(chosen) {
        let must = MUST_AGREE.contains(&name.as_str());
        match parity(&py, &dir.join(name), profile, &[]) {
            Err(e) if must => wrong.push(format!("{name}: the package failed: {e}")),
            Err(e) => refused.push(format!("{name}: {}", common::cmd::tail_lines(&e, 1))),
            Ok(rec) => {
                let backend = rec["package"]["backend"].as_str().unwrap_or("").to_string();
                let why = KNOWN
                    .iter()
                    .find(|(b, v, _)| (*b == backend || *b == "*") && v == name)
                    .map(|k| k.2);
                let line = format!(
                    "{name} ({backend}): indices {}, size {}, bit-exact {}, min PSNR {}",
                    rec["indices_equal"], rec["sizes_equal"], rec["bit_exact"], rec["min_psnr_db"]
                );
                // On torch's AVX2/AVX-512 kernels (PyPI's x86-64 wheels on any recent CPU) the
                // resize is bit-exact (src/profiles/resample.rs), and torchcodec decodes what
                // vidprep decodes.
                let capability = rec["package"]["torch"]["cpu_capability"]
                    .as_str()
                    .unwrap_or("");
                let exact_expected =
                    backend == "torchcodec" && matches!(capability, "AVX2" | "AVX512");
                if must && exact_expected && rec["bit_exact"] != true {
                    wrong.push(format!(
                        "{line}: not bit-exact on torch's {capability} kernels"
                    ));
                    continue;
                }
                // Where the package shows other frames than it names, `vidprep parity` must
                // say so, checked against the plain sequential decode.
                if why.is_some_and(|w| w.contains("other frames"))
                    && rec["bit_exact"] != true
                    && (rec["reference"]["package"] != "wrong"
                        || rec["reference"]["vidprep"] != "right")
                {
                    wrong.push(format!(
                        "{line}: the record does not blame the package: {}",
                        rec["reference"]
                    ));
                    continue;
                }
                match (rec["pass"].as_bool() == Some(true), why) {
                    (true, _) => agreed.push(line),
                    (false, _) if must => wrong.push(line),
                    (false, Some(why)) => known.push(format!("{line}: {why}")),
                    (false, None) => known.push(format!("{line}: (this reader)")),
                }
            }
        }
    }
    eprintln!(
        "{profile}: {} agree, {} known differences, {} refused by the package\nagree:\n  {}\nknown:\n  {}\nrefused:\n  {}",
        agreed.len(),
        known.len(),
        refused.len(),
        agreed.join("\n  "),
        known.join("\n  "),
        refused.join("\n  ")
    );
    assert!(
        wrong.is_empty(),
        "unexpected differences:\n  {}",
        wrong.join("\n  ")
    );
    assert!(
        agreed.len() >= 10,
        "only {} variants compared and agreed",
        agreed.len()
    );
}

#[test]
fn qwen3_vl_parity_with_qwen_vl_utils_over_the_format_matrix() {
    parity_over_the_matrix("qwen3-vl");
}

#[test]
fn qwen2_5_vl_parity_with_qwen_vl_utils_over_the_format_matrix() {
    parity_over_the_matrix("qwen2.5-vl");
}
