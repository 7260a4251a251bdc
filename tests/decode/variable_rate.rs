//! Whether `probe` calls a source's frame rate variable (issue 52, item 5): a frame skipped in
//! a time base of one tick per frame (AVI's 1/fps, an MP4 with a 1/fps timescale) is a 2-tick
//! gap, which a tick of rounding slack let through, while the same gap in raw MPEG-1 was
//! seen. The oracle is how each file was made: with the ffmpeg CLI, frames dropped by
//! `select` and written with their own timestamps, or not; ffprobe confirms the frames.

use crate::common;
use crate::support;

use std::path::Path;

use serde_json::Value;
use support::vidprep;

fn probe(path: &Path) -> Value {
    let out = vidprep()
        .args(["probe", "--json"])
        .arg(path)
        .assert()
        .success();
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

/// 50 frames at `rate` of a test pattern, minus the frames `drop` (by index), in `name`
/// (its extension picks the container) with `args` for the encoder and muxer.
fn made(dir: &Path, name: &str, rate: &str, drop: &[u32], args: &[&str]) -> std::path::PathBuf {
    let out = dir.join(name);
    let select = if drop.is_empty() {
        "null".to_string()
    } else {
        let keep: Vec<String> = drop.iter().map(|n| format!("not(eq(n\\,{n}))")).collect();
        format!("select='{}'", keep.join("*"))
    };
    let mut a: Vec<String> = [
        "-v",
        "error",
        "-f",
        "lavfi",
        "-i",
        &format!("testsrc2=size=160x120:rate={rate}"),
        "-frames:v",
        &(50 - drop.len()).to_string(),
        "-vf",
        &select,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.extend(common::cmd::passthrough().iter().map(|s| s.to_string()));
    a.extend(args.iter().map(|s| s.to_string()));
    a.push(out.display().to_string());
    let refs: Vec<&str> = a.iter().map(String::as_str).collect();
    common::cmd::run_ok("ffmpeg", &refs);
    assert_eq!(
        common::oracle::count_frames(&out) as usize,
        50 - drop.len(),
        "{name}"
    );
    out
}

#[test]
fn a_skipped_frame_in_a_one_tick_per_frame_time_base_is_a_variable_rate() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mpeg4_avi = ["-c:v", "mpeg4", "-q:v", "5"];
    let mp4_fps_scale = [
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-bf",
        "0",
        "-video_track_timescale",
        "25",
    ];
    let mkv = ["-c:v", "libx264", "-preset", "ultrafast"];
    let mpeg1 = ["-c:v", "mpeg1video", "-q:v", "5", "-f", "mpeg"];
    // (file, variable): frames skipped or not, in several time bases.
    let cases = [
        (made(d, "skip1.avi", "25", &[10], &mpeg4_avi), true),
        (made(d, "skip2.avi", "25", &[10, 11], &mpeg4_avi), true),
        (
            made(d, "skip_late.avi", "30000/1001", &[40], &mpeg4_avi),
            true,
        ),
        (made(d, "whole.avi", "25", &[], &mpeg4_avi), false),
        (made(d, "skip1.mp4", "25", &[10], &mp4_fps_scale), true),
        (made(d, "whole.mp4", "25", &[], &mp4_fps_scale), false),
        // Milliseconds: 29.97 fps rounds to 33 and 34, a constant rate all the same.
        (made(d, "whole_ntsc.mkv", "30000/1001", &[], &mkv), false),
        (made(d, "skip1_ntsc.mkv", "30000/1001", &[10], &mkv), true),
        (made(d, "skip1.mpg", "25", &[10], &mpeg1), true),
        (made(d, "whole.mpg", "25", &[], &mpeg1), false),
    ];
    let mut wrong = Vec::new();
    for (path, variable) in &cases {
        let got = &probe(path)["video"]["variable_frame_rate"];
        if got != variable {
            wrong.push(format!(
                "{}: variable_frame_rate {got}, made {}",
                path.file_name().unwrap().to_string_lossy(),
                if *variable {
                    "with a skipped frame"
                } else {
                    "at a constant rate"
                }
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
