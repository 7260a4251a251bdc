//! Running the ffmpeg / ffprobe CLI with loud failures: every error message
//! carries the exact (shell-quoted) command line, the exit status and the
//! tail of stderr, so a failing test says what ffmpeg was asked and what it
//! answered.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// How many trailing stderr lines an error message keeps.
pub const STDERR_TAIL_LINES: usize = 30;

/// Shell-quote one argument for display (copy-paste into a shell works).
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%^".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Render `program args...` as one copy-pastable shell line.
pub fn cmdline<S: AsRef<OsStr>>(program: &str, args: &[S]) -> String {
    let mut out = shell_quote(program);
    for a in args {
        out.push(' ');
        out.push_str(&shell_quote(&a.as_ref().to_string_lossy()));
    }
    out
}

/// Last `n` lines of `text`.
pub fn tail_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(n);
    lines[start..].join("\n")
}

/// Run a command, capturing stdout and stderr, without judging the exit code.
/// Errors only if the program cannot be started.
pub fn run_raw<S: AsRef<OsStr>>(program: &str, args: &[S]) -> Result<Output, String> {
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("could not start `{}`: {e}", cmdline(program, args)))
}

/// Run a command; `Err` (with command line, status and stderr tail) unless it
/// exits with status 0.
pub fn run<S: AsRef<OsStr>>(program: &str, args: &[S]) -> Result<Output, String> {
    let out = run_raw(program, args)?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(failure_message(program, args, &out))
    }
}

/// Like [`run`] but panics with the full message.
pub fn run_ok<S: AsRef<OsStr>>(program: &str, args: &[S]) -> Output {
    match run(program, args) {
        Ok(o) => o,
        Err(e) => panic!("{e}"),
    }
}

/// The message used for a failed command.
pub fn failure_message<S: AsRef<OsStr>>(program: &str, args: &[S], out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    format!(
        "command failed ({}):\n  $ {}\n--- stderr (last {} lines) ---\n{}\n---",
        out.status,
        cmdline(program, args),
        STDERR_TAIL_LINES,
        tail_lines(&stderr, STDERR_TAIL_LINES)
    )
}

/// `ffmpeg -hide_banner -nostdin -y` followed by `args`; Err unless exit 0.
pub fn ffmpeg<S: AsRef<OsStr>>(args: &[S]) -> Result<Output, String> {
    let mut all: Vec<std::ffi::OsString> = ["-hide_banner", "-nostdin", "-y"]
        .iter()
        .map(Into::into)
        .collect();
    all.extend(args.iter().map(|a| a.as_ref().to_os_string()));
    run("ffmpeg", &all)
}

/// `ffprobe -hide_banner` followed by `args`; Err unless exit 0.
pub fn ffprobe<S: AsRef<OsStr>>(args: &[S]) -> Result<Output, String> {
    let mut all: Vec<std::ffi::OsString> = vec!["-hide_banner".into()];
    all.extend(args.iter().map(|a| a.as_ref().to_os_string()));
    run("ffprobe", &all)
}

/// The ffmpeg CLI's output option that passes every frame through with its own timestamp (no
/// duplicates, no drops): `-fps_mode passthrough`, which FFmpeg 5.1 added (and deprecated
/// `-vsync` for); older ones (4.x) only know `-vsync passthrough`. Asked of the installed
/// ffmpeg once (`ffmpeg -hide_banner -h full`).
pub fn passthrough() -> [&'static str; 2] {
    static HAS_FPS_MODE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let has = *HAS_FPS_MODE.get_or_init(|| {
        let out = std::process::Command::new("ffmpeg")
            .args(["-hide_banner", "-h", "full"])
            .output()
            .expect("run ffmpeg -h full");
        String::from_utf8_lossy(&out.stdout).contains("-fps_mode")
    });
    if has {
        ["-fps_mode", "passthrough"]
    } else {
        ["-vsync", "passthrough"]
    }
}

/// The `-enc_time_base` value that keeps the source's time base: `-1` up to FFmpeg 6, `demux`
/// from 7 on (FFmpeg 9.0 refuses `-1` for video: "Invalid time base: -1"; 5.1 refuses
/// `demux`). Found once by asking the installed ffmpeg.
pub fn source_time_base() -> &'static str {
    static DEMUX: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let demux = *DEMUX.get_or_init(|| {
        std::process::Command::new("ffmpeg")
            .args([
                "-hide_banner",
                "-nostdin",
                "-v",
                "quiet",
                "-f",
                "lavfi",
                "-i",
                "testsrc=d=0.1:s=16x16",
                "-map",
                "0",
                "-enc_time_base:v",
                "demux",
                "-f",
                "null",
                "-",
            ])
            .status()
            .is_ok_and(|s| s.success())
    });
    if demux {
        "demux"
    } else {
        "-1"
    }
}

/// Path as a `String` argument (test paths are always valid UTF-8).
pub fn p(path: &Path) -> String {
    path.to_str()
        .unwrap_or_else(|| panic!("non-UTF-8 path {path:?}"))
        .to_string()
}

/// The ffmpeg CLI's version as (major, minor), from `ffmpeg -version`'s first line
/// ("ffmpeg version 5.1.6-0+deb12u1 ..." or "n7.1"); `None` for a build named otherwise (a git
/// snapshot).
pub fn ffmpeg_cli_version() -> Option<(u32, u32)> {
    let out = ffmpeg(&["-version"]).ok()?;
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let word = text.lines().next()?.split_whitespace().nth(2)?;
    let word = word.trim_start_matches('n');
    let mut parts = word.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next().and_then(|m| m.parse().ok()).unwrap_or(0);
    Some((major, minor))
}
