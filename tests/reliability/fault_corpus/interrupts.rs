//! Interrupted commands and batches: SIGINT, SIGTERM and SIGKILL at several points; what is
//! left, and that the next run cleans up after a killed one.

use std::path::Path;
use std::time::Duration;

use crate::common::synth::SynthVideo;
use crate::support::{self, vidprep};

/// Interrupts `vidprep cut` after `delay` with `signal`; returns what the folder holds.
fn interrupted_cut(signal: &str, delay: Duration) -> (tempfile::TempDir, std::process::ExitStatus) {
    let dir = tempfile::tempdir().unwrap();
    let src = SynthVideo::new(640, 480)
        .frames(250)
        .audio_tone(440.0)
        .cached();
    let bin = assert_cmd::cargo::cargo_bin("vidprep");
    let mut child = std::process::Command::new(bin)
        .arg("cut")
        .arg(&src.path)
        .args(["--preset", "slow", "-o"])
        .arg(dir.path().join("out/o.mp4"))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(delay);
    assert!(support::send_signal(
        signal.trim_start_matches('-'),
        &child.id().to_string()
    ));
    let status = child.wait().unwrap();
    (dir, status)
}

fn names_below(dir: &Path) -> Vec<String> {
    walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .map(|e| {
            e.unwrap()
                .path()
                .strip_prefix(dir)
                .unwrap()
                .display()
                .to_string()
        })
        .collect()
}

#[test]
fn interrupting_a_single_command_leaves_nothing_half_written() {
    for signal in ["-INT", "-TERM"] {
        for ms in [150, 600, 1500] {
            let (dir, status) = interrupted_cut(signal, Duration::from_millis(ms));
            let left = names_below(dir.path());
            if status.success() {
                // It finished before the signal: the whole output is there.
                assert!(
                    left.iter().any(|n| n.ends_with("o.mp4"))
                        && left.iter().any(|n| n.ends_with("o.json")),
                    "{left:?}"
                );
                continue;
            }
            // Interrupted: exit 130, and not even the output folder it made is left. On a
            // loaded machine the signal can arrive before the handler is installed (the first
            // instructions of `main`): the default action ends the process before it has
            // written anything, which keeps the same guarantee.
            use std::os::unix::process::ExitStatusExt;
            let killed_before_start = status.code().is_none() && status.signal().is_some();
            assert!(
                status.code() == Some(130) || killed_before_start,
                "{signal} after {ms} ms: {status:?}"
            );
            assert!(left.is_empty(), "{signal} after {ms} ms left {left:?}");
        }
    }
}

#[test]
fn interrupting_a_batch_finishes_its_report_and_commits_nothing_half_done() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = SynthVideo::new(640, 480).frames(250).cached();
    let lines: Vec<String> = (0..6)
        .map(|i| {
            format!(
                r#"{{"id": "item{i}", "source": {:?}, "exports": [{{"kind": "clip", "preset": "slow"}}]}}"#,
                src.path
            )
        })
        .collect();
    std::fs::write(d.join("m.jsonl"), lines.join("\n") + "\n").unwrap();
    let bin = assert_cmd::cargo::cargo_bin("vidprep");
    let mut child = std::process::Command::new(bin)
        .args(["run", "m.jsonl", "--out-dir", "out", "--jobs", "2"])
        .current_dir(d)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert!(support::send_signal("INT", &child.id().to_string()));
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    let left = names_below(d);
    assert!(left.iter().all(|n| !n.contains("vidprep-tmp")), "{left:?}");
    // Every item folder that exists is complete; the report says what did not run.
    let report = std::fs::read_to_string(d.join("out/report.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = report
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 6, "{report}");
    for r in &lines {
        let id = r["id"].as_str().unwrap();
        let folder = d.join("out").join(id);
        match r["status"].as_str().unwrap() {
            "ok" => {
                assert!(folder.join("clip.mp4").is_file() && folder.join("item.json").is_file())
            }
            _ => assert!(!folder.exists(), "{id}: {r}"),
        }
    }
    assert!(
        lines.iter().any(|r| r["status"] != "ok"),
        "the interrupt came after every item finished: {report}"
    );
}

#[test]
fn a_killed_command_leaves_only_temporaries_that_the_next_run_removes() {
    for ms in [150, 600] {
        let (dir, status) = interrupted_cut("-KILL", Duration::from_millis(ms));
        if status.success() {
            continue;
        }
        let left = names_below(dir.path());
        assert!(
            left.iter()
                .all(|n| !n.ends_with("o.mp4") && !n.ends_with("o.json")),
            "kill -9 after {ms} ms left a final name: {left:?}"
        );
        // The next run into the same folder removes the dead run's temporaries.
        let src = SynthVideo::new(160, 120).frames(20).cached();
        vidprep()
            .arg("cut")
            .arg(&src.path)
            .args(["--preset", "ultrafast", "-o"])
            .arg(dir.path().join("out/o.mp4"))
            .assert()
            .success();
        let left = names_below(dir.path());
        assert!(
            left.iter().all(|n| !n.contains("vidprep-tmp")),
            "after the next run: {left:?}"
        );
    }
}

#[test]
fn sigterm_of_a_million_repeated_frames_stops_writing_at_once() {
    // 40 frames sampled 1000000 times with repeats: each frame fills 25000 positions, which
    // the frame loop's own check never saw; SIGTERM took 78 s (writing on, then removing).
    let dir = tempfile::tempdir().unwrap();
    let src = SynthVideo::new(160, 120).frames(40).cached();
    let bin = assert_cmd::cargo::cargo_bin("vidprep");
    let mut child = std::process::Command::new(bin)
        .args(["export", "frames"])
        .arg(&src.path)
        .args(["--count", "1000000", "--allow-repeats", "--out-dir"])
        .arg(dir.path().join("f"))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Until it writes its frames (a temporary folder filling up).
    let started = std::time::Instant::now();
    let written = |d: &Path| {
        support::temporaries(d)
            .first()
            .and_then(|t| std::fs::read_dir(t).ok())
            .map_or(0, |r| r.count())
    };
    while written(dir.path()) < 2000 {
        assert!(started.elapsed() < Duration::from_secs(60), "never wrote");
        assert!(
            child.try_wait().unwrap().is_none(),
            "ended before the signal"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let signalled = std::time::Instant::now();
    assert!(support::send_signal("TERM", &child.id().to_string()));
    let status = child.wait().unwrap();
    let took = signalled.elapsed();
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert!(
        names_below(dir.path()).is_empty(),
        "left {} entries",
        names_below(dir.path()).len()
    );
    // Well inside the signal handler's 5 s grace: the work itself stopped and cleaned up.
    assert!(took < Duration::from_secs(4), "took {took:?} after SIGTERM");
    eprintln!("SIGTERM to exit: {took:?}");
}
