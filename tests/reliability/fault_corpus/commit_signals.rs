//! Signals at every step of a commit (issue 42): a command is paused at each filesystem step
//! of its output groups' commits (every rename and removal, numbered by the test-only
//! `VIDPREP_FAULT_COMMIT_STEP` hook of the `fault-injection` feature) and stopped there with
//! SIGTERM or SIGKILL. After SIGTERM the folder holds the whole earlier group or the whole new
//! one (never a mix) and no temporary; after SIGKILL the same request run again (`--resume`
//! for a batch) finishes it, byte-identical to an uninterrupted run. The pause after SIGTERM
//! outlasts the signal handler's 5 s grace, so the handler meets the commit under way (issue
//! 41: it removed the set-aside earlier output and exited while the commit ran).

use std::collections::BTreeMap;
use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::{self, vidprep};

/// A pause longer than the signal handler's grace (5 s).
const PAUSE_PAST_GRACE_MS: u64 = 6500;

/// The files below `dir` (relative path -> md5), vidprep's temporaries and locks included.
fn files(dir: &Path) -> BTreeMap<String, String> {
    walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e.path().strip_prefix(dir).unwrap().display().to_string();
            let md5 = crate::common::md5::md5_hex(&std::fs::read(e.path()).unwrap());
            (rel, md5)
        })
        .collect()
}

/// The part of `all` under `prefixes` (files and folders named there).
fn part(all: &BTreeMap<String, String>, prefixes: &[&str]) -> BTreeMap<String, String> {
    all.iter()
        .filter(|(k, _)| {
            prefixes
                .iter()
                .any(|p| k.as_str() == *p || k.starts_with(&format!("{p}/")))
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Copies the files of `from` into `to` (a fresh folder), keeping their modification times
/// (`item.json` records its source's).
fn copy_tree(from: &Path, to: &Path) {
    for e in walkdir::WalkDir::new(from).min_depth(1) {
        let e = e.unwrap();
        let dest = to.join(e.path().strip_prefix(from).unwrap());
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
            let modified = e.metadata().unwrap().modified().unwrap();
            std::fs::File::options()
                .write(true)
                .open(&dest)
                .unwrap()
                .set_modified(modified)
                .unwrap();
        }
    }
}

/// How a stopped run ended.
struct Stopped {
    status: std::process::ExitStatus,
    stderr: String,
    /// Whether the run reached the step (and was signalled there).
    reached: bool,
}

/// Runs `vidprep ARGS` in `dir`, pausing at commit step `step` for `pause_ms`, and sends
/// `signal` once it pauses there.
fn stop_at(dir: &Path, args: &[&str], step: u64, pause_ms: u64, signal: &str) -> Stopped {
    let bin = assert_cmd::cargo::cargo_bin("vidprep");
    let mut child = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env("VIDPREP_FAULT_COMMIT_STEP", step.to_string())
        .env("VIDPREP_FAULT_COMMIT_PAUSE_MS", pause_ms.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id().to_string();
    let reader = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut stderr = String::new();
    let mut reached = false;
    let paused = format!("fault-injection: paused at commit step {step}");
    for line in reader.lines() {
        let line = line.unwrap();
        if line == paused && !reached {
            reached = true;
            assert!(support::send_signal(signal, &pid), "kill -{signal} {pid}");
        }
        stderr.push_str(&line);
        stderr.push('\n');
    }
    let status = child.wait().unwrap();
    Stopped {
        status,
        stderr,
        reached,
    }
}

/// The commit steps a run of `args` takes from the state in `earlier` (it is run there on a
/// copy), and the files it leaves.
fn steps_of(earlier: &Path, args: &[&str]) -> (Vec<String>, BTreeMap<String, String>) {
    let run = tempfile::tempdir().unwrap();
    copy_tree(earlier, run.path());
    let out = vidprep()
        .args(args)
        .current_dir(run.path())
        .env("VIDPREP_FAULT_COMMIT_STEP", "0")
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{args:?}: {stderr}");
    let steps: Vec<String> = stderr
        .lines()
        .filter(|l| l.starts_with("fault-injection: commit step "))
        .map(str::to_string)
        .collect();
    (steps, files(run.path()))
}

/// The earlier state of the cut scenario: the corpus's base files (`g.mp4`: 40 frames) and an earlier `out.mp4` with its sidecar
/// `out.json` (frames 0 to 20).
fn cut_earlier(d: &Path) {
    super::base(d);
    vidprep()
        .args([
            "cut",
            "g.mp4",
            "--end",
            "20",
            "--preset",
            "ultrafast",
            "-o",
            "out.mp4",
        ])
        .current_dir(d)
        .assert()
        .success();
}

const CUT: [&str; 10] = [
    "cut",
    "g.mp4",
    "--start",
    "10",
    "--end",
    "30",
    "--preset",
    "ultrafast",
    "-o",
    "out.mp4",
];

/// The earlier state of the batch scenario: item `a` made (frames 0 to 20) into `out/`, and
/// its manifest changed since (frames 10 to 30), so that the next run redoes it.
fn run_earlier(d: &Path) {
    super::base(d);
    let line = |start: u32, end: u32| {
        format!(
            r#"{{"id": "a", "source": "g.mp4", "start": {start}, "end": {end}, "exports": [{{"kind": "clip", "preset": "ultrafast"}}]}}"#
        ) + "\n"
    };
    std::fs::write(d.join("m.jsonl"), line(0, 20)).unwrap();
    vidprep()
        .args(["run", "m.jsonl", "--out-dir", "out"])
        .current_dir(d)
        .assert()
        .success();
    std::fs::write(d.join("m.jsonl"), line(10, 30)).unwrap();
}

const RUN: [&str; 5] = ["run", "m.jsonl", "--out-dir", "out", "--resume"];

/// Whether `out/report.jsonl` agrees with the files: every item it says is ok has its folder
/// with `item.json` and every output it lists.
pub(super) fn report_consistent(d: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(d.join("out/report.jsonl"))
        .map_err(|e| format!("no report: {e}"))?;
    for line in text.lines() {
        let r: serde_json::Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
        if r["status"] != "ok" && r["status"] != "skipped" {
            continue;
        }
        let id = r["id"].as_str().unwrap();
        if !d.join("out").join(id).join("item.json").is_file() {
            return Err(format!(
                "the report says {id} is done, but out/{id}/item.json is missing"
            ));
        }
        for o in r["outputs"].as_array().unwrap() {
            let o = PathBuf::from(o.as_str().unwrap());
            let found = [o.clone(), d.join(&o), d.join("out").join(&o)]
                .iter()
                .any(|p| p.is_file());
            if !found {
                return Err(format!(
                    "the report lists {o:?} for {id}, which does not exist"
                ));
            }
        }
    }
    Ok(())
}

/// Stops `args` (from the state `earlier` makes) at every commit step with `signal`, in
/// parallel, and checks each outcome; `outputs` are the paths the request may replace.
fn every_step(
    earlier: fn(&Path),
    args: &[&str],
    outputs: &[&str],
    resume: &[&str],
    signal: &str,
    batch: bool,
) {
    let base = tempfile::tempdir().unwrap();
    earlier(base.path());
    let old = part(&files(base.path()), outputs);
    let (steps, clean) = steps_of(base.path(), args);
    let new = part(&clean, outputs);
    assert!(steps.len() >= 4, "too few commit steps: {steps:?}");
    assert_ne!(old, new, "the request must change its outputs");
    // The files that no commit may touch (the source, the manifest).
    let untouched: BTreeMap<String, String> = files(base.path())
        .into_iter()
        .filter(|(k, _)| {
            !outputs
                .iter()
                .any(|p| k == p || k.starts_with(&format!("{p}/")))
        })
        .filter(|(k, _)| !(batch && k.as_str() == "out/report.jsonl"))
        .collect();
    let failures: Vec<String> = std::thread::scope(|s| {
        let jobs: Vec<_> = (1..=steps.len() as u64)
            .map(|step| {
                let (base, old, new, untouched) = (base.path(), &old, &new, &untouched);
                let what = steps[step as usize - 1].clone();
                s.spawn(move || -> Result<(), String> {
                    let dir = tempfile::tempdir().unwrap();
                    let d = dir.path();
                    copy_tree(base, d);
                    let pause = if signal == "TERM" {
                        PAUSE_PAST_GRACE_MS
                    } else {
                        3000
                    };
                    let stopped = stop_at(d, args, step, pause, signal);
                    let at = format!("{signal} at {what}");
                    if !stopped.reached {
                        return Err(format!("{at}: never reached\n{}", stopped.stderr));
                    }
                    let code = stopped.status.code();
                    if signal == "TERM" {
                        if code != Some(130) {
                            return Err(format!("{at}: {:?}\n{}", stopped.status, stopped.stderr));
                        }
                    } else if code.is_some() {
                        return Err(format!("{at}: not killed: {:?}", stopped.status));
                    }
                    let left = files(d);
                    if signal == "KILL" {
                        // The same request again finishes it.
                        let out = vidprep()
                            .args(resume)
                            .current_dir(d)
                            .timeout(Duration::from_secs(120))
                            .output()
                            .unwrap();
                        if !out.status.success() {
                            return Err(format!(
                                "{at}: the next run failed: {}",
                                String::from_utf8_lossy(&out.stderr)
                            ));
                        }
                    }
                    let after = files(d);
                    let got = part(&after, outputs);
                    let whole = if signal == "KILL" {
                        got == *new
                    } else {
                        got == *old || got == *new
                    };
                    if !whole {
                        return Err(format!(
                            "{at}: a mix (earlier {old:?}, new {new:?}, got {got:?}; right after \
                             the signal {left:?})"
                        ));
                    }
                    for (k, v) in untouched {
                        if after.get(k) != Some(v) {
                            return Err(format!("{at}: {k} was changed or removed"));
                        }
                    }
                    let stray: Vec<&String> = after
                        .keys()
                        .filter(|k| !untouched.contains_key(*k) && !got.contains_key(*k))
                        .filter(|k| !(batch && k.as_str() == "out/report.jsonl"))
                        .collect();
                    if !stray.is_empty() {
                        return Err(format!("{at}: left {stray:?}"));
                    }
                    if batch {
                        report_consistent(d).map_err(|e| format!("{at}: {e}"))?;
                    }
                    Ok(())
                })
            })
            .collect();
        jobs.into_iter()
            .filter_map(|j| j.join().unwrap().err())
            .collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn sigterm_at_every_commit_step_of_a_cut_leaves_one_whole_group() {
    every_step(
        cut_earlier,
        &CUT,
        &["out.mp4", "out.json"],
        &CUT,
        "TERM",
        false,
    );
}

#[test]
fn sigkill_at_every_commit_step_of_a_cut_then_the_same_cut_finishes_it() {
    every_step(
        cut_earlier,
        &CUT,
        &["out.mp4", "out.json"],
        &CUT,
        "KILL",
        false,
    );
}

#[test]
fn sigterm_at_every_commit_step_of_a_run_leaves_one_whole_item_and_a_true_report() {
    // The item folder is compared whole; the report (its seconds differ) for agreement.
    every_step(run_earlier, &RUN, &["out/a"], &RUN, "TERM", true);
}

#[test]
fn sigkill_at_every_commit_step_of_a_run_then_resume_finishes_it() {
    every_step(run_earlier, &RUN, &["out/a"], &RUN, "KILL", true);
}
