//! The `frames` export: sampled frames for image-only models. Frame indices are picked with a
//! named sampler (each reproducing a toolkit's formula over the true frame count of the
//! processed stream), or given by source index (`frames`, the `explicit` sampler), or, with a
//! profile, followed as its package showed them (`follow_package`, [`super::follow`]), put in
//! the asked order, read by seeking (only those frames are decoded),
//! scaled to square pixels within the size cap, boxes drawn, and written as images named with
//! their position and time, with `frames.json` (each image's stream frame, source frame, time
//! and boxes) and optionally a captioned strip, an API payload with Base64 images, or JSONL.
//! Beside the frames, on request: each frame's number or time drawn on it as NumPro does
//! (`crate::draw::numpro`), each frame's subtitle text from an SRT/WebVTT file by VLMEvalKit's
//! Video-MME rule ([`crate::exports::subtitles`]), and `audio.wav`, the span's audio as 16 kHz
//! mono PCM ([`crate::media::wav`]); each in `frames.json` and the payload.
//! The folder is written whole under a temporary name and replaces any earlier one.

use std::collections::HashMap;
use std::io::Cursor;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use image::RgbImage;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::exports::{Export, ExportContext, ExportReport, ExportTarget, Wants};
use crate::fit::fit_within;
use crate::media::frame::{to_rgb_image, Converter};
use crate::output::group::OutputGroup;
use crate::overlay::{boxes_on, SourceBoxes};
use crate::pipeline::{FrameSink, FrameStage, PipelineFrame, Progress};
use crate::plan::{ExportSpec, FrameLabel, FramesExport, ImageFormat, Payload, Plan};
use crate::sampling::{self, Arranged, FrameList, Sampled};
use crate::sidecar::{write_json, SourceRecord, VERSION};
use crate::sinks::StagedSink;
use crate::stages::resize::ScaleStage;
use crate::stages::stream::ProcessedStream;
use crate::time::{decimal_text, Time};

/// `frames.json`.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct FramesJson {
    pub vidprep_version: &'static str,
    pub sources: Vec<SourceRecord>,
    /// The plan (the manifest line) that asked for the frames.
    #[schemars(with = "crate::plan::Plan")]
    pub request: serde_json::Value,
    /// The export that made them.
    #[schemars(with = "crate::plan::ExportSpec")]
    pub export: serde_json::Value,
    /// What the plan resolved to on the source.
    pub resolved: serde_json::Value,
    /// Frames in the processed stream the sampler chose from.
    pub total_frames: usize,
    pub sampled: Sampled,
    pub order: Arranged,
    pub format: ImageFormat,
    pub frames: Vec<FrameRecord>,
    pub strip: Option<String>,
    pub payload: Option<String>,
    pub jsonl: Option<String>,
    /// The model profile that chose the frames and their size, with every rule it applied.
    /// (Its fields: `docs/profiles.md`.)
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub profile: Option<crate::profiles::Applied>,
    /// With `follow_package`: the frames follow what the package showed, per this parity
    /// record (`record`, `package`, `package_names` and `package_shows` by position,
    /// `positions_differing`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub follow_package: Option<serde_json::Value>,
    /// The label drawn on every frame (NumPro's rule, its font, size, colour and place).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<serde_json::Value>,
    /// The subtitle file, the rule that aligned it, and the prompt text it gives.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subtitles: Option<serde_json::Value>,
    /// `audio.wav`: its format, sample count and the span it covers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audio: Option<serde_json::Value>,
    /// With a payload: the tokens that request costs by the API's documented rules.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_tokens: Option<Vec<crate::profiles::api::Estimate>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// One written frame, a line of `frames.json`.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct FrameRecord {
    pub position: usize,
    pub file: String,
    /// Which input it came from (0: the video; 1: an inserted sequence).
    pub source: usize,
    /// Its index in that input, and its pts there.
    pub source_frame: usize,
    pub pts: i64,
    /// The image file that frame is, when that input is an image sequence (a name in the
    /// folder its source record gives).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_file: Option<String>,
    /// Its index in the processed stream it was sampled from (when that is not the source).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_frame: Option<usize>,
    /// Exact presentation time on its source's timeline: for the video, seconds from the
    /// input's start as ffmpeg's `-ss` counts them, so `cut --start` at this time begins with
    /// this frame; for an inserted sequence, its image's time at the sequence's rate. The
    /// file name and the strip's caption carry this time.
    pub time: String,
    pub time_s: f64,
    /// Exact presentation time in the processed stream it was sampled from (seconds from that
    /// stream's first frame: a span's first frame, or the video's first frame, is at 0).
    pub stream_time: String,
    pub stream_time_s: f64,
    pub width: u32,
    pub height: u32,
    /// The boxes on this image, in its pixels (when the item has boxes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boxes: Option<Vec<crate::overlay::ImageBox>>,
    /// The text drawn on it (with `label`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Its time on the source's timeline in whole milliseconds, the time the subtitles are
    /// looked up at (with `subtitles`; `None` for a needle's frames).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subtitle_ms: Option<i64>,
    /// Its subtitle text ("" when no cue covers it; with `subtitles`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subtitle: Option<String>,
}

/// What a [`FramesSink`] wrote besides the images.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FramesFiles {
    pub strip: Option<String>,
    pub payload: Option<String>,
    pub jsonl: Option<String>,
    /// The payload's token cost ([`crate::profiles::api`]).
    #[serde(skip)]
    pub request_tokens: Option<Vec<crate::profiles::api::Estimate>>,
}

/// How sampled frames are written.
#[derive(Clone, Debug, PartialEq)]
pub struct FramesOutputSpec {
    pub format: ImageFormat,
    pub quality: u8,
    /// A captioned grid of every frame with this many columns (0: up to 4).
    pub strip: Option<usize>,
    pub payload: Option<Payload>,
    pub jsonl: bool,
}

/// What the payload carries besides the images.
#[derive(Clone, Debug, Default)]
pub struct PayloadExtras {
    /// A text part (the frames' subtitles, VLMEvalKit's joined text).
    pub text: Option<String>,
    /// The WAV file to add as an audio part.
    pub audio: Option<PathBuf>,
}

/// Writes the frame of each position as an image (named with its position and timestamp)
/// into a folder (the temporary folder of the export), or keeps it as RGB pixels
/// ([`FramesSink::in_memory`], for [`crate::Destination::Memory`]).
pub struct FramesSink {
    /// `None`: nothing is written; the RGB images are kept in `kept`.
    out_dir: Option<PathBuf>,
    /// The RGB image of each position (memory mode only).
    kept: Option<Vec<Option<RgbImage>>>,
    spec: FramesOutputSpec,
    /// Stream frame -> the positions that show it.
    positions: HashMap<usize, Vec<usize>>,
    /// Each position's time on its source's timeline (its name and record say it).
    times: Vec<Time>,
    names: Vec<String>,
    records: Vec<Option<FrameRecord>>,
    rgb: Converter,
    jpeg: crate::media::still::JpegWriter,
    /// Thumbnails for the strip, by position.
    thumbs: Option<(u32, Vec<Option<RgbImage>>)>,
    box_sources: Vec<(usize, std::sync::Arc<SourceBoxes>)>,
    /// The source the frames come from (for errors).
    source: PathBuf,
    /// A profile's resize of the RGB frame to this size, by its resampling.
    resize: Option<(u32, u32, crate::profiles::Resample)>,
    /// The label drawn on each frame (the text is recorded).
    label: Option<FrameLabel>,
    /// The payload's parts besides the images.
    extras: PayloadExtras,
    /// Its taps and planes, kept from frame to frame.
    resampler: crate::profiles::resample::TorchBicubic,
    /// The 8-bit fixed-point taps, for a profile that resizes as Pillow or torch's uint8
    /// kernel does.
    pil: crate::profiles::pil::PilBicubic,
    /// A profile's own image encoding (VLMEvalKit's cache: Pillow's JPEG).
    encoding: Option<crate::profiles::ImageEncoding>,
}

impl FramesSink {
    /// `frames[p]` is the stream frame of position `p`, at `times[p]` on its source's
    /// timeline (for the file name and the record's `time`); `width` is the images' width
    /// (for the strip's tiles).
    pub fn new(
        out_dir: &Path,
        spec: &FramesOutputSpec,
        frames: &[usize],
        times: &[Time],
        width: u32,
        box_sources: Vec<(usize, std::sync::Arc<SourceBoxes>)>,
    ) -> FramesSink {
        let n = frames.len();
        let digits = n.saturating_sub(1).max(1).to_string().len().max(2);
        let mut positions: HashMap<usize, Vec<usize>> = HashMap::new();
        let mut names = Vec::with_capacity(n);
        for (p, (&i, t)) in frames.iter().zip(times).enumerate() {
            positions.entry(i).or_default().push(p);
            names.push(format!(
                "{p:0digits$}_{:09.3}s.{}",
                t.as_secs_f64(),
                spec.format.extension()
            ));
        }
        FramesSink {
            out_dir: Some(out_dir.to_path_buf()),
            kept: None,
            spec: spec.clone(),
            positions,
            times: times.to_vec(),
            names,
            records: vec![None; n],
            rgb: Converter::to_format(ffmpeg_next::format::Pixel::RGB24),
            jpeg: crate::media::still::JpegWriter::new(spec.quality),
            thumbs: spec.strip.map(|_| (width.min(480), vec![None; n])),
            box_sources,
            source: PathBuf::new(),
            resize: None,
            label: None,
            extras: PayloadExtras::default(),
            resampler: Default::default(),
            pil: Default::default(),
            encoding: None,
        }
    }

    /// Records the label `kind` drawn on each frame.
    pub fn with_label(mut self, label: Option<FrameLabel>) -> FramesSink {
        self.label = label;
        self
    }

    /// Adds these parts to the payload.
    pub fn set_extras(&mut self, extras: PayloadExtras) {
        self.extras = extras;
    }

    /// Resizes every RGB frame to `size` by the resampling named (a profile's resize).
    pub fn with_resize(
        mut self,
        size: Option<(u32, u32, crate::profiles::Resample)>,
    ) -> FramesSink {
        self.resize = size;
        self
    }

    /// Writes the images as a profile's package writes them: under its names (by position)
    /// and with its encoding.
    pub fn with_package_files(
        mut self,
        files: Option<Vec<String>>,
        encoding: Option<crate::profiles::ImageEncoding>,
    ) -> FramesSink {
        if let Some(files) = files {
            debug_assert_eq!(files.len(), self.names.len());
            self.names = files;
        }
        self.encoding = encoding;
        self
    }

    /// Makes RGB as a profile's package reader does.
    pub fn with_rgb(mut self, rgb: Option<crate::profiles::RgbConversion>) -> FramesSink {
        match rgb {
            None => {}
            Some(crate::profiles::RgbConversion::SwscaleBilinear) => {
                self.rgb = Converter::to_format_bilinear(ffmpeg_next::format::Pixel::RGB24)
            }
        }
        self
    }

    /// Names `source` in this sink's errors.
    pub fn with_source(mut self, source: &Path) -> FramesSink {
        self.source = source.to_path_buf();
        self
    }

    /// A sink that writes nothing and keeps each position's RGB image instead (the same
    /// pixels the image files would be encoded from). The records name the files the images
    /// would have in a folder. `spec` must ask for no strip, payload or JSONL.
    pub fn in_memory(
        spec: &FramesOutputSpec,
        frames: &[usize],
        times: &[Time],
        box_sources: Vec<(usize, std::sync::Arc<SourceBoxes>)>,
    ) -> FramesSink {
        let mut sink = FramesSink::new(Path::new(""), spec, frames, times, 0, box_sources);
        sink.out_dir = None;
        sink.thumbs = None;
        sink.kept = Some(vec![None; frames.len()]);
        sink
    }

    /// The kept images in position order (memory mode; empty otherwise).
    pub fn take_images(&mut self) -> Vec<Option<RgbImage>> {
        self.kept.take().unwrap_or_default()
    }

    /// Once every position has its frame: the strip, payload and JSONL are written. Returns
    /// the records in position order.
    pub fn complete(self, source_name: &Path) -> Result<(Vec<FrameRecord>, FramesFiles)> {
        let records: Vec<FrameRecord> = self
            .records
            .iter()
            .enumerate()
            .map(|(p, r)| {
                r.clone().ok_or_else(|| {
                    Error::corrupt(
                        source_name,
                        format!("at output position {p}"),
                        "this frame was not decoded",
                    )
                })
            })
            .collect::<Result<_>>()?;
        let Some(out_dir) = self.out_dir.as_deref() else {
            // Memory mode: no files (the export refuses strip, payload and JSONL there).
            return Ok((records, FramesFiles::default()));
        };
        let read_all = || -> Result<Vec<Vec<u8>>> {
            records
                .iter()
                .map(|r| {
                    let p = out_dir.join(&r.file);
                    std::fs::read(&p).map_err(|e| Error::io(&p, e))
                })
                .collect()
        };
        let mut files = FramesFiles::default();
        if let (Some(columns), Some((_, thumbs))) = (self.spec.strip, self.thumbs.as_ref()) {
            let strip = render_strip(thumbs, &records, columns);
            let name = format!("strip.{}", self.spec.format.extension());
            let bytes = encode_image(&strip, self.spec.format, self.spec.quality)
                .map_err(|e| Error::internal(format!("cannot encode the strip: {e}")))?;
            let p = out_dir.join(&name);
            std::fs::write(&p, bytes).map_err(|e| Error::io(&p, e))?;
            files.strip = Some(name);
        }
        if let Some(api) = self.spec.payload {
            let audio = match &self.extras.audio {
                Some(p) => Some(std::fs::read(p).map_err(|e| Error::io(p, e))?),
                None => None,
            };
            let body = payload_with(
                api,
                self.spec.format.mime(),
                &read_all()?,
                self.extras.text.as_deref(),
                audio.as_deref(),
            );
            write_json(&out_dir.join("payload.json"), &body)?;
            files.payload = Some("payload.json".into());
            let sizes: Vec<(u32, u32)> = records.iter().map(|r| (r.width, r.height)).collect();
            let to = match api {
                Payload::OpenAi => crate::profiles::api::Api::OpenAi,
                Payload::Anthropic => crate::profiles::api::Api::Anthropic,
                Payload::Gemini => crate::profiles::api::Api::Gemini,
            };
            files.request_tokens = Some(crate::profiles::api::request_tokens(to, &sizes));
        }
        if self.spec.jsonl {
            let mut text = String::new();
            for (rec, bytes) in records.iter().zip(read_all()?) {
                let line = serde_json::json!({
                    "position": rec.position,
                    "file": rec.file,
                    "source_frame": rec.source_frame,
                    "time_s": rec.time_s,
                    "mime_type": self.spec.format.mime(),
                    "data": base64::engine::general_purpose::STANDARD.encode(bytes),
                });
                text.push_str(&line.to_string());
                text.push('\n');
            }
            let p = out_dir.join("frames.jsonl");
            std::fs::write(&p, text).map_err(|e| Error::io(&p, e))?;
            files.jsonl = Some("frames.jsonl".into());
        }
        Ok((records, files))
    }
}

/// The error of frame `number` of `source` failing `doing` (`"as JPEG"`): a refused
/// allocation of about `bytes` is named as such, anything else is FFmpeg's error.
fn frame_failure(
    source: &Path,
    number: usize,
    doing: &str,
    bytes: u64,
    e: ffmpeg_next::Error,
) -> Error {
    if crate::media::frame::is_out_of_memory(&e) {
        Error::OutOfMemory {
            path: source.to_path_buf(),
            what: format!("frame {number} {doing}"),
            needed: bytes,
            advice: "ask for smaller frames (--max-size) or free memory".into(),
        }
    } else {
        Error::internal(format!("cannot convert frame {number} {doing}: {e}"))
    }
}

impl FrameSink for FramesSink {
    fn accept(&mut self, frame: &PipelineFrame) -> Result<()> {
        let number = frame.index;
        let Some(positions) = self.positions.get(&number).cloned() else {
            return Ok(());
        };
        let (mut width, mut height) = (frame.image.width(), frame.image.height());
        // JPEG straight from YUV with libavcodec; PNG (and the strip) from RGB; memory mode
        // keeps the RGB; a profile resizes the RGB.
        let mut rgb = if self.spec.format == ImageFormat::Png
            || self.thumbs.is_some()
            || self.kept.is_some()
            || self.resize.is_some()
            || self.encoding.is_some()
        {
            // An RGB-coded source's own picture where it has one of this size.
            let source = frame
                .rgb
                .as_ref()
                .filter(|r| (r.width(), r.height()) == (width, height))
                .unwrap_or(&frame.image);
            let failure = |e| {
                frame_failure(
                    &self.source,
                    number,
                    "to RGB",
                    width as u64 * height as u64 * 3,
                    e,
                )
            };
            Some(match self.resize {
                // torch's float resize reads the converted frame's rows in place (no full-size
                // copy); the 8-bit fixed-point resizers below take the RGB image.
                Some((w, h, how)) if !how.is_fixed8() => {
                    let converted = self.rgb.convert(source).map_err(failure)?;
                    let image = self.resampler.resize_rows(
                        converted.data(0),
                        converted.stride(0),
                        converted.width(),
                        converted.height(),
                        w,
                        h,
                    );
                    (width, height) = (w, h);
                    image
                }
                _ => to_rgb_image(source, &mut self.rgb).map_err(failure)?,
            })
        } else {
            None
        };
        if let (Some((w, h, how)), Some(image)) = (self.resize, rgb.as_mut()) {
            use crate::profiles::{pil::Fixed8, Resample};
            let kind = match how {
                Resample::PilBicubic => Some(Fixed8::Pillow13),
                Resample::PilBicubic12 => Some(Fixed8::Pillow12),
                Resample::TorchBicubicAntialiasUint8 => Some(Fixed8::TorchUint8),
                // Resized above, from the converted rows.
                Resample::TorchBicubicAntialias | Resample::None => None,
            };
            if let Some(kind) = kind {
                *image = self.pil.resize(image, w, h, kind);
                (width, height) = (w, h);
            }
        }
        let bytes = match (self.spec.format, &rgb) {
            _ if self.out_dir.is_none() => Vec::new(),
            (_, Some(rgb)) if self.encoding == Some(crate::profiles::ImageEncoding::PillowJpeg) => {
                crate::profiles::pil_jpeg::encode(rgb.as_raw(), rgb.width(), rgb.height())
            }
            (ImageFormat::Jpg, Some(rgb)) if self.resize.is_some() => {
                encode_image(rgb, ImageFormat::Jpg, self.spec.quality).map_err(|e| {
                    Error::internal(format!("cannot encode frame {number} as JPEG: {e}"))
                })?
            }
            (ImageFormat::Jpg, _) => self.jpeg.encode(&frame.image).map_err(|e| {
                frame_failure(
                    &self.source,
                    number,
                    "as JPEG",
                    width as u64 * height as u64 * 3 / 2,
                    e,
                )
            })?,
            (ImageFormat::Png, Some(rgb)) => {
                encode_image(rgb, ImageFormat::Png, 100).map_err(|e| {
                    Error::internal(format!("cannot encode frame {number} as PNG: {e}"))
                })?
            }
            (ImageFormat::Png, None) => unreachable!("RGB made above for PNG"),
        };
        let boxes = (!self.box_sources.is_empty())
            .then(|| boxes_on(frame, &self.box_sources, width, height));
        for p in positions {
            // One frame may fill many positions (repeats): an interrupt stops between files.
            if crate::cancel::cancelled() {
                return Err(Error::Cancelled);
            }
            if let Some(out_dir) = &self.out_dir {
                let path = out_dir.join(&self.names[p]);
                std::fs::write(&path, &bytes).map_err(|e| Error::io(&path, e))?;
            }
            if let (Some(kept), Some(rgb)) = (self.kept.as_mut(), rgb.as_ref()) {
                let bytes = rgb.as_raw().len();
                let mut copy = crate::media::frame::try_buffer(bytes).ok_or_else(|| {
                    let enomem = ffmpeg_next::Error::Other {
                        errno: ffmpeg_next::util::error::ENOMEM,
                    };
                    frame_failure(&self.source, number, "kept in memory", bytes as u64, enomem)
                })?;
                copy.extend_from_slice(rgb.as_raw());
                kept[p] = RgbImage::from_raw(rgb.width(), rgb.height(), copy);
            }
            self.records[p] = Some(FrameRecord {
                position: p,
                file: self.names[p].clone(),
                source: frame.origin.source,
                source_frame: frame.origin.index,
                pts: frame.origin.pts,
                source_file: None,
                stream_frame: Some(frame.index),
                time: decimal_text(self.times[p]),
                time_s: self.times[p].as_secs_f64(),
                stream_time: decimal_text(frame.time),
                stream_time_s: frame.time.as_secs_f64(),
                width,
                height,
                boxes: boxes.clone(),
                label: self.label.map(|l| l.text(frame.index, self.times[p])),
                subtitle_ms: None,
                subtitle: None,
            });
            if let (Some((tile_w, thumbs)), Some(rgb)) = (self.thumbs.as_mut(), rgb.as_ref()) {
                let th = (rgb.height() as f64 * *tile_w as f64 / rgb.width() as f64)
                    .round()
                    .max(1.0) as u32;
                thumbs[p] = Some(image::imageops::resize(
                    rgb,
                    *tile_w,
                    th,
                    image::imageops::FilterType::Triangle,
                ));
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}

/// The `frames` export.
pub(crate) struct FramesMaker {
    spec: ExportSpec,
    frames: FramesExport,
    folder: Option<(PathBuf, PathBuf)>,
    chosen: Option<(Sampled, Arranged)>,
    sink: Option<StagedSink<FramesSink>>,
    /// Kept in memory ([`crate::Destination::Memory`]) instead of written.
    memory: bool,
    /// What memory mode made, once finished.
    made: Option<MemoryFrames>,
    /// What the profile decided (when the export has one).
    applied: Option<crate::profiles::Applied>,
    /// The subtitle file, read (with `subtitles`).
    subtitles: Option<crate::exports::subtitles::Subtitles>,
    /// What `frames.json` says of the followed package (with `follow_package`).
    followed: Option<serde_json::Value>,
}

/// Draws each frame's label by NumPro's rule, on the frame as decoded (before any resize).
struct LabelStage {
    kind: FrameLabel,
    /// Each stream frame's time on its source's timeline (what a `time` label says).
    times: Vec<Time>,
}

impl FrameStage for LabelStage {
    fn apply(&mut self, frame: &mut PipelineFrame) -> Result<()> {
        crate::draw::make_writable(&mut frame.image)
            .map_err(|e| Error::internal(format!("cannot draw on frame {}: {e}", frame.index)))?;
        // Drawn in YUV: this frame's RGB outputs are made from the drawn picture.
        frame.rgb = None;
        let time = self.times.get(frame.index).copied().unwrap_or(frame.time);
        let text = self.kind.text(frame.index, time);
        crate::draw::numpro::draw(&mut frame.image, &text);
        Ok(())
    }
}

/// Time of stream frame `i` on its source's own timeline (from the source's start); `None`
/// for an inserted needle's frames.
fn source_time(stream: &ProcessedStream, i: usize) -> Option<Time> {
    let host = match &stream.needle {
        None => i,
        Some(n) if i < n.at => i,
        Some(n) if i < n.at + n.prepared.frames => return None,
        Some(n) => i - n.prepared.frames,
    };
    Some(stream.table.time(stream.resolved.kept.start + host))
}

/// The WAV's format: what speech models take.
const WAV_FORMAT: crate::media::audio::AudioFormat = crate::media::audio::AudioFormat {
    sample_rate: 16000,
    channels: 1,
};

impl FramesMaker {
    pub fn new(spec: &ExportSpec, frames: &FramesExport) -> FramesMaker {
        FramesMaker {
            spec: spec.clone(),
            frames: frames.clone(),
            folder: None,
            chosen: None,
            sink: None,
            memory: false,
            made: None,
            applied: None,
            subtitles: None,
            followed: None,
        }
    }
}

/// The processed stream's index of each source frame in `given` (the video's own frame
/// indices, `frames` of a frames export): refused, naming the index, the file and the frame
/// count, when one is not in the stream (past the end, or outside the span).
fn stream_indices(stream: &ProcessedStream, given: &[usize], export: &str) -> Result<Vec<usize>> {
    let kept = stream.resolved.kept;
    let total = stream.table.len();
    given
        .iter()
        .enumerate()
        .map(|(position, &s)| {
            if s >= total {
                return Err(Error::request(
                    &stream.source,
                    format!(
                        "export {export:?}: source frame {s} (position {position} of `frames`) \
                         is past the end: the source has {total} frames (0 to {}); give indices \
                         below {total}",
                        total.saturating_sub(1)
                    ),
                ));
            }
            if s < kept.start || s >= kept.end {
                return Err(Error::request(
                    &stream.source,
                    format!(
                        "export {export:?}: source frame {s} (position {position} of `frames`) \
                         is outside the span, which keeps source frames {} to {} of {total}; \
                         give frames in the span, or widen it",
                        kept.start,
                        kept.end.saturating_sub(1)
                    ),
                ));
            }
            let host = s - kept.start;
            Ok(match &stream.needle {
                Some(n) if host >= n.at => host + n.prepared.frames,
                _ => host,
            })
        })
        .collect()
}

/// The processed stream's frames as the samplers see them.
pub(crate) fn stream_frame_list(stream: &ProcessedStream) -> Result<FrameList> {
    let nominal = stream
        .timing()
        .frame_rate
        .map(|r| r.as_f64())
        .unwrap_or_else(|| stream.frame_count() as f64 / stream.duration().as_secs_f64().max(1e-9));
    FrameList::new(stream.times(), stream.duration(), nominal)
        .ok_or_else(|| Error::request(&stream.source, "the processed stream has no frames"))
}

impl Export for FramesMaker {
    fn target_in(&self, dir: &Path) -> ExportTarget {
        ExportTarget::at(dir.join(self.spec.name()))
    }

    fn claim(
        &mut self,
        target: &ExportTarget,
        _plan: &Plan,
        group: &mut OutputGroup,
    ) -> Result<()> {
        let temp = group.folder(&target.main)?;
        self.folder = Some((target.main.clone(), temp));
        Ok(())
    }

    fn keep_in_memory(&mut self) -> Result<()> {
        let mut files = Vec::new();
        if self.frames.strip.0.is_some() {
            files.push("strip");
        }
        if self.frames.payload.is_some() {
            files.push("payload");
        }
        if self.frames.jsonl {
            files.push("jsonl");
        }
        if self.frames.audio {
            files.push("audio");
        }
        if !files.is_empty() {
            return Err(Error::Usage(format!(
                "export {:?}: {} only exist as files; frames kept in memory cannot have them",
                self.spec.name(),
                files.join(", ")
            )));
        }
        self.memory = true;
        Ok(())
    }

    fn take_memory(&mut self) -> Option<MemoryFrames> {
        self.made.take()
    }

    fn start(
        &mut self,
        stream: &ProcessedStream,
        ctx: &ExportContext,
        _group: &mut OutputGroup,
    ) -> Result<Wants> {
        let list = stream_frame_list(stream)?;
        // What goes beside the frames is checked before a frame is decoded.
        if let Some(path) = &self.frames.subtitles {
            self.subtitles = Some(crate::exports::subtitles::Subtitles::load(path)?);
        }
        if self.frames.audio && crate::media::audio::audio_stream_format(&stream.input)?.is_none() {
            return Err(Error::request(
                &stream.source,
                format!(
                    "export {:?}: audio was asked for (audio.wav) but the source has no audio \
                     stream; drop --audio (\"audio\": true), or give a source with sound",
                    self.spec.name()
                ),
            ));
        }
        // Frames given by source index: into the stream's indices, refused past the end.
        let given = match &self.frames.frames {
            Some(list) => Some(stream_indices(stream, list, self.spec.name())?),
            None => None,
        };
        // Checked as the explicit sampler checks them (a repeat needs `allow_repeats`) before
        // a profile takes them.
        let given_sampled = match &given {
            Some(indices) => Some(
                sampling::sample(
                    &list,
                    self.frames.effective_sampler(),
                    sampling::Request::Frames(indices.clone()),
                    self.frames.allow_repeats,
                )
                .map_err(|e| {
                    let e = match e {
                        // Named by the source's index, as given.
                        sampling::SampleError::RepeatedGivenFrame { first, again, .. } => {
                            sampling::SampleError::RepeatedGivenFrame {
                                index: self.frames.frames.as_ref().map_or(0, |f| f[first]),
                                first,
                                again,
                            }
                        }
                        e => e,
                    };
                    Error::request(
                        &stream.source,
                        format!("export {:?}: {e}", self.spec.name()),
                    )
                })
                .map(|s| Sampled {
                    // As asked: the source's indices (the stream's are `indices`).
                    requested: self.frames.request(),
                    ..s
                })?,
            ),
            None => None,
        };
        let record = match &self.frames.follow_package {
            Some(path) => Some(crate::exports::follow::ParityRecord::load(path)?),
            None => None,
        };
        let applied = match &self.frames.profile {
            None => None,
            Some(name) => {
                let profile = crate::profiles::find(name)
                    .ok_or_else(|| Error::Usage(crate::profiles::unknown(name)))?;
                let input = crate::profiles::ProfileInput {
                    frames: &list,
                    width: stream.size.0,
                    height: stream.size.1,
                    container: crate::profiles::ContainerFacts {
                        path: &stream.source,
                        header_frames: stream.info.metadata_frames.unwrap_or(0),
                        average_rate: Some(stream.info.avg_frame_rate)
                            .filter(|r| r.num != 0 && r.den != 0)
                            .map(|r| (r.num as i64, r.den as i64)),
                    },
                };
                let in_export = |e: crate::profiles::ProfileError| {
                    Error::request(
                        &stream.source,
                        format!("export {:?}: {e}", self.spec.name()),
                    )
                };
                let request = self.frames.profile_request();
                let mut a = crate::profiles::apply(profile, &input, &request).map_err(in_export)?;
                if let Some(indices) = &given {
                    a = crate::profiles::with_frames(
                        profile,
                        a,
                        indices.clone(),
                        &crate::profiles::FramesFrom::Given,
                        &input,
                    )
                    .map_err(in_export)?;
                }
                if let Some(record) = &record {
                    let now = stream.source_records().swap_remove(0);
                    let asked = crate::exports::follow::Request {
                        count: request.count,
                        fps: request.fps,
                        options: request.options.clone(),
                    };
                    let shown = record.shown(&stream.source, &now, &asked, &a)?;
                    self.followed = Some(record.json(&shown));
                    a = crate::profiles::with_frames(
                        profile,
                        a,
                        shown,
                        &crate::profiles::FramesFrom::Package {
                            record: record.path.display().to_string(),
                        },
                        &input,
                    )
                    .map_err(in_export)?;
                }
                Some(a)
            }
        };
        // A package that repeats frames (InternVL's get_index with more segments than frames)
        // is followed only with `allow_repeats`, as a sampler is.
        if let Some(a) = applied.as_ref().filter(|_| !self.frames.allow_repeats) {
            let distinct = a
                .indices
                .iter()
                .collect::<std::collections::HashSet<_>>()
                .len();
            if distinct < a.indices.len() && self.followed.is_some() {
                return Err(Error::request(
                    &stream.source,
                    format!(
                        "export {:?}: following the package, {} of the {} positions show a \
                         frame the package already showed at another position (package_shows: \
                         {:?}); set `allow_repeats` to keep the repeats as the package fed them",
                        self.spec.name(),
                        a.indices.len() - distinct,
                        a.indices.len(),
                        a.indices,
                    ),
                ));
            }
            if distinct < a.indices.len() {
                return Err(Error::request(
                    &stream.source,
                    format!(
                        "export {:?}: profile {} picks {} frames of a video of {}, {} of \
                         them repeats of frames already picked; ask for fewer frames (`count`), \
                         or set `allow_repeats` to keep the repeats as the package would",
                        self.spec.name(),
                        a.profile,
                        a.indices.len(),
                        crate::sampling::FrameTimes::total(&list),
                        a.indices.len() - distinct,
                    ),
                ));
            }
        }
        // A profile's options can ask for any size (min_pixels=1e30): refuse one no frame of
        // vidprep may have before anything of that size is allocated.
        if let Some(a) = &applied {
            let pixels = a.width as u64 * a.height as u64;
            if pixels > crate::media::input::MAX_FRAME_PIXELS {
                return Err(Error::OverBudget {
                    path: stream.source.clone(),
                    what: format!(
                        "export {:?}: profile {} resizes to {}x{}",
                        self.spec.name(),
                        a.profile,
                        a.width,
                        a.height
                    ),
                    needed: pixels,
                    pixels: true,
                    limit: crate::media::input::MAX_FRAME_PIXELS,
                    advice: "lower the profile's min_pixels, total_pixels or resized_height / \
                             resized_width options"
                        .into(),
                });
            }
        }
        let sampled = match (&applied, given_sampled) {
            (Some(a), None) => Sampled {
                indices: a.indices.clone(),
                sampler: a.sampler,
                requested: self.frames.request(),
                formula: match &self.followed {
                    Some(_) => format!(
                        "{}, each replaced by the frame the package showed there",
                        a.formula
                    ),
                    None => a.formula.clone(),
                },
                note: None,
            },
            (_, Some(given)) => given,
            (None, None) => sampling::sample(
                &list,
                self.frames.sampler,
                self.frames.request(),
                self.frames.allow_repeats,
            )
            .map_err(|e| {
                Error::request(
                    &stream.source,
                    format!("export {:?}: {e}", self.spec.name()),
                )
            })?,
        };
        let arranged = sampling::arrange(&sampled.indices, self.frames.order, self.frames.seed);
        // Names and records carry each frame's time on its source's timeline.
        let times = stream.source_timeline_times();
        let at: Vec<Time> = arranged.indices.iter().map(|&i| times[i]).collect();
        // Images are what players show: square pixels, within the size cap.
        let (dw, dh) = stream.display_size();
        // A profile: the decoded size (as the package's decoder returns it), then its resize.
        let size = match &applied {
            Some(a) => (a.width, a.height),
            None => self
                .frames
                .max_size
                .map_or((dw, dh), |m| fit_within(dw, dh, m.0, m.1)),
        };
        let resize = applied
            .as_ref()
            .filter(|a| a.resample != crate::profiles::Resample::None)
            .map(|a| (a.width, a.height, a.resample));
        let package_files = applied.as_ref().and_then(|a| a.files.clone());
        let encoding = applied.as_ref().and_then(|a| a.encoding);
        let rgb = applied.as_ref().and_then(|a| a.rgb);
        let output = FramesOutputSpec {
            format: self.frames.format,
            quality: self.frames.quality,
            strip: self.frames.strip.0,
            payload: self.frames.payload,
            jsonl: self.frames.jsonl,
        };
        if self.memory {
            // The array handed back is allocated once every frame is in: refuse a request
            // that cannot fit before decoding anything.
            let n = arranged.indices.len() as u64;
            let needed = n
                .saturating_mul(size.0 as u64)
                .saturating_mul(size.1 as u64)
                .saturating_mul(3);
            if needed > ctx.memory_budget {
                return Err(Error::OverBudget {
                    path: stream.source.clone(),
                    what: format!(
                        "export {:?}: {n} frames of {}x{} RGB",
                        self.spec.name(),
                        size.0,
                        size.1
                    ),
                    needed,
                    pixels: false,
                    limit: ctx.memory_budget,
                    advice: "ask for fewer frames (n, max_frames) or smaller ones (size), or \
                             raise the limit (memory_budget)"
                        .into(),
                });
            }
        }
        let sink = if self.memory {
            FramesSink::in_memory(&output, &arranged.indices, &at, stream.box_sources.clone())
                .with_source(&stream.source)
                .with_resize(resize)
                .with_label(self.frames.label)
                .with_package_files(package_files, encoding)
                .with_rgb(rgb)
        } else {
            let (_, temp) = self.folder.as_ref().expect("claimed before start");
            FramesSink::new(
                temp,
                &output,
                &arranged.indices,
                &at,
                size.0,
                stream.box_sources.clone(),
            )
            .with_source(&stream.source)
            .with_resize(resize)
            .with_label(self.frames.label)
            .with_package_files(package_files, encoding)
            .with_rgb(rgb)
        };
        let mut stages: Vec<Box<dyn FrameStage + Send>> = Vec::new();
        if let Some(kind) = self.frames.label {
            // NumPro numbers the frames as decoded; the resize comes after.
            stages.push(Box::new(LabelStage { kind, times }));
        }
        if resize.is_none() && size != stream.size {
            stages.push(Box::new(ScaleStage::new(size)));
        }
        stages.extend(stream.draw_stages());
        // The sink keys frames by stream index: keep it (the staged sink renumbers).
        self.sink = Some(StagedSink::keeping_indices(stages, sink));
        let mut wanted = arranged.indices.clone();
        wanted.sort_unstable();
        wanted.dedup();
        self.chosen = Some((sampled, arranged));
        self.applied = applied;
        Ok(Wants::Frames(wanted))
    }

    fn sink(&mut self) -> Option<&mut dyn FrameSink> {
        self.sink.as_mut().map(|s| s as &mut dyn FrameSink)
    }

    fn finish(
        &mut self,
        stream: &ProcessedStream,
        _ctx: &ExportContext,
        _group: &mut OutputGroup,
        _progress: &mut dyn Progress,
    ) -> Result<ExportReport> {
        let (folder, temp) = match &self.folder {
            Some(f) => (Some(f.0.clone()), Some(f.1.clone())),
            None if self.memory => (None, None),
            None => panic!("claimed before finish"),
        };
        let (sampled, arranged) = self.chosen.take().expect("started");
        let mut sink = self.sink.take().expect("started").into_inner();
        let images = sink.take_images();
        // Subtitles: each position's text at its frame's time on the source's timeline.
        let subtitle_ms: Vec<Option<i64>> = arranged
            .indices
            .iter()
            .map(|&i| {
                source_time(stream, i).map(|t| crate::exports::subtitles::time_ms(t.as_secs_f64()))
            })
            .collect();
        let subtitle_texts: Option<Vec<String>> = self.subtitles.as_ref().map(|subs| {
            subtitle_ms
                .iter()
                .map(|ms| ms.map(|ms| subs.text_at(ms)).unwrap_or_default())
                .collect()
        });
        let subtitles_json = match (&self.subtitles, &subtitle_texts) {
            (Some(subs), Some(texts)) => Some(serde_json::json!({
                "file": subs.path,
                "format": subs.format,
                "cues": subs.cues.len(),
                "rule": crate::exports::subtitles::RULE,
                "text": crate::exports::subtitles::Subtitles::prompt(texts),
            })),
            _ => None,
        };
        // Audio: the span the frames were sampled from, sample 0 at time 0 of their times.
        let mut audio_json = None;
        let mut extras = PayloadExtras {
            text: subtitles_json
                .as_ref()
                .map(|j| j["text"].as_str().unwrap_or_default().to_string()),
            audio: None,
        };
        if self.frames.audio {
            let temp = temp.as_ref().expect("audio is refused in memory");
            let path = temp.join("audio.wav");
            let plan = stream.audio();
            let facts = crate::media::wav::write_wav(&plan, WAV_FORMAT, &path)?;
            let start = stream.resolved.start_time();
            let end = Time::new(facts.samples as i64, facts.sample_rate as i64);
            audio_json = Some(serde_json::json!({
                "file": "audio.wav",
                "format": "pcm_s16le",
                "sample_rate": facts.sample_rate,
                "channels": facts.channels,
                "samples": facts.samples,
                "start": "0",
                "end": decimal_text(end),
                "start_s": 0.0,
                "end_s": end.as_secs_f64(),
                "source_start": decimal_text(start),
                "source_start_s": start.as_secs_f64(),
                "rule": "the processed stream's span (its first frame's start to its last \
                         frame's end, silence under an insertion), decoded and resampled by \
                         swresample with its defaults to 16 kHz mono, cut to the sample \
                         (rounded to the nearest) and converted to 16 bits as swresample \
                         does; a frame at time t is at sample round(t * 16000)",
            }));
            extras.audio = Some(path);
        }
        sink.set_extras(extras);
        let (mut records, files) = sink.complete(&stream.source)?;
        for r in &mut records {
            r.source_file = stream.source_file(r.source, r.source_frame);
            if let Some(texts) = &subtitle_texts {
                r.subtitle_ms = subtitle_ms[r.position];
                r.subtitle = Some(texts[r.position].clone());
            }
        }
        let label_json = self.frames.label.map(|kind| {
            serde_json::json!({
                "kind": kind,
                "rule": "NumPro (github.com/yongliang-wu/NumPro, eval/qwen2_vl_7b_mr.py, \
                         annotate_frame_with_pil with its defaults): the text at \
                         x = W - tw, y = H - th - th/3 (PIL textbbox ink box, anchor la), no \
                         margin, no background, drawn on the frame as decoded before any resize",
                "font": "DejaVu Sans Bold",
                "em_px": crate::draw::numpro::EM_PX,
                "colour": crate::draw::numpro::COLOUR.to_string(),
                "position": "bottom_right",
            })
        });
        let mut warnings = stream.warnings.clone();
        if let Some(note) = &sampled.note {
            warnings.push(format!("sampling: {note}"));
        }
        let count = records.len();
        let summary = format!(
            "{}: {} frames ({} of {} by {}), frames.json{}{}{}{}",
            folder
                .as_deref()
                .map_or("(in memory)".into(), |f| f.display().to_string()),
            count,
            sampled.formula,
            stream.frame_count(),
            sampled.sampler,
            files
                .strip
                .as_ref()
                .map(|s| format!(", {s}"))
                .unwrap_or_default(),
            files
                .payload
                .as_ref()
                .map(|s| format!(", {s}"))
                .unwrap_or_default(),
            files
                .jsonl
                .as_ref()
                .map(|s| format!(", {s}"))
                .unwrap_or_default(),
            if audio_json.is_some() {
                ", audio.wav"
            } else {
                ""
            },
        );
        let json = FramesJson {
            vidprep_version: VERSION,
            sources: stream.source_records(),
            request: serde_json::to_value(&stream.plan).expect("a plan serialises"),
            export: serde_json::to_value(&self.spec).expect("an export serialises"),
            resolved: stream.resolved_json(),
            total_frames: stream.frame_count(),
            sampled,
            order: arranged,
            format: self.frames.format,
            frames: records,
            strip: files.strip,
            payload: files.payload,
            jsonl: files.jsonl,
            profile: self.applied.take(),
            follow_package: self.followed.take(),
            label: label_json,
            subtitles: subtitles_json,
            audio: audio_json,
            request_tokens: files.request_tokens,
            warnings: warnings.clone(),
        };
        if let Some(temp) = &temp {
            write_json(&temp.join("frames.json"), &json)?;
        } else {
            self.made = Some(MemoryFrames::new(
                self.spec.name(),
                serde_json::to_value(&json).expect("frames.json serialises"),
                images,
                &stream.source,
            )?);
        }
        Ok(ExportReport {
            name: self.spec.name().to_string(),
            kind: "frames",
            files: folder.into_iter().collect(),
            summary,
            frames: count,
            warnings,
        })
    }
}

fn encode_image(
    img: &RgbImage,
    format: ImageFormat,
    quality: u8,
) -> std::result::Result<Vec<u8>, image::ImageError> {
    let mut buf = Cursor::new(Vec::new());
    match format {
        ImageFormat::Jpg => image::codecs::jpeg::JpegEncoder::new_with_quality(&mut buf, quality)
            .encode_image(img)?,
        ImageFormat::Png => img.write_to(&mut buf, image::ImageFormat::Png)?,
    }
    Ok(buf.into_inner())
}

/// The captioned grid of every frame, in position order.
fn render_strip(thumbs: &[Option<RgbImage>], records: &[FrameRecord], columns: usize) -> RgbImage {
    let n = thumbs.len().max(1);
    let cols = if columns == 0 {
        n.min(4)
    } else {
        columns.min(n)
    };
    let rows = n.div_ceil(cols);
    let tile_w = thumbs
        .iter()
        .flatten()
        .map(|t| t.width())
        .max()
        .unwrap_or(1);
    let tile_h = thumbs
        .iter()
        .flatten()
        .map(|t| t.height())
        .max()
        .unwrap_or(1);
    let caption = ((tile_w as f32 / 16.0).clamp(12.0, 28.0)) as u32;
    let band = caption + caption / 2;
    let gap = 4;
    let width = cols as u32 * tile_w + (cols as u32 + 1) * gap;
    let height = rows as u32 * (tile_h + band) + (rows as u32 + 1) * gap;
    let mut strip = RgbImage::from_pixel(width, height, image::Rgb([255, 255, 255]));
    let font = crate::draw::font();
    for (i, (thumb, rec)) in thumbs.iter().zip(records).enumerate() {
        let (c, r) = ((i % cols) as u32, (i / cols) as u32);
        let x = gap + c * (tile_w + gap);
        let y = gap + r * (tile_h + band + gap);
        if let Some(t) = thumb {
            image::imageops::overlay(&mut strip, t, x as i64, y as i64);
        }
        let text = format!(
            "#{} t={:.2}s (frame {})",
            rec.position, rec.time_s, rec.source_frame
        );
        imageproc::drawing::draw_text_mut(
            &mut strip,
            image::Rgb([0, 0, 0]),
            x as i32,
            (y + tile_h + caption / 4) as i32,
            ab_glyph::PxScale::from(caption as f32),
            &font,
            &text,
        );
    }
    strip
}

/// The payload fragment for `api` with the images (in position order) as base64 and, after
/// them, a text part (`text`) and an audio part (`wav`,
/// a WAV file's bytes: OpenAI's `input_audio`, Gemini's `inline_data` of `audio/wav`;
/// Anthropic's Messages API takes no audio, which the plan's check refuses).
pub fn payload_with(
    api: Payload,
    mime: &str,
    images: &[Vec<u8>],
    text: Option<&str>,
    wav: Option<&[u8]>,
) -> serde_json::Value {
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    match api {
        Payload::OpenAi => {
            let mut parts: Vec<_> = images
                .iter()
                .map(|b| {
                    serde_json::json!({
                        "type": "image_url",
                        "image_url": {"url": format!("data:{mime};base64,{}", b64(b))}
                    })
                })
                .collect();
            if let Some(t) = text {
                parts.push(serde_json::json!({"type": "text", "text": t}));
            }
            if let Some(w) = wav {
                parts.push(serde_json::json!({
                    "type": "input_audio",
                    "input_audio": {"data": b64(w), "format": "wav"}
                }));
            }
            serde_json::json!({"role": "user", "content": parts})
        }
        Payload::Anthropic => {
            let mut parts: Vec<_> = images
                .iter()
                .map(|b| {
                    serde_json::json!({
                        "type": "image",
                        "source": {"type": "base64", "media_type": mime, "data": b64(b)}
                    })
                })
                .collect();
            if let Some(t) = text {
                parts.push(serde_json::json!({"type": "text", "text": t}));
            }
            serde_json::json!({"role": "user", "content": parts})
        }
        Payload::Gemini => {
            let mut parts: Vec<_> = images
                .iter()
                .map(|b| serde_json::json!({"inline_data": {"mime_type": mime, "data": b64(b)}}))
                .collect();
            if let Some(t) = text {
                parts.push(serde_json::json!({"text": t}));
            }
            if let Some(w) = wav {
                parts.push(serde_json::json!({
                    "inline_data": {"mime_type": "audio/wav", "data": b64(w)}
                }));
            }
            serde_json::json!({"role": "user", "parts": parts})
        }
    }
}

/// The frames of one `frames` export run with [`Destination::Memory`](crate::Destination::Memory).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct MemoryFrames {
    /// The export's name.
    pub name: String,
    /// What `frames.json` would hold (each image's `file` is the name it would have in the
    /// export's folder).
    pub frames_json: serde_json::Value,
    /// The number of images (positions, in the asked order; a frame shown twice is there
    /// twice).
    pub count: usize,
    /// Width of every image in pixels.
    pub width: u32,
    /// Height of every image in pixels.
    pub height: u32,
    /// The images, packed 8-bit RGB, row by row, one after the other: `count * height *
    /// width * 3` bytes (a `(count, height, width, 3)` array). The same pixels the image
    /// files would be encoded from: the decoded frame, scaled to `max_size` when asked,
    /// boxes drawn, converted to RGB with swscale's bicubic flags (as the ffmpeg CLI).
    pub pixels: Vec<u8>,
}

impl MemoryFrames {
    pub(crate) fn new(
        name: &str,
        frames_json: serde_json::Value,
        images: Vec<Option<image::RgbImage>>,
        source: &Path,
    ) -> Result<MemoryFrames> {
        let count = images.len();
        let (width, height) = images
            .iter()
            .flatten()
            .next()
            .map_or((0, 0), |i| (i.width(), i.height()));
        // An allocation the system refuses is an error, not an abort.
        let needed = count * width as usize * height as usize * 3;
        let mut pixels = Vec::new();
        pixels
            .try_reserve_exact(needed)
            .map_err(|_| Error::OverBudget {
                path: source.to_path_buf(),
                what: format!("export {name:?}: {count} frames of {width}x{height} RGB"),
                needed: needed as u64,
                pixels: false,
                limit: needed as u64,
                advice: "the system refused to allocate it (less memory is free than that); ask for fewer or smaller frames"
                    .into(),
            })?;
        for (p, image) in images.into_iter().enumerate() {
            let image = image.ok_or_else(|| {
                Error::corrupt(
                    source,
                    format!("at output position {p}"),
                    "this frame was not decoded",
                )
            })?;
            if (image.width(), image.height()) != (width, height) {
                return Err(Error::internal(format!(
                    "frames of export {name:?} differ in size: {}x{} at position {p}, \
                     {width}x{height} before",
                    image.width(),
                    image.height()
                )));
            }
            pixels.extend_from_slice(image.as_raw());
        }
        Ok(MemoryFrames {
            name: name.to_string(),
            frames_json,
            count,
            width,
            height,
            pixels,
        })
    }
}
