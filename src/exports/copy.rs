//! Stream copy (`"copy": true` on a clip): whole GOPs copied without decoding. The start
//! moves back to the keyframe at or before it and the end forward to the next keyframe (or
//! the end of the video), since a copied clip can only begin at a keyframe and must keep the
//! frames its B-frames reference. The sidecar's `resolved` states the frames the file holds
//! (`kept`, `frames`, `start`, `end`: the copied GOPs), the span asked for under
//! `resolved.requested`, and lists the copied frames.

use ffmpeg_next as ffmpeg;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::exports::claimed::Claimed;
use crate::exports::ExportReport;
use crate::media::input::{
    best_audio_stream, read_error_ends_input, read_packet, Ratio, VideoInput,
};
use crate::pipeline::FrameOrigin;
use crate::plan::ExportSpec;
use crate::sidecar::{write_json, OutputRecord, Sidecar, VERSION};
use crate::stages::span::ResolvedClip;
use crate::stages::stream::ProcessedStream;
use crate::time::{FrameRange, Rounding, Time};

/// What a copy kept, next to what was asked.
#[derive(Clone, Debug, Serialize)]
pub struct CopyResolution {
    /// The source frames really copied (whole GOPs).
    pub copied: FrameRange,
    pub copied_start: crate::sidecar::TimeRecord,
    pub copied_end: crate::sidecar::TimeRecord,
    pub audio: String,
}

fn codec_fits(output: &ffmpeg::format::context::Output, id: ffmpeg::codec::Id) -> bool {
    crate::media::ffi::muxer_can_hold(output, id)
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

    let mut src = VideoInput::open(&stream.input)?;
    let vindex = src.video.index;
    let source_audio = best_audio_stream(&src.context);
    // Without audio asked for, the audio packets are not even read.
    let aindex = source_audio.filter(|_| audio);
    let mut keep = vec![vindex];
    keep.extend(aindex);
    src.keep_only_streams(&keep);

    let mut out = ffmpeg::format::output_as(&claimed.main_temp, muxer)
        .map_err(|e| Error::encode(output, "creating the output", e))?;
    crate::media::ffi::make_output_repeatable(&mut out);
    let mut warnings = Vec::new();

    let vcodec = src.context.stream(vindex).expect("video").parameters().id();
    if !codec_fits(&out, vcodec) {
        return Err(Error::request(
            input,
            format!(
                "a copied clip (`copy`) cannot put {} video into {muxer}; drop `copy` to re-encode it, or write .mkv",
                src.video.codec
            ),
        ));
    }
    let add_stream = |out: &mut ffmpeg::format::context::Output, index: usize| -> Result<usize> {
        let ist = src.context.stream(index).expect("stream");
        let mut ost = out
            .add_stream(ffmpeg::encoder::find(ffmpeg::codec::Id::None))
            .map_err(|e| Error::encode(output, "adding a stream", e))?;
        ost.set_parameters(ist.parameters());
        // Keep the display matrix so players still rotate the picture.
        crate::media::ffi::copy_stream_for_remux(&ist, &mut ost);
        ost.set_time_base(ist.time_base());
        Ok(ost.index())
    };
    let out_video = add_stream(&mut out, vindex)?;
    let mut audio_note = match source_audio {
        Some(_) => "dropped: no audio asked for (`--no-audio`, `\"audio\": false`)".to_string(),
        None => "none in the source".to_string(),
    };
    // What the file's audio stream holds (the sidecar's `output.audio`).
    let mut audio_format = None;
    let out_audio = match aindex {
        Some(a) => {
            let acodec = src.context.stream(a).expect("audio").parameters().id();
            if codec_fits(&out, acodec) {
                audio_note = "copied".into();
                audio_format = crate::media::audio::audio_format_of(&src.context).map(
                    |(sample_rate, channels)| crate::media::audio::AudioFormat {
                        sample_rate,
                        channels,
                    },
                );
                Some((a, add_stream(&mut out, a)?))
            } else {
                let name = acodec.name().to_string();
                audio_note = format!(
                    "dropped: {name} audio cannot be stored in {muxer} without re-encoding"
                );
                warnings.push(audio_note.clone());
                None
            }
        }
        None => None,
    };
    let mut header_options = ffmpeg::Dictionary::new();
    if muxer != "matroska" {
        header_options.set("movflags", "+faststart");
    }
    out.write_header_with(header_options)
        .map_err(|e| Error::encode(output, "writing the header", e))?;

    let vtb = src.video.time_base;
    let start_pts = table.pts(first);
    let start_abs = Time::from_pts(start_pts, vtb.num, vtb.den);
    let end_abs = if stop < table.len() {
        Time::from_pts(table.pts(stop), vtb.num, vtb.den)
    } else {
        table.origin() + table.end_time()
    };
    let entry = *table.entry(first);
    let _ = crate::media::ffi::seek_to_timestamp(
        &mut src.context,
        vindex,
        entry.dts.map_or(entry.pts, |d| entry.pts.min(d)),
    );
    let out_tb = |out: &ffmpeg::format::context::Output, i: usize| {
        out.stream(i).map(|s| s.time_base()).expect("stream")
    };
    let mut copied: Vec<usize> = Vec::new();
    let mut video_done = false;
    let mut audio_done = out_audio.is_none();
    let mut started = false;
    while !(video_done && audio_done) {
        let mut packet = match read_packet(&mut src.context) {
            Ok(Some(p)) => p,
            Ok(None) => break,
            // Where ffmpeg stops reading (the frame table ends there too).
            Err(e) if read_error_ends_input(&e) => break,
            Err(e) => {
                return Err(Error::corrupt(
                    input,
                    "while copying",
                    format!("cannot read the file: {e}"),
                ))
            }
        };
        let stream = packet.stream();
        if stream == vindex {
            if video_done {
                continue;
            }
            let pts = packet.pts().or(packet.dts()).unwrap_or(i64::MIN);
            let Some(index) = table.index_of_pts(pts) else {
                continue;
            };
            if !started {
                if !packet.is_key() || index < first {
                    continue;
                }
                started = true;
            }
            if packet.is_key() && index >= stop {
                video_done = true;
                continue;
            }
            if index < first || index >= stop {
                continue;
            }
            copied.push(index);
            let offset = start_pts;
            packet.set_pts(packet.pts().map(|p| p - offset));
            packet.set_dts(packet.dts().map(|d| d - offset));
            packet.set_position(-1);
            packet.set_stream(out_video);
            packet.rescale_ts(ffmpeg::Rational::from(vtb), out_tb(&out, out_video));
            packet
                .write_interleaved(&mut out)
                .map_err(|e| Error::encode(output, "writing video", e))?;
        } else if let Some((_, aout)) = out_audio.filter(|(ain, _)| *ain == stream) {
            let atb: Ratio = src
                .context
                .stream(stream)
                .expect("audio")
                .time_base()
                .into();
            let Some(pts) = packet.pts().or(packet.dts()) else {
                continue;
            };
            let t = Time::from_pts(pts, atb.num, atb.den);
            if t < start_abs {
                continue;
            }
            if t >= end_abs {
                audio_done = true;
                continue;
            }
            let offset = start_abs.to_pts(atb.num, atb.den, Rounding::Nearest);
            packet.set_pts(packet.pts().map(|p| p - offset));
            packet.set_dts(packet.dts().map(|d| d - offset));
            packet.set_position(-1);
            packet.set_stream(aout);
            packet.rescale_ts(ffmpeg::Rational::from(atb), out_tb(&out, aout));
            packet
                .write_interleaved(&mut out)
                .map_err(|e| Error::encode(output, "writing audio", e))?;
        }
    }
    if copied.is_empty() {
        return Err(Error::corrupt(
            input,
            format!("at frame {first}"),
            "no packet could be copied from this keyframe",
        ));
    }
    out.write_trailer()
        .map_err(|e| Error::encode(output, "finishing the output", e))?;
    drop(out);

    copied.sort_unstable();
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
    let (w, h) = src.video.upright_stored_size();
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
            duration: crate::time::decimal_text(duration),
            duration_s: duration.as_secs_f64(),
            audio: audio_format,
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
        serde_json::to_value(crate::sidecar::TimeRecord::from(table.time(first))).expect("time");
    let end_time = if last + 1 < table.len() {
        table.time(last + 1)
    } else {
        table.end_time()
    };
    resolved["end"] =
        serde_json::to_value(crate::sidecar::TimeRecord::from(end_time)).expect("time");
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
