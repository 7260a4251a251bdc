//! The one way a test skips: [`skip`] (or [`skipped`], which also gives `None`) with what the
//! test lacks ([`Needs`]) and why. It prints one line, `SKIP <test> (<needs>): <reason>`, to
//! stderr and, where `VIDPREP_SKIP_LOG` names a file, appends it there (scripts/test.sh lists
//! that file's lines after `cargo test`, whose output capture hides a passing test's stderr).
//! Where the requirement's switch ([`Needs::switch`]) or `VIDPREP_REQUIRE_ALL` is set (to
//! anything not empty, as scripts/test.sh and the Python tests read them), it panics with the
//! reason instead: the test fails, so no test passes by not running where everything it needs
//! is meant to be there. The switches, and which CI sets: README.md, "Testing: what may skip".
//!
//! A test returns right after a skip (`let Some(x) = ... else { return };` around a helper that
//! gives `None` by [`skipped`]); a check inside a test that cannot be made (no `/usr/bin/time`
//! for the peak memory) skips that check with the same call and goes on.

use std::fmt::Display;

/// What a skipped test lacks: each has its switch, `VIDPREP_REQUIRE_<NAME>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    /// Headless Chromium and chromium-driver (the review page's tests).
    Browser,
    /// The real footage in `../shared/data`.
    Data,
    /// Python with the packages the profiles are checked against (`VIDPREP_PYTHON` from
    /// scripts/parity-venv.sh, `VIDPREP_TRANSFORMERS_OLD`, pysubs2, decord).
    Parity,
    /// Root with mount, PID and UTS namespaces, other users, `/proc` with hidepid=2 (the
    /// fleet's and the cluster's operator fixtures, a small tmpfs).
    Fleet,
    /// The command-line tools beside FFmpeg: `strace` allowed to trace, `/usr/bin/time`,
    /// `openssl`, `python3` (scripts/debian-packages.txt).
    Tools,
    /// The media corpus `scripts/fetch-corpus.py` fetches into `~/.cache/vidprep-corpus`.
    Corpus,
}

impl Needs {
    /// The environment variable that makes this skip a failure.
    pub fn switch(self) -> &'static str {
        match self {
            Needs::Browser => "VIDPREP_REQUIRE_BROWSER",
            Needs::Data => "VIDPREP_REQUIRE_DATA",
            Needs::Parity => "VIDPREP_REQUIRE_PARITY",
            Needs::Fleet => "VIDPREP_REQUIRE_FLEET",
            Needs::Tools => "VIDPREP_REQUIRE_TOOLS",
            Needs::Corpus => "VIDPREP_REQUIRE_CORPUS",
        }
    }

    /// Its name in the `SKIP` line: `browser`, `data`, ...
    pub fn name(self) -> &'static str {
        match self {
            Needs::Browser => "browser",
            Needs::Data => "data",
            Needs::Parity => "parity",
            Needs::Fleet => "fleet",
            Needs::Tools => "tools",
            Needs::Corpus => "corpus",
        }
    }
}

fn set(var: &str) -> bool {
    std::env::var_os(var).is_some_and(|v| !v.is_empty())
}

/// Whether a test lacking `needs` must fail: its switch or `VIDPREP_REQUIRE_ALL` is set.
pub fn required(needs: Needs) -> bool {
    set(needs.switch()) || set("VIDPREP_REQUIRE_ALL")
}

/// The running test's path (libtest names each test's thread after it).
fn test_name() -> String {
    match std::thread::current().name() {
        Some(n) if n != "main" => n.to_string(),
        _ => "?".to_string(),
    }
}

/// Skips what needs `needs`, saying `reason`: prints (and logs) the `SKIP` line, or panics
/// where `needs` is required. The caller then returns (or goes on without the check).
#[track_caller]
pub fn skip(needs: Needs, reason: impl Display) {
    let test = test_name();
    if required(needs) {
        let by = if set(needs.switch()) {
            needs.switch()
        } else {
            "VIDPREP_REQUIRE_ALL"
        };
        panic!("{test} cannot run: {reason}; but {by} is set, so it may not skip");
    }
    let line = format!("SKIP {test} ({}): {reason}", needs.name());
    eprintln!("{line} (set {} to make this a failure)", needs.switch());
    if let Some(log) = std::env::var_os("VIDPREP_SKIP_LOG") {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
        {
            let _ = writeln!(f, "{}", line.replace('\n', " "));
        }
    }
}

/// [`skip`], then `None`: for helpers that give what a test needs or nothing.
#[track_caller]
pub fn skipped<T>(needs: Needs, reason: impl Display) -> Option<T> {
    skip(needs, reason);
    None
}
