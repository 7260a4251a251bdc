//! `vidprep probe`: prints what a video holds, as text or JSON.

use std::path::PathBuf;

use clap::Args;

#[derive(Args)]
pub struct ProbeArgs {
    /// The video file.
    file: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Decode every frame to count them exactly (slow; metadata counts can be wrong).
    #[arg(long)]
    count_frames: bool,
}

pub fn run(args: ProbeArgs) -> anyhow::Result<u8> {
    let info = vidprep::probe(&args.file, args.count_frames)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&info)?);
    } else {
        print!("{}", info.to_text());
    }
    Ok(super::EXIT_OK)
}
