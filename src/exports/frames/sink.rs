//! The image sink of a frames export: each sampled frame written as a JPEG or PNG file named
//! with its position and time (or kept as RGB pixels in memory), its record made, and, once
//! every position has its frame, the strip, payload and JSONL written beside the images.

use std::collections::HashMap;
use std::io::Cursor;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use image::RgbImage;
use serde::Serialize;

use super::payload::{payload_with, PayloadExtras};
use super::strip::{render_strip, thumbnail};
use crate::error::FfmpegError;
use crate::error::{Error, Result};
use crate::frames::overlay::{boxes_on, SourceBoxes};
use crate::frames::pipeline::{FrameSink, PipelineFrame};
use crate::media::{Converter, Picture, PixelFormat};
use crate::plan::{FrameLabel, ImageFormat, Payload};
use crate::records::frames_json::FrameRecord;
use crate::records::sidecar::write_json;
use crate::vocab::time::{decimal_text, Time};

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
    /// The token of the call the images are written for: an interrupt stops between files.
    cancel: crate::call::cancel::CancelToken,
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
            rgb: Converter::to_format(PixelFormat::RGB24),
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
            cancel: Default::default(),
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
                self.rgb = Converter::to_format_bilinear(PixelFormat::RGB24)
            }
        }
        self
    }

    /// Stops writing once `cancel` (the call's token) is cancelled.
    pub fn stopped_by(mut self, cancel: &crate::call::cancel::CancelToken) -> FramesSink {
        self.cancel = cancel.clone();
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
            // vLLM is told each frame's index in the source (its time marker is index / fps).
            let mut video = self.extras.video.clone();
            if let Some(v) = video.as_mut() {
                if let Some(r) = records.iter().find(|r| r.source != 0) {
                    return Err(Error::request(
                        &self.source,
                        format!(
                            "frame {} (position {}) is from the inserted sequence, which the vllm payload cannot index in the source: use the openai payload for an insertion",
                            r.source_frame, r.position
                        ),
                    ));
                }
                v.frames_indices = records.iter().map(|r| r.source_frame).collect();
            }
            let audio = match &self.extras.audio {
                Some(p) => Some(std::fs::read(p).map_err(|e| Error::io(p, e))?),
                None => None,
            };
            let body = payload_with(
                api,
                self.spec.format.mime(),
                &read_all()?,
                &self.extras.markers.as_ref().map_or_else(Vec::new, |m| {
                    m.before_each(&records.iter().map(|r| r.time_s).collect::<Vec<_>>())
                }),
                self.extras.text.as_deref(),
                audio.as_deref(),
                video.as_ref(),
            );
            write_json(&out_dir.join("payload.json"), &body)?;
            files.payload = Some("payload.json".into());
            let sizes: Vec<(u32, u32)> = records.iter().map(|r| (r.width, r.height)).collect();
            let to = match api {
                Payload::OpenAi => Some(crate::profiles::api::Api::OpenAi),
                Payload::Anthropic => Some(crate::profiles::api::Api::Anthropic),
                Payload::Gemini => Some(crate::profiles::api::Api::Gemini),
                // A vLLM server's tokens are its model's processor's.
                Payload::Vllm => None,
            };
            files.request_tokens = to.map(|to| crate::profiles::api::request_tokens(to, &sizes));
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
fn frame_failure(source: &Path, number: usize, doing: &str, bytes: u64, e: FfmpegError) -> Error {
    if e.is_out_of_memory() {
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
                _ => source.to_rgb_image(&mut self.rgb).map_err(failure)?,
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
            // A full-range 4:2:0 source's own picture is already JPEG's levels (ffmpeg encodes
            // it as it is); the pipeline's limited-range picture would move them.
            (ImageFormat::Jpg, _) => self.jpeg.encode(jpeg_source(frame)).map_err(|e| {
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
            if self.cancel.is_cancelled() {
                return Err(Error::Cancelled);
            }
            if let Some(out_dir) = &self.out_dir {
                let path = out_dir.join(&self.names[p]);
                std::fs::write(&path, &bytes).map_err(|e| Error::io(&path, e))?;
            }
            if let (Some(kept), Some(rgb)) = (self.kept.as_mut(), rgb.as_ref()) {
                let bytes = rgb.as_raw().len();
                let mut copy = crate::media::frame::try_buffer(bytes).ok_or_else(|| {
                    let enomem = FfmpegError::from_errno(crate::error::ENOMEM);
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
                thumbs[p] = Some(thumbnail(rgb, *tile_w));
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}

/// `img` encoded as `format` (JPEG at `quality`), as the image files and the strip are.
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

/// The picture a JPEG is encoded from: a full-range 8-bit 4:2:0 source's own picture
/// (upright, of the pipeline's size), else the pipeline's.
fn jpeg_source(frame: &crate::frames::pipeline::PipelineFrame) -> &Picture {
    frame
        .rgb
        .as_ref()
        .filter(|own| {
            (own.width(), own.height()) == (frame.image.width(), frame.image.height())
                && matches!(own.format(), PixelFormat::YUVJ420P | PixelFormat::YUV420P)
                && own.is_full_range_yuv()
        })
        .unwrap_or(&frame.image)
}
