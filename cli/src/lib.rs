//! The `vidprep` command line (package `vidprep-cli`): command definitions (clap) and
//! dispatch. It is a client of the library (`vidprep`) like any other and uses only its public
//! API. Each subcommand lives in its own file and only turns arguments into plans (or reads a
//! manifest of them), runs them through the library and prints what was made. Exit codes: 0
//! success, 1 some item failed, 2 bad usage.
//!
//! [`main`] is the binary's entry (`src/main.rs`); [`main_with`] runs the same command line on
//! given arguments in this process (the Python package's `vidprep` command when no binary is
//! bundled).

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod args;
mod batch;
mod check;
mod clip;
mod detect;
mod export;
mod insert;
mod parity;
mod parity_loader;
mod probe;
mod progress;
mod review;
mod schema;
mod track;

/// Frame-accurate video preparation for multimodal-LLM benchmarks.
#[derive(Parser)]
#[command(name = "vidprep", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Describe a video: streams, sizes, rates, duration, frame counts, rotation, damage.
    Probe(probe::ProbeArgs),
    /// Prove that vidprep reads sources exactly: every way it reads them against a plain
    /// FFmpeg decode (frame count, times, pixels, damage).
    Check(check::CheckArgs),
    /// Cut frame-accurate clips: one span, or every line of a manifest.
    Cut(clip::CutArgs),
    /// End a clip just before its decision point (time, frame or percentage).
    Truncate(clip::TruncateArgs),
    /// Draw bounding boxes from dataset annotations onto the frames (visual prompting).
    Overlay(clip::OverlayArgs),
    /// Insert GOT-10k tracking sequences into host videos, with remapped annotations.
    Insert(insert::InsertArgs),
    /// Model inputs: capped videos for video models, sampled frames for image models.
    Export(export::ExportArgs),
    /// Propose event spans (shots, activity, annotation presence) as a manifest for cut/run.
    Detect(detect::DetectArgs),
    /// Run a whole benchmark manifest: every item in one pass, in parallel, resumable, sharded.
    Run(batch::RunArgs),
    /// Track hand-drawn boxes (one box on one frame is enough) through a source with OpenCV's
    /// CSRT or KCF (`tracking` feature); writes the boxes for overlay, --boxes and manifests.
    Track(track::TrackArgs),
    /// Make a static review page of a run's outputs (QC, moving decision points).
    Review(review::ReviewArgs),
    /// Apply the decisions exported from a review page to the run's manifest.
    ReviewApply(review::ReviewApplyArgs),
    /// Check a model profile against the real package it mirrors, run on the same video.
    Parity(parity::ParityArgs),
    /// Print the JSON Schema of a plan (manifest line), sidecar, frames.json, item.json,
    /// report line or check report (docs/schema/).
    Schema(schema::SchemaArgs),
}

/// Exit code: success.
pub const EXIT_OK: u8 = 0;
/// Exit code: some item failed.
pub const EXIT_FAILED: u8 = 1;
/// Exit code: bad usage (a wrong flag or request).
pub const EXIT_USAGE: u8 = 2;
/// Interrupted by Ctrl-C or SIGTERM (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: u8 = 130;

/// The command line run on this process's arguments (the `vidprep` binary's `main`).
pub fn main() -> ExitCode {
    ExitCode::from(main_with(std::env::args_os()))
}

/// The command line run on `args` (the program name first), returning its exit code: what
/// `main` runs, and what the Python package's `vidprep` command runs in its own process when
/// no binary is bundled (`pip install ./python`).
pub fn main_with(args: impl IntoIterator<Item = std::ffi::OsString>) -> u8 {
    // Ctrl-C or a termination signal: the work stops at its next frame, every output group
    // removes its temporaries, and `main` returns 130. Should the work not stop within a few
    // seconds (a blocking read), the temporaries are removed here and the process exits; a
    // commit under way is never cut short (`CancelToken::settle`).
    // The CLI's one call: its token goes into the call's context, handed to every command.
    let cancel = vidprep::call::CancelToken::new();
    let handler_token = cancel.clone();
    let _ = ctrlc::set_handler(move || {
        handler_token.cancel();
        // The grace counts only while no output group commits: a commit under way finishes
        // (or rolls back) by itself, and the run may then write its report; after that, the
        // temporaries go and no commit starts again before the process ends.
        let _settled = handler_token.settle(std::time::Duration::from_secs(5));
        std::process::exit(EXIT_INTERRUPTED as i32);
    });
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
            let _ = e.print();
            return code;
        }
    };
    // The library reads no environment: the settings its calls use (network timeouts, the
    // download limit, the lock lease) come from these variables here, into the call's
    // context with the token.
    vidprep::media::set_ffmpeg_log(vidprep::call::FfmpegLog::from_text(
        std::env::var("VIDPREP_FFMPEG_LOG").ok().as_deref(),
    ));
    let settings = match vidprep::call::Settings::from_vars(|k| std::env::var(k).ok()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let mut ctx = vidprep::call::CallContext::new();
    ctx.cancel = cancel.clone();
    ctx.settings = settings;
    let ctx = &ctx;
    // Messages about a plan name its fields (`allow_repeats`); a single command shows them as
    // its flags, a manifest keeps the field names.
    let single = match &cli.command {
        Command::Cut(a) => !a.is_batch(),
        Command::Insert(a) => !a.is_batch(),
        Command::Run(_) => false,
        _ => true,
    };
    let result = match cli.command {
        Command::Probe(args) => probe::run(args, ctx),
        Command::Check(args) => check::run(args, ctx),
        Command::Cut(args) => clip::run_cut(args, ctx),
        Command::Truncate(args) => clip::run_truncate(args, ctx),
        Command::Overlay(args) => clip::run_overlay(args, ctx),
        Command::Insert(args) => insert::run(args, ctx),
        Command::Export(args) => export::run(args, ctx),
        Command::Run(args) => batch::run(args, ctx),
        Command::Detect(args) => detect::run(args, ctx),
        Command::Track(args) => track::run(args, ctx),
        Command::Review(args) => review::run(args, ctx),
        Command::ReviewApply(args) => review::run_apply(args, ctx),
        Command::Parity(args) => parity::run(args, ctx),
        Command::Schema(args) => schema::run(args),
    };
    if cancel.is_cancelled() {
        cancel.remove_temporaries();
        eprintln!("interrupted: nothing half-written was left");
        return EXIT_INTERRUPTED;
    }
    match result {
        Ok(code) => code,
        Err(e) => {
            let text = chain_text(&e);
            eprintln!("error: {}", if single { with_flags(&text) } else { text });
            let usage = e
                .downcast_ref::<vidprep::Error>()
                .is_some_and(|e| e.kind() == vidprep::ErrorKind::Usage);
            if usage {
                EXIT_USAGE
            } else {
                EXIT_FAILED
            }
        }
    }
}

/// An error with its chain of causes, as `{:#}` gives it, less every cause whose text is
/// already in the message (the library's errors print their cause, and name it as their
/// source too: the OS's "No such file or directory" said once, not twice).
fn chain_text(e: &anyhow::Error) -> String {
    let mut text = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !text.contains(&c) {
            text.push_str(": ");
            text.push_str(&c);
        }
    }
    text
}

/// The library names plan fields in backticks (`allow_repeats`); on the command line they are
/// flags (`--allow-repeats`).
pub(crate) fn with_flags(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(start) = rest.find('`') {
        let Some(len) = rest[start + 1..].find('`') else {
            break;
        };
        let word = &rest[start + 1..start + 1 + len];
        out.push_str(&rest[..start]);
        if !word.is_empty() && word.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
            out.push_str("--");
            out.push_str(&word.replace('_', "-"));
        } else {
            out.push('`');
            out.push_str(word);
            out.push('`');
        }
        rest = &rest[start + len + 2..];
    }
    out.push_str(rest);
    out
}

/// Writes `text` to stdout. A reader that went away (a closed pipe: `vidprep probe --json x |
/// head -1`) ends the output quietly, as other command-line tools do, instead of a panic;
/// any other failure to write is an error.
pub(crate) fn print_out(text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(anyhow::Error::new(e).context("cannot write to stdout")),
    }
}

/// Prints a run's warnings (once each) on stderr.
pub(crate) fn print_warnings(warnings: &[String]) {
    let mut seen = std::collections::HashSet::new();
    for w in warnings {
        if seen.insert(w) {
            eprintln!("warning: {}", with_flags(w));
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let io = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let e = anyhow::Error::new(vidprep::Error::Io {
            path: "x.srt".into(),
            source: io,
        })
        .context("reading the subtitles");
        assert_eq!(
            super::chain_text(&e),
            "reading the subtitles: x.srt: permission denied"
        );
        let e = anyhow::anyhow!("inner").context("outer");
        assert_eq!(super::chain_text(&e), "outer: inner");
    }

    #[test]
    fn plan_fields_become_flags() {
        assert_eq!(
            super::with_flags("or set `allow_repeats` to keep them; `crf` 60; keep `x.mp4`"),
            "or set --allow-repeats to keep them; --crf 60; keep `x.mp4`"
        );
    }
}

#[cfg(test)]
mod cli_tests {
    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
