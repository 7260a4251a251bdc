//! Where `vidprep track` may write its boxes file: the output is claimed in an output group
//! whose inputs are the source and the keys file, before any frame is decoded. So the group's
//! own checks refuse an output that is the keys file or the source, or lies inside an image
//! sequence's folder (exit 2, nothing written, the inputs byte for byte as they were), and
//! an existing file is replaced only when `vidprep track` wrote it. The fills here need no
//! tracker (`--fill linear`), so these run without the `tracking` feature.

use crate::common;
use crate::support;

use std::path::{Path, PathBuf};

use common::cmd::{p, run_ok};
use support::vidprep;

/// A 10-frame 64x48 clip.
fn clip(dir: &Path) -> PathBuf {
    let path = dir.join("clip.mp4");
    run_ok(
        "ffmpeg",
        &[
            "-v",
            "error",
            "-f",
            "lavfi",
            "-i",
            "testsrc=s=64x48:r=25:d=0.4",
            "-pix_fmt",
            "yuv420p",
            &p(&path),
        ],
    );
    path
}

/// One key on frame 0 in vidprep's annotation JSON.
fn keys(dir: &Path) -> PathBuf {
    let path = dir.join("keys.json");
    std::fs::write(
        &path,
        "{\"vidprep_annotations\": 1, \"coords\": \"pixels\", \"tracks\": [{\"id\": \"1\", \"keys\": [{\"frame\": 0, \"box\": [4, 4, 20, 20]}]}]}\n",
    )
    .unwrap();
    path
}

/// Runs `vidprep track SOURCE --boxes KEYS --fill linear -o OUT` (with `extra` arguments);
/// returns the exit code and stderr.
fn track(source: &Path, keys: &Path, out: &Path, extra: &[&str]) -> (i32, String) {
    let output = vidprep()
        .args(["track", &p(source), "--boxes", &p(keys), "--fill", "linear"])
        .args(extra)
        .args(["-o", &p(out)])
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn listing(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let bytes = if e.path().is_file() {
                std::fs::read(e.path()).unwrap()
            } else {
                Vec::new()
            };
            (e.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn an_output_that_is_the_keys_file_or_the_source_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let (video, keys) = (clip(dir.path()), keys(dir.path()));
    let before = listing(dir.path());
    let (code, err) = track(&video, &keys, &keys, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("is the input") && err.contains("keys.json"),
        "{err}"
    );
    // The same file by another name.
    let (code, err) = track(&video, &keys, &dir.path().join("./keys.json"), &[]);
    assert_eq!(code, 2, "{err}");
    let (code, err) = track(&video, &keys, &video, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("is the input") && err.contains("clip.mp4"),
        "{err}"
    );
    assert_eq!(
        listing(dir.path()),
        before,
        "nothing written, the inputs unchanged"
    );
}

#[test]
fn an_output_inside_the_image_sequences_folder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let seq = dir.path().join("seq");
    std::fs::create_dir(&seq).unwrap();
    run_ok(
        "ffmpeg",
        &[
            "-v",
            "error",
            "-f",
            "lavfi",
            "-i",
            "testsrc=s=64x48:r=25:d=0.4",
            &p(&seq.join("%06d.png")),
        ],
    );
    let keys = keys(dir.path());
    let before = listing(&seq);
    let (code, err) = track(
        &seq,
        &keys,
        &seq.join("boxes.json"),
        &["--source-fps", "25"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("inside the input folder"), "{err}");
    assert_eq!(listing(&seq), before, "nothing written into the sequence");
    // Beside it is fine.
    let beside = dir.path().join("boxes.json");
    let (code, err) = track(&seq, &keys, &beside, &["--source-fps", "25"]);
    assert_eq!(code, 0, "{err}");
    assert!(beside.is_file());
}

#[test]
fn an_existing_file_is_replaced_only_when_vidprep_track_wrote_it() {
    let dir = tempfile::tempdir().unwrap();
    let (video, keys) = (clip(dir.path()), keys(dir.path()));
    let foreign = dir.path().join("notes.json");
    std::fs::write(&foreign, "{\"mine\": true}\n").unwrap();
    let (code, err) = track(&video, &keys, &foreign, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("was not written by `vidprep track`") && err.contains("notes.json"),
        "{err}"
    );
    assert_eq!(std::fs::read(&foreign).unwrap(), b"{\"mine\": true}\n");
    // Its own output is replaced (a second run over the first one's file).
    let out = dir.path().join("out.json");
    assert_eq!(track(&video, &keys, &out, &[]).0, 0);
    let first = std::fs::read(&out).unwrap();
    std::fs::write(&out, [&first[..], b" "].concat()).unwrap();
    let (code, err) = track(&video, &keys, &out, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read(&out).unwrap(),
        first,
        "replaced by the new run's file"
    );
    let temporaries = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with(".vidprep-tmp-")
        })
        .count();
    assert_eq!(temporaries, 0);
}
