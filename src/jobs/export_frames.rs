//! Sampled frames for image-only models: picks frame indices with a named sampler (each
//! reproducing a toolkit's formula over the true frame count), puts them in the asked order,
//! reads only those frames (sparse seeking, in parallel), and writes them as images named with
//! their position and timestamp, `frames.json` (each file's source frame and pts), and
//! optionally a captioned strip, an API payload fragment with base64 images, or JSONL.

use std::collections::HashMap;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;
use image::RgbImage;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::fit::fit_within;
use crate::media::frame::{to_rgb_image, Converter};
use crate::media::input::VideoInput;
use crate::media::table::FrameTable;
use crate::output::{ensure_not_an_input, PendingFile};
use crate::overlay::{BoxesRequest, OverlayStage, SourceBoxes};
use crate::pipeline::{self, FrameSink, FrameStage, PipelineFrame, Progress};
use crate::sampling::{self, Arranged, FrameTimes, Order, Request, Sampled, Sampler};
use crate::sidecar::{SourceRecord, VERSION};
use crate::sparse::SparseSource;
use crate::stages::ScaleStage;
use crate::time::{decimal_text, Time};

/// Image file format of exported frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ImageFormat {
    Jpg,
    Png,
}

impl ImageFormat {
    pub fn extension(self) -> &'static str {
        match self {
            ImageFormat::Jpg => "jpg",
            ImageFormat::Png => "png",
        }
    }

    pub fn mime(self) -> &'static str {
        match self {
            ImageFormat::Jpg => "image/jpeg",
            ImageFormat::Png => "image/png",
        }
    }
}

impl std::str::FromStr for ImageFormat {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "jpg" | "jpeg" => Ok(ImageFormat::Jpg),
            "png" => Ok(ImageFormat::Png),
            other => Err(format!(
                "unknown image format {other:?}; expected jpg or png"
            )),
        }
    }
}

/// The API whose request format the payload follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Payload {
    /// A chat message with `image_url` parts holding data URLs.
    OpenAi,
    /// A message with `image` blocks holding base64 sources.
    Anthropic,
    /// A `contents` entry with `inline_data` parts.
    Gemini,
}

impl std::str::FromStr for Payload {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "openai" => Ok(Payload::OpenAi),
            "anthropic" => Ok(Payload::Anthropic),
            "gemini" => Ok(Payload::Gemini),
            other => Err(format!(
                "unknown payload {other:?}; expected openai, anthropic or gemini"
            )),
        }
    }
}

#[derive(Clone, Debug)]
pub struct FramesRequest {
    pub input: PathBuf,
    pub out_dir: PathBuf,
    pub request: Request,
    pub sampler: Sampler,
    pub allow_repeats: bool,
    pub order: Order,
    pub seed: u64,
    pub format: ImageFormat,
    /// JPEG quality (1-100).
    pub quality: u8,
    pub max_size: Option<(u32, u32)>,
    /// Write `strip.<ext>`: every frame in one grid, captioned, this many columns (0: auto).
    pub strip: Option<usize>,
    pub payload: Option<Payload>,
    /// Write `frames.jsonl`: one line per frame with its base64 data.
    pub jsonl: bool,
    /// Boxes to draw on the frames.
    pub boxes: Option<BoxesRequest>,
    /// Decoding threads (0: one per core).
    pub workers: usize,
}

impl FramesRequest {
    pub fn new(input: PathBuf, out_dir: PathBuf) -> FramesRequest {
        FramesRequest {
            input,
            out_dir,
            request: Request::Count(16),
            sampler: Sampler::Uniform,
            allow_repeats: false,
            order: Order::Ordered,
            seed: 0,
            format: ImageFormat::Jpg,
            quality: 90,
            max_size: None,
            strip: None,
            payload: None,
            jsonl: false,
            boxes: None,
            workers: 0,
        }
    }
}

/// One written frame, a line of `frames.json`.
#[derive(Clone, Debug, Serialize)]
pub struct FrameRecord {
    pub position: usize,
    pub file: String,
    /// Which input it came from (0: the video; 1: an inserted sequence).
    pub source: usize,
    /// Its index in that input, and its pts there.
    pub source_frame: usize,
    pub pts: i64,
    /// Its index in the processed stream it was sampled from (when that is not the source).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_frame: Option<usize>,
    /// Exact presentation time in the stream it was sampled from (seconds from its start).
    pub time: String,
    pub time_s: f64,
    pub width: u32,
    pub height: u32,
}

#[derive(Clone, Debug, Serialize)]
pub struct FramesExport {
    pub vidprep_version: &'static str,
    pub source: SourceRecord,
    /// The frame count the sampler used (every packet of the video stream).
    pub total_frames: usize,
    pub sampled: Sampled,
    pub order: Arranged,
    pub format: ImageFormat,
    pub frames: Vec<FrameRecord>,
    pub strip: Option<String>,
    pub payload: Option<String>,
    pub jsonl: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The video's frames as the samplers see them.
struct TableTimes<'a> {
    table: &'a FrameTable,
    fps: f64,
}

impl FrameTimes for TableTimes<'_> {
    fn total(&self) -> usize {
        self.table.len()
    }

    fn duration(&self) -> Time {
        self.table.end_time()
    }

    fn frame_shown_at(&self, t: Time) -> usize {
        if t.is_negative() {
            return 0;
        }
        self.table.shown_at(t).unwrap_or(self.table.len() - 1)
    }

    fn nominal_fps(&self) -> f64 {
        self.fps
    }
}

/// Picks the frames: the sampler's indices over the true frame count, then the order.
pub fn choose_frames(
    input: &Path,
    table: &FrameTable,
    nominal_fps: f64,
    request: &FramesRequest,
) -> Result<(Sampled, Arranged)> {
    let times = TableTimes {
        table,
        fps: nominal_fps,
    };
    let sampled = sampling::sample(
        &times,
        request.sampler,
        request.request,
        request.allow_repeats,
    )
    .map_err(|e| Error::request(input, e.to_string()))?;
    let arranged = sampling::arrange(&sampled.indices, request.order, request.seed);
    Ok((sampled, arranged))
}

/// Which frame number picks a frame for a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameKey {
    /// The frame's index in its source (sparse reading of one video).
    Source,
    /// The frame's index in the pipeline's output stream (a processed clip).
    Stream,
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

impl Default for FramesOutputSpec {
    fn default() -> Self {
        FramesOutputSpec {
            format: ImageFormat::Jpg,
            quality: 90,
            strip: None,
            payload: None,
            jsonl: false,
        }
    }
}

/// What a [`FramesSink`] wrote besides the images.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FramesFiles {
    pub strip: Option<String>,
    pub payload: Option<String>,
    pub jsonl: Option<String>,
}

/// Writes the frame of each position as an image (named with its position and timestamp),
/// keeping everything under temporary names until [`FramesSink::commit`].
pub struct FramesSink {
    out_dir: PathBuf,
    spec: FramesOutputSpec,
    key: FrameKey,
    /// Frame number -> the positions that show it.
    positions: HashMap<usize, Vec<usize>>,
    names: Vec<String>,
    records: Vec<Option<FrameRecord>>,
    files: Vec<Option<PendingFile>>,
    rgb: Converter,
    jpeg: crate::media::still::JpegWriter,
    /// Thumbnails for the strip, by position.
    thumbs: Option<(u32, Vec<Option<RgbImage>>)>,
}

impl FramesSink {
    /// `frames[p]` is the frame number (as `key` says) of position `p`, shown at `times[p]`
    /// (for the file name); `width` is the frames' width (for the strip's tiles).
    pub fn new(
        out_dir: &Path,
        spec: &FramesOutputSpec,
        key: FrameKey,
        frames: &[usize],
        times: &[Time],
        width: u32,
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
            out_dir: out_dir.to_path_buf(),
            spec: spec.clone(),
            key,
            positions,
            names,
            records: vec![None; n],
            files: (0..n).map(|_| None).collect(),
            rgb: Converter::to_format(ffmpeg_next::format::Pixel::RGB24),
            jpeg: crate::media::still::JpegWriter::new(spec.quality),
            thumbs: spec.strip.map(|_| (width.min(480), vec![None; n])),
        }
    }

    fn encode(&self, img: &RgbImage) -> std::result::Result<Vec<u8>, image::ImageError> {
        encode_image(img, self.spec.format, self.spec.quality)
    }

    /// Once every position has its frame: the images get their names, then the strip,
    /// payload and JSONL are written. Returns the records in position order.
    pub fn commit(mut self, source_name: &Path) -> Result<(Vec<FrameRecord>, FramesFiles)> {
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
        let mut written = Vec::with_capacity(records.len());
        for f in self.files.iter_mut() {
            written.push(f.take().expect("every position has a file").commit()?);
        }
        let read_all = || -> Result<Vec<Vec<u8>>> {
            written
                .iter()
                .map(|p| std::fs::read(p).map_err(|e| Error::io(p, e)))
                .collect()
        };
        let mut files = FramesFiles::default();
        if let (Some(columns), Some((_, thumbs))) = (self.spec.strip, self.thumbs.as_ref()) {
            let strip = render_strip(thumbs, &records, columns);
            let name = format!("strip.{}", self.spec.format.extension());
            let bytes = encode_image(&strip, self.spec.format, self.spec.quality)
                .map_err(|e| Error::Usage(format!("cannot encode the strip: {e}")))?;
            PendingFile::write_all(&self.out_dir.join(&name), &bytes)?;
            files.strip = Some(name);
        }
        if let Some(api) = self.spec.payload {
            let body = payload_json(api, self.spec.format.mime(), &read_all()?);
            PendingFile::write_all(
                &self.out_dir.join("payload.json"),
                (serde_json::to_string_pretty(&body).expect("json") + "\n").as_bytes(),
            )?;
            files.payload = Some("payload.json".into());
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
            PendingFile::write_all(&self.out_dir.join("frames.jsonl"), text.as_bytes())?;
            files.jsonl = Some("frames.jsonl".into());
        }
        Ok((records, files))
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

impl FrameSink for FramesSink {
    fn accept(&mut self, frame: &PipelineFrame) -> Result<()> {
        let number = match self.key {
            FrameKey::Source => frame.origin.index,
            FrameKey::Stream => frame.index,
        };
        let Some(positions) = self.positions.get(&number).cloned() else {
            return Ok(());
        };
        let (width, height) = (frame.image.width(), frame.image.height());
        // JPEG straight from YUV with libavcodec; PNG (and the strip) from RGB.
        let rgb =
            if self.spec.format == ImageFormat::Png || self.thumbs.is_some() {
                Some(to_rgb_image(&frame.image, &mut self.rgb).map_err(|e| {
                    Error::Usage(format!("cannot convert frame {number} to RGB: {e}"))
                })?)
            } else {
                None
            };
        let bytes = match (self.spec.format, &rgb) {
            (ImageFormat::Jpg, _) => self
                .jpeg
                .encode(&frame.image)
                .map_err(|e| Error::Usage(format!("cannot encode frame {number} as JPEG: {e}")))?,
            (ImageFormat::Png, Some(rgb)) => self
                .encode(rgb)
                .map_err(|e| Error::Usage(format!("cannot encode frame {number} as PNG: {e}")))?,
            (ImageFormat::Png, None) => unreachable!("RGB made above for PNG"),
        };
        for p in positions {
            let path = self.out_dir.join(&self.names[p]);
            let pending = PendingFile::new(&path)?;
            std::fs::write(pending.path(), &bytes).map_err(|e| Error::io(&path, e))?;
            self.files[p] = Some(pending);
            self.records[p] = Some(FrameRecord {
                position: p,
                file: self.names[p].clone(),
                source: frame.origin.source,
                source_frame: frame.origin.index,
                pts: frame.origin.pts,
                stream_frame: (self.key == FrameKey::Stream).then_some(frame.index),
                time: decimal_text(frame.time),
                time_s: frame.time.as_secs_f64(),
                width,
                height,
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

/// The payload fragment for `api` with the images (in position order) as base64.
pub fn payload_json(api: Payload, mime: &str, images: &[Vec<u8>]) -> serde_json::Value {
    let b64 = |b: &Vec<u8>| base64::engine::general_purpose::STANDARD.encode(b);
    match api {
        Payload::OpenAi => serde_json::json!({
            "role": "user",
            "content": images.iter().map(|b| serde_json::json!({
                "type": "image_url",
                "image_url": {"url": format!("data:{mime};base64,{}", b64(b))}
            })).collect::<Vec<_>>()
        }),
        Payload::Anthropic => serde_json::json!({
            "role": "user",
            "content": images.iter().map(|b| serde_json::json!({
                "type": "image",
                "source": {"type": "base64", "media_type": mime, "data": b64(b)}
            })).collect::<Vec<_>>()
        }),
        Payload::Gemini => serde_json::json!({
            "role": "user",
            "parts": images.iter().map(|b| serde_json::json!({
                "inline_data": {"mime_type": mime, "data": b64(b)}
            })).collect::<Vec<_>>()
        }),
    }
}

/// Exports the sampled frames of `request.input` into `request.out_dir`.
pub fn export_frames(request: &FramesRequest, progress: &mut dyn Progress) -> Result<FramesExport> {
    crate::media::table::retry_on_table_mismatch(|| export_frames_once(request, progress))
}

fn export_frames_once(
    request: &FramesRequest,
    progress: &mut dyn Progress,
) -> Result<FramesExport> {
    if !(1..=100).contains(&request.quality) {
        return Err(Error::Usage(format!(
            "--quality {} is outside 1..100",
            request.quality
        )));
    }
    let input = VideoInput::open(&request.input)?;
    let info = input.video.clone();
    drop(input);
    let table = FrameTable::for_file(&request.input)?;
    let nominal_fps = info
        .best_frame_rate()
        .map(|r| r.as_f64())
        .unwrap_or_else(|| table.len() as f64 / table.end_time().as_secs_f64().max(1e-9));
    let (sampled, arranged) = choose_frames(&request.input, &table, nominal_fps, request)?;
    ensure_not_an_input(&request.out_dir.join("frames.json"), &[&request.input])?;
    std::fs::create_dir_all(&request.out_dir).map_err(|e| Error::io(&request.out_dir, e))?;

    let times: Vec<Time> = arranged.indices.iter().map(|&i| table.time(i)).collect();
    // Frames come out of the decoder upright at their stored size; images are what players
    // show: square pixels (non-square ones scaled by the SAR), within `max_size`.
    let (w, h) = info.upright_stored_size();
    let (dw, dh) = info.displayed_size();
    let target = request
        .max_size
        .map_or((dw, dh), |(mw, mh)| fit_within(dw, dh, mw, mh));
    let size = Some(target);
    let spec = FramesOutputSpec {
        format: request.format,
        quality: request.quality,
        strip: request.strip,
        payload: request.payload,
        jsonl: request.jsonl,
    };
    let mut sink = FramesSink::new(
        &request.out_dir,
        &spec,
        FrameKey::Source,
        &arranged.indices,
        &times,
        target.0,
    );
    let workers = if request.workers == 0 {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    } else {
        request.workers
    };
    let mut source =
        SparseSource::start(&request.input, table.clone(), &arranged.indices, workers)?;
    let mut scale = size.filter(|s| *s != (w, h)).map(ScaleStage::new);
    let mut overlay = match &request.boxes {
        Some(b) => {
            let boxes = Arc::new(SourceBoxes::load(b, &table, w, h)?);
            b.draw
                .clone()
                .map(|style| OverlayStage::new(boxes, 0, style))
        }
        None => None,
    };
    {
        let mut stages: Vec<&mut dyn FrameStage> = Vec::new();
        if let Some(s) = scale.as_mut() {
            stages.push(s);
        }
        if let Some(o) = overlay.as_mut() {
            stages.push(o);
        }
        pipeline::run(
            &mut source,
            &mut stages,
            &mut [&mut sink as &mut dyn FrameSink],
            progress,
        )?;
    }
    let (records, files) = sink.commit(&request.input)?;
    let export = FramesExport {
        vidprep_version: VERSION,
        source: SourceRecord::new(&request.input, &info, &table, true),
        total_frames: table.len(),
        sampled,
        order: arranged,
        format: request.format,
        frames: records,
        strip: files.strip,
        payload: files.payload,
        jsonl: files.jsonl,
        warnings: Vec::new(),
    };
    let text = serde_json::to_string_pretty(&export).expect("export serializes") + "\n";
    PendingFile::write_all(&request.out_dir.join("frames.json"), text.as_bytes())?;
    Ok(export)
}
