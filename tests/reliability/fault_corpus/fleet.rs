//! The fleet (issue 51): other processes, users and people acting on one folder while a
//! command works in it. Each case pauses a command at a named filesystem step (the test-only
//! `VIDPREP_FAULT_COMMIT_STEP` with `VIDPREP_FAULT_STEP_DIR`: the process writes `paused` and
//! waits for `go`), lets the other actor act, and checks what the folder holds after: a run
//! suspended past its lease keeps its folder; another user's live process is alive under
//! `hidepid`; a file a person writes into an item folder is never removed; two writers of one
//! output leave one whole group; two runs taking over one dead lock leave one holder; a run
//! whose lock was taken writes nothing more and no report; an earlier item that cannot be
//! removed whole is kept under a name the report says.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::*;

/// A vidprep process started with a pause at one of its filesystem steps.
pub(super) struct Paused {
    child: Child,
    handshake: tempfile::TempDir,
    /// The step it paused at (`N\twhat\tpath`), once it did.
    pub(super) at: Option<String>,
}

/// The filesystem steps `args` takes in `dir` (a dry run on the state there, which it
/// changes): `what path` per step, in order.
pub(super) fn steps(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Vec<String> {
    let mut cmd = vidprep();
    cmd.args(args)
        .current_dir(dir)
        .env("VIDPREP_FAULT_COMMIT_STEP", "0")
        .timeout(Duration::from_secs(120));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter_map(|l| l.strip_prefix("fault-injection: commit step "))
        .map(|l| {
            l.split_once(": ")
                .map(|(_, w)| w.to_string())
                .unwrap_or_default()
        })
        .collect()
}

impl Paused {
    /// Starts `vidprep ARGS` in `dir` with `env`, pausing at step `step` (failing it with
    /// `fail`, an errno name, once let go), and waits until it pauses there or ends.
    pub(super) fn start(
        dir: &Path,
        args: &[&str],
        step: usize,
        env: &[(&str, &str)],
        fail: Option<&str>,
        wrap: &[&str],
    ) -> Paused {
        let handshake = tempfile::tempdir().unwrap();
        let bin = assert_cmd::cargo::cargo_bin("vidprep");
        let mut cmd = if wrap.is_empty() {
            Command::new(&bin)
        } else {
            let mut c = Command::new(wrap[0]);
            c.args(&wrap[1..]).arg(&bin);
            c
        };
        cmd.args(args)
            .current_dir(dir)
            .env("VIDPREP_FAULT_COMMIT_STEP", step.to_string())
            .env("VIDPREP_FAULT_COMMIT_PAUSE_MS", "60000")
            .env("VIDPREP_FAULT_STEP_DIR", handshake.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        if let Some(f) = fail {
            cmd.env("VIDPREP_FAULT_STEP_FAIL", f);
        }
        // Readable by another user (a wrapped command may run as one).
        let _ = std::fs::set_permissions(
            handshake.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o777),
        );
        let mut child = cmd.spawn().unwrap();
        let paused = handshake.path().join("paused");
        let t0 = Instant::now();
        let mut at = None;
        while t0.elapsed() < Duration::from_secs(90) {
            if let Ok(text) = std::fs::read_to_string(&paused) {
                at = Some(text.trim().to_string());
                break;
            }
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Paused {
            child,
            handshake,
            at,
        }
    }

    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Lets it go on from its pause.
    pub(super) fn go(&self) {
        std::fs::write(self.handshake.path().join("go"), "").unwrap();
    }

    /// Lets it go on and waits for its end: exit code (None: a signal) and stderr.
    pub(super) fn finish(mut self) -> (Option<i32>, String) {
        self.go();
        let mut stderr = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut stderr);
        }
        let status = self.child.wait().unwrap();
        (status.code(), stderr)
    }

    /// Kills it (SIGKILL) and reaps it.
    pub(super) fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Paused {
    /// A test that failed midway leaves no paused (or stopped) process behind.
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The step number (1-based) of the first step whose `what path` contains every one of
/// `needles`.
pub(super) fn step_of(steps: &[String], needles: &[&str]) -> usize {
    steps
        .iter()
        .position(|s| needles.iter().all(|n| s.contains(n)))
        .map(|i| i + 1)
        .unwrap_or_else(|| panic!("no step with {needles:?} among {steps:?}"))
}

/// A copy of `from` (a prepared folder) in a new temporary folder.
pub(super) fn copy_of(from: &Path) -> tempfile::TempDir {
    let to = tempfile::tempdir().unwrap();
    let out = Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", from.display()))
        .arg(to.path())
        .status()
        .unwrap();
    assert!(out.success());
    to
}

/// A manifest of items `ids` (clips of the base video, frames `start..start+10`).
pub(super) fn clips(d: &Path, ids: &[&str], start: u32) {
    let lines: Vec<String> = ids
        .iter()
        .map(|id| {
            format!(
                r#"{{"id": "{id}", "source": "g.mp4", "start": {start}, "end": {}, "exports": [{{"kind": "clip", "preset": "ultrafast"}}]}}"#,
                start + 10
            )
        })
        .collect();
    manifest(d, "m.jsonl", &lines);
}

/// A folder with the base files and a run of items `a` and `b` made into `out/` (frames
/// 0..10), whose manifest then asks for frames 10..20 (so `--resume` redoes both).
pub(super) fn made_run() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    base(d);
    clips(d, &["a", "b"], 0);
    vidprep()
        .args(["run", "m.jsonl", "--out-dir", "out", "--jobs", "1"])
        .current_dir(d)
        .timeout(Duration::from_secs(120))
        .assert()
        .success();
    clips(d, &["a", "b"], 10);
    dir
}

/// One item at a time, so that the steps come in one order.
pub(super) const RESUME: [&str; 7] = [
    "run",
    "m.jsonl",
    "--out-dir",
    "out",
    "--resume",
    "--jobs",
    "1",
];

fn report(d: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(d.join("out/report.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn temporaries_in(d: &Path) -> Vec<PathBuf> {
    support::temporaries(d)
}

#[test]
fn a_run_suspended_past_its_lease_keeps_its_folder() {
    let made = made_run();
    let lease = [("VIDPREP_LOCK_LEASE_SECONDS", "1")];
    let plan = copy_of(made.path());
    let steps = steps(plan.path(), &RESUME, &lease);
    let dir = copy_of(made.path());
    let d = dir.path();
    // Paused mid-commit of item a, its earlier folder set aside, then suspended (SIGSTOP,
    // as `scontrol suspend` does) for three times its lease.
    let first = Paused::start(
        d,
        &RESUME,
        step_of(&steps, &["put in place", "out/a"]),
        &lease,
        None,
        &[],
    );
    assert!(first.at.is_some(), "never paused");
    let pid = first.pid().to_string();
    assert!(support::send_signal("STOP", &pid));
    std::thread::sleep(Duration::from_millis(3200));
    let temps = temporaries_in(d);
    assert!(!temps.is_empty(), "the paused commit has its temporaries");
    // A second run on the folder: refused, and nothing of the first is touched.
    let second = vidprep()
        .args(RESUME)
        .current_dir(d)
        .env("VIDPREP_LOCK_LEASE_SECONDS", "1")
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("in use by another vidprep run") && stderr.contains(&format!("pid {pid}")),
        "{stderr}"
    );
    for t in &temps {
        assert!(t.exists(), "the second run removed the first one's {t:?}");
    }
    assert!(support::send_signal("CONT", &pid));
    let (code, stderr) = first.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let lines = report(d);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines.iter().all(|l| l["status"] == "ok"), "{lines:?}");
    assert!(temporaries_in(d).is_empty(), "{:?}", temporaries_in(d));
    for id in ["a", "b"] {
        assert!(d.join("out").join(id).join("item.json").is_file());
    }
}

#[test]
fn a_run_whose_lock_was_taken_stops_before_its_next_side_effect() {
    let made = made_run();
    let plan = copy_of(made.path());
    let steps = steps(plan.path(), &RESUME, &[]);
    let dir = copy_of(made.path());
    let d = dir.path();
    let report_before = std::fs::read(d.join("out/report.jsonl")).unwrap();
    let item_a = support::files_in(&d.join("out/a"));
    let json_a = std::fs::read(d.join("out/a/item.json")).unwrap();
    // Paused before its first commit; meanwhile its lock is taken over (as a run of another
    // host does once the lease of a suspended holder expires).
    let first = Paused::start(
        d,
        &RESUME,
        step_of(&steps, &["take the commit lock"]),
        &[],
        None,
        &[],
    );
    assert!(first.at.is_some());
    let lock = d.join("out/.vidprep-lock");
    let mut holder: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&lock).unwrap()).unwrap();
    holder["host"] = "elsewhere".into();
    holder["token"] = "another-holder-00".into();
    std::fs::write(&lock, holder.to_string()).unwrap();
    let taken = std::fs::read(&lock).unwrap();
    let (code, stderr) = first.finish();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("no longer holds the lock"), "{stderr}");
    // Nothing more was put in place, the shared report is the one there was, the other
    // holder's lock is untouched.
    assert_eq!(std::fs::read(d.join("out/a/item.json")).unwrap(), json_a);
    assert_eq!(support::files_in(&d.join("out/a")), item_a);
    assert_eq!(
        std::fs::read(d.join("out/report.jsonl")).unwrap(),
        report_before
    );
    assert_eq!(std::fs::read(&lock).unwrap(), taken);
    assert!(temporaries_in(&d.join("out/a")).is_empty());
}

/// Whether this machine lets the test make a mount namespace, mount `/proc` with `hidepid=2`
/// and run a command as another user (root, `unshare`, `setpriv`).
fn other_users_possible() -> bool {
    std::process::Command::new("unshare")
        .args(["--mount", "sh", "-c", "mount -t proc -o hidepid=2 proc /proc && setpriv --reuid=4201 --regid=4200 --clear-groups true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The command prefix that runs as user `uid` (group 4200) with a umask of 002, in a mount
/// namespace whose `/proc` hides other users' processes (`hidepid=2`).
fn as_user_hidden(uid: u32) -> Vec<String> {
    vec![
        "unshare".into(),
        "--mount".into(),
        "sh".into(),
        "-c".into(),
        format!(
            "mount -t proc -o hidepid=2 proc /proc && umask 002 && exec setpriv --reuid={uid} --regid=4200 --clear-groups \"$@\""
        ),
        "sh".into(),
    ]
}

/// A group folder both users write into (group 4200, setgid, group-writable, no sticky bit:
/// each may remove the other's files, as on a shared project folder).
fn group_folder() -> Option<tempfile::TempDir> {
    if !other_users_possible() {
        return crate::common::skip::skipped(
            crate::common::skip::Needs::Fleet,
            "cannot run as another user with hidepid=2 here (needs root, unshare --mount, setpriv)",
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    base(d);
    let status = Command::new("sh")
        .arg("-c")
        .arg("chgrp -R 4200 . && chmod -R g+rwX,o+rX . && find . -type d -exec chmod 2775 {} + && chmod 2775 .")
        .current_dir(d)
        .status()
        .unwrap();
    assert!(status.success());
    Some(dir)
}

#[test]
fn under_hidepid_another_users_live_cut_keeps_its_temporary() {
    let Some(dir) = group_folder() else { return };
    let d = dir.path();
    let cut = |to: &str| -> Vec<String> {
        [
            "cut",
            "g.mp4",
            "--end",
            "10",
            "--preset",
            "ultrafast",
            "-o",
            to,
        ]
        .map(String::from)
        .to_vec()
    };
    let a_args = cut("a.mp4");
    let a_refs: Vec<&str> = a_args.iter().map(String::as_str).collect();
    let a_wrap = as_user_hidden(4201);
    let a_wrap_refs: Vec<&str> = a_wrap.iter().map(String::as_str).collect();
    // User A's cut, paused at its first commit step: its temporaries exist.
    let a = Paused::start(d, &a_refs, 1, &[], None, &a_wrap_refs);
    assert!(a.at.is_some(), "user A's cut never paused");
    let temps = temporaries_in(d);
    assert!(!temps.is_empty());
    // User B, who cannot see A's process in /proc, cuts into the same folder.
    let mut b = Command::new(&as_user_hidden(4202)[0]);
    b.args(&as_user_hidden(4202)[1..])
        .arg(assert_cmd::cargo::cargo_bin("vidprep"))
        .args(cut("b.mp4"))
        .current_dir(d);
    let out = b.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for t in &temps {
        assert!(
            t.exists(),
            "user B's cut removed user A's live temporary {t:?}"
        );
    }
    let (code, stderr) = a.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(d.join("a.mp4").is_file() && d.join("a.json").is_file());
    assert!(d.join("b.mp4").is_file() && d.join("b.json").is_file());
    assert!(temporaries_in(d).is_empty());
}

#[test]
fn under_hidepid_another_users_live_run_keeps_its_lock() {
    let Some(dir) = group_folder() else { return };
    let d = dir.path();
    clips(d, &["a", "b"], 0);
    std::fs::create_dir(d.join("out")).unwrap();
    Command::new("sh")
        .arg("-c")
        .arg("chgrp 4200 out m.jsonl && chmod 2775 out && chmod g+rw m.jsonl")
        .current_dir(d)
        .status()
        .unwrap();
    let run = ["run", "m.jsonl", "--out-dir", "out"];
    let a_wrap = as_user_hidden(4201);
    let a_wrap_refs: Vec<&str> = a_wrap.iter().map(String::as_str).collect();
    // The lock is written and linked, the items not made yet: pause at the first commit.
    let a = Paused::start(d, &run, 3, &[], None, &a_wrap_refs);
    assert!(a.at.is_some(), "user A's run never paused");
    let b_wrap = as_user_hidden(4202);
    let out = Command::new(&b_wrap[0])
        .args(&b_wrap[1..])
        .arg(assert_cmd::cargo::cargo_bin("vidprep"))
        .args(run)
        .current_dir(d)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "user B's run must be refused: {stderr}"
    );
    assert!(stderr.contains("in use by another vidprep run"), "{stderr}");
    let (code, stderr) = a.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let lines = report(d);
    assert!(
        lines.len() == 2 && lines.iter().all(|l| l["status"] == "ok"),
        "{lines:?}"
    );
}

/// Runs `--resume` on a copy of `made`, pausing at the step `needles` names, where `act`
/// acts on the folder; returns the folder, the exit code and stderr.
fn resume_with(
    made: &Path,
    needles: &[&str],
    act: impl FnOnce(&Path),
) -> (tempfile::TempDir, Option<i32>, String) {
    let plan = copy_of(made);
    let steps = steps(plan.path(), &RESUME, &[]);
    let dir = copy_of(made);
    let p = Paused::start(
        dir.path(),
        &RESUME,
        step_of(&steps, needles),
        &[],
        None,
        &[],
    );
    assert!(p.at.is_some(), "never paused at {needles:?}");
    act(dir.path());
    let (code, stderr) = p.finish();
    (dir, code, stderr)
}

#[test]
fn a_file_a_person_writes_into_an_item_folder_mid_run_is_kept() {
    let made = made_run();
    let json_a = std::fs::read(made.path().join("out/a/item.json")).unwrap();
    // Before the item's commit: a note, a subfolder of the person's, a frames export of
    // another vidprep command (its own frames.json, which item.json does not list).
    for (what, path) in [
        ("a note", "out/a/notes.txt"),
        ("a subfolder", "out/a/mine/draft.txt"),
        ("another export", "out/a/frames/frames.json"),
    ] {
        let (dir, code, stderr) = resume_with(made.path(), &["take the commit lock", "out"], |d| {
            let p = d.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "a person's").unwrap();
        });
        let d = dir.path();
        assert_eq!(code, Some(1), "{what}: {stderr}");
        assert!(
            stderr.contains("vidprep did not write appeared in it while this request worked"),
            "{what}: {stderr}"
        );
        assert_eq!(
            std::fs::read_to_string(d.join(path)).unwrap(),
            "a person's",
            "{what}"
        );
        // The earlier item is whole and as it was.
        assert_eq!(
            std::fs::read(d.join("out/a/item.json")).unwrap(),
            json_a,
            "{what}"
        );
        assert!(
            temporaries_in(d).is_empty(),
            "{what}: {:?}",
            temporaries_in(d)
        );
        let lines = report(d);
        let a = lines.iter().find(|l| l["id"] == "a").unwrap();
        assert_eq!(a["status"], "failed", "{what}");
        assert!(
            a["error"]
                .as_str()
                .unwrap()
                .contains(path.rsplit_once("out/a/").unwrap().1),
            "{what}: {a}"
        );
        // b was made.
        assert_eq!(
            lines.iter().find(|l| l["id"] == "b").unwrap()["status"],
            "ok"
        );
    }
}

#[test]
fn a_file_written_into_the_set_aside_item_is_kept_and_named() {
    let made = made_run();
    // The earlier folder is set aside and the new one in place; a person whose shell was in
    // the folder writes a file there (it is the set-aside folder now).
    let (dir, code, stderr) = resume_with(made.path(), &["remove the earlier", "out/a"], |d| {
        let old = std::fs::read_dir(d.join("out"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.file_name().unwrap().to_string_lossy().ends_with(".old"))
            .expect("the earlier item is set aside");
        std::fs::write(old.join("notes.txt"), "a person's").unwrap();
    });
    let d = dir.path();
    assert_eq!(code, Some(0), "{stderr}");
    let kept = d.join("out/a.kept-1");
    assert_eq!(
        std::fs::read_to_string(kept.join("notes.txt")).unwrap(),
        "a person's"
    );
    // Only the person's file is left of the earlier item.
    assert_eq!(support::files_in(&kept), vec!["notes.txt".to_string()]);
    let lines = report(d);
    let a = lines.iter().find(|l| l["id"] == "a").unwrap();
    assert_eq!(a["status"], "ok");
    let warnings = a["warnings"].to_string();
    assert!(warnings.contains("out/a.kept-1"), "{a}");
    assert!(temporaries_in(d).is_empty(), "{:?}", temporaries_in(d));
}

#[test]
fn a_person_writing_into_an_export_folder_mid_command_keeps_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    base(d);
    let export = [
        "export",
        "frames",
        "g.mp4",
        "--count",
        "3",
        "--out-dir",
        "frames",
    ];
    vidprep().args(export).current_dir(d).assert().success();
    let before = support::files_in(&d.join("frames"));
    let plan = copy_of(d);
    let steps = steps(plan.path(), &export, &[]);
    let p = Paused::start(
        d,
        &export,
        step_of(&steps, &["take the commit lock"]),
        &[],
        None,
        &[],
    );
    assert!(p.at.is_some());
    std::fs::write(d.join("frames/notes.txt"), "a person's").unwrap();
    let (code, stderr) = p.finish();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("notes.txt"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(d.join("frames/notes.txt")).unwrap(),
        "a person's"
    );
    let mut expected = before;
    expected.push("notes.txt".into());
    expected.sort();
    assert_eq!(support::files_in(&d.join("frames")), expected);
    assert!(temporaries_in(d).is_empty());
}

/// The frame count ffprobe reads in `video` (the oracle of which request made it).
fn frames_of(video: &Path) -> u64 {
    let out = Command::new("ffprobe")
        .args([
            "-v",
            "error",
            "-count_frames",
            "-select_streams",
            "v:0",
            "-show_entries",
            "stream=nb_read_frames",
            "-of",
            "csv=p=0",
        ])
        .arg(video)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

#[test]
fn two_writers_of_one_output_leave_one_whole_group() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    base(d);
    let cut = |end: &'static str| {
        [
            "cut",
            "g.mp4",
            "--end",
            end,
            "--preset",
            "ultrafast",
            "-o",
            "same.mkv",
        ]
    };
    vidprep().args(cut("5")).current_dir(d).assert().success();
    let plan = copy_of(d);
    let steps = steps(plan.path(), &cut("10"), &[]);
    // The first writer pauses with its video in place and its sidecar not yet.
    let first = Paused::start(
        d,
        &cut("10"),
        step_of(&steps, &["set aside", "same.json"]),
        &[],
        None,
        &[],
    );
    assert!(first.at.is_some());
    // The second writes the same outputs meanwhile (it waits for the first's commit).
    let mut second = std::process::Command::new(assert_cmd::cargo::cargo_bin("vidprep"))
        .args(cut("20"))
        .current_dir(d)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let (code, stderr) = first.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let status = second.wait().unwrap();
    assert!(status.success());
    // One whole group: the sidecar's span is the video's.
    let sidecar: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("same.json")).unwrap()).unwrap();
    let frames = frames_of(&d.join("same.mkv"));
    let said = sidecar["frames"]
        .as_u64()
        .or_else(|| sidecar["output"]["frames"].as_u64());
    let text = sidecar.to_string();
    assert!(
        said == Some(frames)
            || text.contains(&format!("\"end\":\"{frames}\""))
            || text.contains(&format!("\"end\":{frames}")),
        "same.mkv has {frames} frames, its sidecar says otherwise: {text}"
    );
    assert!(temporaries_in(d).is_empty());
    assert!(!d.join(".vidprep-commit.lock").exists());
}

#[test]
fn two_runs_taking_over_one_dead_lock_leave_one_holder() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    base(d);
    clips(d, &["a", "b"], 0);
    let run = ["run", "m.jsonl", "--out-dir", "out"];
    // A lock of this host whose process is gone (a run killed with SIGKILL).
    let mut dead = Command::new("true").spawn().unwrap();
    let dead_pid = dead.id();
    dead.wait().unwrap();
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    let holder = serde_json::json!({
        "pid": dead_pid,
        "host": read("/proc/sys/kernel/hostname"),
        "boot_id": read("/proc/sys/kernel/random/boot_id"),
        "pid_ns": std::fs::read_link("/proc/self/ns/pid").unwrap().display().to_string(),
        "token": "0123456789abcdef",
        "manifest": null, "shard": null, "started_unix": 0, "lease_seconds": 120
    });
    std::fs::create_dir(d.join("out")).unwrap();
    std::fs::write(d.join("out/.vidprep-lock"), holder.to_string()).unwrap();
    // The second starter judged the lock dead and pauses right before it renames it away.
    let second = Paused::start(d, &run, 1, &[], None, &[]);
    let at = second.at.clone().unwrap_or_default();
    assert!(at.contains("take over: rename the dead lock"), "{at}");
    // The first takes it over meanwhile, holds the folder and pauses at its first commit.
    // (Its steps: rename and remove the dead lock, write and link its own, then commit.)
    let first = Paused::start(d, &run, 5, &[], None, &[]);
    assert!(
        first
            .at
            .as_deref()
            .unwrap_or_default()
            .contains("take the commit lock"),
        "{:?}",
        first.at
    );
    // The second goes on: it must not win too.
    let (code2, stderr2) = second.finish();
    assert_eq!(
        code2,
        Some(2),
        "the second starter must be refused: {stderr2}"
    );
    let (code1, stderr1) = first.finish();
    assert_eq!(code1, Some(0), "{stderr1}");
    let lines = report(d);
    assert!(
        lines.len() == 2 && lines.iter().all(|l| l["status"] == "ok"),
        "{lines:?}"
    );
    let left: Vec<String> = support::files_in(&d.join("out"))
        .into_iter()
        .filter(|f| f.starts_with(".vidprep"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
