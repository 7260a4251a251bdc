//! `vidprep track SRC --boxes first_box.json -o boxes.json`: one hand-drawn box (or a few
//! keys) tracked through the source's frames with OpenCV's CSRT or KCF (the `tracking`
//! feature), written as vidprep annotation JSON (which `overlay`, `--boxes` and manifests
//! read) or V-STaR items.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use vidprep::boxes::{self, Key};
use vidprep::exec::OutputGroup;
use vidprep::media::{FrameTable, Source};
use vidprep::plan::{BoxesOut, Fill, Format};
use vidprep::time::TimeSpec;
use vidprep::track::{track_source_in, DEFAULT_MIN_DRIFT_IOU};

#[derive(Args)]
pub struct TrackArgs {
    /// The source: a video file or an image sequence.
    source: PathBuf,
    #[command(flatten)]
    source_fps: crate::args::SourceFpsArg,
    /// The keys to start from: an annotation file in any format vidprep reads (one box on
    /// one frame is enough).
    #[arg(long)]
    boxes: PathBuf,
    /// Its format (default: detected).
    #[arg(long, default_value = "auto", value_parser = crate::args::parse_text::<Format>)]
    format: Format,
    /// How frames get boxes: track (CSRT, accurate), track-kcf (fast), or, without a
    /// tracker, cubic, linear or hold between the keys.
    #[arg(long, default_value = "track", value_parser = crate::args::parse_text::<Fill>)]
    fill: Fill,
    /// Where tracking stops, excluded (a frame, seconds, a timecode or a percentage of the
    /// source) [default: the end].
    #[arg(long, value_parser = crate::args::parse_time)]
    end: Option<TimeSpec>,
    /// The boxes file to write.
    #[arg(short, long)]
    output: PathBuf,
    /// Its format: vidprep (annotation JSON) or vstar (V-STaR items).
    #[arg(long, default_value = "vidprep", value_parser = crate::args::parse_text::<BoxesOut>)]
    output_format: BoxesOut,
}

/// The first frame at or after `spec` (exclusive end of the tracked frames).
fn end_frame(table: &FrameTable, spec: TimeSpec) -> usize {
    let first_at = |t: vidprep::time::Time| (0..table.len()).find(|&i| table.time(i) >= t);
    match spec {
        TimeSpec::Frame(i) => (i as usize).min(table.len()),
        TimeSpec::Seconds(t) => first_at(table.time(0) + t).unwrap_or(table.len()),
        TimeSpec::Percent(p) => {
            let span = table.end_time() - table.time(0);
            first_at(table.time(0) + span * p / vidprep::time::Time::from_secs(100))
                .unwrap_or(table.len())
        }
    }
}

/// A boxes file `vidprep track` wrote: its JSON records the tracked gaps. Only such a file
/// is replaced.
fn written_by_track(path: &std::path::Path) -> bool {
    std::fs::read_to_string(path)
        .is_ok_and(|t| t.contains("\"vidprep_annotations\"") && t.contains("\"tracked_gaps\""))
}

pub fn run(args: TrackArgs, ctx: &vidprep::call::CallContext) -> anyhow::Result<u8> {
    let source = Source::new(args.source.clone(), args.source_fps.source_fps);
    // The output is claimed before any frame is decoded. The group's inputs are the source
    // (an image sequence: its folder) and the keys file, so it refuses an output that is one
    // of them or lies inside the sequence's folder; and it replaces an existing file only if
    // `vidprep track` wrote it.
    let mut inputs = vidprep::media::input_paths(&args.source);
    inputs.push(args.boxes.clone());
    let mut group = OutputGroup::new(&inputs, ctx);
    let temp = group.owned_file(&args.output, &written_by_track, "`vidprep track`")?;
    let keys = boxes::read_with_defaults(&args.boxes, args.format)
        .with_context(|| format!("reading the keys to track from {}", args.boxes.display()))?;
    if keys.tracks.is_empty() {
        anyhow::bail!(vidprep::Error::Request {
            path: args.boxes.clone(),
            message: "has no track (a box with a track id); give the object's box on one frame"
                .into(),
        });
    }
    // One table for the keys' check and the tracking (which reads the source through the
    // executor's stream, from this cache).
    let tables = vidprep::media::TableCache::new();
    let table = tables.table_in(&source, ctx)?;
    let end = args.end.map(|spec| end_frame(&table, spec));
    let mut warnings = Vec::new();
    // Keys on frames the tracking never reaches: all of them is an error naming the file,
    // some of them a warning (resolution drops them).
    let stop = end.unwrap_or(table.len()).min(table.len());
    let past: Vec<usize> = keys
        .tracks
        .iter()
        .flat_map(|t| t.keys.keys())
        .filter_map(|k| match k {
            Key::Frame(f) if *f >= stop => Some(*f),
            _ => None,
        })
        .collect();
    let frame_keys = keys
        .tracks
        .iter()
        .flat_map(|t| t.keys.keys())
        .filter(|k| matches!(k, Key::Frame(_)))
        .count();
    let range = if stop == table.len() {
        format!(
            "{} has {} frames (0..={})",
            args.source.display(),
            table.len(),
            table.len().saturating_sub(1)
        )
    } else {
        format!("tracking stops before frame {stop} (--end)")
    };
    if let Some(&first) = past.iter().min() {
        if past.len() == frame_keys {
            anyhow::bail!(vidprep::Error::BadFile {
                path: args.boxes.clone(),
                line: None,
                message: format!(
                    "every key is on frame {first} or later, but {range}: give the object's \
                     box on one of the frames tracked (or a later --end)"
                ),
            });
        }
        warnings.push(format!(
            "{}: {} key(s) from frame {first} on are past the frames tracked ({range}) and \
             were ignored",
            args.boxes.display(),
            past.len()
        ));
    }
    let (tracked, records, timing) = track_source_in(&source, &keys, end, args.fill, &tables, ctx)?;
    let text = match args.output_format {
        BoxesOut::Vidprep => boxes::to_native_text(&tracked)?,
        BoxesOut::Vstar => {
            let times = (0..table.len()).map(|i| table.time(i)).collect();
            boxes::to_vstar_text(&tracked, times, table.end_time())?
        }
    };
    std::fs::write(&temp, text.as_bytes()).map_err(|source| vidprep::Error::Io {
        path: args.output.clone(),
        source,
    })?;
    // Missing folders above the output are made as for every other output, and said.
    let created = group.created_warning();
    group.commit()?;
    let frames: usize = tracked.tracks.iter().map(|t| t.keys.len()).sum();
    eprintln!(
        "{}: {frames} boxes over {} track(s), fill {}",
        args.output.display(),
        tracked.tracks.len(),
        args.fill
    );
    if timing.updates > 0 {
        eprintln!(
            "tracker: {} updates in {:.3} s ({:.1} fps); decoding {:.3} s",
            timing.updates,
            timing.tracker_seconds,
            timing.fps(),
            timing.decode_seconds
        );
    }
    for g in &records {
        if let Some(w) = g.warning(DEFAULT_MIN_DRIFT_IOU) {
            warnings.push(w);
        }
        if let Some(note) = &g.note {
            warnings.push(format!(
                "track {}: the frames after the key on frame {} were not tracked ({}): {note}",
                g.track,
                g.from,
                if g.to.is_some() {
                    "filled linearly"
                } else {
                    "no boxes"
                }
            ));
        }
        if let Some(lost) = g.lost_at.filter(|_| g.to.is_none()) {
            warnings.push(format!(
                "track {}: the tracker lost the object on frame {lost}; no boxes from there on",
                g.track
            ));
        }
    }
    warnings.extend(created);
    crate::print_warnings(&warnings);
    Ok(crate::EXIT_OK)
}
