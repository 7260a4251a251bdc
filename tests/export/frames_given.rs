//! Frames chosen by the user or by a package, checked against oracles that are not vidprep:
//!
//! - `export frames --frames 17,0,5`: the images are the ffmpeg CLI's decode of those source
//!   frames (byte-equal to `select=eq(n,i)` in vidprep's pipeline layout, then RGB; the frame
//!   code painted into each frame says its index), in the order given, with the times ffprobe
//!   gives; the refusals (past the end, outside the span, repeats, conflicting options) name
//!   what is wrong; a manifest line asks the same as the command;
//! - with `--profile`: the profile's size rules for that many frames, the given frames' codes,
//!   and Qwen3-VL's timestamps of the given indices;
//! - `--follow-package RECORD`: the frames a parity record says the package showed (a record
//!   written here, by hand), refused for another source, profile or request; and against the
//!   real qwen-vl-utils 0.0.14 + torchcodec (`VIDPREP_PYTHON`, skipped without it unless
//!   `VIDPREP_REQUIRE_PARITY`): on the DivX AVI with packed B-frames the followed frames are
//!   bit-equal to what the package fed (its own `fetch_video` output, run beside).

use crate::common;
use crate::profiles::parity::{code_of, frames_json, matrix, parity, python_with};
use crate::support;

use std::path::{Path, PathBuf};

use common::oracle::{self, PixFmt};
use common::synth::SynthVideo;
use serde_json::{json, Value};
use support::vidprep;

/// 160x120, 30 fps, 60 frames, B-frames, the frame index painted in.
fn source() -> PathBuf {
    SynthVideo::new(160, 120)
        .fps(30, 1)
        .frames(60)
        .gop(12)
        .bframes(2)
        .cached()
        .path
}

fn source_frames(j: &Value) -> Vec<u64> {
    j["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["source_frame"].as_u64().unwrap())
        .collect()
}

/// `vidprep export frames SRC --out-dir DIR ARGS`: its exit code and stderr.
fn export(src: &Path, dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let o = vidprep()
        .args(["export", "frames"])
        .arg(src)
        .arg("--out-dir")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn explicit_frames_are_ffmpegs_frames_in_the_order_given() {
    let src = source();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("f");
    let (code, err) = export(&src, &dir, &["--frames", "17,0,5,59", "--format", "png"]);
    assert_eq!(code, Some(0), "{err}");
    let j = frames_json(&dir);
    assert_eq!(j["sampled"]["sampler"], "explicit");
    assert_eq!(j["sampled"]["indices"], json!([17, 0, 5, 59]));
    assert_eq!(j["sampled"]["requested"], json!({"frames": [17, 0, 5, 59]}));
    assert_eq!(j["export"]["frames"], json!([17, 0, 5, 59]));
    assert_eq!(j["export"]["sampler"], "explicit", "normalised");
    assert_eq!(source_frames(&j), [17, 0, 5, 59]);
    let pts = oracle::frame_pts(&src);
    for (position, f) in j["frames"].as_array().unwrap().iter().enumerate() {
        let i = f["source_frame"].as_u64().unwrap() as usize;
        assert_eq!(f["position"], position);
        let png = dir.join(f["file"].as_str().unwrap());
        assert_eq!(code_of(&png), Some(i as u32), "{}", f["file"]);
        let got = oracle::decode_image(&png, PixFmt::Rgb24);
        let want = oracle::pipeline_rgb_at(&src, i);
        assert!(
            got.data == want.data,
            "frame {i}: the PNG differs from ffmpeg's decode ({:.2} dB)",
            oracle::psnr(&got, &want)
        );
        let t = f["time_s"].as_f64().unwrap();
        assert!(
            (t - pts[i]).abs() < 1e-6,
            "frame {i}: {t} s, ffprobe {}",
            pts[i]
        );
    }
}

#[test]
fn explicit_frames_are_the_sources_within_a_span() {
    let src = source();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("f");
    let (code, err) = export(&src, &dir, &["--start", "10", "--frames", "12,40"]);
    assert_eq!(code, Some(0), "{err}");
    let j = frames_json(&dir);
    assert_eq!(source_frames(&j), [12, 40]);
    let stream: Vec<u64> = j["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["stream_frame"].as_u64().unwrap())
        .collect();
    assert_eq!(stream, [2, 30]);
    // Before the span: refused, naming the span's frames.
    let (code, err) = export(
        &src,
        &out.path().join("g"),
        &["--start", "10", "--frames", "5"],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("source frame 5")
            && err.contains("outside the span")
            && err.contains("10 to 59"),
        "{err}"
    );
    assert!(!out.path().join("g").exists());
}

#[test]
fn explicit_frames_refusals_say_what_is_wrong() {
    let src = source();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("x");
    let name = src.file_name().unwrap().to_string_lossy().into_owned();
    // Past the end: the index, the file and the count.
    let (code, err) = export(&src, &dir, &["--frames", "3,60"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("source frame 60")
            && err.contains(&name)
            && err.contains("60 frames (0 to 59)"),
        "{err}"
    );
    // A repeat needs --allow-repeats.
    let (code, err) = export(&src, &dir, &["--frames", "3,4,3"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("frame 3 is given twice") && err.contains("allow-repeats"),
        "{err}"
    );
    assert!(!dir.exists());
    let (code, err) = export(&src, &dir, &["--frames", "3,4,3", "--allow-repeats"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(source_frames(&frames_json(&dir)), [3, 4, 3]);
    // Usage: one way to choose the frames, numbers, the explicit sampler only.
    for args in [
        &["--frames", "1", "--count", "3"][..],
        &["--frames", "1", "--fps", "2"],
        &["--frames", "1,x"],
        &["--frames", "-1"],
        &["--frames", "1", "--sampler", "qwen"],
        &["--sampler", "explicit"],
        &["--follow-package", "p.json"],
    ] {
        let there = out.path().join("u");
        let (code, err) = export(&src, &there, args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(!there.exists(), "{args:?}");
    }
    let (_, err) = export(
        &src,
        &out.path().join("u"),
        &["--frames", "1", "--sampler", "qwen"],
    );
    assert!(err.contains("explicit sampler"), "{err}");
    let (_, err) = export(&src, &out.path().join("u"), &["--sampler", "explicit"]);
    assert!(err.contains("add \"frames\""), "{err}");
}

#[test]
fn a_manifest_line_asks_what_the_command_asks() {
    let src = source();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("cli");
    let (code, err) = export(&src, &dir, &["--frames", "9,2", "--format", "png"]);
    assert_eq!(code, Some(0), "{err}");
    let manifest = out.path().join("m.jsonl");
    let line = json!({"id": "a", "source": src, "exports": [{"kind": "frames", "frames": [9, 2], "format": "png"}]});
    std::fs::write(&manifest, format!("{line}\n")).unwrap();
    vidprep()
        .arg("run")
        .arg(&manifest)
        .arg("--out-dir")
        .arg(out.path().join("run"))
        .assert()
        .success();
    let there = out.path().join("run/a/frames");
    let (a, b) = (frames_json(&dir), frames_json(&there));
    assert_eq!(a["sampled"], b["sampled"]);
    assert_eq!(a["export"], b["export"]);
    for f in a["frames"].as_array().unwrap() {
        let file = f["file"].as_str().unwrap();
        assert_eq!(
            std::fs::read(dir.join(file)).unwrap(),
            std::fs::read(there.join(file)).unwrap(),
            "{file}"
        );
    }
}

/// 320x240, 30 fps, 120 frames (as `profiles/parity.rs`'s source).
fn profile_source() -> PathBuf {
    SynthVideo::new(320, 240)
        .fps(30, 1)
        .frames(120)
        .gop(30)
        .cached()
        .path
}

#[test]
fn a_profile_sizes_the_frames_given() {
    let src = profile_source();
    let out = tempfile::tempdir().unwrap();
    let own = out.path().join("own");
    let (code, err) = export(&src, &own, &["--profile", "qwen3-vl", "--count", "4"]);
    assert_eq!(code, Some(0), "{err}");
    let given = out.path().join("given");
    let (code, err) = export(
        &src,
        &given,
        &[
            "--profile",
            "qwen3-vl",
            "--frames",
            "90,0,31,60",
            "--format",
            "png",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let (a, b) = (frames_json(&own), frames_json(&given));
    for k in ["width", "height", "tokens", "resample"] {
        assert_eq!(a["profile"][k], b["profile"][k], "{k}");
    }
    assert_eq!(source_frames(&b), [90, 0, 31, 60]);
    // Qwen3VLProcessor's <t seconds> of the frames given (pairs' mean times at 30 fps).
    assert_eq!(
        b["profile"]["timestamps"],
        json!(["<1.5 seconds>", "<1.5 seconds>"])
    );
    let rule = b["profile"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["rule"] == "frames")
        .expect("the frames rule");
    assert_eq!(rule["value"]["indices"], json!([90, 0, 31, 60]));
    for f in b["frames"].as_array().unwrap() {
        let png = given.join(f["file"].as_str().unwrap());
        assert_eq!(
            code_of(&png),
            Some(f["source_frame"].as_u64().unwrap() as u32)
        );
        let (w, h) = image::image_dimensions(&png).unwrap();
        assert_eq!(
            (w as u64, h as u64),
            (
                a["profile"]["width"].as_u64().unwrap(),
                a["profile"]["height"].as_u64().unwrap()
            )
        );
    }
    // qwen-vl-utils rounds nframes to a multiple of 2: 3 frames are not what it feeds.
    let (code, err) = export(
        &src,
        &out.path().join("odd"),
        &["--profile", "qwen2.5-vl", "--frames", "1,2,3"],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("takes 4 frames when asked for 3"), "{err}");
}

/// A parity record of `src` as `vidprep parity` writes it, with `shows` as what the package
/// showed at each position and `named` what both sides named.
fn handmade_record(
    src: &Path,
    sources0: &Value,
    profile: &str,
    request: Value,
    named: &[u64],
    shows: &[Option<u64>],
) -> Value {
    let positions: Vec<Value> = named
        .iter()
        .zip(shows)
        .enumerate()
        .map(|(p, (n, s))| {
            json!({"position": p, "vidprep_names": n, "vidprep_shows": n, "package_names": n, "package_shows": s})
        })
        .collect();
    json!({
        "source": src,
        "vidprep_source": sources0,
        "request": request,
        "profile": {"profile": profile},
        "package": {"package": "qwen-vl-utils", "version": "0.0.14", "backend": "torchcodec", "indices": named},
        "sizes_equal": true,
        "bit_exact": false,
        "reference": {"package": "wrong", "vidprep": "right", "positions": positions},
    })
}

#[test]
fn following_a_record_shows_what_the_package_showed() {
    let src = profile_source();
    let out = tempfile::tempdir().unwrap();
    let own = out.path().join("own");
    let (code, err) = export(
        &src,
        &own,
        &["--profile", "qwen2.5-vl", "--count", "4", "--format", "png"],
    );
    assert_eq!(code, Some(0), "{err}");
    let a = frames_json(&own);
    let named: Vec<u64> = source_frames(&a);
    assert_eq!(named, [0, 40, 79, 119]);
    // The package showed frame i-1 for i (but 0).
    let shows: Vec<Option<u64>> = named.iter().map(|&i| Some(i.saturating_sub(1))).collect();
    let request = json!({"count": 4, "fps": null, "profile_options": {}});
    let rec = out.path().join("parity.json");
    let write = |v: &Value| std::fs::write(&rec, serde_json::to_vec(v).unwrap()).unwrap();
    write(&handmade_record(
        &src,
        &a["sources"][0],
        "qwen2.5-vl",
        request.clone(),
        &named,
        &shows,
    ));
    let dir = out.path().join("follow");
    let r = rec.to_str().unwrap();
    let follow = |dir: &Path| {
        let args = [
            "--profile",
            "qwen2.5-vl",
            "--count",
            "4",
            "--format",
            "png",
            "--follow-package",
            r,
        ];
        export(&src, dir, &args)
    };
    let (code, err) = follow(&dir);
    assert_eq!(code, Some(0), "{err}");
    let b = frames_json(&dir);
    assert_eq!(source_frames(&b), [0, 39, 78, 118]);
    assert_eq!(b["follow_package"]["package_names"], json!(named));
    assert_eq!(
        b["follow_package"]["package_shows"],
        json!([0, 39, 78, 118])
    );
    assert_eq!(b["follow_package"]["positions_differing"], 3);
    assert_eq!(b["follow_package"]["record"], json!(rec));
    for k in ["width", "height", "tokens"] {
        assert_eq!(a["profile"][k], b["profile"][k], "{k}");
    }
    for f in b["frames"].as_array().unwrap() {
        let png = dir.join(f["file"].as_str().unwrap());
        assert_eq!(
            code_of(&png),
            Some(f["source_frame"].as_u64().unwrap() as u32)
        );
    }
    // A package that showed the frames it named: the profile's own output, byte for byte.
    let same: Vec<Option<u64>> = named.iter().map(|&i| Some(i)).collect();
    write(&handmade_record(
        &src,
        &a["sources"][0],
        "qwen2.5-vl",
        request.clone(),
        &named,
        &same,
    ));
    let dir2 = out.path().join("follow2");
    let (code, err) = follow(&dir2);
    assert_eq!(code, Some(0), "{err}");
    for f in a["frames"].as_array().unwrap() {
        let file = f["file"].as_str().unwrap();
        assert_eq!(
            std::fs::read(own.join(file)).unwrap(),
            std::fs::read(dir2.join(file)).unwrap()
        );
    }
    // Refused: another profile, another request, another source (naming both), a picture
    // that matched no frame.
    let refuse = |record: Value, words: &[&str]| {
        write(&record);
        let there = out.path().join("refused");
        let (code, err) = follow(&there);
        assert_ne!(code, Some(0), "{err}");
        for w in words {
            assert!(err.contains(w), "{w:?} not in: {err}");
        }
        assert!(!there.exists());
    };
    refuse(
        handmade_record(
            &src,
            &a["sources"][0],
            "qwen3-vl",
            request.clone(),
            &named,
            &shows,
        ),
        &["checks profile qwen3-vl", "asks profile qwen2.5-vl"],
    );
    refuse(
        handmade_record(
            &src,
            &a["sources"][0],
            "qwen2.5-vl",
            json!({"count": null, "fps": 2.0, "profile_options": {}}),
            &named,
            &shows,
        ),
        &["made with fps 2", "asks count 4"],
    );
    let mut other = a["sources"][0].clone();
    other["frames"] = json!(90);
    refuse(
        handmade_record(
            Path::new("other.mp4"),
            &other,
            "qwen2.5-vl",
            request.clone(),
            &named,
            &shows,
        ),
        &[
            "other.mp4",
            "90 frames",
            "120 frames",
            &src.file_name().unwrap().to_string_lossy(),
        ],
    );
    let mut lost = shows.clone();
    lost[2] = None;
    refuse(
        handmade_record(
            &src,
            &a["sources"][0],
            "qwen2.5-vl",
            request.clone(),
            &named,
            &lost,
        ),
        &["position 2", "matched none"],
    );
}

/// The package's own output, from scripts/parity_runner.py (which imports only the package):
/// its frames as packed RGB, N x H x W x 3.
fn package_frames(py: &str, profile: &str, video: &Path) -> (Vec<u8>, Value) {
    let dir = tempfile::tempdir().unwrap();
    let runner = crate::repo_root().join("scripts/parity_runner.py");
    let o = std::process::Command::new(py)
        .arg(&runner)
        .arg(profile)
        .arg(video)
        .arg(dir.path())
        .arg("{}")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("result.json")).unwrap())
            .unwrap();
    (std::fs::read(dir.path().join("frames.u8")).unwrap(), result)
}

#[test]
fn following_qwen_vl_utils_on_packed_b_frames_gives_what_it_fed() {
    let Some(py) = python_with("qwen_vl_utils") else {
        return;
    };
    let (dir, _) = matrix();
    let video = dir.join("mpeg4_avi_bf.avi");
    let out = tempfile::tempdir().unwrap();
    let rec = parity(&py, &video, "qwen2.5-vl", &[]).expect("vidprep parity ran");
    let record = out.path().join("parity.json");
    std::fs::write(&record, serde_json::to_vec(&rec).unwrap()).unwrap();
    let (theirs, result) = package_frames(&py, "qwen2.5-vl", &video);
    let followed = out.path().join("followed");
    vidprep()
        .args(["export", "frames"])
        .arg(&video)
        .arg("--out-dir")
        .arg(&followed)
        .args([
            "--profile",
            "qwen2.5-vl",
            "--format",
            "png",
            "--follow-package",
        ])
        .arg(&record)
        .assert()
        .success();
    let j = frames_json(&followed);
    let shape: Vec<usize> = result["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as usize)
        .collect();
    let per = shape[1] * shape[2] * 3;
    let records = j["frames"].as_array().unwrap();
    assert_eq!(records.len(), shape[0]);
    let mut worst = f64::INFINITY;
    let mut differing = 0;
    for (p, f) in records.iter().enumerate() {
        let img = image::open(followed.join(f["file"].as_str().unwrap()))
            .unwrap()
            .to_rgb8();
        let ours = img.as_raw();
        let package = &theirs[p * per..(p + 1) * per];
        if ours[..] != package[..] {
            differing += 1;
            let mse = ours
                .iter()
                .zip(package)
                .map(|(&a, &b)| (a as f64 - b as f64).powi(2))
                .sum::<f64>()
                / per as f64;
            worst = worst.min(10.0 * (255.0f64 * 255.0 / mse).log10());
        }
    }
    let capability = result["torch"]["cpu_capability"].as_str().unwrap_or("");
    eprintln!(
        "mpeg4_avi_bf.avi qwen2.5-vl: parity min PSNR {} dB (bit-exact {}); followed: {differing} \
         of {} frames differ from the package's (worst {worst:.2} dB), {} positions followed \
         another frame than named; torch kernels {capability}",
        rec["min_psnr_db"],
        rec["bit_exact"],
        records.len(),
        j["follow_package"]["positions_differing"],
    );
    assert!(
        j["follow_package"]["positions_differing"].as_u64().unwrap() > 0,
        "torchcodec 0.17 shows other frames than it names on this file: {}",
        rec["reference"]["summary"]
    );
    if matches!(capability, "AVX2" | "AVX512") {
        assert_eq!(
            differing, 0,
            "the followed frames are what the package fed (worst {worst:.2} dB)"
        );
    } else {
        assert!(
            worst >= 45.0,
            "{worst:.2} dB on torch's {capability} kernels"
        );
    }
}
