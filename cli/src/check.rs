//! `vidprep check SOURCE... | --manifest M`: reads each source every way vidprep reads it and
//! compares with a plain FFmpeg decode (the library's `check_sources`); prints a line per
//! source (or the report as JSON). Exit 0 when every source reads exactly, 1 otherwise.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use vidprep::check::{CheckOptions, SourceCheck, Verdict};
use vidprep::media::Source;

#[derive(Args)]
pub struct CheckArgs {
    /// The sources: video files, image folders or patterns, http(s) URLs.
    #[arg(required_unless_present = "manifest")]
    sources: Vec<PathBuf>,
    /// Also check every source of this manifest (each once).
    #[arg(long, value_name = "M")]
    manifest: Option<PathBuf>,
    #[command(flatten)]
    source_fps: crate::args::SourceFpsArg,
    /// Compare every frame's pixels (a sequential read and the sparse reader over all
    /// frames); by default a sample of positions, and every frame of videos up to 1000
    /// frames.
    #[arg(long)]
    full: bool,
    /// Evenly spread frames to seek to and read sparsely (besides both ends, keyframes and
    /// the frames before them).
    #[arg(long, value_name = "N", default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    samples: u32,
    /// Seconds one source's check may take; a source not done by then is reported as timed
    /// out.
    #[arg(long, value_name = "SECONDS", default_value_t = vidprep::check::DEFAULT_CHECK_TIME_LIMIT.as_secs_f64(), value_parser = parse_seconds)]
    time_limit: f64,
    /// Sources checked at a time.
    #[arg(long, short = 'j', value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    jobs: u32,
    /// Print the report as JSON (`vidprep schema check`).
    #[arg(long)]
    json: bool,
    /// With --json: list each source's reference frames (timestamp, MD5, damage).
    #[arg(long, requires = "json")]
    list_frames: bool,
}

fn parse_seconds(text: &str) -> Result<f64, String> {
    let t = text.trim().trim_end_matches('s');
    match t.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s <= 7.0 * 86_400.0 => Ok(s),
        _ => Err(format!(
            "{text:?} is not a time limit: give seconds, more than 0 (e.g. 600)"
        )),
    }
}

pub fn run(args: CheckArgs, ctx: &vidprep::call::CallContext) -> anyhow::Result<u8> {
    let mut sources: Vec<Source> = args
        .sources
        .iter()
        .map(|p| Source::new(p.clone(), args.source_fps.source_fps))
        .collect();
    let mut bad_lines = 0;
    if let Some(m) = &args.manifest {
        let (more, bad) = vidprep::check::manifest_sources(m)
            .with_context(|| format!("reading the manifest {}", m.display()))?;
        for b in &bad {
            eprintln!("error: {}", b.error);
        }
        bad_lines = bad.len();
        sources.extend(more);
    }
    let mut options = CheckOptions::default();
    options.full = args.full;
    options.samples = args.samples as usize;
    options.time_limit = Duration::from_secs_f64(args.time_limit);
    options.jobs = args.jobs as usize;
    options.list_frames = args.list_frames;
    options.cancel = ctx.cancel.clone();
    options.settings = ctx.settings.clone();
    let label = if sources.len() == 1 {
        "check"
    } else {
        "check (all sources)"
    };
    let mut progress = crate::progress::BarProgress::new(label);
    let report = vidprep::check::check_sources(&sources, &options, &mut progress)?;
    progress.done();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        for s in &report.sources {
            print!("{}", text_of(s));
        }
    }
    Ok(if report.exact && bad_lines == 0 {
        crate::EXIT_OK
    } else {
        crate::EXIT_FAILED
    })
}

/// A source's check in words: a line, and the differences and the action under it.
fn text_of(s: &SourceCheck) -> String {
    let word = match s.verdict {
        Verdict::Exact => "exact",
        Verdict::Damaged => "damaged",
        Verdict::Mended => "mended",
        Verdict::Differs => "DIFFERS",
        Verdict::Failed => "FAILED",
        Verdict::TimedOut => "TIMED OUT",
        // A verdict a later library adds (`Verdict` is `#[non_exhaustive]`).
        _ => "UNKNOWN",
    };
    let c = &s.compared;
    let mut out = format!("{word}: {}", s.source);
    if let Some(n) = s.reference_frames {
        out.push_str(&format!(
            " ({n} frames; compared: {} times, {} time look-ups, {} in order, {} seeks, {} seeks to a time, {} of a span, {} sparse; {:.1} s)",
            c.times, c.time_lookups, c.sequential, c.seeks, c.seek_times, c.span, c.sparse, s.seconds
        ));
    }
    out.push('\n');
    if let Some(t) = s.table.as_ref().and_then(|t| t.rebuilt_at_frame) {
        out.push_str(&format!(
            "  the frame table from packets disagreed with the decoder at frame {t}: rebuilt by decoding, as every request does\n"
        ));
    }
    for d in &s.differences {
        let at = d
            .frame
            .map(|f| format!(" at frame {f}"))
            .unwrap_or_default();
        out.push_str(&format!(
            "  {} read, {}{at}: expected {}, found {}\n",
            d.read, d.what, d.expected, d.found
        ));
    }
    if s.differences_total > s.differences.len() {
        out.push_str(&format!(
            "  ... {} differences in all\n",
            s.differences_total
        ));
    }
    if let (Some(m), false) = (&s.timestamps, s.verdict == Verdict::Mended) {
        out.push_str(&format!(
            "  timestamps: out of order from frame {} (the stream's {:.3}s, vidprep's {:.3}s): vidprep keeps one increasing clock there ({} frames)\n",
            m.first_frame, m.stream_time_s, m.vidprep_time_s, m.frames
        ));
    }
    let dmg = &s.damage;
    if !dmg.reference_frames.is_empty() {
        out.push_str(&format!(
            "  damage: {} frame(s) decoded with errors concealed (first: frame {})\n",
            dmg.reference_frames.len(),
            dmg.reference_frames[0]
        ));
    }
    if dmg.rejected_packets > 0 {
        out.push_str(&format!(
            "  damage: the decoder refused {} packet(s)\n",
            dmg.rejected_packets
        ));
    }
    if let Some(e) = &dmg.read_error {
        out.push_str(&format!("  damage: the file's data ends in damage ({e})\n"));
    }
    if let Some(t) = &dmg.table {
        out.push_str(&format!("  damage: {t}\n"));
    }
    for c in &s.size_changes {
        let why = if c.likely_damage {
            "a damaged frame header? no recording changes its shape so much"
        } else {
            "recordings joined?"
        };
        out.push_str(&format!(
            "  the picture size changes at frame {} ({} to {}; {why}): an output keeps one size, so one made across it is refused: cut the parts apart there (--end {}, --start {})\n",
            c.frame, c.from, c.to, c.frame, c.frame
        ));
    }
    if let Some(e) = &s.error {
        out.push_str(&format!("  error: {e}\n"));
    }
    if s.verdict != Verdict::Exact {
        out.push_str(&format!("  {}\n", s.action));
    }
    out
}
