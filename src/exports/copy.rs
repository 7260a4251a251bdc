//! Stream copy (`"copy": true` on a clip): whole GOPs copied without decoding. The start
//! moves back to the keyframe at or before it and the end forward to the next keyframe (or
//! the end of the video), since a copied clip can only begin at a keyframe and must keep the
//! frames its B-frames reference. The sidecar's `resolved` states the frames the file holds
//! (`kept`, `frames`, `start`, `end`: the copied GOPs), the span asked for under
//! `resolved.requested`, and lists the copied frames. The packets are copied by
//! [`crate::media::remux`].

use serde::Serialize;

use crate::error::{Error, Result};
use crate::exports::claimed::Claimed;
use crate::exports::ExportReport;
use crate::frames::pipeline::FrameOrigin;
use crate::frames::stages::resolve::ResolvedClip;
use crate::frames::stages::stream::ProcessedStream;
use crate::plan::ExportSpec;
use crate::records::sidecar::{write_json, OutputRecord, Sidecar, VERSION};
use crate::vocab::time::FrameRange;

/// What a copy kept, next to what was asked.
#[derive(Clone, Debug, Serialize)]
pub struct CopyResolution {
    /// The source frames really copied (whole GOPs).
    pub copied: FrameRange,
    pub copied_start: crate::records::sidecar::TimeRecord,
    pub copied_end: crate::records::sidecar::TimeRecord,
    pub audio: String,
}

/// Copies the GOPs covering the stream's span into the claimed file and writes its sidecar;
/// the source's audio is copied beside them when `audio` (else the file has none).
pub(crate) fn copy_export(
    stream: &ProcessedStream,
    spec: &ExportSpec,
    claimed: &Claimed,
    audio: bool,
) -> Result<ExportReport> {
    let input = stream.source.as_path();
    let output = claimed.main.as_path();
    let muxer = crate::media::encode::Container::for_output(output)?.muxer();
    let table = stream.table.clone();
    if stream.sequence.is_some() {
        return Err(Error::request(
            input,
            "is an image sequence: a copied clip (`copy`) copies a video file's packets, and images have none to copy; drop `copy` to encode the frames",
        ));
    }
    if table.times_from != crate::media::table::TimesFrom::Packets {
        return Err(Error::request(
            input,
            "a copied clip (`copy`) needs packets that carry their timestamps, and this file's do not (for example an AVI with B-frames or a raw stream); drop `copy` to re-encode it",
        ));
    }
    let requested: &ResolvedClip = &stream.resolved;
    let first = table.keyframe_at_or_before(requested.kept.start);
    let stop = table.keyframe_at_or_after(requested.kept.end);

    let copy = crate::media::remux::copy_gops(
        stream.inputs.call(),
        &stream.input,
        input,
        &table,
        first,
        stop,
        &claimed.main_temp,
        output,
        muxer,
        audio,
    )?;
    let crate::media::remux::Copied {
        copied,
        audio_note,
        audio_format,
        mut warnings,
        size: (w, h),
    } = copy;

    let mut provenance = stream.provenance();
    let base_time = table.time(first);
    for (out_index, &src_index) in copied.iter().enumerate() {
        provenance.record_parts(
            out_index,
            table.time(src_index) - base_time,
            FrameOrigin {
                source: 0,
                index: src_index,
                pts: table.pts(src_index),
            },
        );
    }
    let copied_range = FrameRange::new(first, stop);
    if copied.len() != copied_range.len() {
        warnings.push(format!(
            "{} of the {} frames in the copied GOPs could not be copied (open-GOP leading pictures)",
            copied_range.len() - copied.len(),
            copied_range.len()
        ));
    }
    let copied_end_time = if stop < table.len() {
        table.time(stop)
    } else {
        table.end_time()
    };
    let resolution = CopyResolution {
        copied: copied_range,
        copied_start: base_time.into(),
        copied_end: copied_end_time.into(),
        audio: audio_note,
    };
    let duration = copied_end_time - base_time;
    let mut extra = serde_json::Map::new();
    extra.insert(
        "copy".into(),
        serde_json::to_value(&resolution).expect("serializes"),
    );
    let mut all_warnings = stream.warnings.clone();
    all_warnings.extend(warnings.iter().cloned());
    let sidecar = Sidecar {
        vidprep_version: VERSION,
        kind: "clip",
        output: OutputRecord {
            path: output.display().to_string(),
            frames: copied.len(),
            width: w,
            height: h,
            cropped_right: 0,
            cropped_bottom: 0,
            duration: crate::vocab::time::decimal_text(duration),
            duration_s: duration.as_secs_f64(),
            audio: audio_format,
            // A copy keeps the source's description: read from what was written.
            colour: crate::media::encode::file_colour(&claimed.main_temp),
        },
        sources: stream.source_records(),
        request: serde_json::to_value(&stream.plan).expect("a plan serialises"),
        export: serde_json::to_value(spec).expect("an export serialises"),
        resolved: held_resolution(stream, &copied, &table),
        frames: provenance.into_runs(),
        damaged_frames: Vec::new(),
        encode: None,
        annotations: None,
        extra,
        warnings: all_warnings.clone(),
    };
    write_json(&claimed.sidecar_temp, &sidecar)?;
    Ok(ExportReport {
        name: spec.name().to_string(),
        kind: "clip",
        files: claimed.files(),
        summary: format!(
            "{}: {} frames copied (source frames {}..{}; asked for {}..{})",
            output.display(),
            copied.len(),
            copied_range.start,
            copied_range.end,
            requested.kept.start,
            requested.kept.end
        ),
        frames: copied.len(),
        warnings: all_warnings,
    })
}

/// The stream's `resolved` record made true of a copy: `cut` and `kept` are the source frames
/// the file holds (from the first to the last copied), `frames` how many, `start`/`end` their
/// source times; what was asked moves to `requested`; a decision point says which frames the
/// copy really kept and dropped.
fn held_resolution(
    stream: &ProcessedStream,
    copied: &[usize],
    table: &crate::media::table::FrameTable,
) -> serde_json::Value {
    let mut resolved = stream.resolved_json();
    let (Some(&first), Some(&last)) = (copied.first(), copied.last()) else {
        return resolved;
    };
    let held = FrameRange::new(first, last + 1);
    let requested = serde_json::json!({
        "cut": resolved["cut"].clone(),
        "kept": resolved["kept"].clone(),
        "start": resolved["start"].clone(),
        "end": resolved["end"].clone(),
        "frames": resolved["frames"].clone(),
    });
    resolved["cut"] = serde_json::to_value(held).expect("a range serialises");
    resolved["kept"] = resolved["cut"].clone();
    resolved["start"] =
        serde_json::to_value(crate::records::sidecar::TimeRecord::from(table.time(first)))
            .expect("time");
    let end_time = if last + 1 < table.len() {
        table.time(last + 1)
    } else {
        table.end_time()
    };
    resolved["end"] =
        serde_json::to_value(crate::records::sidecar::TimeRecord::from(end_time)).expect("time");
    resolved["frames"] = copied.len().into();
    if resolved["decision"].is_object() {
        resolved["decision"]["last_kept_frame"] = last.into();
        resolved["decision"]["first_dropped_frame"] = if last + 1 < table.len() {
            (last + 1).into()
        } else {
            serde_json::Value::Null
        };
    }
    resolved["requested"] = requested;
    resolved
}
