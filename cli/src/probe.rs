//! `vidprep probe`: prints what a source (a video file, an image sequence, a URL) holds, as
//! text or JSON.

use std::path::PathBuf;

use clap::Args;

#[derive(Args)]
pub struct ProbeArgs {
    /// The source: a video file, an image folder or pattern, or an http(s) URL.
    #[arg(required_unless_present = "build")]
    file: Option<PathBuf>,
    #[command(flatten)]
    source_fps: crate::args::SourceFpsArg,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Decode every frame to count them exactly (slow; metadata counts can be wrong).
    #[arg(long)]
    count_frames: bool,
    /// Print what this build's FFmpeg can read instead (its version, video decoders, input
    /// protocols).
    #[arg(long, conflicts_with_all = ["file", "count_frames"])]
    build: bool,
}

pub fn run(args: ProbeArgs, ctx: &vidprep::call::CallContext) -> anyhow::Result<u8> {
    let Some(file) = &args.file else {
        let facts = vidprep::media::build_facts();
        if args.json {
            crate::print_out(&format!("{}\n", serde_json::to_string_pretty(&facts)?))?;
        } else {
            crate::print_out(&format!(
                "FFmpeg {} (libavcodec {})\nvideo decoders ({}): {}\ninput protocols: {}\n",
                facts.ffmpeg,
                facts.libavcodec,
                facts.video_decoders.len(),
                facts.video_decoders.join(", "),
                facts.input_protocols.join(", ")
            ))?;
        }
        return Ok(crate::EXIT_OK);
    };
    // As every other command: the JSON names the source, and JSON holds only UTF-8.
    vidprep::records::require_utf8(file, "the source")?;
    let source = vidprep::media::Source::new(file.clone(), args.source_fps.source_fps);
    let info = vidprep::media::probe_source_in(&source, args.count_frames, ctx)?;
    if args.json {
        crate::print_out(&format!("{}\n", serde_json::to_string_pretty(&info)?))?;
    } else {
        crate::print_out(&info.to_text())?;
    }
    Ok(crate::EXIT_OK)
}
