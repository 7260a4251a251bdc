//! Command definitions (clap) and dispatch. Each subcommand lives in its own file and only
//! turns arguments into library calls.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod clip;
mod export;
mod frames;
mod insert;
mod probe;
mod progress;
mod run;

/// Frame-accurate video preparation for multimodal-LLM benchmarks.
#[derive(Parser)]
#[command(name = "vidprep", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Describe a video: streams, sizes, rates, duration, frame counts, rotation, audio.
    Probe(probe::ProbeArgs),
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
    /// Run a whole benchmark manifest: every item in one pass, in parallel, resumable, sharded.
    Run(run::RunArgs),
}

/// Exit codes.
pub const EXIT_OK: u8 = 0;
pub const EXIT_FAILED: u8 = 1;
pub const EXIT_USAGE: u8 = 2;

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let result = match cli.command {
        Command::Probe(args) => probe::run(args),
        Command::Cut(args) => clip::run_cut(args),
        Command::Truncate(args) => clip::run_truncate(args),
        Command::Overlay(args) => clip::run_overlay(args),
        Command::Insert(args) => insert::run(args),
        Command::Export(args) => export::run(args),
        Command::Run(args) => run::run(args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            let usage = e
                .downcast_ref::<vidprep::Error>()
                .is_some_and(|e| matches!(e, vidprep::Error::Usage(_)));
            ExitCode::from(if usage { EXIT_USAGE } else { EXIT_FAILED })
        }
    }
}
