//! `vidprep detect`, end to end: shot boundaries of a video joined from generated sources at
//! known frames (cut, fade through black, dissolve; the cut and the black frames confirmed by
//! ffmpeg's own `scdet` and `blackdetect`), activity spans of a static scene with one moving
//! object (inside and outside a region), annotation presence and V-STaR temporal spans, and
//! proposals that `cut --manifest` and `run` take unchanged, cutting exactly their frames.

use crate::common;
use crate::support;

use std::path::{Path, PathBuf};

use common::cmd;
use common::oracle;
use serde_json::Value;
use support::vidprep;

/// testsrc2 (0-3 s) dissolving over 1 s into mandelbrot (to 7 s), a hard cut to a bright
/// pattern (7-11 s), a 1 s fade through black into SMPTE bars (to 14 s); 25 fps, 350 frames.
/// Truth: dissolve frames 75..100, cut at 175, fade 250..275.
fn joined(dir: &Path) -> PathBuf {
    let out = dir.join("joined.mp4");
    cmd::ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc2=s=320x240:r=25:d=4",
        "-f",
        "lavfi",
        "-i",
        "mandelbrot=s=320x240:r=25,trim=duration=4",
        "-f",
        "lavfi",
        "-i",
        "rgbtestsrc=s=320x240:r=25:d=4,hue=H=2*PI*t",
        "-f",
        "lavfi",
        "-i",
        "smptehdbars=s=320x240:r=25:d=4",
        // fps=25 after the concat: FFmpeg 7.1's xfade refuses the concat's output, whose
        // frame rate it reports as unknown ("1/0"). It also fills the one-frame hole the first
        // xfade leaves at 10.96 s (pts 274 was missing before); -frames:v keeps the 14 s.
        "-filter_complex",
        "[0]settb=1/25,format=yuv420p[s0];[1]settb=1/25,format=yuv420p[s1];\
         [2]settb=1/25,format=yuv420p,setpts=PTS-STARTPTS[s2];[3]settb=1/25,format=yuv420p[s3];\
         [s0][s1]xfade=transition=dissolve:duration=1:offset=3[a];\
         [a][s2]concat=n=2:v=1,fps=25,settb=1/25[b];\
         [b][s3]xfade=transition=fadeblack:duration=1:offset=10[v]",
        "-map",
        "[v]",
        "-frames:v",
        "350",
        "-c:v",
        "libx264",
        "-g",
        "50",
        "-bf",
        "2",
        "-pix_fmt",
        "yuv420p",
        &cmd::p(&out),
    ])
    .unwrap_or_else(|e| panic!("{e}"));
    out
}

fn detect_json(args: &[&str]) -> Value {
    let out = vidprep()
        .arg("detect")
        .args(args)
        .arg("--json")
        .assert()
        .success();
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

fn boundaries(v: &Value) -> Vec<(String, u64, u64)> {
    v["boundaries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["kind"].as_str().unwrap().to_string(),
                b["start"].as_u64().unwrap(),
                b["end"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn spans(v: &Value) -> Vec<(u64, u64)> {
    v["proposals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["start"].as_u64().unwrap(), p["end"].as_u64().unwrap()))
        .collect()
}

/// Runs an ffmpeg video filter over `path`; its stdout and stderr.
fn filter_output(path: &Path, filter: &str) -> (String, String) {
    let out = cmd::ffmpeg(&["-i", &cmd::p(path), "-vf", filter, "-an", "-f", "null", "-"])
        .unwrap_or_else(|e| panic!("{e}"));
    (
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// Frames ffmpeg's scene detector scores as a change of at least `threshold` (0-100).
fn scdet_frames(path: &Path, threshold: f64) -> Vec<u64> {
    let (text, _) = filter_output(path, "scdet=threshold=1,metadata=print:file=-");
    let mut frames = Vec::new();
    let mut current = 0;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("frame:") {
            current = rest.split_whitespace().next().unwrap().parse().unwrap();
        }
        if let Some(score) = line.strip_prefix("lavfi.scd.score=") {
            if score.parse::<f64>().unwrap() >= threshold {
                frames.push(current);
            }
        }
    }
    frames
}

/// Frames inside ffmpeg's `blackdetect` spans.
fn black_frames(path: &Path, fps: f64) -> Vec<(u64, u64)> {
    let (_, text) = filter_output(path, "blackdetect=d=0.04:pix_th=0.10");
    text.lines()
        .filter(|l| l.contains("black_start:"))
        .map(|l| {
            let field = |name: &str| -> f64 {
                l.split(name)
                    .nth(1)
                    .unwrap()
                    .split_whitespace()
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap()
            };
            (
                (field("black_start:") * fps).round() as u64,
                (field("black_end:") * fps).round() as u64,
            )
        })
        .collect()
}

#[test]
fn shot_boundaries_are_found_at_their_frames() {
    let dir = tempfile::tempdir().unwrap();
    let video = joined(dir.path());
    assert_eq!(oracle::count_frames(&video), 350);
    // The oracle agrees with the construction: ffmpeg's scene score peaks at 175 ...
    let scd = scdet_frames(&video, 30.0);
    assert!(scd.contains(&175), "scdet changes: {scd:?}");
    // ... and its black detector finds black frames inside 250..275.
    let black = black_frames(&video, 25.0);
    assert!(
        black.iter().any(|&(a, b)| a >= 250 && b <= 276 && a < b),
        "blackdetect: {black:?}"
    );

    let manifest = dir.path().join("p.jsonl");
    let stats = dir.path().join("stats.csv");
    let v = detect_json(&[
        &cmd::p(&video),
        "-o",
        &cmd::p(&manifest),
        "--stats",
        &cmd::p(&stats),
    ]);
    let b = boundaries(&v);
    assert_eq!(b.len(), 3, "{b:?}");
    let (kind, s, e) = &b[0];
    assert_eq!(kind, "dissolve");
    assert!(
        s.abs_diff(75) <= 3 && e.abs_diff(100) <= 2,
        "dissolve {s}..{e}"
    );
    assert_eq!(b[1], ("cut".into(), 175, 175));
    let (kind, s, e) = &b[2];
    assert_eq!(kind, "fade");
    assert!(
        s.abs_diff(250) <= 4 && e.abs_diff(275) <= 2,
        "fade {s}..{e}"
    );
    // Shots leave the transition frames out.
    let sp = spans(&v);
    assert_eq!(sp.len(), 4, "{sp:?}");
    assert_eq!(sp[0].0, 0);
    assert_eq!(sp[1].1, 175);
    assert_eq!(sp[2].0, 175);
    assert_eq!(sp[3].1, 350);
    // One statistics row per frame.
    let csv = std::fs::read_to_string(&stats).unwrap();
    assert_eq!(csv.lines().count(), 351);
    assert!(
        csv.lines().nth(176).unwrap().ends_with(",cut"),
        "{}",
        csv.lines().nth(176).unwrap()
    );

    // The manifest goes to cut --manifest unchanged: each clip holds exactly its span.
    let clips = dir.path().join("clips");
    vidprep()
        .args(["cut", "--manifest"])
        .arg(&manifest)
        .arg("--out-dir")
        .arg(&clips)
        .args(["--preset", "ultrafast"])
        .assert()
        .success();
    for (i, (s, e)) in sp.iter().enumerate() {
        let clip = clips.join(format!("joined_e{:03}", i + 1)).join("clip.mp4");
        assert_eq!(oracle::count_frames(&clip), e - s, "{}", clip.display());
        let side = support::sidecar(&clip);
        assert_eq!(side["frames"][0]["source_start"], *s, "{side}");
    }
}

/// A grey scene where a white box moves only for a while (25 fps, 200 frames; x264
/// lossless so that unchanged frames decode identical).
fn one_mover(dir: &Path) -> PathBuf {
    let out = dir.join("mover.mp4");
    cmd::ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "color=c=gray:s=320x240:r=25:d=8",
        "-f",
        "lavfi",
        "-i",
        "color=c=white:s=30x30:r=25:d=8",
        "-filter_complex",
        "[0][1]overlay=x='20+2*(clip(n,50,120)-50)':y=60,format=yuv420p",
        "-c:v",
        "libx264",
        "-qp",
        "0",
        "-pix_fmt",
        "yuv420p",
        &cmd::p(&out),
    ])
    .unwrap_or_else(|e| panic!("{e}"));
    out
}

/// The oracle's frames that differ from the frame before (ffmpeg's framemd5 of the decode).
fn changed_frames(path: &Path) -> Vec<u64> {
    let out = cmd::ffmpeg(&["-i", &cmd::p(path), "-an", "-f", "framemd5", "-"])
        .unwrap_or_else(|e| panic!("{e}"));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let hashes: Vec<String> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.rsplit(',').next().unwrap().trim().to_string())
        .collect();
    (1..hashes.len())
        .filter(|&i| hashes[i] != hashes[i - 1])
        .map(|i| i as u64)
        .collect()
}

#[test]
fn activity_spans_cover_the_motion_and_only_inside_the_region() {
    let dir = tempfile::tempdir().unwrap();
    let video = one_mover(dir.path());
    let m = dir.path().join("a.jsonl");
    let moved = changed_frames(&video);
    let (first, last) = (moved[0], *moved.last().unwrap());
    assert_eq!(
        moved.len() as u64,
        last - first + 1,
        "one run of motion: {moved:?}"
    );
    let v = detect_json(&[
        &cmd::p(&video),
        "-o",
        &cmd::p(&m),
        "--by",
        "activity",
        "--smooth",
        "0",
        "--min-length",
        "5",
        "--motion-threshold",
        "0.1%",
    ]);
    let sp = spans(&v);
    assert_eq!(sp, vec![(first, last + 1)]);
    let p = &v["proposals"][0]["evidence"];
    assert!(p["peak_motion"].as_f64().unwrap() > 0.001, "{p}");
    assert_eq!(p["threshold"], 0.001, "{p}");

    // The box travels x = 20..170 over y 60..90: a region below it sees nothing.
    let v = detect_json(&[
        &cmd::p(&video),
        "-o",
        &cmd::p(&m),
        "--by",
        "activity",
        "--smooth",
        "0",
        "--motion-threshold",
        "0.1%",
        "--region",
        "0,150,320,240",
    ]);
    assert!(spans(&v).is_empty(), "{}", v["proposals"]);

    // Padding, and a merge gap that joins nothing here.
    let v = detect_json(&[
        &cmd::p(&video),
        "-o",
        &cmd::p(&m),
        "--by",
        "activity",
        "--smooth",
        "0",
        "--motion-threshold",
        "0.1%",
        "--padding",
        "1s",
        "--merge-gap",
        "10",
    ]);
    assert_eq!(spans(&v), vec![(first - 25, last + 1 + 25)]);
}

#[test]
fn activity_splits_at_shot_boundaries() {
    let dir = tempfile::tempdir().unwrap();
    // Moving pattern throughout, with a hard cut to another moving pattern at frame 100.
    let video = dir.path().join("two.mp4");
    cmd::ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc2=s=320x240:r=25:d=4",
        "-f",
        "lavfi",
        "-i",
        "mandelbrot=s=320x240:r=25,trim=duration=4,setpts=PTS-STARTPTS",
        "-filter_complex",
        "[0]format=yuv420p,settb=1/25[a];[1]format=yuv420p,settb=1/25[b];[a][b]concat=n=2:v=1[v]",
        "-map",
        "[v]",
        "-c:v",
        "libx264",
        "-pix_fmt",
        "yuv420p",
        &cmd::p(&video),
    ])
    .unwrap_or_else(|e| panic!("{e}"));
    let m = dir.path().join("a.jsonl");
    let whole = detect_json(&[
        &cmd::p(&video),
        "-o",
        &cmd::p(&m),
        "--by",
        "activity",
        "--motion-threshold",
        "0.001",
    ]);
    assert_eq!(spans(&whole), vec![(0, 200)], "{}", whole["proposals"]);
    let split = detect_json(&[
        &cmd::p(&video),
        "-o",
        &cmd::p(&m),
        "--by",
        "activity",
        "--motion-threshold",
        "0.001",
        "--split-at-shots",
    ]);
    assert_eq!(
        spans(&split),
        vec![(0, 100), (100, 200)],
        "{}",
        split["boundaries"]
    );
}

#[test]
fn annotation_spans_follow_a_track_and_a_vstar_item() {
    let dir = tempfile::tempdir().unwrap();
    let video = one_mover(dir.path());
    let boxes = dir.path().join("b.csv");
    std::fs::write(
        &boxes,
        "frame,track_id,x1,y1,x2,y2\n10,1,0,0,10,10\n30,1,5,5,15,15\n60,1,0,0,10,10\n80,1,0,0,10,10\n40,2,0,0,10,10\n45,2,0,0,10,10\n",
    )
    .unwrap();
    // Without a fill, only keyed frames count; with the default (linear), gaps between keys
    // of a track are filled, so track 1 is present 10..=80 unless a key says absent.
    let m = dir.path().join("a.jsonl");
    let v = detect_json(&[
        &cmd::p(&video),
        "-o",
        &cmd::p(&m),
        "--by",
        "annotations",
        "--annotations",
        &cmd::p(&boxes),
        "--track",
        "2",
        "--min-length",
        "1",
    ]);
    assert_eq!(spans(&v), vec![(40, 46)]);
    let v = detect_json(&[
        &cmd::p(&video),
        "-o",
        &cmd::p(&m),
        "--by",
        "annotations",
        "--annotations",
        &cmd::p(&boxes),
        "--track",
        "1",
        "--min-length",
        "1",
        "--padding",
        "5",
    ]);
    assert_eq!(spans(&v), vec![(5, 86)]);

    let vstar = dir.path().join("item.json");
    std::fs::write(
        &vstar,
        r#"{"vid": "mover", "fps": 25, "width": 320, "height": 240, "timestamps": [2.0, 4.0],
            "bboxes": [{"timestamp": 2.0, "frame_index": 50, "xmin": 1, "ymin": 1, "xmax": 9, "ymax": 9}]}"#,
    )
    .unwrap();
    let v = detect_json(&[
        &cmd::p(&video),
        "-o",
        &cmd::p(&m),
        "--by",
        "annotations",
        "--annotations",
        &cmd::p(&vstar),
        "--temporal",
        "--min-length",
        "1",
    ]);
    // Half-open, as V-STaR's evaluation reads it: 2.0 s is frame 50's start, 4.0 s frame 99's end.
    assert_eq!(spans(&v), vec![(50, 100)]);

    // The proposals run through `run` as they are, with the evidence carried.
    let out = dir.path().join("out");
    vidprep()
        .arg("run")
        .arg(&m)
        .arg("--out-dir")
        .arg(&out)
        .args(["--preset", "ultrafast"])
        .assert()
        .success();
    let clip = out.join("mover_e001").join("clip.mp4");
    assert_eq!(oracle::count_frames(&clip), 50);
    // New evidence for the same span redoes nothing.
    let text = std::fs::read_to_string(&m).unwrap();
    assert!(text.contains("\"evidence\":{"), "{text}");
    std::fs::write(
        &m,
        text.replace("\"evidence\":{", "\"evidence\":{\"note\":\"re-scored\","),
    )
    .unwrap();
    vidprep()
        .arg("run")
        .arg(&m)
        .arg("--out-dir")
        .arg(&out)
        .args(["--preset", "ultrafast", "--resume"])
        .assert()
        .success();
    let report = std::fs::read_to_string(out.join("report.jsonl")).unwrap();
    assert!(report.contains("\"status\":\"skipped\""), "{report}");
}

#[test]
fn contact_sheets_are_made_per_proposal() {
    let dir = tempfile::tempdir().unwrap();
    let video = one_mover(dir.path());
    let m = dir.path().join("a.jsonl");
    let sheets = dir.path().join("sheets");
    vidprep()
        .arg("detect")
        .arg(&video)
        .arg("-o")
        .arg(&m)
        .args(["--by", "activity", "--motion-threshold", "0.1%", "--sheets"])
        .arg(&sheets)
        .assert()
        .success();
    let strip = sheets.join("mover_e001").join("sheet").join("strip.jpg");
    assert!(strip.is_file(), "no {}", strip.display());
    let frames: Value = serde_json::from_str(
        &std::fs::read_to_string(sheets.join("mover_e001").join("sheet").join("frames.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(frames["frames"].as_array().unwrap().len(), 8, "{frames}");
}

#[test]
fn bad_requests_are_clear_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let video = one_mover(dir.path());
    let m = dir.path().join("a.jsonl");
    let cases: Vec<(Vec<String>, i32, &str)> = vec![
        (
            vec!["--by".into(), "annotations".into()],
            2,
            "--annotations",
        ),
        (vec!["--track".into(), "1".into()], 2, "--by annotations"),
        (
            vec!["--annotations".into(), "x.csv".into()],
            2,
            "--by annotations",
        ),
        (
            vec!["--region".into(), "0,0,10,10".into()],
            2,
            "--by activity",
        ),
        (
            vec![
                "--by".into(),
                "activity".into(),
                "--region".into(),
                "0,0,900,10".into(),
            ],
            2,
            "not inside the 320x240 frame",
        ),
        (
            vec!["--by".into(), "motion".into()],
            2,
            "expected shots, activity or annotations",
        ),
        (
            vec!["--min-length".into(), "10%".into()],
            2,
            "not a percentage",
        ),
    ];
    for (extra, code, says) in cases {
        let a = vidprep()
            .arg("detect")
            .arg(&video)
            .arg("-o")
            .arg(&m)
            .args(&extra)
            .assert()
            .code(code);
        let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
        assert!(err.contains(says), "{extra:?}: {err}");
        assert!(!m.exists(), "{extra:?} wrote the manifest");
    }
    // The manifest may not replace the source.
    let a = vidprep()
        .arg("detect")
        .arg(&video)
        .arg("-o")
        .arg(&video)
        .assert()
        .code(2);
    assert!(String::from_utf8_lossy(&a.get_output().stderr).contains("input"));
    assert!(oracle::count_frames(&video) == 200);
}

#[test]
fn pets09_activity_spans_hold_the_walkers() {
    let Some(video) = support::shared("pets09/vtest.avi") else {
        return;
    };
    let Some(det) = support::shared("pets09/det.txt") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("a.jsonl");
    let v = detect_json(&[&cmd::p(&video), "-o", &cmd::p(&m), "--by", "activity"]);
    let sp = spans(&v);
    assert!(!sp.is_empty());
    // Every proposed frame range holds detected people (MOT detections, 1-based frames).
    let text = std::fs::read_to_string(det).unwrap();
    let detected: std::collections::HashSet<u64> = text
        .lines()
        .filter_map(|l| l.split(',').next()?.trim().parse::<u64>().ok())
        .map(|f| f - 1)
        .collect();
    for (s, e) in &sp {
        let with_people = (*s..*e).filter(|f| detected.contains(f)).count() as u64;
        assert!(
            with_people * 10 >= (e - s) * 9,
            "span {s}..{e}: {with_people} frames with people"
        );
    }
    // Street footage from one camera has no shot boundary.
    let v = detect_json(&[&cmd::p(&video), "-o", &cmd::p(&m)]);
    assert_eq!(boundaries(&v), vec![], "{}", v["boundaries"]);
}

/// The analysis pass split into keyframe chunks on several threads gives exactly the
/// statistics of one decoder reading the whole video (H.264 with B-frames, and DivX AVI whose
/// frames are recognised by packet position).
#[test]
fn chunked_analysis_equals_one_pass() {
    let dir = tempfile::tempdir().unwrap();
    let h264 = dir.path().join("long.mp4");
    cmd::ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc2=s=160x120:r=25:d=60",
        "-f",
        "lavfi",
        "-i",
        "mandelbrot=s=160x120:r=25,trim=duration=40,setpts=PTS-STARTPTS",
        "-filter_complex",
        "[0]format=yuv420p,settb=1/25[a];[1]format=yuv420p,settb=1/25[b];[a][b]concat=n=2:v=1[v]",
        "-map",
        "[v]",
        "-c:v",
        "libx264",
        "-g",
        "48",
        "-bf",
        "3",
        "-pix_fmt",
        "yuv420p",
        &cmd::p(&h264),
    ])
    .unwrap_or_else(|e| panic!("{e}"));
    let divx = dir.path().join("long.avi");
    cmd::ffmpeg(&[
        "-i",
        &cmd::p(&h264),
        "-c:v",
        "mpeg4",
        "-vtag",
        "DX50",
        "-bf",
        "2",
        "-g",
        "60",
        "-q:v",
        "4",
        &cmd::p(&divx),
    ])
    .unwrap_or_else(|e| panic!("{e}"));
    for video in [&h264, &divx] {
        let mut csvs = Vec::new();
        for workers in ["1", "3"] {
            let stats = dir.path().join(format!("s{workers}.csv"));
            let m = dir.path().join(format!("m{workers}.jsonl"));
            vidprep()
                .arg("detect")
                .arg(video)
                .arg("-o")
                .arg(&m)
                .arg("--stats")
                .arg(&stats)
                .args(["--workers", workers])
                .assert()
                .success();
            csvs.push((
                std::fs::read_to_string(&stats).unwrap(),
                std::fs::read_to_string(&m).unwrap(),
            ));
        }
        assert_eq!(csvs[0].0.lines().count(), 2501, "{}", video.display());
        for (a, b) in csvs[0].0.lines().zip(csvs[1].0.lines()) {
            assert_eq!(a, b, "{}: one pass vs chunks", video.display());
        }
        assert_eq!(csvs[0].1, csvs[1].1);
        assert!(
            csvs[0].1.contains("\"end\":\"1500\""),
            "the cut at 1500: {}",
            csvs[0].1
        );
    }
}

/// An image folder (with its rate given) is a source like a video: the same boundaries, and
/// the proposals carry the rate so that `cut --manifest` cuts the same frames.
#[test]
fn an_image_folder_is_detected_like_its_video() {
    let dir = tempfile::tempdir().unwrap();
    let video = joined(dir.path());
    let folder = dir.path().join("frames");
    std::fs::create_dir(&folder).unwrap();
    cmd::ffmpeg(&[
        "-i",
        &cmd::p(&video),
        "-start_number",
        "1",
        "-q:v",
        "2",
        &cmd::p(&folder.join("%06d.jpg")),
    ])
    .unwrap_or_else(|e| panic!("{e}"));
    let m = dir.path().join("p.jsonl");
    let from_video = detect_json(&[&cmd::p(&video), "-o", &cmd::p(&m)]);
    let from_folder = detect_json(&[&cmd::p(&folder), "-o", &cmd::p(&m), "--source-fps", "25"]);
    assert_eq!(from_folder["frames"], 350);
    let cuts = |v: &Value| -> Vec<(String, u64, u64)> {
        boundaries(v).into_iter().filter(|b| b.0 == "cut").collect()
    };
    assert_eq!(cuts(&from_folder), cuts(&from_video));
    assert_eq!(
        boundaries(&from_folder).len(),
        3,
        "{}",
        from_folder["boundaries"]
    );
    let text = std::fs::read_to_string(&m).unwrap();
    assert!(text.contains("\"source_fps\""), "{text}");
    let clips = dir.path().join("clips");
    vidprep()
        .args(["cut", "--manifest"])
        .arg(&m)
        .arg("--out-dir")
        .arg(&clips)
        .args(["--preset", "ultrafast"])
        .assert()
        .success();
    let sp = spans(&from_folder);
    let clip = clips.join("frames_e003").join("clip.mp4");
    assert_eq!(oracle::count_frames(&clip), sp[2].1 - sp[2].0);
}

/// A source named relative to where the command runs still opens when the manifest is saved
/// in another folder (a manifest's relative paths are read from its own folder).
#[test]
fn a_manifest_in_another_folder_still_finds_a_relative_source() {
    let dir = tempfile::tempdir().unwrap();
    one_mover(dir.path());
    std::fs::create_dir(dir.path().join("lists")).unwrap();
    vidprep()
        .current_dir(dir.path())
        .args([
            "detect",
            "mover.mp4",
            "-o",
            "lists/a.jsonl",
            "--by",
            "activity",
        ])
        .args(["--motion-threshold", "0.1%"])
        .assert()
        .success();
    vidprep()
        .current_dir(dir.path())
        .args([
            "cut",
            "--manifest",
            "lists/a.jsonl",
            "--out-dir",
            "clips",
            "--preset",
            "ultrafast",
        ])
        .assert()
        .success();
    assert!(dir.path().join("clips/mover_e001/clip.mp4").is_file());
}
