//! Command-line misuse.

use super::*;

#[test]
fn sequences_with_host() {
    check(case(
        "sequences with host",
        &[
            "insert",
            "--host",
            "g.mp4",
            "--sequences",
            "seq",
            "--at",
            "0",
            "-o",
            "a.mp4",
        ],
        &[2],
    ));
}

#[test]
fn unknown_flag() {
    check(case(
        "unknown flag",
        &["cut", "g.mp4", "--frobnicate", "-o", "o.mp4"],
        &[2],
    ));
}

#[test]
fn crf_out_of_range() {
    check(
        case(
            "crf out of range",
            &["cut", "g.mp4", "--crf", "99", "-o", "o.mp4"],
            &[2],
        )
        .says("crf"),
    );
}

#[test]
fn unknown_preset() {
    check(
        case(
            "unknown preset",
            &["cut", "g.mp4", "--preset", "turbo", "-o", "o.mp4"],
            &[2],
        )
        .says("turbo"),
    );
}

#[test]
fn copy_with_decision() {
    check(
        case(
            "copy with decision",
            &["cut", "g.mp4", "--decision", "1s", "--copy", "-o", "o.mp4"],
            &[2],
        )
        .says("--copy"),
    );
}

#[test]
fn zero_frames() {
    check(
        case(
            "zero frames",
            &[
                "export",
                "frames",
                "g.mp4",
                "--out-dir",
                "f",
                "--count",
                "0",
            ],
            &[2],
        )
        .says("at least 1"),
    );
}

#[test]
fn too_many_frames() {
    check(
        case(
            "too many frames",
            &[
                "export",
                "frames",
                "g.mp4",
                "--out-dir",
                "f",
                "--count",
                "100",
            ],
            &[1],
        )
        .says("--allow-repeats"),
    );
}

#[test]
fn unknown_payload() {
    check(case(
        "unknown payload",
        &[
            "export",
            "frames",
            "g.mp4",
            "--out-dir",
            "f",
            "--payload",
            "claude",
        ],
        &[2],
    ));
}

#[test]
fn unknown_sampler() {
    check(case(
        "unknown sampler",
        &[
            "export",
            "frames",
            "g.mp4",
            "--out-dir",
            "f",
            "--sampler",
            "decord",
        ],
        &[2],
    ));
}

#[test]
fn tiny_budget() {
    check(
        case(
            "tiny budget",
            &[
                "export",
                "video",
                "g.mp4",
                "-o",
                "v.mp4",
                "--max-base64-bytes",
                "10",
            ],
            &[2],
        )
        .says("too small"),
    );
}

#[test]
fn budget_too_small_to_encode() {
    check(
        case(
            "budget too small to encode",
            &[
                "export",
                "video",
                "g.mp4",
                "-o",
                "v.mp4",
                "--max-base64-bytes",
                "2000",
                "--reencode",
            ],
            &[1],
        )
        .says("g.mp4"),
    );
}

#[test]
fn overlay_without_boxes() {
    check(
        case(
            "overlay without boxes",
            &["overlay", "g.mp4", "-o", "o.mp4"],
            &[2],
        )
        .says("--boxes"),
    );
}

#[test]
fn box_options_without_boxes() {
    check(
        case(
            "box options without boxes",
            &["cut", "g.mp4", "--thickness", "4", "-o", "o.mp4"],
            &[2],
        )
        .says("--boxes"),
    );
}

#[test]
fn bad_shard() {
    check(
        case(
            "bad shard",
            &["run", "m.jsonl", "--out-dir", "out", "--shard", "5/2"],
            &[2],
        )
        .with(|d| manifest(d, "m.jsonl", &[])),
    );
}

#[test]
fn strict_on_a_clean_file() {
    check(
        case(
            "strict on a clean file",
            &[
                "cut",
                "g.mp4",
                "--strict",
                "--preset",
                "ultrafast",
                "-o",
                "o.mp4",
            ],
            &[0],
        )
        .writes("o.mp4")
        .writes("o.json"),
    );
}

/// Runs `vidprep ARGS` in `dir` with its stdout a pipe whose reader is already gone.
fn into_a_closed_pipe(dir: &Path, args: &[&str]) -> std::process::Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let bin = assert_cmd::cargo::cargo_bin("vidprep");
    std::process::Command::new(bin)
        .args(args)
        .current_dir(dir)
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn every_command_that_prints_ends_quietly_into_a_closed_pipe() {
    // `vidprep probe --json x | head -0`: no panic (101) and no backtrace; the work is done.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    base(d);
    for args in [
        &["probe", "--json", "g.mp4"][..],
        &["probe", "g.mp4"],
        &["schema", "plan"],
        &[
            "cut",
            "g.mp4",
            "--end",
            "10",
            "--preset",
            "ultrafast",
            "-o",
            "c.mp4",
        ],
        &[
            "export",
            "frames",
            "g.mp4",
            "--count",
            "2",
            "--out-dir",
            "f",
        ],
    ] {
        let out = into_a_closed_pipe(d, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    assert!(d.join("c.mp4").is_file() && d.join("f/frames.json").is_file());
}

#[test]
fn probe_of_a_name_that_is_not_utf8_is_refused_as_elsewhere() {
    use std::os::unix::ffi::OsStrExt as _;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    base(d);
    let name = std::ffi::OsStr::from_bytes(b"g\xff.mp4");
    std::fs::copy(d.join("g.mp4"), d.join(name)).unwrap();
    for json in [true, false] {
        let mut cmd = vidprep();
        cmd.current_dir(d).arg("probe");
        if json {
            cmd.arg("--json");
        }
        let out = cmd.arg(name).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "json {json}: {stderr}");
        assert!(stderr.contains("not valid UTF-8"), "{stderr}");
        assert!(
            out.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    // What other commands say of the same name (the consistency asked for).
    let out = vidprep()
        .current_dir(d)
        .args(["cut"])
        .arg(name)
        .args(["-o", "c.mp4"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
