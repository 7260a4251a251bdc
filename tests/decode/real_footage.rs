//! The real footage in `../shared/data` (msmpeg4v3 AVI, MPEG-4 AVI, H.264 with B-frames and MP3
//! audio, rotated phone MOVs, a MOV whose packets are out of presentation order, a corrupt
//! MP4), checked against the ffmpeg CLI. Each test skips with a message when the folder is
//! absent.

use crate::common;
use crate::support;

use std::path::Path;

use common::oracle::{self, PixFmt};
use support::{packed, shared, vidprep};
use vidprep::media::FrameReader;

fn md5s_of_ours(path: &Path) -> Vec<String> {
    FrameReader::open(path)
        .unwrap()
        .map(|f| packed(&f.unwrap()).md5())
        .collect()
}

#[test]
fn every_real_video_decodes_exactly_like_ffmpeg() {
    for rel in [
        "host/chaplin.mp4",
        "host/bag.avi",
        "edge/unordered.mov",
        "edge/video_0.mov",
        "edge/video_90.mov",
        "edge/video_180.mov",
        "edge/video_270.mov",
    ] {
        let Some(path) = shared(rel) else { return };
        let ours = md5s_of_ours(&path);
        let theirs: Vec<String> = oracle::decode_frames(&path, PixFmt::Yuv420p, None)
            .iter()
            .map(|f| f.md5())
            .collect();
        assert_eq!(ours, theirs, "{rel}: frames differ from ffmpeg's");
    }
}

#[test]
fn probe_reports_what_ffprobe_reports() {
    for (rel, w, h, frames) in [
        ("pets09/vtest.avi", 768, 576, 795),
        ("host/chaplin.mp4", 640, 360, 241),
        ("edge/video_90.mov", 320, 568, 3),
        ("edge/video_270.mov", 320, 568, 3),
        ("edge/video_180.mov", 568, 320, 3),
    ] {
        let Some(path) = shared(rel) else { return };
        let out = vidprep()
            .args(["probe", "--json", "--count-frames"])
            .arg(&path)
            .assert()
            .success();
        let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        assert_eq!(v["video"]["width"], w, "{rel}");
        assert_eq!(v["video"]["height"], h, "{rel}");
        assert_eq!(v["video"]["frames"], frames, "{rel}");
        assert_eq!(
            v["video"]["frames_decoded"].as_u64().unwrap(),
            oracle::count_frames(&path),
            "{rel}"
        );
        assert_eq!(
            v["video"]["stored_width"].as_u64().unwrap(),
            oracle::dimensions(&path).0 as u64,
            "{rel}"
        );
        let rot = oracle::rotation(&path).unwrap_or(0.0);
        // ffprobe's rotation is counter-clockwise; ours is the clockwise turn that fixes it.
        assert_eq!(
            v["video"]["rotation_cw"].as_i64().unwrap(),
            (-(rot as i64)).rem_euclid(360),
            "{rel}"
        );
    }
    let Some(chaplin) = shared("host/chaplin.mp4") else {
        return;
    };
    let out = vidprep()
        .args(["probe", "--json"])
        .arg(&chaplin)
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["audio"][0]["codec"], "mp3");
    assert_eq!(v["audio"][0]["sample_rate"], 44100);
}

#[test]
fn chaplin_cut_matches_ffmpeg_frames_and_keeps_mp3_audio_as_aac() {
    let Some(src) = shared("host/chaplin.mp4") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.mp4");
    vidprep()
        .arg("cut")
        .arg(&src)
        .args(["--start", "2.2s", "--end", "7s", "-o"])
        .arg(&out)
        .args(["--preset", "veryfast"])
        .assert()
        .success();
    // Frames 55..175 at 25 fps.
    let s = oracle::decode_frames(&src, PixFmt::Yuv420p, None);
    let o = oracle::decode_frames(&out, PixFmt::Yuv420p, None);
    assert_eq!(o.len(), 120);
    for (k, f) in o.iter().enumerate() {
        let p = oracle::psnr(f, &s[55 + k]);
        assert!(p >= 40.0, "output frame {k}: {p:.2} dB");
        // and it is not a neighbour: the true source frame matches best
        if k > 0 && k + 1 < o.len() {
            assert!(
                p > oracle::psnr(f, &s[54 + k]) && p > oracle::psnr(f, &s[56 + k]),
                "output frame {k} is closer to a neighbour"
            );
        }
    }
    let probe = oracle::probe(&out);
    let audio = oracle::stream(&probe, "audio").expect("audio");
    assert_eq!(audio["codec_name"], "aac");
    let ad = oracle::num(&audio["duration"]).unwrap();
    assert!(
        (ad - 4.8).abs() < 0.03,
        "audio lasts {ad} s, the clip 4.8 s"
    );
}

#[test]
fn pets_avi_truncation_ratios() {
    let Some(src) = shared("pets09/vtest.avi") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let clip = dir.path().join("clip.mp4");
    vidprep()
        .arg("cut")
        .arg(&src)
        .args(["--start", "300", "--end", "400", "-o"])
        .arg(&clip)
        .args(["--preset", "ultrafast", "--crf", "10"])
        .assert()
        .success();
    vidprep()
        .arg("truncate")
        .arg(&clip)
        .args(["--ratios", "50%,75%,100%", "-o"])
        .arg(dir.path().join("t.mp4"))
        .args(["--preset", "ultrafast", "--crf", "10"])
        .assert()
        .success();
    let s = oracle::decode_frames(&src, PixFmt::Yuv420p, None);
    for (suffix, n) in [("50", 50usize), ("75", 75), ("100", 100)] {
        let o = oracle::decode_frames(
            &dir.path().join(format!("t_{suffix}.mp4")),
            PixFmt::Yuv420p,
            None,
        );
        assert_eq!(o.len(), n);
        let p = oracle::psnr(&o[n - 1], &s[300 + n - 1]);
        assert!(
            p >= 35.0,
            "{suffix}%: last frame {p:.2} dB (two generations)"
        );
    }
}

#[test]
fn rotated_phone_clip_is_cut_upright() {
    let Some(src) = shared("edge/video_90.mov") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.mp4");
    vidprep()
        .arg("cut")
        .arg(&src)
        .args(["--start", "1", "-o"])
        .arg(&out)
        .assert()
        .success();
    assert_eq!(oracle::dimensions(&out), (320, 568));
    assert!(
        oracle::rotation(&out).unwrap_or(0.0) == 0.0,
        "output is stored upright, no display matrix"
    );
    let s = oracle::decode_frames(&src, PixFmt::Yuv420p, None);
    let o = oracle::decode_frames(&out, PixFmt::Yuv420p, None);
    assert_eq!(o.len(), 2);
    assert!(oracle::psnr(&o[0], &s[1]) >= 40.0);
}

#[test]
fn a_broken_mp4_is_decoded_as_far_as_ffmpeg_goes_and_reported() {
    let Some(src) = shared("edge/corrupted.mp4") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.mp4");
    let a = vidprep()
        .arg("cut")
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(
        err.contains("corrupted.mp4") && err.contains("damaged"),
        "{err}"
    );
    assert_eq!(oracle::count_frames(&out), oracle::count_frames(&src));
    // --strict refuses it, with nothing left behind.
    let strict = dir.path().join("strict");
    std::fs::create_dir(&strict).unwrap();
    let a = vidprep()
        .arg("cut")
        .arg(&src)
        .arg("--strict")
        .arg("-o")
        .arg(strict.join("x.mp4"))
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(
        err.contains("corrupted.mp4") && err.contains("damaged"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(&strict).unwrap().count(),
        0,
        "nothing may be left behind"
    );
}
