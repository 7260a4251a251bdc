//! A capped `video` export with a byte budget is byte-reproducible: the same request gives
//! the same bytes run after run, at any `--jobs` and codec thread count, through the command
//! and through a manifest line (`docs/cluster.md`: a requeued shard writes the same files),
//! with or without audio. The oracle is the MD5 of the files' bytes.
//!
//! The variation with audio (issue 22: a second encode attempt varied between runs, even at
//! one x264 thread) came from x264's AVX-512 code reading heap memory it never wrote: an
//! encode's bytes depended on what the allocator handed x264, which for an encode after
//! another one in the same process depends on how the threads freed memory. Glibc's
//! `MALLOC_PERTURB_` fills fresh allocations with a chosen byte, so the same request under
//! several values gives other bytes wherever x264 reads memory it never wrote; with x264 held
//! to AVX2 (`src/media/encode.rs`) they are the same.

use crate::common;
use crate::support;

use std::path::Path;

use common::md5::md5_hex;
use common::synth::SynthVideo;
use support::vidprep;

const BUDGET: &str = "60000";

fn md5_of(p: &Path) -> String {
    md5_hex(&std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
}

/// The sidecar's budget record without its wall-clock timings and the Base64 file's path.
fn budget_record(sidecar: &Path) -> serde_json::Value {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sidecar).unwrap()).unwrap();
    let mut b = v["budget"].clone();
    b["base64"] = serde_json::Value::Null;
    for a in b["attempts"].as_array_mut().unwrap() {
        a["encode_seconds"] = serde_json::Value::Null;
    }
    b
}

#[test]
fn a_budgeted_video_is_the_same_bytes_through_the_command_and_a_manifest() {
    same_bytes(false, &[("run3", "3", "2")]);
}

#[test]
fn a_budgeted_video_with_audio_is_the_same_bytes_through_every_door_and_at_any_jobs() {
    same_bytes(true, &[("run3", "3", "2"), ("run1", "1", "1")]);
}

/// Three runs of the command, then the manifest door (three copies of the item) in each of
/// `runs` (folder, --jobs, --codec-threads): the same bytes.
fn same_bytes(audio: bool, runs: &[(&str, &str, &str)]) {
    let src = SynthVideo::new(320, 240)
        .frames(100)
        .audio_tone(440.0)
        .cached();
    let no_audio: &[&str] = if audio { &[] } else { &["--no-audio"] };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The command, three times.
    let mut command = Vec::new();
    for n in 0..3 {
        let out = d.join(format!("cli{n}/video.mp4"));
        vidprep()
            .args(["export", "video"])
            .arg(&src.path)
            .arg("-o")
            .arg(&out)
            .args(["--max-base64-bytes", BUDGET, "--reencode", "--base64"])
            .arg(out.with_extension("b64"))
            .args(no_audio)
            .assert()
            .success();
        command.push((
            md5_of(&out),
            md5_of(&out.with_extension("b64")),
            budget_record(&out.with_extension("json")),
            std::fs::metadata(&out).unwrap().len(),
        ));
    }
    let sizes: Vec<u64> = command.iter().map(|c| c.3).collect();
    for c in &command[1..] {
        assert_eq!(c.0, command[0].0, "three runs gave {sizes:?} bytes");
        assert_eq!(c.1, command[0].1, "the Base64 files differ");
        assert_eq!(c.2, command[0].2, "the budget records differ");
    }
    // A manifest line, three copies at once, then one at a time with one codec thread.
    let line = |id: &str| {
        format!(
            r#"{{"id": "{id}", "source": {:?}, "exports": [{{"kind": "video", "max_base64_bytes": {BUDGET}, "reencode": true, "base64": true, "audio": {audio}}}]}}"#,
            src.path
        )
    };
    std::fs::write(
        d.join("m.jsonl"),
        format!("{}\n{}\n{}\n", line("a"), line("b"), line("c")),
    )
    .unwrap();
    for &(out, jobs, threads) in runs {
        vidprep()
            .current_dir(d)
            .args(["run", "m.jsonl", "--out-dir", out, "--jobs", jobs])
            .args(["--codec-threads", threads])
            .assert()
            .success();
        for id in ["a", "b", "c"] {
            let video = d.join(out).join(id).join("video.mp4");
            assert_eq!(
                md5_of(&video),
                command[0].0,
                "{out}/{id}: {} bytes, the command made {}",
                std::fs::metadata(&video).unwrap().len(),
                command[0].3
            );
            assert_eq!(md5_of(&video.with_extension("b64")), command[0].1);
            assert_eq!(budget_record(&video.with_extension("json")), command[0].2);
        }
    }
}

/// The bytes of `args` (writing `out.mp4` in a fresh folder) with the allocator filling every
/// new block with `perturb` (`None`: glibc's default, no filling).
fn bytes_under_perturb(src: &Path, args: &[&str], perturb: Option<&str>) -> (String, u64) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.mp4");
    let mut cmd = vidprep();
    cmd.args(args).arg(src).arg("-o").arg(&out);
    match perturb {
        Some(p) => cmd.env("MALLOC_PERTURB_", p),
        None => cmd.env_remove("MALLOC_PERTURB_"),
    };
    cmd.assert().success();
    (md5_of(&out), std::fs::metadata(&out).unwrap().len())
}

/// An encode is a function of its frames, not of what the heap held: the same request (a
/// capped video with audio, which encodes twice, and a constant-quality clip at the default
/// preset) under three allocator fillings gives one file.
#[test]
fn an_encode_does_not_depend_on_what_the_allocator_hands_the_encoder() {
    let src = SynthVideo::new(320, 240)
        .frames(100)
        .audio_tone(440.0)
        .cached();
    let requests: [&[&str]; 2] = [
        &[
            "export",
            "video",
            "--max-base64-bytes",
            BUDGET,
            "--reencode",
        ],
        &["cut"],
    ];
    for args in requests {
        let runs: Vec<(String, u64)> = [None, Some("85"), Some("170")]
            .into_iter()
            .map(|p| bytes_under_perturb(&src.path, args, p))
            .collect();
        assert!(
            runs.iter().all(|r| r.0 == runs[0].0),
            "{args:?} under MALLOC_PERTURB_ unset, 85, 170: {:?} bytes",
            runs.iter().map(|r| r.1).collect::<Vec<_>>()
        );
    }
}
