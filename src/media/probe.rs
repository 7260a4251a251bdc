//! `probe`: what a media file holds — container, video stream geometry (stored and displayed
//! after rotation), rates, duration, start time, frame counts (from metadata, from packets, and
//! on request by decoding every frame), and its audio streams.

use ffmpeg::media::Type as MediaType;
use ffmpeg_next as ffmpeg;
use serde::Serialize;

use crate::call::context::CallContext;
use crate::error::Result;
use crate::media::frame::SizeChange;
use crate::media::images::ImagesRecord;
use crate::media::input::VideoInput;
use crate::media::source::{Source, SourceKind};
use crate::media::table::{Damage, FrameTable, Identity, TimesFrom};
use crate::vocab::Ratio;

/// What [`probe`] found in a media file (`vidprep probe --json` prints it).
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct MediaInfo {
    /// The source, as given (a file, a folder or pattern of images, a URL).
    pub path: String,
    /// `file`, `images` or `url`.
    pub kind: SourceKind,
    /// For an image sequence: its folder, layout, naming (frame `i`'s file), rate and where
    /// the rate comes from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub images: Option<ImagesRecord>,
    /// ffmpeg's name of the container format (`mov,mp4,m4a,3gp,3g2,mj2`, `matroska,webm`,
    /// ...).
    pub container: String,
    /// The file's size in bytes (an image sequence: all its images; a URL: what the server
    /// says; 0 when unknown).
    pub size_bytes: u64,
    /// The container's duration in seconds; `null` when it does not say. The video's own
    /// duration is `video.duration_s`.
    pub duration_s: Option<f64>,
    /// The container's overall bit rate in bits per second; `null` when unknown.
    pub bit_rate: Option<u64>,
    /// The input's start as ffmpeg uses it for `-ss`/`-t` (seconds); vidprep's times count
    /// from it.
    pub start_time_s: Option<f64>,
    /// The video stream vidprep uses (the best one when there are several).
    pub video: VideoInfo,
    /// Every audio stream, in stream order (empty when there is none).
    pub audio: Vec<AudioInfo>,
}

/// The video stream of a [`MediaInfo`].
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct VideoInfo {
    /// The stream's 0-based index in the container.
    pub stream_index: usize,
    /// ffmpeg's codec name (`h264`, `hevc`, `vp9`, ...).
    pub codec: String,
    /// ffmpeg's pixel format name (`yuv420p`, ...).
    pub pixel_format: String,
    /// Width of the stored picture in pixels (before rotation and aspect correction).
    pub stored_width: u32,
    /// Height of the stored picture in pixels.
    pub stored_height: u32,
    /// Size as players show it: upright (rotation applied) and with square pixels (the
    /// sample aspect ratio applied).
    pub width: u32,
    /// Displayed height in pixels (see `width`).
    pub height: u32,
    /// Clockwise rotation, in degrees, that turns the stored picture upright: 0, 90, 180 or
    /// 270.
    pub rotation_cw: u32,
    /// Shape of one stored pixel as `"num/den"` (`1/1` square; `0/1` when the file does not
    /// say).
    pub sample_aspect_ratio: Ratio,
    /// Average frame rate the container states, frames per second as `"num/den"` (ffprobe's
    /// `avg_frame_rate`; `0/0` when unknown).
    pub avg_frame_rate: Ratio,
    /// ffmpeg's guess of the base frame rate, as `"num/den"` (ffprobe's `r_frame_rate`).
    pub nominal_frame_rate: Ratio,
    /// Seconds per timestamp tick, as `"num/den"`.
    pub time_base: Ratio,
    /// The video stream's own start time in seconds (container's view).
    pub stream_start_time_s: Option<f64>,
    /// Time of frame 0, relative to the input's start.
    pub first_frame_time_s: f64,
    /// From the input's start to the end of the last frame.
    pub duration_s: f64,
    /// Frame count the container claims (may be missing or wrong).
    pub frames_metadata: Option<u64>,
    /// Frames of the stream as vidprep numbers them (frame i = the i-th picture a full
    /// decode returns).
    pub frames: usize,
    /// Where those frames and their times come from: `packets`, or `decoder` when the
    /// packets' timestamps cannot be trusted.
    pub frame_times_from: TimesFrom,
    /// Why the frames were found by decoding, when they were.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decoded_because: Option<String>,
    /// How a frame is recognised after a seek: `pts`, `position` or `sequential`.
    pub frame_identity: Identity,
    /// Frame count from decoding every frame (only with `count_frames`), as
    /// `ffprobe -count_frames` counts.
    pub frames_decoded: Option<usize>,
    /// The frames the packets list, where a full decode (`count_frames`) returns another
    /// number: `frames` is then the decode's, what every command counts once a decoder
    /// disagrees with the packets (it rebuilds the table by decoding).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames_listed_by_packets: Option<usize>,
    /// The number of frames that start at a keyframe (where a seek or a stream copy can
    /// begin).
    pub keyframes: usize,
    /// True when the timestamps are not evenly spaced.
    pub variable_frame_rate: bool,
    /// Damage found (packets that do not decode, frames decoded with errors concealed):
    /// known after a full decode (`count_frames`, or a table built by decoding).
    pub damage: Damage,
    /// Frames where the picture size changes (recordings joined together, or a damaged frame
    /// header where `likely_damage`), in the decoder's order; known after a full decode, as
    /// `damage` is. An output keeps one size: commands refuse to read across a change.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub size_changes: Vec<SizeChange>,
}

/// One audio stream of a [`MediaInfo`].
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct AudioInfo {
    /// The stream's 0-based index in the container.
    pub stream_index: usize,
    /// ffmpeg's codec name (`aac`, `opus`, ...).
    pub codec: String,
    /// Samples per second per channel (0 when the file does not say).
    pub sample_rate: u32,
    /// The number of channels.
    pub channels: u16,
    /// The stream's start time in seconds (container's view); `null` when not given.
    pub start_time_s: Option<f64>,
    /// The stream's duration in seconds; `null` when not given.
    pub duration_s: Option<f64>,
}

/// Describes `path` (a video file, an image folder or pattern with a rate of its own, or an
/// http(s) URL); with `count_frames` every frame is decoded and counted (slow, exact), which
/// also finds damaged packets and frames. [`probe_source`] takes a rate as well.
pub fn probe(path: &std::path::Path, count_frames: bool) -> Result<MediaInfo> {
    probe_source(&Source::from(path), count_frames)
}

/// Describes a source with the rate the request gives it (an image folder or pattern needs
/// one); see [`probe`].
pub fn probe_source(source: &Source, count_frames: bool) -> Result<MediaInfo> {
    probe_source_in(source, count_frames, &CallContext::new())
}

/// [`probe_source`] for the call `ctx`: a URL is read with its network settings, the reads
/// stop when it is cancelled and count on its tally.
pub fn probe_source_in(
    source: &Source,
    count_frames: bool,
    ctx: &CallContext,
) -> Result<MediaInfo> {
    let path = source.path();
    let input = VideoInput::open(source, ctx)?;
    let v = &input.video;
    let size_bytes = match (&input.sequence, input.kind) {
        (Some(seq), _) => seq.total_bytes(),
        (None, SourceKind::Url) => crate::media::ffi::input_byte_size(&input.context).unwrap_or(0),
        (None, _) => std::fs::metadata(path).map(|m| m.len()).unwrap_or(0),
    };
    let demuxer = &input.context;
    let container = demuxer.format().name().to_string();
    let fmt_duration = demuxer.duration();
    let duration_s =
        (fmt_duration > 0).then(|| fmt_duration as f64 / f64::from(ffmpeg::ffi::AV_TIME_BASE));
    let bit_rate = crate::media::ffi::format_bit_rate(demuxer);
    let mut audio = Vec::new();
    for s in demuxer.streams() {
        if s.parameters().medium() != MediaType::Audio {
            continue;
        }
        let params = crate::media::ffi::stream_parameters(demuxer, s.index());
        let tb = s.time_base();
        let secs = |ts: i64| (ts != ffmpeg::ffi::AV_NOPTS_VALUE).then(|| ts as f64 * f64::from(tb));
        audio.push(AudioInfo {
            stream_index: s.index(),
            codec: s.parameters().id().name().to_string(),
            sample_rate: params.sample_rate.max(0) as u32,
            channels: params.channels.clamp(0, u16::MAX as i32) as u16,
            start_time_s: secs(s.start_time()),
            duration_s: secs(s.duration()).filter(|d| *d > 0.0),
        });
    }
    let listed = crate::media::table::TableCache::new().table_in(source, ctx)?;
    let mut size_changes = listed.size_changes.clone();
    let (table, frames_decoded, damage, frames_listed_by_packets) = if count_frames {
        let decoded = if listed.times_from == TimesFrom::Decoder {
            listed.clone()
        } else {
            let mut fresh = VideoInput::open(source, ctx)?;
            std::sync::Arc::new(FrameTable::scan_by_decoding(
                &mut fresh,
                "counting frames".into(),
            )?)
        };
        size_changes = decoded.size_changes.clone();
        // Frame i is the i-th picture a full decode returns: where the decode returns another
        // number of frames than the packets list, the packets' table is wrong (every command
        // rebuilds it by decoding) and the decoded one is described.
        if decoded.len() != listed.len() {
            let mut table = (*decoded).clone();
            table.decoded_because = Some(format!(
                "a full decode returns {} of the {} frames the packets list",
                decoded.len(),
                listed.len()
            ));
            let damage = decoded.damage.clone();
            (
                std::sync::Arc::new(table),
                Some(decoded.len()),
                damage,
                Some(listed.len()),
            )
        } else {
            (
                listed.clone(),
                Some(decoded.len()),
                decoded.damage.clone(),
                None,
            )
        }
    } else {
        (listed.clone(), None, listed.damage.clone(), None)
    };
    let step = table.typical_frame_duration();
    // A tick of slack for rounding where the time base is much finer than a frame (29.97 fps
    // in milliseconds: 33 and 34); in a time base of a frame or a few ticks (AVI's 1/fps), a
    // tick is a frame skipped, never rounding.
    let slack = if step >= 10 { step / 100 + 1 } else { 0 };
    let variable_frame_rate = table
        .entries()
        .windows(2)
        .any(|w| (w[1].pts - w[0].pts - step).abs() > slack);
    let (width, height) = v.displayed_size();
    let tb = v.time_base;
    Ok(MediaInfo {
        path: path.display().to_string(),
        kind: input.kind,
        images: input.sequence.as_ref().map(|s| s.record()),
        container,
        size_bytes,
        duration_s,
        bit_rate: (bit_rate > 0).then_some(bit_rate as u64),
        start_time_s: input.start_time().map(|t| t.as_secs_f64()),
        video: VideoInfo {
            stream_index: v.index,
            codec: v.codec.clone(),
            pixel_format: v.pixel_format.clone(),
            stored_width: v.stored_width,
            stored_height: v.stored_height,
            width,
            height,
            rotation_cw: v.rotation.degrees_cw(),
            sample_aspect_ratio: v.sample_aspect_ratio,
            avg_frame_rate: v.avg_frame_rate,
            nominal_frame_rate: v.nominal_frame_rate,
            time_base: tb,
            stream_start_time_s: v.start_pts.map(|p| p as f64 * tb.as_f64()),
            first_frame_time_s: table.time(0).as_secs_f64(),
            duration_s: table.end_time().as_secs_f64(),
            frames_metadata: v.metadata_frames,
            frames: table.len(),
            frame_times_from: table.times_from,
            decoded_because: table.decoded_because.clone(),
            frame_identity: table.identity,
            frames_decoded,
            frames_listed_by_packets,
            keyframes: table.keyframe_count(),
            variable_frame_rate,
            damage,
            size_changes,
        },
        audio,
    })
}

impl MediaInfo {
    /// A short human-readable description.
    pub fn to_text(&self) -> String {
        let v = &self.video;
        let times = match v.frame_times_from {
            // (A decoder may reject some of them: `--count-frames` decodes every frame, and
            // every command that decodes then uses the decoded count.)
            TimesFrom::Packets if v.frames_decoded.is_none() && self.images.is_none() => {
                " listed by the packets, not decoded (--count-frames decodes them)".to_string()
            }
            TimesFrom::Packets => String::new(),
            TimesFrom::Decoder => format!(
                " (found by decoding: {})",
                v.decoded_because.as_deref().unwrap_or("packets unreliable")
            ),
        };
        let mut s = format!(
            "{}\n  container: {} ({} bytes), starts at {}\n  video #{}: {} {}, {}x{} stored, {}x{} displayed (rotation {} deg cw, SAR {})\n  frame rate: avg {} ({:.3} fps), nominal {}{}\n  time base {}, first frame at {:.3}s, duration {:.3}s\n  frames: {}{}{}{}, {} in metadata; {} keyframes\n",
            self.path,
            self.container,
            self.size_bytes,
            self.start_time_s.map(|s| format!("{s:.3}s")).unwrap_or_else(|| "0s (no start time)".into()),
            v.stream_index,
            v.codec,
            v.pixel_format,
            v.stored_width,
            v.stored_height,
            v.width,
            v.height,
            v.rotation_cw,
            v.sample_aspect_ratio,
            v.avg_frame_rate,
            v.avg_frame_rate.as_f64(),
            v.nominal_frame_rate,
            if v.variable_frame_rate { ", variable frame rate" } else { "" },
            v.time_base,
            v.first_frame_time_s,
            v.duration_s,
            v.frames,
            times,
            v.frames_decoded.map(|n| format!(", {n} decoded")).unwrap_or_default(),
            v.frames_listed_by_packets
                .map(|n| format!(" ({n} listed by the packets)"))
                .unwrap_or_default(),
            v.frames_metadata.map(|n| n.to_string()).unwrap_or_else(|| "none".into()),
            v.keyframes,
        );
        if let Some(im) = &self.images {
            s.push_str(&format!(
                "  images: {} {} in {} ({} to {}), {} fps from {}\n",
                im.files,
                im.layout_text(),
                im.folder,
                im.first_file,
                im.last_file,
                im.rate,
                im.rate_from
            ));
        }
        if !v.damage.is_empty() {
            s.push_str(&format!("  damage: {}\n", v.damage.summary()));
        }
        for c in &v.size_changes {
            let why = if c.likely_damage {
                "a damaged frame header? no recording changes its shape so much"
            } else {
                "recordings joined together?"
            };
            s.push_str(&format!(
                "  size change: frame {} is {}, frame {} was {} ({why}); an output keeps one \
                 size: cut the parts apart at frame {}\n",
                c.frame,
                c.to,
                c.frame - 1,
                c.from,
                c.frame
            ));
        }
        if self.audio.is_empty() {
            s.push_str("  audio: none\n");
        }
        for a in &self.audio {
            s.push_str(&format!(
                "  audio #{}: {} {} Hz, {} channel(s)\n",
                a.stream_index, a.codec, a.sample_rate, a.channels
            ));
        }
        s
    }
}
