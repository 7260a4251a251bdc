//! Stream copy without decoding: the packets of source frames `first..stop` (whole GOPs, from
//! a keyframe) and, when asked, the source's audio over the same time copied into a new file,
//! timestamps shifted so that the first copied frame is at 0. Which frames to copy and what
//! the sidecar says of them is the clip export's (`exports/copy.rs`); every FFmpeg call that
//! is `unsafe` is in [`crate::media::ffi`].

use std::path::Path;

use ffmpeg_next as ffmpeg;

use crate::error::{Error, Result};
use crate::media::audio::AudioFormat;
use crate::media::input::{best_audio_stream, read_error_ends_input, read_packet, VideoInput};
use crate::media::source::Source;
use crate::media::table::FrameTable;
use crate::vocab::time::{Rounding, Time};
use crate::vocab::Ratio;

/// What a copy wrote.
pub(crate) struct Copied {
    /// The source frames copied, in index order.
    pub copied: Vec<usize>,
    /// What became of the source's audio (`"copied"`, or why not).
    pub audio_note: String,
    /// The file's audio stream, when the audio was copied.
    pub audio_format: Option<AudioFormat>,
    /// What the copy could not do as asked (audio dropped).
    pub warnings: Vec<String>,
    /// Size of the copied pictures: upright, stored pixels.
    pub size: (u32, u32),
}

fn codec_fits(output: &ffmpeg::format::context::Output, id: ffmpeg::codec::Id) -> bool {
    crate::media::ffi::muxer_can_hold(output, id)
}

/// Copies the packets of the frames `first..stop` of `source` (described by `table`; `first`
/// a keyframe, `stop` a keyframe or the end) into `temp` with `muxer`, and the source's audio
/// over the same time when `audio` (else the file has none). `input` and `output` name the
/// source and the final file in errors. The source is read for the call `ctx`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn copy_gops(
    ctx: &crate::call::context::CallContext,
    source: &Source,
    input: &Path,
    table: &FrameTable,
    first: usize,
    stop: usize,
    temp: &Path,
    output: &Path,
    muxer: &str,
    audio: bool,
) -> Result<Copied> {
    let mut src = VideoInput::open(source, ctx)?;
    let vindex = src.video.index;
    let source_audio = best_audio_stream(&src.context);
    // Without audio asked for, the audio packets are not even read.
    let aindex = source_audio.filter(|_| audio);
    let mut keep = vec![vindex];
    keep.extend(aindex);
    src.keep_only_streams(&keep);

    let mut out = ffmpeg::format::output_as(temp, muxer)
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
                audio_format = crate::media::input::audio_format_of(&src.context).map(
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
    Ok(Copied {
        copied,
        audio_note,
        audio_format,
        warnings,
        size: src.video.upright_stored_size(),
    })
}
