//! A source changing while vidprep reads it (issue 51, item 7): a recording still being
//! written, a file renamed over the source, a boxes file saved, an image added to a sequence
//! folder. Each command pauses once its inputs are read (the test-only
//! `VIDPREP_FAULT_READ_GATE`: it writes `read` and waits for `go`), the test changes the input,
//! and the request must fail naming the input and how it changed, leaving no output; a resumed
//! run then makes the item from the whole file. The oracle is the file system and ffprobe's
//! frame count, never vidprep's records.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common;
use crate::support;

use common::synth::SynthVideo;
use support::vidprep;

/// Runs `vidprep ARGS` in `dir`, and once its inputs are read runs `change` before letting it
/// go; returns (exit code, stderr).
fn with_change_during_read(dir: &Path, args: &[&str], change: impl FnOnce()) -> (i32, String) {
    let gate = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("vidprep"))
        .args(args)
        .current_dir(dir)
        .env("VIDPREP_FAULT_READ_GATE", gate.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(120);
    while !gate.path().join("read").exists() {
        assert!(
            Instant::now() < until,
            "vidprep {args:?} never read its inputs"
        );
        if let Some(status) = child.try_wait().unwrap() {
            panic!("vidprep {args:?} ended before reading its inputs: {status}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    change();
    std::fs::write(gate.path().join("go"), b"").unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!err.contains("panicked"), "{err}");
    (out.status.code().unwrap_or(-1), err)
}

/// Every file and folder below `dir`, relative, sorted.
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .filter_map(|e| e.ok())
        .map(|e| e.path().strip_prefix(dir).unwrap().to_path_buf())
        .collect();
    v.sort();
    v
}

/// A 400-frame MPEG-TS recording and the byte (a TS packet boundary) up to which a recorder
/// has written it, about 40 % in.
fn recording() -> (Vec<u8>, usize) {
    let src = SynthVideo::new(320, 240)
        .frames(400)
        .gop(25)
        .container("ts")
        .cached();
    let bytes = std::fs::read(&src.path).unwrap();
    let cut = bytes.len() * 2 / 5 / 188 * 188;
    (bytes, cut)
}

#[test]
fn a_recording_that_grows_during_the_read_fails_its_item_and_resume_makes_it_whole() {
    let (bytes, written) = recording();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("rec.ts"), &bytes[..written]).unwrap();
    std::fs::write(
        d.join("m.jsonl"),
        "{\"id\": \"rec\", \"source\": \"rec.ts\", \"exports\": [{\"kind\": \"clip\", \"crf\": 30, \"preset\": \"ultrafast\"}]}\n",
    )
    .unwrap();
    let first_part = common::oracle::count_frames(&d.join("rec.ts"));
    let (code, err) = with_change_during_read(d, &["run", "m.jsonl", "--out-dir", "out"], || {
        // The recorder writes the rest.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(d.join("rec.ts"))
            .unwrap();
        std::io::Write::write_all(&mut f, &bytes[written..]).unwrap();
    });
    assert_eq!(code, 1, "{err}");
    let report = std::fs::read_to_string(d.join("out/report.jsonl")).unwrap();
    assert!(
        report.contains("\"failed\"") && report.contains("changed while vidprep read it"),
        "{report}"
    );
    assert!(
        report.contains(&format!("from {written} to {} bytes", bytes.len())),
        "{report}"
    );
    assert!(
        !d.join("out/rec").exists(),
        "an item made from the first {first_part} frames was kept: {:?}",
        tree(&d.join("out"))
    );

    // The recording is complete: a resumed run makes the item from all of it.
    vidprep()
        .current_dir(d)
        .args(["run", "m.jsonl", "--out-dir", "out", "--resume"])
        .assert()
        .success();
    let whole = common::oracle::count_frames(&d.join("rec.ts"));
    assert!(whole > first_part, "{whole} frames, {first_part} before");
    assert_eq!(
        common::oracle::count_frames(&d.join("out/rec/clip.mp4")),
        whole,
        "the clip has every frame of the finished recording"
    );
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("out/rec/item.json")).unwrap())
            .unwrap();
    assert_eq!(record["inputs"][0]["bytes"], bytes.len() as u64);
    // And it is current now: a second resume keeps it.
    let out = vidprep()
        .current_dir(d)
        .args(["run", "m.jsonl", "--out-dir", "out", "--resume"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(text.contains("1 done earlier"), "{text}");
}

#[test]
fn a_recording_that_grows_during_a_cut_leaves_no_output() {
    let (bytes, written) = recording();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("rec.ts"), &bytes[..written]).unwrap();
    let (code, err) = with_change_during_read(
        d,
        &["cut", "rec.ts", "--preset", "ultrafast", "-o", "c.mp4"],
        || {
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(d.join("rec.ts"))
                .unwrap();
            std::io::Write::write_all(&mut f, &bytes[written..]).unwrap();
        },
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("rec.ts") && err.contains("changed while vidprep read it"),
        "{err}"
    );
    assert_eq!(tree(d), vec![PathBuf::from("rec.ts")], "{err}");
}

#[test]
fn a_source_renamed_over_during_the_read_fails_naming_it() {
    let a = SynthVideo::new(320, 240).frames(50).cached();
    let b = SynthVideo::new(320, 240).frames(50).gop(10).cached();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(&a.path, d.join("v.mp4")).unwrap();
    let (code, err) = with_change_during_read(
        d,
        &[
            "cut",
            "v.mp4",
            "--end",
            "20",
            "--preset",
            "ultrafast",
            "-o",
            "c.mp4",
        ],
        || {
            std::fs::copy(&b.path, d.join("new.mp4")).unwrap();
            std::fs::rename(d.join("new.mp4"), d.join("v.mp4")).unwrap();
        },
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("v.mp4") && err.contains("another file was put in its place"),
        "{err}"
    );
    assert_eq!(tree(d), vec![PathBuf::from("v.mp4")], "{err}");
}

#[test]
fn a_boxes_file_saved_during_the_read_fails_the_request() {
    let a = SynthVideo::new(320, 240).frames(50).cached();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(&a.path, d.join("v.mp4")).unwrap();
    let boxes: String = (0..50).map(|_| "10,10,50,50\n").collect();
    std::fs::write(d.join("groundtruth.txt"), &boxes).unwrap();
    let (code, err) = with_change_during_read(
        d,
        &[
            "cut",
            "v.mp4",
            "--end",
            "20",
            "--boxes",
            "groundtruth.txt",
            "--preset",
            "ultrafast",
            "-o",
            "c.mp4",
        ],
        // The same size, another box.
        || std::fs::write(d.join("groundtruth.txt"), boxes.replacen("10,", "11,", 1)).unwrap(),
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("groundtruth.txt") && err.contains("modification time changed"),
        "{err}"
    );
    assert_eq!(
        tree(d),
        vec![PathBuf::from("groundtruth.txt"), PathBuf::from("v.mp4")],
        "{err}"
    );
}

#[test]
fn an_image_added_to_a_sequence_during_the_read_fails_the_export() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("seq")).unwrap();
    common::cmd::run_ok(
        "ffmpeg",
        &[
            "-v",
            "error",
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=64x48:rate=25",
            "-frames:v",
            "11",
            "-start_number",
            "1",
            &d.join("seq/%04d.png").display().to_string(),
        ],
    );
    std::fs::rename(d.join("seq/0011.png"), d.join("spare.png")).unwrap();
    let (code, err) = with_change_during_read(
        d,
        &[
            "export",
            "frames",
            "seq",
            "--source-fps",
            "25",
            "--count",
            "4",
            "--out-dir",
            "o",
        ],
        || std::fs::rename(d.join("spare.png"), d.join("seq/0011.png")).unwrap(),
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("0011.png appeared in it") && err.contains("changed while vidprep read it"),
        "{err}"
    );
    assert!(!d.join("o").exists(), "{:?}", tree(d));
}

#[test]
fn inputs_left_alone_under_the_gate_give_the_output() {
    let a = SynthVideo::new(320, 240).frames(50).cached();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(&a.path, d.join("v.mp4")).unwrap();
    // A file beside the source (not an input) may change freely.
    std::fs::write(d.join("notes.txt"), "x").unwrap();
    let (code, err) = with_change_during_read(
        d,
        &[
            "cut",
            "v.mp4",
            "--end",
            "20",
            "--preset",
            "ultrafast",
            "-o",
            "c.mp4",
        ],
        || std::fs::write(d.join("notes.txt"), "xy").unwrap(),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(common::oracle::count_frames(&d.join("c.mp4")), 20);
}
