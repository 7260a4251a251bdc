//! One rule for a percentage decision point (issue 52, item 2): `P%` is P % of the clip from
//! its first frame, in `cut --decision`, in `truncate --at` and in `cut --ratios`, whatever
//! the time before the first frame (an AVI whose B-frames put its first frame at 0.067 s, a
//! video that starts after its audio, a `--start` in seconds before a frame). Before, `cut`
//! counted that time and kept a frame fewer than `truncate` of the same clip. The oracle is
//! ffprobe's frame times and frame counts.

use crate::common;
use crate::support;

use std::path::Path;

use support::vidprep;

/// Every video frame's time (best effort, as ffprobe shows them), in display order.
fn frame_times(path: &Path) -> Vec<f64> {
    let out = common::cmd::run_ok(
        "ffprobe",
        &[
            "-v",
            "error",
            "-select_streams",
            "v:0",
            "-show_entries",
            "frame=best_effort_timestamp_time",
            "-of",
            "csv=p=0",
            &path.display().to_string(),
        ],
    );
    let mut t: Vec<f64> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().trim_end_matches(',').parse().ok())
        .collect();
    t.sort_by(|a, b| a.partial_cmp(b).unwrap());
    t
}

/// Frames kept of the clip `[s, e)` of frames with times `t` before the decision point `p` %
/// of the way from its first frame to its end.
fn expected_kept(t: &[f64], s: usize, e: usize, p: f64) -> usize {
    let end = if e < t.len() {
        t[e]
    } else {
        t[e - 1] + (t[e - 1] - t[e - 2])
    };
    let at = t[s] + (end - t[s]) * p / 100.0;
    // ffprobe prints microseconds: a frame within 10 us of the point is at it (and dropped).
    (s..e).filter(|&i| t[i] < at - 1e-5).count()
}

fn frames(path: &Path) -> usize {
    common::oracle::count_frames(path) as usize
}

fn ff(args: &[&str]) {
    common::cmd::run_ok("ffmpeg", args);
}

#[test]
fn a_percentage_is_of_the_clip_from_its_first_frame_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // H.264 with B-frames in AVI at 30 fps: the first frame at 2/30 s.
    ff(&[
        "-v",
        "error",
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=160x120:rate=30",
        "-frames:v",
        "90",
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-x264-params",
        "bframes=2",
        &d.join("late.avi").display().to_string(),
    ]);
    // A video 0.5 s after its audio (the audio starts the file).
    ff(&[
        "-v",
        "error",
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=160x120:rate=25",
        "-f",
        "lavfi",
        "-i",
        "sine=frequency=440:sample_rate=48000",
        "-filter_complex",
        "[0:v]trim=end_frame=90,setpts=PTS-STARTPTS+0.5/TB[v]",
        "-map",
        "[v]",
        "-map",
        "1:a",
        "-t",
        "4.5",
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-c:a",
        "aac",
        &d.join("after_audio.mkv").display().to_string(),
    ]);
    let late = frame_times(&d.join("late.avi"));
    assert!((late[0] - 2.0 / 30.0).abs() < 1e-3, "{:?}", &late[..3]);

    let mut wrong = Vec::new();
    for (name, start) in [
        ("late.avi", None),
        ("late.avi", Some("10")),
        ("after_audio.mkv", None),
        ("after_audio.mkv", Some("0.51s")),
    ] {
        let src = d.join(name);
        let t = frame_times(&src);
        let s = match start {
            None => 0,
            Some("10") => 10,
            // The first frame at or after 0.51 s of source time (the video starts at 0.5).
            Some(_) => t.iter().position(|&x| x >= 0.51 - 1e-9).unwrap(),
        };
        let e = 60;
        let mut span = vec!["--end".to_string(), e.to_string()];
        if let Some(st) = start {
            span.extend(["--start".to_string(), st.to_string()]);
        }
        let whole = d.join(format!("{name}.whole.mp4"));
        vidprep()
            .current_dir(d)
            .arg("cut")
            .arg(&src)
            .args(&span)
            .args(["--preset", "ultrafast", "--no-audio", "-o"])
            .arg(&whole)
            .assert()
            .success();
        assert_eq!(frames(&whole), e - s, "{name} {start:?}");
        for p in ["10%", "25%", "33.3%", "50%", "75%", "90%"] {
            let pv: f64 = p.trim_end_matches('%').parse().unwrap();
            let want = expected_kept(&t, s, e, pv);
            let cut = d.join(format!("{name}.cut.mp4"));
            vidprep()
                .current_dir(d)
                .arg("cut")
                .arg(&src)
                .args(&span)
                .args(["--decision", p, "--preset", "ultrafast", "--no-audio", "-o"])
                .arg(&cut)
                .assert()
                .success();
            let truncated = d.join(format!("{name}.trunc.mp4"));
            vidprep()
                .current_dir(d)
                .arg("truncate")
                .arg(&whole)
                .args(["--at", p, "--preset", "ultrafast", "-o"])
                .arg(&truncated)
                .assert()
                .success();
            let (c, tr) = (frames(&cut), frames(&truncated));
            if c != want || tr != want {
                wrong.push(format!(
                    "{name} from {start:?} to frame {e} at {p}: cut kept {c}, truncate {tr}, \
                     expected {want}"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
