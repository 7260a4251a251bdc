//! Helpers for end-to-end tests that touch vidprep itself (the `common` toolkit never does):
//! running the binary, finding the shared real footage, reading sidecars, and turning
//! vidprep's pictures into the oracle's packed frames for comparison.
#![allow(dead_code)]

pub mod http;
pub mod webdriver;

use std::path::{Path, PathBuf};

use crate::common::oracle::{Frame as OracleFrame, PixFmt};
use crate::common::skip::{skipped, Needs};

/// The `vidprep` binary under test.
pub fn vidprep() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("vidprep").unwrap()
}

/// Why `strace` cannot count a process's system calls here, if it cannot: not installed, or
/// not allowed to trace (a container that forbids ptrace). Tests that count opens with it skip
/// with this reason.
pub fn strace_unusable() -> Option<String> {
    match std::process::Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=openat", "-o", "/dev/null", "true"])
        .output()
    {
        Err(_) => Some("strace is not installed".into()),
        Ok(o) if !o.status.success() => Some(format!(
            "strace cannot trace here: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Ok(_) => None,
    }
}

/// The files a process opened, as `strace -f -e trace=openat` wrote them.
pub struct OpenTrace(String);

impl OpenTrace {
    /// How many times `path` (as the process named it) was opened.
    pub fn opens_of(&self, path: &std::path::Path) -> usize {
        let name = format!("\"{}\"", path.display());
        self.0.lines().filter(|l| l.contains(&name)).count()
    }
}

/// Runs the `vidprep` binary with `args` under `strace -f -e trace=openat` (the trace written
/// to `trace`), its stdout dropped; `None` when it did not exit 0.
pub fn vidprep_traced<I, S>(trace: &std::path::Path, args: I) -> Option<OpenTrace>
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let status = std::process::Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=openat", "-o"])
        .arg(trace)
        .arg(env!("CARGO_BIN_EXE_vidprep"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    status
        .success()
        .then(|| OpenTrace(std::fs::read_to_string(trace).unwrap()))
}

/// Sends `signal` ("INT", "TERM", "KILL") to `target` (a pid, or `-PGID` for a process group)
/// through the shell's builtin `kill`: a bare Debian root has no `/bin/kill` (procps is not
/// part of debootstrap's minimal set). Returns whether the shell reported success.
pub fn send_signal(signal: &str, target: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", r#"kill -s "$1" -- "$2""#, "sh", signal, target])
        .status()
        .is_ok_and(|s| s.success())
}

/// A path under `../shared/data`, or `None` (with a message) when the folder is absent; a
/// failure instead where `VIDPREP_REQUIRE_DATA` is set.
pub fn shared(rel: &str) -> Option<PathBuf> {
    let p = crate::repo_root().join("../shared/data").join(rel);
    if p.exists() {
        Some(p)
    } else {
        // CI sets VIDPREP_REQUIRE_DATA where the folder is there: a test that cannot find its
        // footage then fails instead of passing quietly.
        skipped(
            Needs::Data,
            format!(
                "{} is absent (the shared real-footage folder is not here)",
                p.display()
            ),
        )
    }
}

/// `frames.json` of a frames export in `dir`.
pub fn frames_json(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("frames.json")).unwrap()).unwrap()
}

/// `vidprep export frames INPUT --out-dir DIR EXTRA...`, which must succeed; its frames.json.
pub fn export_frames(input: &Path, dir: &Path, extra: &[&str]) -> serde_json::Value {
    vidprep()
        .args(["export", "frames"])
        .arg(input)
        .arg("--out-dir")
        .arg(dir)
        .args(extra)
        .assert()
        .success();
    frames_json(dir)
}

/// The sidecar JSON of an output.
pub fn sidecar(output: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(output.with_extension("json")).expect("sidecar exists");
    serde_json::from_str(&text).unwrap()
}

/// A vidprep frame (YUV 4:2:0) as the oracle's packed frame.
pub fn packed(frame: &vidprep::media::Frame) -> OracleFrame {
    OracleFrame {
        width: frame.width() as usize,
        height: frame.height() as usize,
        pix_fmt: PixFmt::Yuv420p,
        data: frame.yuv420p(),
    }
}

/// Names of the files in `dir`, sorted.
pub fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The source frame of every output frame, from a sidecar's `frames` runs.
pub fn source_frames(sidecar: &serde_json::Value) -> Vec<usize> {
    let mut v = Vec::new();
    for run in sidecar["frames"].as_array().unwrap() {
        let start = run["source_start"].as_u64().unwrap() as usize;
        for k in 0..run["count"].as_u64().unwrap() as usize {
            v.push(start + k);
        }
    }
    v
}

/// vidprep's temporary files and folders left anywhere below `dir`.
pub fn temporaries(dir: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("vidprep-tmp"))
        .map(|e| e.into_path())
        .collect()
}

/// Runs `work` on a thread of its own and returns what it returns, or fails the test when it
/// takes longer than `limit` (a hang fails instead of blocking the run; the thread is left
/// behind). For library calls, which `assert_cmd`'s timeout cannot bound.
pub fn within<T: Send + 'static>(
    limit: std::time::Duration,
    what: &str,
    work: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)));
    });
    match rx.recv_timeout(limit) {
        Ok(Ok(value)) => value,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(_) => panic!("{what} did not finish within {limit:?}"),
    }
}
