//! The interleaving harness (issue 51): the environment's adversary, driven step by step.
//!
//! A scenario is a request on a folder in a known earlier state: a `cut` replacing an
//! earlier clip and sidecar, a `run --resume` redoing an item, a `run` that first takes over
//! a dead run's lock. Its filesystem steps (each commit's commit-lock, set-aside, rename and
//! removal; each lock's write, link and take-over) are numbered by the test-only
//! `fault-injection` hook. For every step and every actor, the request is paused at that step
//! (`VIDPREP_FAULT_STEP_DIR`: it writes `paused`, waits for `go`) while the actor acts:
//!
//! - `same`: the same request, run at once in the same folder;
//! - `other`: another command writing another output into the same folder;
//! - `run`: a batch run of another manifest into the same folder;
//! - `write`: a person writes files into the output folders (and into any folder vidprep has
//!   set aside at that moment);
//! - `delete`: a person deletes one of the earlier outputs;
//! - `suspend`: SIGSTOP past the lease (1 s), a second run of the request meanwhile, SIGCONT;
//! - `kill`: SIGKILL, then the request again;
//! - `enospc`, `exdev`: the step itself fails (a full disk; a rename across file systems).
//!
//! After each, every process has ended and the invariants are checked: no file vidprep did
//! not write was removed (the person's files are where they were, or in a `.kept-N` folder a
//! warning named); every output group is whole and from one request (the request's outputs
//! equal the earlier state, the new state, or the state one other request made); at most one
//! holder per lock (no second run made items while the first held the folder; no lock is left
//! behind); the report names what is on disk; nothing exits with a panic or an abort; no
//! temporary is left. With `VIDPREP_INTERLEAVE_REPORT=FILE` each case appends a line to FILE
//! (scenario, actor, step, outcome): docs/reliability.md's table is made from it.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::fleet::{copy_of, made_run, steps, Paused, RESUME};
use super::*;

/// What a person writes: found again anywhere below the folder afterwards.
const PERSON: &str = "a person's file";

#[derive(Clone, Copy, Debug, PartialEq)]
enum Actor {
    Same,
    Other,
    Run,
    Write,
    Delete,
    Suspend,
    Kill,
    Enospc,
    Exdev,
}

struct Scenario {
    name: &'static str,
    /// Makes the earlier state.
    earlier: fn() -> tempfile::TempDir,
    args: &'static [&'static str],
    /// Paths (relative prefixes) the request may replace.
    outputs: &'static [&'static str],
    /// Its output groups (each whole from one request), as prefixes.
    groups: &'static [&'static [&'static str]],
    /// The folder other actors write into.
    folder: &'static str,
    batch: bool,
}

/// Files below `dir` (relative path -> md5).
fn files(dir: &Path) -> BTreeMap<String, String> {
    walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e.path().strip_prefix(dir).unwrap().display().to_string();
            (rel, common::md5::md5_hex(&std::fs::read(e.path()).unwrap()))
        })
        .collect()
}

/// The part of `all` under `prefixes`, without the person's files, kept folders and the
/// report (which says what ran, not what was made).
fn part(
    all: &BTreeMap<String, String>,
    prefixes: &[&str],
    person: &[String],
) -> BTreeMap<String, String> {
    all.iter()
        .filter(|(k, _)| {
            prefixes
                .iter()
                .any(|p| k.as_str() == *p || k.starts_with(&format!("{p}/")))
        })
        .filter(|(k, _)| {
            !person.contains(k) && !k.contains(".kept-") && !k.ends_with("report.jsonl")
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn cut_earlier() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    base(dir.path());
    vidprep()
        .args([
            "cut",
            "g.mp4",
            "--end",
            "10",
            "--preset",
            "ultrafast",
            "-o",
            "out.mp4",
        ])
        .current_dir(dir.path())
        .assert()
        .success();
    dir
}

fn dead_lock_earlier() -> tempfile::TempDir {
    let dir = made_run();
    let mut dead = Command::new("true").spawn().unwrap();
    let pid = dead.id();
    dead.wait().unwrap();
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    let holder = serde_json::json!({
        "pid": pid,
        "host": read("/proc/sys/kernel/hostname"),
        "boot_id": read("/proc/sys/kernel/random/boot_id"),
        "pid_ns": std::fs::read_link("/proc/self/ns/pid").unwrap().display().to_string(),
        "token": "0123456789abcdef",
        "manifest": null, "shard": null, "started_unix": 0, "lease_seconds": 120
    });
    std::fs::write(dir.path().join("out/.vidprep-lock"), holder.to_string()).unwrap();
    dir
}

const CUT: Scenario = Scenario {
    name: "cut",
    earlier: cut_earlier,
    args: &[
        "cut",
        "g.mp4",
        "--start",
        "10",
        "--end",
        "20",
        "--preset",
        "ultrafast",
        "-o",
        "out.mp4",
    ],
    outputs: &["out.mp4", "out.json"],
    groups: &[&["out.mp4", "out.json"]],
    folder: ".",
    batch: false,
};

const RESUMED: Scenario = Scenario {
    name: "run --resume",
    earlier: made_run,
    args: &RESUME,
    outputs: &["out/a", "out/b"],
    groups: &[&["out/a"], &["out/b"]],
    folder: "out",
    batch: true,
};

const TAKE_OVER: Scenario = Scenario {
    name: "run over a dead lock",
    earlier: dead_lock_earlier,
    args: &RESUME,
    outputs: &["out/a", "out/b"],
    groups: &[&["out/a"], &["out/b"]],
    folder: "out",
    batch: true,
};

/// Runs `vidprep ARGS` in `d` to its end (at most 120 s); the exit code.
fn run_to_end(d: &Path, args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut cmd = vidprep();
    cmd.args(args)
        .current_dir(d)
        .timeout(Duration::from_secs(120));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A process started now, waited for later.
fn spawn(d: &Path, args: &[&str]) -> std::process::Child {
    Command::new(assert_cmd::cargo::cargo_bin("vidprep"))
        .args(args)
        .current_dir(d)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// [`spawn`] with `env`.
fn spawn_env(d: &Path, args: &[&str], env: &[(&str, &str)]) -> std::process::Child {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("vidprep"));
    c.args(args)
        .current_dir(d)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    c.spawn().unwrap()
}

/// Waits up to `limit` for `child` to end by itself (it may be waiting for the paused one).
fn settle(child: &mut std::process::Child, limit: Duration) {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if child.try_wait().unwrap().is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The person's files below `d` (relative paths).
fn person_files(d: &Path) -> Vec<String> {
    walkdir::WalkDir::new(d)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .filter(|e| std::fs::read(e.path()).is_ok_and(|b| b.starts_with(PERSON.as_bytes())))
        .map(|e| e.path().strip_prefix(d).unwrap().display().to_string())
        .collect()
}

/// One case: `s` paused at `step` (1-based) while `actor` acts. `Err` says which invariant
/// broke.
fn one(
    s: &Scenario,
    earlier: &Path,
    new: &BTreeMap<String, String>,
    old: &BTreeMap<String, String>,
    step: usize,
    actor: Actor,
) -> Result<String, String> {
    let dir = copy_of(earlier);
    let d = dir.path();
    let lease = [("VIDPREP_LOCK_LEASE_SECONDS", "1")];
    let env: &[(&str, &str)] = if actor == Actor::Suspend { &lease } else { &[] };
    let fail = match actor {
        Actor::Enospc => Some("ENOSPC"),
        Actor::Exdev => Some("EXDEV"),
        _ => None,
    };
    let paused = Paused::start(d, s.args, step, env, fail, &[]);
    let Some(at) = paused.at.clone() else {
        let (code, stderr) = paused.finish();
        return Err(format!(
            "never reached step {step} (exit {code:?}): {stderr}"
        ));
    };
    let mut written = Vec::new();
    let mut others = Vec::new();
    let mut other_outputs: Vec<&str> = Vec::new();
    let mut extra_states: Vec<BTreeMap<String, String>> = Vec::new();
    match actor {
        Actor::Same => {
            let mut c = spawn(d, s.args);
            settle(&mut c, Duration::from_secs(3));
            others.push(c);
        }
        Actor::Other => {
            let to = format!("{}/other.mp4", s.folder);
            let mut c = spawn(
                d,
                &[
                    "cut",
                    "g.mp4",
                    "--end",
                    "5",
                    "--preset",
                    "ultrafast",
                    "-o",
                    &to,
                ],
            );
            settle(&mut c, Duration::from_secs(3));
            others.push(c);
            other_outputs.extend([
                if s.folder == "." {
                    "other.mp4"
                } else {
                    "out/other.mp4"
                },
                if s.folder == "." {
                    "other.json"
                } else {
                    "out/other.json"
                },
            ]);
        }
        Actor::Run => {
            clips_into(d, "m2.jsonl", &["z"]);
            let mut c = spawn(d, &["run", "m2.jsonl", "--out-dir", s.folder]);
            settle(&mut c, Duration::from_secs(3));
            others.push(c);
            other_outputs.extend([
                if s.folder == "." { "z" } else { "out/z" },
                if s.folder == "." {
                    "report.jsonl"
                } else {
                    "out/report.jsonl"
                },
            ]);
        }
        Actor::Write => {
            // Into every output folder there is, and every folder set aside right now.
            let mut targets: Vec<std::path::PathBuf> = vec![d.join(s.folder)];
            for o in s.outputs {
                if d.join(o).is_dir() {
                    targets.push(d.join(o));
                }
            }
            for e in walkdir::WalkDir::new(d).into_iter().filter_map(|e| e.ok()) {
                if e.file_type().is_dir() && e.file_name().to_string_lossy().ends_with(".old") {
                    targets.push(e.path().to_path_buf());
                }
            }
            for (n, t) in targets.iter().enumerate() {
                let p = t.join(format!("notes-{n}.txt"));
                if std::fs::write(&p, format!("{PERSON} {n}")).is_ok() {
                    written.push(p);
                }
            }
        }
        Actor::Delete => {
            // A person removes an earlier output (vidprep's, so allowed) mid-commit: the
            // first one still as it was.
            let now = files(d);
            let victim = old
                .iter()
                .find(|(k, v)| now.get(*k) == Some(*v))
                .map(|(k, _)| d.join(k));
            if let Some(v) = victim {
                let _ = std::fs::remove_file(v);
            }
        }
        Actor::Suspend => {
            let pid = paused.pid().to_string();
            support::send_signal("STOP", &pid);
            std::thread::sleep(Duration::from_millis(1600));
            // Does the suspended run hold the folder (its lock linked)?
            let holds = std::fs::read_to_string(d.join("out/.vidprep-lock"))
                .ok()
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                .is_some_and(|h| h["pid"].as_u64() == Some(paused.pid() as u64));
            // A second run of the request meanwhile: refused while the first holds the
            // folder; a command may wait for the first one's commit (it goes on after).
            let mut second = spawn_env(d, s.args, &lease);
            // A refusal takes milliseconds; a loaded machine gets 20 s before it counts as
            // going ahead.
            settle(&mut second, Duration::from_secs(if holds { 20 } else { 3 }));
            let ended = second.try_wait().unwrap();
            support::send_signal("CONT", &pid);
            if holds && ended.and_then(|e| e.code()) != Some(2) {
                let _ = second.kill();
                let status = second.wait().unwrap();
                paused.kill();
                return Err(format!("a second run went ahead while the first was suspended holding the folder ({status:?})"));
            }
            others.push(second);
        }
        Actor::Kill => {
            paused.kill();
            let (code, stderr) = run_to_end(d, s.args, &[]);
            if code != Some(0) {
                return Err(format!(
                    "after SIGKILL at {at}, the request again failed ({code:?}): {stderr}"
                ));
            }
            return check(s, earlier, d, new, old, &[], &[], &[], true, &at);
        }
        Actor::Enospc | Actor::Exdev => {}
    }
    let (code, stderr) = paused.finish();
    if matches!(code, Some(101) | Some(134) | None) {
        return Err(format!("the request crashed ({code:?}): {stderr}"));
    }
    for mut c in others {
        let status = c.wait().unwrap();
        if matches!(status.code(), Some(101) | Some(134) | None) {
            return Err(format!("the other actor crashed ({status:?})"));
        }
        if actor == Actor::Same && status.success() && code == Some(0) {
            // Two successes: the second ran after the first (whole groups both): its
            // outputs are the new state too.
            extra_states.push(new.clone());
        }
    }
    let person: Vec<String> = written
        .iter()
        .map(|p| p.strip_prefix(d).unwrap().display().to_string())
        .collect();
    check(
        s,
        earlier,
        d,
        new,
        old,
        &person,
        &other_outputs,
        &extra_states,
        code == Some(0),
        &at,
    )
    .map(|ok| format!("{ok}; exit {code:?}"))
}

/// A manifest `name` of clips `ids` (frames 0..5).
fn clips_into(d: &Path, name: &str, ids: &[&str]) {
    let lines: Vec<String> = ids
        .iter()
        .map(|id| format!(r#"{{"id": "{id}", "source": "g.mp4", "end": 5, "exports": [{{"kind": "clip", "preset": "ultrafast"}}]}}"#))
        .collect();
    manifest(d, name, &lines);
}

/// The invariants, after every process ended.
#[allow(clippy::too_many_arguments)]
fn check(
    s: &Scenario,
    earlier: &Path,
    d: &Path,
    new: &BTreeMap<String, String>,
    old: &BTreeMap<String, String>,
    person: &[String],
    other_outputs: &[&str],
    _extra: &[BTreeMap<String, String>],
    succeeded: bool,
    at: &str,
) -> Result<String, String> {
    let all = files(d);
    // No file vidprep did not write was removed: each is where it was, or kept.
    let found = person_files(d);
    for p in person {
        let name = Path::new(p)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if !found
            .iter()
            .any(|f| f == p || (f.contains(".kept-") && f.ends_with(&name)) || f.ends_with(&name))
        {
            return Err(format!("the person's {p} was removed (at {at})"));
        }
    }
    // Whole, and from one request: each group is the earlier one or the new one (or the
    // earlier one less what the person deleted, when it failed).
    let got = part(&all, s.outputs, &found);
    let got: BTreeMap<String, String> = got
        .into_iter()
        .filter(|(k, _)| {
            !other_outputs
                .iter()
                .any(|o| k == o || k.starts_with(&format!("{o}/")))
        })
        .collect();
    for g in s.groups {
        let (got, new, old) = (part(&got, g, &[]), part(new, g, &[]), part(old, g, &[]));
        let whole = got == new || got == old || (!succeeded && is_old_with_deletion(&got, &old));
        if !whole {
            return Err(format!(
                "a mix at {at}: earlier {old:?}, new {new:?}, got {got:?}"
            ));
        }
    }
    if succeeded && got != *new {
        return Err(format!(
            "exit 0 at {at}, but the outputs are not the new ones: {got:?}"
        ));
    }
    // No temporary, no lock left (but a dead one that was there before and that the request,
    // failing, could not take over).
    let before = files(earlier);
    let stray: Vec<&String> = all
        .iter()
        .filter(|(k, _)| {
            k.contains("vidprep-tmp")
                || k.contains(".vidprep-lock")
                || k.contains("vidprep-commit.lock")
        })
        .filter(|(k, v)| succeeded || before.get(*k) != Some(*v))
        .map(|(k, _)| k)
        .collect();
    if !stray.is_empty() {
        return Err(format!("left {stray:?} (at {at})"));
    }
    if s.batch && d.join("out/report.jsonl").is_file() {
        super::commit_signals::report_consistent(d).map_err(|e| format!("{e} (at {at})"))?;
    }
    Ok(if got == *new {
        "new".into()
    } else {
        "earlier".into()
    })
}

/// The earlier state less files a person deleted (the `delete` actor): the rest as before.
fn is_old_with_deletion(got: &BTreeMap<String, String>, old: &BTreeMap<String, String>) -> bool {
    got.iter().all(|(k, v)| old.get(k) == Some(v))
}

/// Every step of `s` with `actor`; fails naming every broken case.
fn sweep(s: &Scenario, actor: Actor) {
    let earlier = (s.earlier)();
    let old = part(&files(earlier.path()), s.outputs, &[]);
    let dry = copy_of(earlier.path());
    let list = steps(dry.path(), s.args, &[]);
    let new = part(&files(dry.path()), s.outputs, &[]);
    assert!(list.len() >= 4, "{}: too few steps {list:?}", s.name);
    assert_ne!(old, new, "{}: the request must change its outputs", s.name);
    let mut failures = Vec::new();
    let mut lines = Vec::new();
    for step in 1..=list.len() {
        let outcome = one(s, earlier.path(), &new, &old, step, actor);
        let what = &list[step - 1];
        lines.push(format!(
            "{}\t{:?}\t{step}\t{what}\t{}",
            s.name,
            actor,
            match &outcome {
                Ok(o) => format!("held ({o})"),
                Err(e) => format!("BROKEN: {}", e.lines().next().unwrap_or_default()),
            }
        ));
        if let Err(e) = outcome {
            failures.push(format!(
                "{} / {actor:?} / step {step} ({what}): {e}",
                s.name
            ));
        }
    }
    if let Some(path) = std::env::var_os("VIDPREP_INTERLEAVE_REPORT") {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        for l in &lines {
            writeln!(f, "{l}").unwrap();
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

macro_rules! sweeps {
    ($($name:ident => ($scenario:expr, $actor:expr)),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                sweep(&$scenario, $actor);
            }
        )*
    };
}

sweeps! {
    cut_same => (CUT, Actor::Same),
    cut_other => (CUT, Actor::Other),
    cut_run => (CUT, Actor::Run),
    cut_write => (CUT, Actor::Write),
    cut_delete => (CUT, Actor::Delete),
    cut_suspend => (CUT, Actor::Suspend),
    cut_kill => (CUT, Actor::Kill),
    cut_enospc => (CUT, Actor::Enospc),
    cut_exdev => (CUT, Actor::Exdev),
    resume_same => (RESUMED, Actor::Same),
    resume_other => (RESUMED, Actor::Other),
    resume_run => (RESUMED, Actor::Run),
    resume_write => (RESUMED, Actor::Write),
    resume_delete => (RESUMED, Actor::Delete),
    resume_suspend => (RESUMED, Actor::Suspend),
    resume_kill => (RESUMED, Actor::Kill),
    resume_enospc => (RESUMED, Actor::Enospc),
    resume_exdev => (RESUMED, Actor::Exdev),
    take_over_same => (TAKE_OVER, Actor::Same),
    take_over_run => (TAKE_OVER, Actor::Run),
    take_over_suspend => (TAKE_OVER, Actor::Suspend),
    take_over_kill => (TAKE_OVER, Actor::Kill),
    take_over_enospc => (TAKE_OVER, Actor::Enospc),
}
