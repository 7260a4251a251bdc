//! Field footage whose first frame is not at time 0, and the sidecars around it, checked with
//! the ffmpeg CLI and ffprobe (issue 23): annotation times on the one timeline `cut --start`
//! uses (V-STaR times counted from the first frame), V-STaR `timestamps` half-open in every
//! reader and writer, copied clips whose sidecar names exactly the frames the file holds,
//! sidecars that never describe another output, and capped exports that say when they
//! lowered the frame rate.
//!
//! Which frames carry boxes is decided by pixels: the output of `overlay` decoded by ffmpeg is
//! compared with ffmpeg's decode of its input on the box's outline; which source frame an
//! output frame shows is read from the code painted in it.

use crate::common;
use crate::support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::oracle::{self, Frame, PixFmt};
use common::synth::{Codec, SynthVideo};
use serde_json::Value;
use support::{sidecar, vidprep};

/// Runs the ffmpeg CLI, panicking with its message on failure.
fn ffmpeg(args: &[&str]) {
    common::cmd::ffmpeg(args).unwrap_or_else(|e| panic!("{e}"));
}

fn p(path: &Path) -> String {
    path.display().to_string()
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Where the test boxes are drawn (pixels of a 320x240 frame), away from the frame code.
const BOX: (usize, usize, usize, usize) = (180, 110, 290, 210);

/// A source whose first frame is shown after the input's start, with ffprobe's frame times
/// relative to that start (the timeline ffmpeg's `-ss` uses).
struct Late {
    path: PathBuf,
    /// Seconds from the input's start (ffprobe's format `start_time`) of each frame.
    times: Vec<f64>,
    fps: (u32, u32),
}

/// ffprobe's frame times from the input's start; a frame without one (the last of an AVI with
/// B-frames) is one frame after the previous, as ffmpeg fills it.
fn timeline(path: &Path, fps: (u32, u32)) -> Vec<f64> {
    let start = oracle::input_start_time(path);
    let step = fps.1 as f64 / fps.0 as f64;
    let mut out: Vec<f64> = Vec::new();
    for t in oracle::frame_times(path).seconds() {
        let t = match (t, out.last()) {
            (Some(t), _) => t - start,
            (None, Some(prev)) => prev + step,
            (None, None) => panic!("{path:?}: the first frame has no time"),
        };
        out.push(t);
    }
    out
}

/// An MPEG-4 AVI with B-frames: ffmpeg shows its first frame at 1/fps.
fn late_avi() -> Late {
    let v = SynthVideo::new(320, 240)
        .fps(24000, 1001)
        .frames(100)
        .codec(Codec::Mpeg4)
        .bframes(2)
        .container("avi")
        .cached();
    let times = timeline(&v.path, (24000, 1001));
    assert!(
        (times[0] - 1001.0 / 24000.0).abs() < 1e-4,
        "premise: the AVI's first frame is at 1/23.976 s, ffprobe says {}",
        times[0]
    );
    Late {
        path: v.path,
        times,
        fps: (24000, 1001),
    }
}

/// An MPEG-TS starting at about 10 s (11.4 s: mpegts adds 1.4 s).
fn ts_10s() -> Late {
    let v = SynthVideo::new(320, 240)
        .frames(100)
        .start_offset(10.0)
        .container("ts")
        .cached();
    assert!(
        oracle::input_start_time(&v.path) >= 10.0,
        "premise: the TS starts after 10 s"
    );
    Late {
        times: timeline(&v.path, (25, 1)),
        path: v.path,
        fps: (25, 1),
    }
}

/// An MP4 whose video track has an edit list that delays it by 0.5 s behind its audio.
fn mp4_edit_list(dir: &Path) -> Late {
    let v = SynthVideo::new(320, 240)
        .frames(100)
        .audio_tone(440.0)
        .cached();
    let out = dir.join("edited.mp4");
    ffmpeg(&[
        "-v",
        "error",
        "-y",
        "-i",
        &p(&v.path),
        "-itsoffset",
        "0.5",
        "-i",
        &p(&v.path),
        "-map",
        "1:v",
        "-map",
        "0:a",
        "-c",
        "copy",
        &p(&out),
    ]);
    let times = timeline(&out, (25, 1));
    assert!(
        (times[0] - 0.5).abs() < 1e-3,
        "premise: the edit list shows the first frame at 0.5 s, ffprobe says {}",
        times[0]
    );
    Late {
        path: out,
        times,
        fps: (25, 1),
    }
}

/// Mean absolute difference (Y + U + V) between two frames on the outline of `BOX`, 5 px
/// wide.
fn outline_diff(a: &Frame, b: &Frame) -> f64 {
    let (x0, y0, x1, y1) = BOX;
    let w = a.width;
    let cw = w.div_ceil(2);
    let (mut sum, mut n) = (0f64, 0f64);
    for y in y0..y1 {
        for x in x0..x1 {
            let ring = x < x0 + 5 || x >= x1 - 5 || y < y0 + 5 || y >= y1 - 5;
            if !ring {
                continue;
            }
            let d = |plane: usize, i: usize| {
                (a.plane(plane)[i] as f64 - b.plane(plane)[i] as f64).abs()
            };
            sum += d(0, y * w + x) + d(1, (y / 2) * cw + x / 2) + d(2, (y / 2) * cw + x / 2);
            n += 1.0;
        }
    }
    sum / n
}

/// The frames (output indices) of `drawn` that carry a box on `BOX`'s outline, judged against
/// ffmpeg's decode of `plain` (the same frames without boxes).
fn boxed_frames(drawn: &Path, plain: &Path) -> BTreeSet<usize> {
    let a = oracle::decode_frames(drawn, PixFmt::Yuv420p, None);
    let b = oracle::decode_frames(plain, PixFmt::Yuv420p, None);
    assert_eq!(a.len(), b.len(), "{drawn:?} and {plain:?} frame counts");
    (0..a.len())
        .filter(|&i| outline_diff(&a[i], &b[i]) > 30.0)
        .collect()
}

/// `vidprep overlay SRC --boxes BOXES --fill none` with a thick box and no label.
fn overlay(src: &Path, boxes: &Path, out: &Path, extra: &[&str]) {
    vidprep()
        .arg("overlay")
        .arg(src)
        .arg("--boxes")
        .arg(boxes)
        .args([
            "--fill",
            "none",
            "--thickness",
            "5",
            "--no-labels",
            "--color",
            "ff00ff",
            "--preset",
            "ultrafast",
            "--crf",
            "10",
            "--no-audio",
        ])
        .args(extra)
        .arg("-o")
        .arg(out)
        .assert()
        .success();
}

/// The same frames as `overlay` writes, without boxes (what the box diff compares against):
/// a `cut` of the whole video with the same encoder settings.
fn plain_copy(src: &Path, out: &Path) {
    vidprep()
        .arg("cut")
        .arg(src)
        .args(["--preset", "ultrafast", "--crf", "10", "--no-audio", "-o"])
        .arg(out)
        .assert()
        .success();
}

/// A V-STaR item keyed as V-STaR's own files are: `timestamp = frame_index / fps` rounded to
/// three decimals, for `frames`.
fn vstar_item(frames: &[usize], fps: (u32, u32)) -> String {
    let (x0, y0, x1, y1) = BOX;
    let boxes: Vec<String> = frames
        .iter()
        .map(|&i| {
            let t = i as f64 * fps.1 as f64 / fps.0 as f64;
            format!(
                r#"{{"timestamp": {:.3}, "frame_index": {i}, "xmin": {x0}, "ymin": {y0}, "xmax": {x1}, "ymax": {y1}}}"#,
                t
            )
        })
        .collect();
    format!(
        r#"{{"vid": "late", "fps": {}, "width": 320, "height": 240, "frame_count": 100, "object": "thing", "timestamps": [0.0, 1.0], "bboxes": [{}]}}"#,
        fps.0 as f64 / fps.1 as f64,
        boxes.join(", ")
    )
}

/// V-STaR boxes keyed by time for frames 10, 20, ..., 90 are drawn on exactly those frames.
fn vstar_times_land_on_their_frames(src: &Late) {
    let dir = tempfile::tempdir().unwrap();
    let want: Vec<usize> = (1..=9).map(|k| k * 10).collect();
    let boxes = dir.path().join("item.json");
    std::fs::write(&boxes, vstar_item(&want, src.fps)).unwrap();
    let (drawn, plain) = (dir.path().join("drawn.mp4"), dir.path().join("plain.mp4"));
    overlay(&src.path, &boxes, &drawn, &[]);
    plain_copy(&src.path, &plain);
    // Output frame k shows source frame k (the codes say so).
    let codes = oracle::frame_codes(&drawn);
    assert_eq!(codes, (0..100).collect::<Vec<u32>>());
    let got: Vec<usize> = boxed_frames(&drawn, &plain).into_iter().collect();
    assert_eq!(got, want, "V-STaR time keys on {:?}", src.path);
    // `--keys frame` agrees.
    let keyed = dir.path().join("by_frame.mp4");
    overlay(&src.path, &boxes, &keyed, &["--keys", "frame"]);
    let got: Vec<usize> = boxed_frames(&keyed, &plain).into_iter().collect();
    assert_eq!(got, want, "V-STaR frame keys on {:?}", src.path);
}

#[test]
fn vstar_times_land_on_their_frames_in_a_late_stamped_avi() {
    vstar_times_land_on_their_frames(&late_avi());
}

#[test]
fn vstar_times_land_on_their_frames_in_a_ts_with_a_10s_start() {
    vstar_times_land_on_their_frames(&ts_10s());
}

#[test]
fn vstar_times_land_on_their_frames_in_an_mp4_with_an_edit_list() {
    let dir = tempfile::tempdir().unwrap();
    vstar_times_land_on_their_frames(&mp4_edit_list(dir.path()));
}

/// Plain CSV times are on the timeline `cut --start` uses: a time inside frame k's display
/// interval (by ffprobe's times from the input's start) boxes frame k, and `cut --start` at
/// the same time begins with the next frame (the first at or after it).
fn csv_times_are_on_the_cut_timeline(src: &Late) {
    let dir = tempfile::tempdir().unwrap();
    let (x0, y0, x1, y1) = BOX;
    let want = [5usize, 15, 40];
    let mut csv = String::from("time,track_id,x1,y1,x2,y2\n");
    let mids: Vec<f64> = want
        .iter()
        .map(|&k| (src.times[k] + src.times[k + 1]) / 2.0)
        .collect();
    for (j, t) in mids.iter().enumerate() {
        csv.push_str(&format!("{t:.6},{j},{x0},{y0},{x1},{y1}\n"));
    }
    let boxes = dir.path().join("boxes.csv");
    std::fs::write(&boxes, csv).unwrap();
    let (drawn, plain) = (dir.path().join("drawn.mp4"), dir.path().join("plain.mp4"));
    overlay(&src.path, &boxes, &drawn, &[]);
    plain_copy(&src.path, &plain);
    let got: Vec<usize> = boxed_frames(&drawn, &plain).into_iter().collect();
    assert_eq!(got, want.to_vec(), "CSV times on {:?}", src.path);
    let cut = dir.path().join("cut.mp4");
    vidprep()
        .arg("cut")
        .arg(&src.path)
        .args(["--start", &format!("{:.6}", mids[1]), "--end", "60"])
        .args(["--preset", "ultrafast", "--no-audio", "-o"])
        .arg(&cut)
        .assert()
        .success();
    assert_eq!(
        oracle::frame_codes(&cut)[0] as usize,
        want[1] + 1,
        "cut --start {} on {:?}",
        mids[1],
        src.path
    );
}

#[test]
fn csv_times_are_on_the_cut_timeline_in_a_late_stamped_avi() {
    csv_times_are_on_the_cut_timeline(&late_avi());
}

#[test]
fn csv_times_are_on_the_cut_timeline_in_a_ts_with_a_10s_start() {
    csv_times_are_on_the_cut_timeline(&ts_10s());
}

#[test]
fn csv_times_are_on_the_cut_timeline_in_an_mp4_with_an_edit_list() {
    let dir = tempfile::tempdir().unwrap();
    csv_times_are_on_the_cut_timeline(&mp4_edit_list(dir.path()));
}

/// A GOT-10k sequence of `n` 160x120 JPEGs at 10 Hz without frame codes, its box the same on
/// every frame: `BOX` once scaled by 2 into a 320x240 host.
fn sequence(dir: &Path, n: u32) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    ffmpeg(&[
        "-v",
        "error",
        "-y",
        "-f",
        "lavfi",
        "-i",
        "testsrc=size=160x120:rate=10",
        "-frames:v",
        &n.to_string(),
        "-q:v",
        "2",
        "-start_number",
        "1",
        &p(&dir.join("%08d.jpg")),
    ]);
    let (x0, y0, x1, y1) = BOX;
    let line = format!(
        "{},{},{},{}\n",
        x0 / 2,
        y0 / 2,
        (x1 - x0) / 2,
        (y1 - y0) / 2
    );
    std::fs::write(dir.join("groundtruth.txt"), line.repeat(n as usize)).unwrap();
    std::fs::write(
        dir.join("meta_info.ini"),
        "[METAINFO]\nobject_class: cart\nanno_fps: 10Hz\n",
    )
    .unwrap();
    dir.to_path_buf()
}

/// `insert` into `host` writes V-STaR boxes and `timestamps` that `overlay` and `detect` read
/// back onto exactly the needle's frames (the output frames without a frame code).
fn insert_round_trip(host: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let seq = sequence(&dir.path().join("seq"), 10);
    let out = dir.path().join("needle.mp4");
    vidprep()
        .args(["insert", "--host"])
        .arg(host)
        .arg("--sequence")
        .arg(&seq)
        .args([
            "--at",
            "1s",
            "--preset",
            "ultrafast",
            "--crf",
            "10",
            "--no-audio",
            "-o",
        ])
        .arg(&out)
        .assert()
        .success();
    let vstar_path = dir.path().join("needle.vstar.json");
    let item = json(&vstar_path);
    // The needle by pixels: the output frames that show no host frame code.
    let codes = oracle::frame_codes_opts(&out, &oracle::DecodeOpts::new(PixFmt::Yuv420p));
    let needle: Vec<usize> = (0..codes.len()).filter(|&i| codes[i].is_none()).collect();
    let (first, last) = (needle[0], *needle.last().unwrap());
    assert_eq!(needle, (first..=last).collect::<Vec<_>>(), "one needle run");
    // `timestamps`: half-open, from the first needle frame to the end of the last, in
    // seconds from the output's first frame (ffprobe).
    let times = oracle::frame_pts(&out);
    let ts: Vec<f64> = item["timestamps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert!(
        (ts[0] - (times[first] - times[0])).abs() < 1e-3
            && (ts[1] - (times[last + 1] - times[0])).abs() < 1e-3,
        "timestamps {ts:?} for needle frames {first}..={last} at {} .. {}",
        times[first],
        times[last + 1]
    );
    // overlay reads the boxes (time keys) onto the needle frames.
    let (drawn, plain) = (dir.path().join("drawn.mp4"), dir.path().join("plain.mp4"));
    overlay(&out, &vstar_path, &drawn, &[]);
    plain_copy(&out, &plain);
    let got: Vec<usize> = boxed_frames(&drawn, &plain).into_iter().collect();
    assert_eq!(got, needle, "boxes drawn from {vstar_path:?}");
    // detect reads `timestamps` as the same half-open span.
    let manifest = dir.path().join("m.jsonl");
    let v = vidprep()
        .arg("detect")
        .arg(&out)
        .arg("-o")
        .arg(&manifest)
        .args(["--by", "annotations", "--annotations"])
        .arg(&vstar_path)
        .args(["--temporal", "--min-length", "1", "--json"])
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&v.get_output().stdout).unwrap();
    let spans: Vec<(u64, u64)> = v["proposals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["start"].as_u64().unwrap(), s["end"].as_u64().unwrap()))
        .collect();
    assert_eq!(spans, vec![(first as u64, last as u64 + 1)], "detect {v}");
}

#[test]
fn insert_round_trip_on_a_late_stamped_avi() {
    insert_round_trip(&late_avi().path);
}

#[test]
fn insert_round_trip_on_a_ts_with_a_10s_start() {
    insert_round_trip(&ts_10s().path);
}

#[test]
fn insert_round_trip_on_an_mp4_with_an_edit_list() {
    let dir = tempfile::tempdir().unwrap();
    insert_round_trip(&mp4_edit_list(dir.path()).path);
}

/// `--boxes-out vstar` writes `timestamps` half-open (to the end of the last boxed frame), and
/// `detect --temporal` reads them back as exactly the boxed frames (by pixels).
#[test]
fn boxes_out_vstar_timestamps_are_half_open_and_read_back() {
    let v = SynthVideo::new(320, 240).frames(50).cached();
    let dir = tempfile::tempdir().unwrap();
    let (x0, y0, x1, y1) = BOX;
    let boxes = dir.path().join("boxes.json");
    std::fs::write(
        &boxes,
        format!(
            r#"{{"vidprep_annotations": 1, "coords": "pixels", "tracks": [{{"id": "a", "keys": [
                {{"frame": 5, "box": [{x0}, {y0}, {x1}, {y1}]}}, {{"frame": 15, "box": [{x0}, {y0}, {x1}, {y1}]}}]}}]}}"#
        ),
    )
    .unwrap();
    let out = dir.path().join("c.mp4");
    vidprep()
        .arg("overlay")
        .arg(&v.path)
        .arg("--boxes")
        .arg(&boxes)
        .args(["--thickness", "5", "--no-labels", "--color", "ff00ff"])
        .args(["--preset", "ultrafast", "--crf", "10", "--no-audio"])
        .args(["--boxes-out", "vstar", "-o"])
        .arg(&out)
        .assert()
        .success();
    let plain = dir.path().join("plain.mp4");
    plain_copy(&v.path, &plain);
    let boxed: Vec<usize> = boxed_frames(&out, &plain).into_iter().collect();
    assert_eq!(boxed, (5..=15).collect::<Vec<_>>());
    let item = &json(&dir.path().join("c.vstar.json"))[0];
    let times = oracle::frame_pts(&out);
    assert_eq!(
        item["timestamps"],
        serde_json::json!([times[5] - times[0], times[16] - times[0]]),
        "frames 5..=15: from frame 5's time to frame 16's"
    );
    let manifest = dir.path().join("m.jsonl");
    let d = vidprep()
        .arg("detect")
        .arg(&out)
        .arg("-o")
        .arg(&manifest)
        .args(["--by", "annotations", "--annotations"])
        .arg(dir.path().join("c.vstar.json"))
        .args(["--temporal", "--min-length", "1", "--json"])
        .assert()
        .success();
    let d: Value = serde_json::from_slice(&d.get_output().stdout).unwrap();
    assert_eq!(d["proposals"][0]["start"], 5, "{d}");
    assert_eq!(d["proposals"][0]["end"], 16, "{d}");
}

/// A `--copy` cut holds whole GOPs; its sidecar states exactly those frames (ffprobe counts
/// them, their codes name them) and keeps the asked span under `resolved.requested`.
#[test]
fn copy_sidecar_states_the_frames_the_file_holds() {
    let v = SynthVideo::new(320, 240)
        .frames(300)
        .gop(50)
        .bframes(2)
        .cached();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("copy.mp4");
    vidprep()
        .arg("cut")
        .arg(&v.path)
        .args(["--start", "120", "--end", "170", "--copy", "-o"])
        .arg(&out)
        .assert()
        .success();
    let codes = oracle::frame_codes(&out);
    let held = oracle::count_frames(&out) as usize;
    assert_eq!(codes.len(), held);
    let sc = sidecar(&out);
    let r = &sc["resolved"];
    let kept = (
        r["kept"]["start"].as_u64().unwrap() as u32,
        r["kept"]["end"].as_u64().unwrap() as u32,
    );
    assert_eq!(codes, (kept.0..kept.1).collect::<Vec<u32>>(), "{r}");
    assert_eq!(r["frames"].as_u64().unwrap() as usize, held, "{r}");
    assert_eq!(sc["output"]["frames"].as_u64().unwrap() as usize, held);
    assert_eq!((kept.0, kept.1), (100, 200), "whole GOPs around 120..170");
    assert_eq!(
        r["requested"]["kept"],
        serde_json::json!({"start": 120, "end": 170})
    );
    assert_eq!(r["requested"]["frames"], 50);
    let times = timeline(&v.path, (25, 1));
    assert!(
        (r["start"]["seconds"].as_f64().unwrap() - times[100]).abs() < 1e-6,
        "{r}"
    );
    assert!(
        (r["end"]["seconds"].as_f64().unwrap() - times[200]).abs() < 1e-6,
        "{r}"
    );
    assert_eq!(support::source_frames(&sc), (100..200).collect::<Vec<_>>());
}

/// Sidecars are named after the video's stem: a second output with the same stem in the same
/// folder is refused instead of taking the first one's sidecar, and a file vidprep did not
/// write is never replaced.
#[test]
fn sidecars_never_describe_another_output() {
    let v = SynthVideo::new(320, 240).frames(20).cached();
    let dir = tempfile::tempdir().unwrap();
    let cut = |name: &str| {
        vidprep()
            .arg("cut")
            .arg(&v.path)
            .args(["--end", "10", "--preset", "ultrafast", "-o"])
            .arg(dir.path().join(name))
            .assert()
    };
    cut("a.MP4").success();
    let owner = |sc: &Path| json(sc)["output"]["path"].as_str().unwrap().to_string();
    let a_json = dir.path().join("a.json");
    assert!(owner(&a_json).ends_with("a.MP4"));
    for other in ["a.mkv", "a.mov"] {
        let out = cut(other).failure();
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(
            err.contains("a.MP4") && err.contains("a.json") && err.contains("different"),
            "{err}"
        );
        assert!(
            !dir.path().join(other).exists(),
            "{other} must not be written"
        );
        assert!(
            owner(&a_json).ends_with("a.MP4"),
            "a.json still describes a.MP4"
        );
    }
    // The same output again replaces its own sidecar.
    cut("a.MP4").success();
    // Once a.MP4 is gone its sidecar is stale and may be replaced.
    std::fs::remove_file(dir.path().join("a.MP4")).unwrap();
    cut("a.mkv").success();
    assert!(owner(&a_json).ends_with("a.mkv"));
    // A JSON file vidprep did not write is left alone.
    let mine = dir.path().join("b.json");
    std::fs::write(&mine, "{\"my\": \"notes\"}").unwrap();
    let out = cut("b.mp4").failure();
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("not a vidprep sidecar"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&mine).unwrap(),
        "{\"my\": \"notes\"}"
    );
    assert!(!dir.path().join("b.mp4").exists());
}

/// A capped export that must lower the frame rate says so: in a warning, on stderr, and in
/// the sidecar; ffprobe sees the lowered rate.
#[test]
fn a_capped_export_that_lowers_the_frame_rate_says_so() {
    let v = SynthVideo::new(640, 360).frames(100).cached();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("v.mp4");
    let run = vidprep()
        .args(["export", "video"])
        .arg(&v.path)
        .arg("-o")
        .arg(&out)
        .args(["--max-base64-bytes", "24000", "--no-audio", "--reencode"])
        .args(["--preset", "ultrafast"])
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&run.get_output().stderr).to_string();
    let probe = oracle::video_stream(&out);
    assert_eq!(probe["avg_frame_rate"], "25/2", "ffprobe: {probe}");
    assert_eq!(oracle::count_frames(&out), 50);
    let sc = sidecar(&out);
    let rate = &sc["budget"]["frame_rate"];
    assert_eq!(rate["source_fps"], 25.0, "{rate}");
    assert_eq!(rate["output_fps"], 12.5, "{rate}");
    assert_eq!(rate["frame_step"], 2);
    assert_eq!(rate["lowered"], true);
    let warned = |w: &str| w.contains("from 25 to 12.5 fps");
    assert!(
        sc["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| warned(w.as_str().unwrap())),
        "{}",
        sc["warnings"]
    );
    assert!(warned(&stderr), "{stderr}");
    assert!(std::fs::metadata(&out).unwrap().len().div_ceil(3) * 4 <= 24000);
}

/// The number after `flag` in `text`.
fn number_after(text: &str, flag: &str) -> f64 {
    let rest = &text[text
        .find(flag)
        .unwrap_or_else(|| panic!("{flag:?} in {text}"))
        + flag.len()..];
    let digits: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("a number after {flag:?} in {text}"))
}

/// An impossible budget is an error that says what would fit, and each thing it names does.
#[test]
fn an_impossible_budget_says_what_would_fit() {
    let v = SynthVideo::new(320, 240)
        .frames(100)
        .audio_tone(440.0)
        .cached();
    let dir = tempfile::tempdir().unwrap();
    let export = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let a = vidprep()
            .args(["export", "video"])
            .arg(&v.path)
            .arg("-o")
            .arg(&out)
            .args(["--reencode", "--preset", "ultrafast"])
            .args(extra)
            .assert();
        (out, a)
    };
    let (_, failed) = export("no.mp4", &["--max-base64-bytes", "20000"]);
    let failed = failed.failure();
    let err = String::from_utf8_lossy(&failed.get_output().stderr).to_string();
    assert!(
        err.contains("bit/s of video") && err.contains("What would fit"),
        "{err}"
    );
    let with_audio = number_after(&err, "--max-base64-bytes") as u64;
    let without = number_after(&err, "with audio,") as u64;
    let span = number_after(&err, "a span of at most");
    assert!(without < with_audio, "{err}");
    for (name, extra, cap) in [
        (
            "a.mp4",
            vec![format!("--max-base64-bytes={with_audio}")],
            with_audio,
        ),
        (
            "b.mp4",
            vec![format!("--max-base64-bytes={without}"), "--no-audio".into()],
            without,
        ),
        (
            "c.mp4",
            vec!["--max-base64-bytes=20000".into(), format!("--end={span}s")],
            20000,
        ),
    ] {
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let (out, a) = export(name, &extra);
        a.success();
        let bytes = std::fs::metadata(&out).unwrap().len();
        assert!(
            bytes.div_ceil(3) * 4 <= cap,
            "{name}: {bytes} bytes over {cap}"
        );
    }
}

/// The review page counts annotated frames once: the check on an item's page and its facts
/// panel both say how many of the clip's frames carry boxes, which ffmpeg's decode of the clip
/// confirms by pixels.
#[test]
fn review_page_counts_annotated_frames_as_the_facts_do() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let source = SynthVideo::new(320, 240).frames(100).gop(25).cached();
    std::fs::copy(&source.path, d.join("src.mp4")).unwrap();
    let (x0, y0, x1, y1) = BOX;
    // Boxes on source frames 20..=83; the clip keeps 10..60 (span 10..90, decision at 50).
    std::fs::write(
        d.join("boxes.json"),
        format!(
            r#"{{"vidprep_annotations": 1, "coords": "pixels", "tracks": [{{"id": "a", "keys": [
                {{"frame": 20, "box": [{x0}, {y0}, {x1}, {y1}]}}, {{"frame": 83, "box": [{x0}, {y0}, {x1}, {y1}]}}]}}]}}"#
        ),
    )
    .unwrap();
    let span = r#""source": "src.mp4", "start": 10, "end": 90, "decision": 50"#;
    let export =
        r#""exports": [{"kind": "clip", "preset": "ultrafast", "crf": 10, "audio": false}]"#;
    let lines = [
        format!(
            r#"{{"id": "a", {span}, "boxes": {{"path": "boxes.json", "thickness": 5, "labels": false, "color": "ff00ff"}}, {export}}}"#
        ),
        format!(r#"{{"id": "p", {span}, {export}}}"#),
    ];
    std::fs::write(d.join("m.jsonl"), lines.join("\n") + "\n").unwrap();
    vidprep()
        .current_dir(d)
        .args(["run", "m.jsonl", "--out-dir", "out"])
        .assert()
        .success();
    vidprep()
        .current_dir(d)
        .args(["review", "out", "--manifest", "m.jsonl"])
        .assert()
        .success();
    let boxed = boxed_frames(&d.join("out/a/clip.mp4"), &d.join("out/p/clip.mp4")).len();
    assert_eq!(boxed, 40, "source frames 20..60 of the clip carry boxes");
    // The item's page data.
    let items = d.join("out/review/data/items");
    let detail = std::fs::read_dir(&items)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .map(|t| {
            let json = t
                .split_once(", ")
                .map(|(_, rest)| rest.trim_end().trim_end_matches(';').trim_end_matches(')'))
                .unwrap()
                .to_string();
            serde_json::from_str::<Value>(&json).unwrap()
        })
        .find(|v| v["id"] == "a")
        .expect("item a's page data");
    let a = &detail["annotations"];
    assert_eq!(a["frames_in_clip"], boxed, "{a}");
    assert_eq!(a["in_truncated_part"], 24, "source frames 60..=83: {a}");
    let facts: Vec<String> = detail["facts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f[0] == "Annotated frames")
        .map(|f| f[1].as_str().unwrap().to_string())
        .collect();
    assert!(
        facts[0].starts_with(&format!("{boxed} in the clip")),
        "{facts:?}"
    );
    // Every count the page's script shows for the check is one the page data has.
    let js = std::fs::read_to_string(d.join("out/review/assets/review.js")).unwrap();
    let block = &js[js
        .find("var a = d.annotations;")
        .expect("the annotations check")..];
    let block = &block[..block.find("// warnings").unwrap_or(block.len())];
    for field in block.split("a.").skip(1) {
        let name: String = field
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        assert!(
            a.get(&name).is_some(),
            "review.js reads annotations.{name}, which the page data lacks: {a}"
        );
    }
    // In a browser (when one is installed): the check says what the facts say.
    let downloads = d.join("downloads");
    std::fs::create_dir_all(&downloads).unwrap();
    let Some(b) = support::webdriver::Browser::start(&downloads) else {
        return;
    };
    b.goto_file(&d.join("out/review/index.html"));
    let wait = std::time::Duration::from_secs(20);
    b.wait_until(
        "return document.querySelectorAll('#item-list .item-row').length === 2;",
        wait,
    );
    b.click(&b.find(".item-row[data-id='a']"));
    b.wait_until(
        "const d = document.getElementById('detail'); return d && d.dataset.id === 'a' && [...document.querySelectorAll('.check-head')].some(h => h.textContent.startsWith('Annotated frames'));",
        wait,
    );
    let shown = b.execute(
        "return [...document.querySelectorAll('.check-head')].map(h => h.textContent).find(t => t.startsWith('Annotated frames'));",
        vec![],
    );
    assert_eq!(
        shown.as_str().unwrap(),
        format!("Annotated frames{boxed} in clip · 24 outside")
    );
}

// ---- Issue 40: one timeline for every time vidprep writes; times keyed with a rounded rate.

/// A file whose audio starts at the input's start and whose first video frame (H.264 with
/// frame codes at `fps`) comes about `lead` seconds later: the video remuxed behind a tone
/// with `-itsoffset` into `name` (its extension picks the muxer). ffprobe's frame times are
/// the oracle; the premise checks the lead within 3 ms (muxers shift by a few ms).
fn audio_first(dir: &Path, name: &str, fps: (u32, u32), itsoffset: f64, lead: f64) -> Late {
    let v = SynthVideo::new(320, 240)
        .fps(fps.0, fps.1)
        .frames(100)
        .cached();
    let out = dir.join(name);
    let audio = if name.ends_with(".ts") { "mp2" } else { "aac" };
    ffmpeg(&[
        "-v",
        "error",
        "-y",
        "-itsoffset",
        &itsoffset.to_string(),
        "-i",
        &p(&v.path),
        "-f",
        "lavfi",
        "-i",
        "sine=frequency=440:sample_rate=48000:duration=7",
        "-map",
        "0:v",
        "-map",
        "1:a",
        "-c:v",
        "copy",
        "-c:a",
        audio,
        &p(&out),
    ]);
    let times = timeline(&out, fps);
    let audio_start = oracle::streams(&oracle::probe(&out), "audio")[0]["start_time"]
        .as_str()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap();
    assert!(
        // (FFmpeg 9.0's muxers give 0.279 s for a 0.3 s offset: the times below are ffprobe's,
        // so only a late start is needed.)
        (times[0] - lead).abs() < 0.05
            && (audio_start - oracle::input_start_time(&out)).abs() < 1e-6,
        "premise: {name}'s audio starts at the input's start and its first video frame {lead} s \
         later; ffprobe says the frame is at {} and the audio at {audio_start} (start {})",
        times[0],
        oracle::input_start_time(&out)
    );
    Late {
        path: out,
        times,
        fps,
    }
}

/// `export frames --fps 1` writes every frame's time on the timeline `cut --start` uses: the
/// `time_s` of `frames.json`, the file name and the `time` label are ffprobe's time of the
/// frame the image shows (by its painted code) from the input's start; `stream_time_s`
/// counts from the first frame; `cut --start` at the written time begins with that frame.
fn sampled_times_are_cut_times(src: &Late) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("frames");
    let j = support::export_frames(&src.path, &out, &["--fps", "1", "--format", "png"]);
    let frames = j["frames"].as_array().unwrap();
    assert!(frames.len() >= 3, "{:?}: {} frames", src.path, frames.len());
    for f in frames {
        let file = f["file"].as_str().unwrap();
        let code = oracle::decode_image(&out.join(file), PixFmt::Gray)
            .code()
            .unwrap_or_else(|| panic!("{file}: no frame code")) as usize;
        assert_eq!(f["source_frame"], code, "{file} shows frame {code}");
        let want = src.times[code];
        let t = f["time_s"].as_f64().unwrap();
        assert!(
            (t - want).abs() < 1e-3,
            "{:?} frame {code}: time_s {t}, ffprobe {want} from the input's start",
            src.path
        );
        assert!(
            file.ends_with(&format!("_{want:09.3}s.png")),
            "{file}: the name carries {want:.3}"
        );
        let stream = f["stream_time_s"].as_f64().unwrap();
        assert!(
            (stream - (want - src.times[0])).abs() < 1e-3,
            "frame {code}: stream_time_s {stream}, from the first frame {}",
            want - src.times[0]
        );
    }
    // The `time` label says the same time.
    let labelled = dir.path().join("labelled");
    let jl = support::export_frames(&src.path, &labelled, &["--fps", "1", "--label", "time"]);
    for f in jl["frames"].as_array().unwrap() {
        let t = f["time_s"].as_f64().unwrap();
        assert_eq!(f["label"], format!("{t:.2}s"));
    }
    // Given back to `cut --start`, each written time begins with its frame.
    for f in &frames[1..3] {
        let code = f["source_frame"].as_u64().unwrap() as usize;
        let cut = dir.path().join(format!("cut{code}.mp4"));
        vidprep()
            .arg("cut")
            .arg(&src.path)
            .args(["--start", &format!("{}s", f["time_s"])])
            .args(["--preset", "ultrafast", "--no-audio", "-o"])
            .arg(&cut)
            .assert()
            .success();
        assert_eq!(
            oracle::frame_codes(&cut)[0] as usize,
            code,
            "cut --start {}s on {:?}",
            f["time_s"],
            src.path
        );
        let start = sidecar(&cut)["resolved"]["start"]["seconds"]
            .as_f64()
            .unwrap();
        assert!(
            (start - src.times[code]).abs() < 1e-3,
            "sidecar start {start}"
        );
    }
}

#[test]
fn sampled_times_are_cut_times_in_a_ts_whose_video_starts_0_119s_in() {
    let dir = tempfile::tempdir().unwrap();
    sampled_times_are_cut_times(&audio_first(dir.path(), "a.ts", (25, 1), 0.109, 0.119));
}

#[test]
fn sampled_times_are_cut_times_in_a_24000_1001_ts_whose_video_starts_0_119s_in() {
    let dir = tempfile::tempdir().unwrap();
    let src = audio_first(dir.path(), "a.ts", (24000, 1001), 0.109, 0.119);
    sampled_times_are_cut_times(&src);
}

#[test]
fn sampled_times_are_cut_times_in_a_ts_whose_video_starts_1_4s_in() {
    let dir = tempfile::tempdir().unwrap();
    sampled_times_are_cut_times(&audio_first(dir.path(), "a.ts", (25, 1), 1.39, 1.4));
}

#[test]
fn sampled_times_are_cut_times_in_an_mkv_whose_video_starts_late() {
    let dir = tempfile::tempdir().unwrap();
    sampled_times_are_cut_times(&audio_first(dir.path(), "a.mkv", (25, 1), 0.279, 0.3));
}

#[test]
fn sampled_times_are_cut_times_in_an_mp4_with_an_edit_list() {
    let dir = tempfile::tempdir().unwrap();
    sampled_times_are_cut_times(&mp4_edit_list(dir.path()));
}

#[test]
fn sampled_times_are_cut_times_in_a_late_stamped_avi() {
    sampled_times_are_cut_times(&late_avi());
}

/// A cut with a decision point reports where the file it wrote ends: its own duration
/// (ffprobe) and the source time of that end, not the time from the requested start.
#[test]
fn a_decision_point_is_reported_as_the_file_holds_it() {
    let dir = tempfile::tempdir().unwrap();
    let src = audio_first(dir.path(), "a.ts", (25, 1), 0.109, 0.119);
    let out = dir.path().join("clip.mp4");
    let run = vidprep()
        .arg("cut")
        .arg(&src.path)
        .args(["--start", "1.0s", "--decision", "60"])
        .args(["--preset", "ultrafast", "--no-audio", "-o"])
        .arg(&out)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&run.get_output().stdout).into_owned();
    let held = oracle::presented_duration(&out);
    let first = oracle::frame_codes(&out)[0] as usize;
    let end = src.times[first + 60];
    assert!(
        (held - 2.4).abs() < 1e-3,
        "premise: 60 frames at 25 fps, ffprobe {held}"
    );
    let said = number_after(&text, "ends at the decision point: ");
    assert!(
        (said - held).abs() < 1e-3,
        "the summary says {said} s, the file holds {held} s: {text}"
    );
    let source = number_after(&text, "(source time ");
    assert!(
        (source - end).abs() < 1e-3,
        "source time {source}, ffprobe {end}: {text}"
    );
}

/// V-STaR boxes for frames 10, 20, ..., 90 keyed at `key(i)` seconds from the first frame,
/// with `frame_index` and the item's rate written as `fps` (`"23.976"`).
fn vstar_keyed(fps: &str, key: impl Fn(usize) -> f64) -> (Vec<usize>, String) {
    let (x0, y0, x1, y1) = BOX;
    let frames: Vec<usize> = (1..=9).map(|k| k * 10).collect();
    let boxes: Vec<String> = frames
        .iter()
        .map(|&i| {
            format!(
                r#"{{"timestamp": {}, "frame_index": {i}, "xmin": {x0}, "ymin": {y0}, "xmax": {x1}, "ymax": {y1}}}"#,
                key(i)
            )
        })
        .collect();
    let item = format!(
        r#"{{"vid": "r", "fps": {fps}, "width": 320, "height": 240, "frame_count": 100, "object": "thing", "timestamps": [0.0, 1.0], "bboxes": [{}]}}"#,
        boxes.join(", ")
    );
    (frames, item)
}

/// Boxes keyed with a rounded rate land on the frames they name (by pixels, against
/// ffmpeg's decode), as `--keys frame` does.
fn rounded_rate_keys_land_on_their_frames(src: &Path, fps: &str, key: impl Fn(usize) -> f64) {
    let dir = tempfile::tempdir().unwrap();
    let (want, item) = vstar_keyed(fps, key);
    let boxes = dir.path().join("item.json");
    std::fs::write(&boxes, item).unwrap();
    let (drawn, plain) = (dir.path().join("drawn.mp4"), dir.path().join("plain.mp4"));
    overlay(src, &boxes, &drawn, &[]);
    plain_copy(src, &plain);
    assert_eq!(oracle::frame_codes(&drawn), (0..100).collect::<Vec<u32>>());
    let got: Vec<usize> = boxed_frames(&drawn, &plain).into_iter().collect();
    assert_eq!(got, want, "V-STaR time keys on {src:?}");
    let keyed = dir.path().join("by_frame.mp4");
    overlay(src, &boxes, &keyed, &["--keys", "frame"]);
    let got: Vec<usize> = boxed_frames(&keyed, &plain).into_iter().collect();
    assert_eq!(got, want, "V-STaR frame keys on {src:?}");
}

/// The reported case: an MPEG-4 AVI stamped at 2997/125 whose first frame is shown at 1/fps,
/// boxes keyed at `i * 1001 / 24000` with `"fps": 23.976`: a few hundred nanoseconds before
/// each frame's own time.
#[test]
fn rounded_rate_keys_land_on_their_frames_in_an_avi_stamped_2997_125() {
    let v = SynthVideo::new(320, 240)
        .fps(2997, 125)
        .frames(100)
        .codec(Codec::Mpeg4)
        .bframes(2)
        .container("avi")
        .cached();
    let s = oracle::video_stream(&v.path);
    assert_eq!(s["time_base"], "125/2997", "premise: stamped at 2997/125");
    let times = timeline(&v.path, (2997, 125));
    assert!(
        (times[0] - 125.0 / 2997.0).abs() < 1e-4,
        "premise: the first frame is at 1/fps, ffprobe says {}",
        times[0]
    );
    rounded_rate_keys_land_on_their_frames(&v.path, "23.976", |i| i as f64 * 1001.0 / 24000.0);
}

#[test]
fn rounded_rate_keys_land_on_their_frames_in_a_24000_1001_mp4() {
    let v = SynthVideo::new(320, 240)
        .fps(24000, 1001)
        .frames(100)
        .cached();
    assert_eq!(
        timeline(&v.path, (24000, 1001))[0],
        0.0,
        "premise: first frame at 0"
    );
    rounded_rate_keys_land_on_their_frames(&v.path, "23.976", |i| i as f64 / 23.976);
}

#[test]
fn rounded_rate_keys_land_on_their_frames_in_a_30000_1001_mp4() {
    let v = SynthVideo::new(320, 240)
        .fps(30000, 1001)
        .frames(100)
        .cached();
    assert_eq!(
        timeline(&v.path, (30000, 1001))[0],
        0.0,
        "premise: first frame at 0"
    );
    rounded_rate_keys_land_on_their_frames(&v.path, "29.97", |i| i as f64 / 29.97);
}

/// `cut --start` and `truncate --at` take a time a hundredth of a frame or less from a
/// frame's time as that frame's time: `i / 23.976` on a 24000/1001 video (a few nanoseconds
/// after frame i) starts a cut with frame i and ends a truncation before it, as
/// `i * 1001 / 24000` does; a time a quarter of a frame later does not.
fn rounded_rate_spans(fps: (u32, u32), rounded: f64) {
    let v = SynthVideo::new(320, 240)
        .fps(fps.0, fps.1)
        .frames(100)
        .cached();
    let dir = tempfile::tempdir().unwrap();
    for (i, later) in [(10usize, 0.0), (37, 0.0), (90, 0.0), (37, 0.25)] {
        let t = (i as f64 + later) / rounded;
        let cut = dir.path().join(format!("cut{i}_{later}.mp4"));
        vidprep()
            .arg("cut")
            .arg(&v.path)
            .args(["--start", &format!("{t:.9}s")])
            .args(["--preset", "ultrafast", "--no-audio", "-o"])
            .arg(&cut)
            .assert()
            .success();
        let want = if later > 0.0 { i + 1 } else { i };
        assert_eq!(
            oracle::frame_codes(&cut)[0] as usize,
            want,
            "cut --start {t:.9}s"
        );
        let kept = dir.path().join(format!("trunc{i}_{later}.mp4"));
        vidprep()
            .arg("truncate")
            .arg(&v.path)
            .args(["--at", &format!("{t:.9}s")])
            .args(["--preset", "ultrafast", "--no-audio", "-o"])
            .arg(&kept)
            .assert()
            .success();
        assert_eq!(
            oracle::count_frames(&kept) as usize,
            want,
            "truncate --at {t:.9}s keeps frames 0..{want}"
        );
    }
}

#[test]
fn rounded_rate_spans_on_a_24000_1001_mp4() {
    rounded_rate_spans((24000, 1001), 23.976);
}

#[test]
fn rounded_rate_spans_on_a_30000_1001_mp4() {
    rounded_rate_spans((30000, 1001), 29.97);
}

/// A V-STaR box whose `frame_index` and `timestamp` name frames a frame or more apart is
/// named in a warning (stderr and the sidecar); boxes that agree are not.
#[test]
fn a_vstar_box_whose_index_and_time_disagree_is_named() {
    let v = SynthVideo::new(320, 240).frames(100).cached();
    let dir = tempfile::tempdir().unwrap();
    let (x0, y0, x1, y1) = BOX;
    let item = format!(
        r#"{{"vid": "w", "fps": 25, "width": 320, "height": 240, "bboxes": [
            {{"timestamp": 0.4, "frame_index": 10, "xmin": {x0}, "ymin": {y0}, "xmax": {x1}, "ymax": {y1}}},
            {{"timestamp": 0.88, "frame_index": 20, "xmin": {x0}, "ymin": {y0}, "xmax": {x1}, "ymax": {y1}}},
            {{"timestamp": 1.22, "frame_index": 30, "xmin": {x0}, "ymin": {y0}, "xmax": {x1}, "ymax": {y1}}}]}}"#
    );
    let boxes = dir.path().join("item.json");
    std::fs::write(&boxes, item).unwrap();
    let out = dir.path().join("drawn.mp4");
    let run = vidprep()
        .arg("overlay")
        .arg(&v.path)
        .arg("--boxes")
        .arg(&boxes)
        .args(["--preset", "ultrafast", "--no-audio", "-o"])
        .arg(&out)
        .assert()
        .success();
    let err = String::from_utf8_lossy(&run.get_output().stderr).into_owned();
    let warned: Vec<&str> = err.lines().filter(|l| l.contains("disagree")).collect();
    assert_eq!(warned.len(), 1, "one box disagrees: {err}");
    assert!(
        warned[0].contains("bboxes[1]") && warned[0].contains("item.json"),
        "the warning names the file and the box: {}",
        warned[0]
    );
    let side = sidecar(&out);
    let listed = side["warnings"].as_array().unwrap();
    assert!(listed
        .iter()
        .any(|w| w.as_str().unwrap().contains("bboxes[1]")));
}
