//! Interruptions and repeat runs: what a killed run leaves never blocks the next one, and
//! nothing temporary is ever committed (so `--resume` finds every finished item current).

use std::path::Path;
use std::time::{Duration, Instant};

use super::*;

/// Starts `vidprep ARGS` in `d` and kills it (SIGKILL) as soon as `ready` holds.
fn kill_when(d: &Path, args: &[&str], ready: impl Fn() -> bool) {
    let bin = assert_cmd::cargo::cargo_bin("vidprep");
    let mut child = std::process::Command::new(bin)
        .args(args)
        .current_dir(d)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !ready() && t0.elapsed() < Duration::from_secs(60) {
        if child.try_wait().unwrap().is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn a_review_killed_midway_does_not_block_the_next() {
    check(
        case(
            "review after a review killed by SIGKILL",
            &["review", "out", "--manifest", "m.jsonl"],
            &[0],
        )
        .writes("out/review")
        // The killed review held the run folder's lock (a dead process of this host: the
        // next one takes it over and removes it when done).
        .writes("out/.vidprep-lock")
        .with(|d| {
            small_run(d);
            // Killed while making the previews: review/media/ is there, the page is not.
            let media = d.join("out/review/media");
            kill_when(d, &["review", "out", "--manifest", "m.jsonl"], || {
                media.is_dir()
            });
            assert!(
                !d.join("out/review/index.html").exists(),
                "the review finished before it could be killed"
            );
        })
        .then(|d| {
            let page = d.join("out/review");
            let preview = super::review::media_folder(&page, "a").join("preview.mp4");
            for f in [page.join("index.html"), page.join("data/index.js"), preview] {
                if !f.is_file() {
                    return Err(format!("the page lacks {}", f.display()));
                }
            }
            Ok(())
        }),
    );
}

/// Budgets from loose to tight for the base video: the solver's first aim misses some.
const BUDGETS: [u64; 5] = [60_000, 40_000, 30_000, 24_000, 20_000];

#[test]
fn a_video_that_needs_several_encodes_commits_no_scratch_and_resumes() {
    check(
        case(
            "capped videos with several encodes, then --resume",
            &["run", "m.jsonl", "--out-dir", "out"],
            &[0],
        )
        .writes("out")
        .with(|d| {
            let lines: Vec<String> = BUDGETS
                .iter()
                .map(|b| format!(r#"{{"id": "b{b}", "source": "g.mp4", "exports": [{{"kind": "video", "max_base64_bytes": {b}, "reencode": true, "preset": "ultrafast"}}]}}"#))
                .collect();
            manifest(d, "m.jsonl", &lines);
        })
        .then(|d| {
            let mut retried = 0;
            for b in BUDGETS {
                let item = d.join(format!("out/b{b}"));
                let record = std::fs::read_to_string(item.join("item.json")).unwrap();
                if record.contains("vidprep-tmp") {
                    return Err(format!("item.json of b{b} lists a temporary: {record}"));
                }
                let sidecar: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(item.join("video.json")).unwrap())
                        .unwrap();
                if sidecar["budget"]["encodes"].as_u64().unwrap() >= 2 {
                    retried += 1;
                }
            }
            if retried == 0 {
                return Err("no budget needed a second encode, so nothing was tested".into());
            }
            // The next run finds every item current.
            let out = vidprep()
                .current_dir(d)
                .args(["run", "m.jsonl", "--out-dir", "out", "--resume"])
                .output()
                .unwrap();
            let report = std::fs::read_to_string(d.join("out/report.jsonl")).unwrap();
            let skipped = report.matches("\"skipped\"").count();
            (out.status.success() && skipped == BUDGETS.len())
                .then_some(())
                .ok_or(format!("{skipped} of {} skipped on resume: {report}", BUDGETS.len()))
        }),
    );
}
