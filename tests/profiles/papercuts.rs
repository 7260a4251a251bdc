//! Small profile papercuts (`docs/profiles.md`):
//!
//! - a profile whose package repeats frames (InternVL's `get_index` with more segments than
//!   the video has frames) is refused without `--allow-repeats`, as the samplers are, and
//!   writes nothing; with it, the repeats are written (checked by the frame code painted in
//!   each image, not by vidprep's own record);
//! - a profile option that is wrong whatever the video is refused from the request alone:
//!   exit 2, before the video is opened (a missing file is never reported).

use crate::common;
use crate::profiles::parity::{code_of, frames_json};
use crate::support;

use common::synth::SynthVideo;
use support::vidprep;

/// 10 frames at 10 fps, the frame index painted in.
fn ten_frames() -> std::path::PathBuf {
    SynthVideo::new(160, 120)
        .fps(10, 1)
        .frames(10)
        .cached()
        .path
}

#[test]
fn internvl_repeats_need_allow_repeats() {
    let src = ten_frames();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("r");
    let o = vidprep()
        .args(["export", "frames"])
        .arg(&src)
        .arg("--out-dir")
        .arg(&dir)
        .args(["--profile", "internvl", "--count", "25", "--format", "png"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("picks 25 frames of a video of 10"), "{err}");
    assert!(err.contains("--allow-repeats"), "{err}");
    let written = std::fs::read_dir(&dir).map_or(0, |d| d.count());
    assert_eq!(written, 0, "nothing is written");
    vidprep()
        .args(["export", "frames"])
        .arg(&src)
        .arg("--out-dir")
        .arg(&dir)
        .args(["--profile", "internvl", "--count", "25", "--format", "png"])
        .arg("--allow-repeats")
        .assert()
        .success();
    let j = frames_json(&dir);
    let frames = j["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 25);
    let codes: Vec<u32> = frames
        .iter()
        .map(|r| code_of(&dir.join(r["file"].as_str().unwrap())).unwrap())
        .collect();
    let distinct: std::collections::BTreeSet<_> = codes.iter().collect();
    assert!(
        distinct.len() <= 10 && codes.windows(2).all(|w| w[0] <= w[1]),
        "{codes:?}"
    );
    // Fewer segments than frames: no repeats, no flag needed.
    vidprep()
        .args(["export", "frames"])
        .arg(&src)
        .arg("--out-dir")
        .arg(out.path().join("ok"))
        .args(["--profile", "internvl", "--count", "4"])
        .assert()
        .success();
}

#[test]
fn options_wrong_for_any_video_are_refused_before_opening_it() {
    let src = ten_frames();
    let missing = std::path::Path::new("/nonexistent/vidprep-papercut.mp4");
    let out = tempfile::tempdir().unwrap();
    for (args, says) in [
        (&["--profile", "internvl", "--fps", "1"][..], "no fps rule"),
        (
            &["--profile", "internvl", "--profile-option", "min_num=3"][..],
            "min_num must be a whole number from 1 to max_num",
        ),
        (
            &["--profile", "internvl", "--profile-option", "bound_start=1"][..],
            "give both bound_start and bound_end",
        ),
        (
            &["--profile", "internvl", "--profile-option", "pillow=11"][..],
            "\"pillow\" must be 12",
        ),
        (
            &["--profile", "lmms-eval", "--profile-option", "num_frm=2.5"][..],
            "\"num_frm\" must be a whole number",
        ),
    ] {
        for video in [src.as_path(), missing] {
            let o = vidprep()
                .args(["export", "frames"])
                .arg(video)
                .arg("--out-dir")
                .arg(out.path().join("x"))
                .args(args)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{args:?} on {video:?}: {err}");
            assert!(err.contains(says), "{args:?}: {err}");
            assert!(
                !err.contains("nonexistent"),
                "the video is not opened: {err}"
            );
        }
    }
    assert!(!out.path().join("x").exists());
}

#[test]
fn a_profile_that_repeats_by_its_own_rule_is_not_told_to_ask_for_fewer_frames() {
    // GLM-4.6V pads an odd number of sampled frames with its last one: on a 2.32 s clip at
    // 25 fps it picks 14 frames, one a repeat. No count was asked, so "ask for fewer frames
    // (`count`)", the refusal's advice, was no advice at all.
    let src = SynthVideo::new(160, 120).frames(58).cached().path;
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("g");
    let run = |extra: &[&str]| {
        vidprep()
            .args(["export", "frames"])
            .arg(&src)
            .arg("--out-dir")
            .arg(&dir)
            .args(["--profile", "glm-4.6v"])
            .args(extra)
            .output()
            .unwrap()
    };
    let o = run(&[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("picks 14 frames of a video of 58, 1 of them repeats"),
        "{err}"
    );
    assert!(err.contains("the profile's own rule repeats them"), "{err}");
    assert!(
        err.contains("--allow-repeats") && !err.contains("fewer frames"),
        "{err}"
    );
    let o = run(&["--allow-repeats"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let frames = frames_json(&dir)["frames"].as_array().unwrap().len();
    assert_eq!(frames, 14);
    // The last two images show the same frame (the painted code, not vidprep's record).
    let j = frames_json(&dir);
    let f = j["frames"].as_array().unwrap();
    let code = |i: usize| code_of(&dir.join(f[i]["file"].as_str().unwrap())).unwrap();
    assert_eq!(code(12), code(13));
}
