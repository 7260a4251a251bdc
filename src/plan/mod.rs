//! The plan: one declarative, serde-typed description of everything vidprep makes from one
//! source (its span, decision point, boxes, needle insertion and exports). A manifest line is
//! a plan in JSON; every command builds a plan (or many) from its flags; one executor
//! ([`crate::exec`]) runs any plan. So the same request gives the same files whichever door
//! it comes in by.
//!
//! Deserialisation is strict: unknown fields are refused (a misspelt field is never ignored),
//! enum-like values are checked against their names, and [`Plan::check`] validates what needs
//! no media (exactly one insertion position, unique export names, ranges of numbers, ...).
//! Defaults live here, in one place.

pub mod manifest;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::annotations::ReadOptions;
pub use crate::annotations::{Fill, Format, KeyKind, Units};
pub use crate::draw::Rgb;
pub use crate::fit::Fit;
pub use crate::media::source::FrameRate;
use crate::overlay::{BoxesRequest, Style};
use crate::sampling::Request;
pub use crate::sampling::{Order, Sampler};
use crate::time::TimeSpec;

/// One item: a source and what to make of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// The item's name: its outputs go to `OUT_DIR/<id>/` in a batch. A file name.
    pub id: String,
    /// The source: a video file, an image sequence (a MOT or GOT-10k sequence folder, any
    /// folder of images, a pattern like `dir/%06d.jpg`) or an http(s) URL (see
    /// `docs/sources.md`).
    pub source: PathBuf,
    /// The frame rate of an image sequence that has none of its own (a generic folder or a
    /// pattern): `25`, `29.97` or `"30000/1001"`. Refused for a video file or a URL, and for a
    /// MOT/GOT-10k sequence whose own rate differs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_fps: Option<FrameRate>,
    /// The span of the source to keep, half-open `[start, end)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<SpanSpec>,
    /// Start of the span (the same as `span.start`; give one form or the other).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<TimeSpec>,
    /// End of the span (the same as `span.end`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<TimeSpec>,
    /// The decision point, relative to the clip: frames at or after it are dropped and the
    /// output (video and audio) ends there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<TimeSpec>,
    /// Annotations of the source: a file path, or an object with the path and options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boxes: Option<BoxesSpec>,
    /// Options for `boxes` when it is given as a bare path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BoxOptions>,
    /// A GOT-10k sequence inserted into the clip.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insert: Option<InsertSpec>,
    /// What to write (default: one clip).
    #[serde(default = "default_exports")]
    pub exports: Vec<ExportSpec>,
    /// Treat damaged input (packets that do not decode, frames decoded with errors) as an
    /// error instead of decoding what can be decoded, as ffmpeg does, and reporting it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub strict: bool,
    /// Why this item exists, as its proposer wrote it (`vidprep detect` puts the detector and
    /// its scores here). Carried, never acted on: it changes no output and is left out of
    /// the form `--resume` compares.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<serde_json::Value>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_true(b: &bool) -> bool {
    *b
}

fn yes() -> bool {
    true
}

fn default_exports() -> Vec<ExportSpec> {
    vec![ExportSpec::Clip(ClipExport::default())]
}

impl Plan {
    /// The exports of a plan that names none: one clip.
    pub fn default_exports() -> Vec<ExportSpec> {
        default_exports()
    }
}

/// A half-open span `[start, end)`; either end may be left out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpanSpec {
    /// The first source frame kept: a frame, seconds or a timecode (not a percentage).
    /// `None`: from the start of the source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<TimeSpec>,
    /// Where the kept part ends, excluded: a frame, seconds or a timecode (not a
    /// percentage). `None`: to the end of the source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<TimeSpec>,
}

/// How annotation boxes are read and drawn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoxOptions {
    /// The format (default: detected).
    #[serde(default)]
    pub format: Format,
    /// Frames between keys: `linear`, `hold` or `none`.
    #[serde(default)]
    pub fill: Fill,
    /// Draw the boxes on the frames (default). `false` only carries them into the sidecars.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub draw: bool,
    /// Draw a label tab above each box (default).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub labels: bool,
    /// Line width in pixels (default: scaled to the frame).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thickness: Option<u32>,
    /// One colour for every box (`RRGGBB` or a name) instead of one per track.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<crate::draw::Rgb>,
    /// MOT: drop boxes whose confidence is below this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_confidence: Option<f64>,
    /// V-STaR: the item (vid) to read from a benchmark file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item: Option<String>,
    /// `time` or `frame` keys, when a file has both.
    #[serde(default, skip_serializing_if = "is_default")]
    pub keys: KeyKind,
    /// Plain/Waymo coordinates: `auto`, `pixels` or `normalized`.
    #[serde(default, skip_serializing_if = "is_default")]
    pub units: Units,
    /// Waymo: the camera to read when the file has several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub camera: Option<String>,
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

impl Default for BoxOptions {
    fn default() -> Self {
        BoxOptions {
            format: Format::Auto,
            fill: Fill::Linear,
            draw: true,
            labels: true,
            thickness: None,
            color: None,
            min_confidence: None,
            item: None,
            keys: KeyKind::Time,
            units: Units::Auto,
            camera: None,
        }
    }
}

/// The source's annotations: `"boxes": "gt.txt"` or `"boxes": {"path": "gt.txt", ...options}`.
#[derive(Clone, Debug, PartialEq)]
pub struct BoxesSpec {
    /// The annotation file or folder (relative paths in a manifest are taken from the
    /// manifest's folder).
    pub path: PathBuf,
    /// Options given with the path (`None`: a bare path).
    pub options: Option<BoxOptions>,
}

impl Serialize for BoxesSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct WithPath<'a> {
            path: &'a Path,
            #[serde(flatten)]
            options: &'a BoxOptions,
        }
        match &self.options {
            None => self.path.serialize(s),
            Some(options) => WithPath {
                path: &self.path,
                options,
            }
            .serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for BoxesSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Full {
            path: PathBuf,
            #[serde(default)]
            format: Format,
            #[serde(default)]
            fill: Fill,
            #[serde(default = "yes")]
            draw: bool,
            #[serde(default = "yes")]
            labels: bool,
            #[serde(default)]
            thickness: Option<u32>,
            #[serde(default)]
            color: Option<crate::draw::Rgb>,
            #[serde(default)]
            min_confidence: Option<f64>,
            #[serde(default)]
            item: Option<String>,
            #[serde(default)]
            keys: KeyKind,
            #[serde(default)]
            units: Units,
            #[serde(default)]
            camera: Option<String>,
        }
        struct BoxesVisitor;
        impl<'de> serde::de::Visitor<'de> for BoxesVisitor {
            type Value = BoxesSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(
                    f,
                    "an annotation file path, or an object with \"path\" and options"
                )
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<BoxesSpec, E> {
                if v.is_empty() {
                    return Err(E::custom("the annotation path is empty"));
                }
                Ok(BoxesSpec {
                    path: PathBuf::from(v),
                    options: None,
                })
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<BoxesSpec, A::Error> {
                let f = Full::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(BoxesSpec {
                    path: f.path,
                    options: Some(BoxOptions {
                        format: f.format,
                        fill: f.fill,
                        draw: f.draw,
                        labels: f.labels,
                        thickness: f.thickness,
                        color: f.color,
                        min_confidence: f.min_confidence,
                        item: f.item,
                        keys: f.keys,
                        units: f.units,
                        camera: f.camera,
                    }),
                })
            }
        }
        d.deserialize_any(BoxesVisitor)
    }
}

/// Where and how a GOT-10k sequence goes into the clip.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InsertSpec {
    /// The sequence folder (JPEG frames, `groundtruth.txt`, `meta_info.ini`).
    pub sequence: PathBuf,
    /// Before the clip frame at this time, frame or percentage (`100%` appends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<TimeSpec>,
    /// Or at a seeded-random frame boundary of the clip (reproducible).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// How the sequence's frames fit the clip's frame.
    #[serde(default)]
    pub fit: Fit,
    /// Draw the needle's boxes (for inspection).
    #[serde(default, skip_serializing_if = "is_false")]
    pub overlay: bool,
}

/// Where the needle goes, once checked.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Position {
    /// Before the clip frame at this time/frame/percentage (`100%` or the frame count appends).
    At(TimeSpec),
    /// Uniformly over the clip's frame boundaries `0..=frames`, reproducibly from this seed.
    Seed(u64),
}

impl InsertSpec {
    /// The position; `check` guarantees exactly one of `at` and `seed`.
    pub fn position(&self) -> Position {
        match (self.at, self.seed) {
            (Some(at), _) => Position::At(at),
            (None, Some(seed)) => Position::Seed(seed),
            (None, None) => Position::Seed(0),
        }
    }
}

/// One output of an item. The registry of export kinds: adding a kind is a variant here, a
/// file in `src/exports/` and one line in `exports::maker`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
#[non_exhaustive]
pub enum ExportSpec {
    /// The processed clip (`NAME.mp4` + `NAME.json`).
    Clip(ClipExport),
    /// The clip within a resolution box and a Base64 budget, for video models.
    Video(VideoExport),
    /// Sampled frames for image models (`NAME/`).
    Frames(FramesExport),
    /// A small every-frame proxy for people to scrub (`NAME.mp4` + `NAME.json`): what
    /// `vidprep review` shows to move decision points frame-exactly.
    Preview(PreviewExport),
}

impl ExportSpec {
    /// The kind's name (`clip`, `video`, `frames`).
    pub fn kind(&self) -> &'static str {
        match self {
            ExportSpec::Clip(_) => "clip",
            ExportSpec::Video(_) => "video",
            ExportSpec::Frames(_) => "frames",
            ExportSpec::Preview(_) => "preview",
        }
    }

    /// The export's name (default: its kind): the base name of its files.
    pub fn name(&self) -> &str {
        let given = match self {
            ExportSpec::Clip(c) => c.name.as_deref(),
            ExportSpec::Video(v) => v.name.as_deref(),
            ExportSpec::Frames(f) => f.name.as_deref(),
            ExportSpec::Preview(p) => p.name.as_deref(),
        };
        given.unwrap_or(self.kind())
    }
}

/// Which boxes file to write beside an output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BoxesOut {
    /// `NAME.boxes.json`: vidprep's own annotation JSON.
    Vidprep,
    /// `NAME.vstar.json`: V-STaR items (for an insertion: the needle's item).
    Vstar,
}

impl std::str::FromStr for BoxesOut {
    type Err = String;
    fn from_str(s: &str) -> Result<BoxesOut, String> {
        match s {
            "vidprep" => Ok(BoxesOut::Vidprep),
            "vstar" => Ok(BoxesOut::Vstar),
            other => Err(format!(
                "unknown boxes output format {other:?}; expected vidprep or vstar"
            )),
        }
    }
}

/// A clip: the processed stream as H.264 (+AAC) in MP4/MOV/MKV.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClipExport {
    /// The base name of the export's files, unique within the item (default: `clip`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// x264 CRF (0-51); default from the run (18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crf: Option<f32>,
    /// x264 preset; default from the run (`medium`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// Keep the audio (AAC); default from the run (yes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audio: Option<bool>,
    /// Stream-copy whole GOPs instead of re-encoding (fast; the span snaps to keyframes).
    #[serde(default, skip_serializing_if = "is_false")]
    pub copy: bool,
    /// Also write the output's boxes beside it (default for an insertion: `vstar`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boxes_out: Option<BoxesOut>,
    /// The container: `mp4` (default), `mov` or `mkv`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    /// Smart encode: copy every whole GOP of an H.264 source untouched and re-encode only the
    /// partial GOPs at the edges (and an inserted needle), as one H.264 stream with the same
    /// frames. Falls back to a full encode, saying why in the sidecar, where it cannot apply.
    #[serde(default, skip_serializing_if = "is_false")]
    pub smart: bool,
    /// After writing, decode the output and compare every frame with the frame it should be:
    /// copied frames bit-identical, re-encoded ones at least 40 dB PSNR. A mismatch fails.
    #[serde(default, skip_serializing_if = "is_false")]
    pub verify: bool,
}

/// A capped video for video-native models.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VideoExport {
    /// The base name of the export's files, unique within the item (default: `video`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Largest width x height (aspect kept, never upscaled).
    #[serde(default = "default_max_video")]
    pub max_size: Size,
    /// Largest Base64 text of the file.
    #[serde(default = "default_budget")]
    pub max_base64_bytes: u64,
    /// Also write `NAME.b64`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub base64: bool,
    /// x264 preset; default from the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// Keep the audio; default from the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audio: Option<bool>,
    /// Re-encode even a file that already is a standard model input within the caps.
    #[serde(default, skip_serializing_if = "is_false")]
    pub reencode: bool,
    /// Also write the output's boxes beside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boxes_out: Option<BoxesOut>,
}

impl Default for VideoExport {
    fn default() -> Self {
        VideoExport {
            name: None,
            max_size: default_max_video(),
            max_base64_bytes: default_budget(),
            base64: false,
            preset: None,
            audio: None,
            reencode: false,
            boxes_out: None,
        }
    }
}

/// A preview for people: every frame of the processed stream, small, quick to seek.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreviewExport {
    /// The base name of the export's files, unique within the item (default: `preview`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Largest width x height (aspect kept, never upscaled).
    #[serde(default = "default_max_preview")]
    pub max_size: Size,
    /// x264 CRF (0-51).
    #[serde(default = "default_preview_crf")]
    pub crf: f32,
    /// Largest keyframe interval in frames: a browser seeks to any frame by decoding at most
    /// this many.
    #[serde(default = "default_preview_gop")]
    pub gop: u32,
}

impl Default for PreviewExport {
    fn default() -> Self {
        PreviewExport {
            name: None,
            max_size: default_max_preview(),
            crf: default_preview_crf(),
            gop: default_preview_gop(),
        }
    }
}

fn default_max_preview() -> Size {
    Size(480, 270)
}

fn default_preview_crf() -> f32 {
    26.0
}

fn default_preview_gop() -> u32 {
    10
}

fn default_max_video() -> Size {
    Size(1920, 1280)
}

fn default_budget() -> u64 {
    10_000_000
}

/// Sampled frames for image-only models.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FramesExport {
    /// The name of the export's folder and files, unique within the item (default:
    /// `frames`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `N` frames (default 16 when `fps` is not given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<usize>,
    /// Or `F` frames per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fps: Option<f64>,
    /// With `fps`: at most this many frames (uniform beyond: V-STaR's protocol).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_frames: Option<usize>,
    /// Which toolkit's formula picks the frames.
    #[serde(default)]
    pub sampler: Sampler,
    /// Let the formula repeat frames where the toolkit would.
    #[serde(default, skip_serializing_if = "is_false")]
    pub allow_repeats: bool,
    /// `ordered`, `shuffled`, `reversed` or `last`.
    #[serde(default)]
    pub order: Order,
    /// Seed of the shuffled order.
    #[serde(default, skip_serializing_if = "is_default")]
    pub seed: u64,
    /// `jpg` or `png`.
    #[serde(default)]
    pub format: ImageFormat,
    /// JPEG quality, 1-100.
    #[serde(default = "default_quality")]
    pub quality: u8,
    /// Largest width x height of the images (aspect kept, never upscaled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_size: Option<Size>,
    /// A captioned grid of every frame: `true`, or a column count.
    #[serde(default, skip_serializing_if = "is_default")]
    pub strip: Strip,
    /// An API payload fragment with the images as Base64: `openai`, `anthropic`, `gemini`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Payload>,
    /// `frames.jsonl`: one line per image with its Base64 data.
    #[serde(default, skip_serializing_if = "is_false")]
    pub jsonl: bool,
    /// A model profile (`qwen3-vl`, ...: `docs/profiles.md`): the frames, sizes and pixels
    /// that model's own preprocessing gives it. It replaces `sampler` and `max_size`;
    /// `count` / `fps` are the package's `nframes` / `fps`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The profile's other options by the package's names (`min_pixels`, `video_start`, ...).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub profile_options: std::collections::BTreeMap<String, f64>,
}

fn default_quality() -> u8 {
    90
}

impl Default for FramesExport {
    fn default() -> Self {
        FramesExport {
            name: None,
            count: None,
            fps: None,
            max_frames: None,
            sampler: Sampler::default(),
            allow_repeats: false,
            order: Order::Ordered,
            seed: 0,
            format: ImageFormat::Jpg,
            quality: default_quality(),
            max_size: None,
            strip: Strip::default(),
            payload: None,
            jsonl: false,
            profile: None,
            profile_options: Default::default(),
        }
    }
}

impl FramesExport {
    /// What the profile is asked (count, fps and its options).
    pub(crate) fn profile_request(&self) -> crate::profiles::ProfileRequest {
        crate::profiles::ProfileRequest {
            count: self.count,
            fps: self.fps,
            options: self.profile_options.clone(),
        }
    }

    /// What to sample: `count`, or `fps` with its limit; 16 frames by default.
    pub fn request(&self) -> Request {
        match (self.count, self.fps) {
            (_, Some(fps)) => Request::Fps {
                fps,
                max_frames: self.max_frames,
            },
            (Some(n), None) => Request::Count(n),
            (None, None) => Request::Count(16),
        }
    }
}

/// The strip option: off, or on with a column count (0: up to 4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Strip(pub Option<usize>);

impl Serialize for Strip {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            None => s.serialize_bool(false),
            Some(0) => s.serialize_bool(true),
            Some(n) => s.serialize_u64(n as u64),
        }
    }
}

impl<'de> Deserialize<'de> for Strip {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Strip;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(f, "true, false or a column count")
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Strip, E> {
                Ok(Strip(v.then_some(0)))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Strip, E> {
                if v > 64 {
                    return Err(E::custom(format!(
                        "a strip of {v} columns is too wide (at most 64)"
                    )));
                }
                Ok(Strip(Some(v as usize)))
            }
        }
        d.deserialize_any(V)
    }
}

/// A `WIDTHxHEIGHT` size, both at least 2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size(pub u32, pub u32);

impl std::str::FromStr for Size {
    type Err = String;
    fn from_str(s: &str) -> Result<Size, String> {
        crate::fit::parse_size(s).map(|(w, h)| Size(w, h))
    }
}

impl std::fmt::Display for Size {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{}", self.0, self.1)
    }
}

crate::textual::serde_as_text!(Size);

/// Image file format of exported frames.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ImageFormat {
    /// JPEG (`jpg`; `jpeg` is accepted too), at the export's `quality`.
    #[default]
    Jpg,
    /// PNG (`png`), lossless.
    Png,
}

impl ImageFormat {
    /// The file extension.
    pub fn extension(self) -> &'static str {
        match self {
            ImageFormat::Jpg => "jpg",
            ImageFormat::Png => "png",
        }
    }

    /// The MIME type.
    pub fn mime(self) -> &'static str {
        match self {
            ImageFormat::Jpg => "image/jpeg",
            ImageFormat::Png => "image/png",
        }
    }
}

impl std::fmt::Display for ImageFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.extension())
    }
}

impl std::str::FromStr for ImageFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "jpg" | "jpeg" => Ok(ImageFormat::Jpg),
            "png" => Ok(ImageFormat::Png),
            other => Err(format!(
                "unknown image format {other:?}; expected jpg or png"
            )),
        }
    }
}

crate::textual::serde_as_text!(ImageFormat);

/// The API whose request format the payload follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Payload {
    /// A chat message with `image_url` parts holding data URLs.
    OpenAi,
    /// A message with `image` blocks holding base64 sources.
    Anthropic,
    /// A `contents` entry with `inline_data` parts.
    Gemini,
}

impl std::fmt::Display for Payload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Payload::OpenAi => "openai",
            Payload::Anthropic => "anthropic",
            Payload::Gemini => "gemini",
        })
    }
}

impl std::str::FromStr for Payload {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
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

crate::textual::serde_as_text!(Payload);

/// Names an export may not have (they are taken by files every item folder holds).
const RESERVED_EXPORT_NAMES: [&str; 2] = ["item", "report"];

/// Checks that `id` can name a folder: not empty, no slashes or control characters, not
/// starting with a dot, and short enough for file systems.
pub fn validate_id(id: &str) -> Result<(), String> {
    if id.is_empty() {
        return Err("the id is empty".into());
    }
    if id.starts_with('.') {
        return Err(format!(
            "id {id:?} may not start with '.' (it must be usable as a file name)"
        ));
    }
    if id.chars().any(|c| c == '/' || c == '\\' || c.is_control()) {
        return Err(format!(
            "id {id:?} must be usable as a file name (no slashes or control characters)"
        ));
    }
    if id.len() > 200 {
        return Err(format!(
            "id is {} bytes long; at most 200 bytes (it names a folder)",
            id.len()
        ));
    }
    if id.starts_with("report.") || id.starts_with("report-") || id == "report" {
        return Err(format!(
            "id {id:?} is reserved: the batch report is written beside the item folders"
        ));
    }
    Ok(())
}

impl Plan {
    /// A plan for `source` with no span, no boxes and the given exports.
    pub fn new(
        id: impl Into<String>,
        source: impl Into<PathBuf>,
        exports: Vec<ExportSpec>,
    ) -> Plan {
        Plan {
            id: id.into(),
            source: source.into(),
            source_fps: None,
            span: None,
            start: None,
            end: None,
            decision: None,
            boxes: None,
            annotations: None,
            insert: None,
            exports,
            strict: false,
            evidence: None,
        }
    }

    /// The span's start and end, from whichever form was used.
    pub fn span(&self) -> (Option<TimeSpec>, Option<TimeSpec>) {
        match &self.span {
            Some(s) => (s.start, s.end),
            None => (self.start, self.end),
        }
    }

    /// The boxes options in effect (from `boxes` as an object, else `annotations`, else the
    /// defaults).
    pub fn box_options(&self) -> BoxOptions {
        self.boxes
            .as_ref()
            .and_then(|b| b.options.clone())
            .or_else(|| self.annotations.clone())
            .unwrap_or_default()
    }

    /// The boxes request for the annotation readers, if the plan has boxes.
    pub fn boxes_request(&self) -> Option<BoxesRequest> {
        let b = self.boxes.as_ref()?;
        let o = self.box_options();
        Some(BoxesRequest {
            path: b.path.clone(),
            format: o.format,
            read: ReadOptions {
                min_confidence: o.min_confidence,
                item: o.item.clone(),
                prefer_keys: o.keys,
                units: o.units,
                camera: o.camera.clone(),
                frame_count: None,
                boxes_only: false,
            },
            fill: o.fill,
            draw: o.draw.then(|| Style {
                thickness: o.thickness,
                color: o.color.map(|c| (c.0, c.1, c.2)),
                labels: o.labels,
            }),
        })
    }

    /// Joins relative paths (source, boxes, sequence) to `base` (a manifest's folder); a URL
    /// source (anything starting `scheme:` that is not a file there) stays as it is.
    pub fn resolve_paths(&mut self, base: &Path) {
        let join = |p: &mut PathBuf| {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        };
        // A URL (or what looks like one: its error names the scheme) is not a relative path.
        let url_like =
            crate::media::source::has_scheme(&self.source) && !base.join(&self.source).exists();
        if !url_like {
            join(&mut self.source);
        }
        if let Some(b) = self.boxes.as_mut() {
            join(&mut b.path);
        }
        if let Some(i) = self.insert.as_mut() {
            join(&mut i.sequence);
        }
    }

    /// The local files and folders the plan reads (never to be written): the source (an
    /// image sequence's folder; nothing for a URL), boxes and needle.
    pub fn inputs(&self) -> Vec<PathBuf> {
        let mut inputs = crate::media::source::input_paths(&self.source);
        if let Some(b) = &self.boxes {
            inputs.push(b.path.clone());
        }
        if let Some(i) = &self.insert {
            inputs.push(i.sequence.clone());
        }
        inputs
    }

    /// The plan in its one canonical form: the span's ends at the top level, the box options
    /// with the boxes (a bare path when they are all defaults), and every encoding export's
    /// CRF, preset and audio filled in from `defaults`. The same request normalises to the
    /// same plan whichever door it came in by (a command, a manifest line, the library):
    /// sidecars record this form and `--resume` hashes it.
    pub fn normalized(&self, defaults: &crate::media::encode::EncodeSettings) -> Plan {
        crate::tally::count(crate::tally::Event::Normalise);
        let mut plan = self.clone();
        if let Some(span) = plan.span.take() {
            plan.start = plan.start.or(span.start);
            plan.end = plan.end.or(span.end);
        }
        let options = self.box_options();
        if let Some(boxes) = plan.boxes.as_mut() {
            boxes.options = (options != BoxOptions::default()).then_some(options);
            plan.annotations = None;
        }
        for export in &mut plan.exports {
            match export {
                ExportSpec::Clip(c) => {
                    if self.insert.is_some() {
                        // An insertion's video carries its needle's V-STaR annotations.
                        c.boxes_out.get_or_insert(BoxesOut::Vstar);
                    }
                    if !c.copy {
                        c.crf.get_or_insert(defaults.crf);
                        c.preset.get_or_insert_with(|| defaults.preset.clone());
                    }
                    c.audio.get_or_insert(defaults.audio);
                }
                ExportSpec::Video(v) => {
                    if self.insert.is_some() {
                        v.boxes_out.get_or_insert(BoxesOut::Vstar);
                    }
                    v.preset.get_or_insert_with(|| defaults.preset.clone());
                    v.audio.get_or_insert(defaults.audio);
                }
                ExportSpec::Frames(_) | ExportSpec::Preview(_) => {}
            }
        }
        plan
    }

    /// Checks everything that needs no media; the message says what is wrong and what was
    /// expected.
    pub fn check(&self) -> Result<(), String> {
        crate::tally::count(crate::tally::Event::PlanCheck);
        validate_id(&self.id)?;
        if self.source.as_os_str().is_empty() {
            return Err("\"source\" is empty; expected a video path".into());
        }
        let mut named = vec![("\"source\"", &self.source)];
        if let Some(b) = &self.boxes {
            named.push(("\"boxes\"", &b.path));
        }
        if let Some(i) = &self.insert {
            named.push(("\"insert\".\"sequence\"", &i.sequence));
        }
        for (role, path) in named {
            crate::error::require_utf8(path, role).map_err(|e| e.to_string())?;
        }
        if self.span.is_some() && (self.start.is_some() || self.end.is_some()) {
            return Err("give the span either as \"span\": {\"start\", \"end\"} or as \"start\"/\"end\", not both".into());
        }
        let (start, end) = self.span();
        for (key, t) in [("start", start), ("end", end)] {
            if matches!(t, Some(TimeSpec::Percent(_))) {
                return Err(format!(
                    "\"{key}\": a percentage is only allowed for a decision point or an insertion point"
                ));
            }
        }
        if self.annotations.is_some() && self.boxes.is_none() {
            return Err("\"annotations\" options need \"boxes\" (an annotation file)".into());
        }
        if self.annotations.is_some() && self.boxes.as_ref().is_some_and(|b| b.options.is_some()) {
            return Err(
                "give the box options inside \"boxes\" or in \"annotations\", not both".into(),
            );
        }
        let opts = self.box_options();
        if let Some(c) = opts.min_confidence {
            if !c.is_finite() {
                return Err(format!("\"min_confidence\" must be a number, found {c}"));
            }
        }
        if opts.thickness.is_some_and(|t| t == 0 || t > 256) {
            return Err("\"thickness\" must be 1..256 pixels".into());
        }
        if let Some(ins) = &self.insert {
            if ins.at.is_some() == ins.seed.is_some() {
                return Err(
                    "\"insert\" needs exactly one of \"at\" (a time) or \"seed\" (a number)".into(),
                );
            }
        }
        if self.exports.is_empty() {
            return Err("\"exports\" must be a non-empty list of exports".into());
        }
        let mut names = std::collections::HashSet::new();
        for (i, e) in self.exports.iter().enumerate() {
            let here = |m: String| format!("exports[{i}] ({}): {m}", e.name());
            let name = e.name();
            validate_export_name(name).map_err(&here)?;
            if !names.insert(name.to_string()) {
                return Err(here(format!(
                    "the name {name:?} is used twice; give each export its own \"name\""
                )));
            }
            check_export(e, self).map_err(here)?;
        }
        Ok(())
    }
}

fn validate_export_name(name: &str) -> Result<(), String> {
    validate_id(name).map_err(|e| e.replace("id", "export name"))?;
    if RESERVED_EXPORT_NAMES.contains(&name) {
        return Err(format!(
            "the export name {name:?} is reserved ({name}.json records the item)"
        ));
    }
    Ok(())
}

fn check_preset(preset: &Option<String>) -> Result<(), String> {
    if let Some(p) = preset {
        if !crate::media::encode::X264_PRESETS.contains(&p.as_str()) {
            return Err(format!(
                "unknown x264 preset {p:?}; expected one of {}",
                crate::media::encode::X264_PRESETS.join(", ")
            ));
        }
    }
    Ok(())
}

fn check_export(e: &ExportSpec, plan: &Plan) -> Result<(), String> {
    let boxes_out = match e {
        ExportSpec::Clip(c) => c.boxes_out,
        ExportSpec::Video(v) => v.boxes_out,
        ExportSpec::Frames(_) | ExportSpec::Preview(_) => None,
    };
    if boxes_out.is_some() && plan.boxes.is_none() && plan.insert.is_none() {
        return Err("\"boxes_out\" needs boxes (an annotation file) or an insertion".into());
    }
    match e {
        ExportSpec::Clip(c) => {
            if let Some(crf) = c.crf {
                if !(0.0..=51.0).contains(&crf) {
                    return Err(format!("\"crf\" must be a number in 0..51, found {crf}"));
                }
            }
            check_preset(&c.preset)?;
            if let Some(container) = &c.container {
                if !["mp4", "mov", "mkv"].contains(&container.as_str()) {
                    return Err(format!(
                        "\"container\" must be mp4, mov or mkv, found {container:?}"
                    ));
                }
            }
            if c.smart && c.copy {
                return Err("give `smart` (copy whole GOPs, re-encode the edges: exact frames) or `copy` (whole GOPs only: the span snaps to keyframes), not both".into());
            }
            if c.verify && !c.smart {
                return Err(
                    "`verify` checks a smart clip's copied and re-encoded frames; add `smart`"
                        .into(),
                );
            }
            if c.copy {
                if plan.decision.is_some() {
                    return Err("a copied clip (`copy`) keeps whole GOPs, which could show frames after the decision point; drop `copy` to re-encode it".into());
                }
                if plan.insert.is_some() {
                    return Err(
                        "a copied clip (`copy`) cannot hold an insertion; drop `copy` to re-encode it".into(),
                    );
                }
                if plan.boxes_request().is_some_and(|b| b.draw.is_some()) {
                    return Err("a copied clip (`copy`) cannot have boxes drawn on it; drop `copy` to re-encode it, or carry the boxes without drawing them (`no_draw`)".into());
                }
                if c.crf.is_some() || c.preset.is_some() {
                    return Err(
                        "a copied clip (`copy`) is not encoded: `crf` and `preset` do not apply"
                            .into(),
                    );
                }
            }
            Ok(())
        }
        ExportSpec::Video(v) => {
            check_preset(&v.preset)?;
            if v.max_base64_bytes < 64 {
                return Err(format!(
                    "\"max_base64_bytes\" {} is too small to hold any video",
                    v.max_base64_bytes
                ));
            }
            Ok(())
        }
        ExportSpec::Preview(p) => {
            if !(0.0..=51.0).contains(&p.crf) {
                return Err(format!(
                    "\"crf\" must be a number in 0..51, found {}",
                    p.crf
                ));
            }
            if !(1..=1000).contains(&p.gop) {
                return Err(format!("\"gop\" must be 1..1000 frames, found {}", p.gop));
            }
            if p.max_size.0 < 16 || p.max_size.1 < 16 {
                return Err(format!(
                    "\"max_size\" {} is too small for a preview (at least 16x16)",
                    p.max_size
                ));
            }
            Ok(())
        }
        ExportSpec::Frames(f) => {
            if f.count.is_some() && f.fps.is_some() {
                return Err("give \"count\" or \"fps\", not both".into());
            }
            if let Some(name) = &f.profile {
                let profile =
                    crate::profiles::find(name).ok_or_else(|| crate::profiles::unknown(name))?;
                if f.sampler != Sampler::default()
                    || f.max_size.is_some()
                    || f.allow_repeats
                    || f.max_frames.is_some()
                {
                    return Err(format!(
                        "profile {name} picks the frames and their size as its package does; drop \"sampler\", \"max_size\", \"allow_repeats\" and \"max_frames\" (the package's own max_frames is a profile option)"
                    ));
                }
                crate::profiles::check_request(profile, &f.profile_request())?;
            } else if !f.profile_options.is_empty() {
                return Err("\"profile_options\" go with \"profile\"".into());
            }
            if f.max_frames.is_some() && f.fps.is_none() {
                return Err("\"max_frames\" goes with \"fps\"".into());
            }
            if let Some(fps) = f.fps {
                if !(fps.is_finite() && fps > 0.0) {
                    return Err(format!("\"fps\" must be a positive number, found {fps}"));
                }
            }
            if f.count == Some(0) || f.max_frames == Some(0) {
                return Err("a frame count must be at least 1".into());
            }
            if !(1..=100).contains(&f.quality) {
                return Err(format!("\"quality\" must be 1..100, found {}", f.quality));
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_plan_built_in_code_equals_its_manifest_line_once_normalised() {
        // The README's example: the same item built field by field and read from JSON.
        let mut built = Plan::new(
            "event-1",
            "raw.mp4",
            vec![
                ExportSpec::Clip(Default::default()),
                ExportSpec::Frames(FramesExport {
                    count: Some(16),
                    ..Default::default()
                }),
            ],
        );
        built.start = Some(TimeSpec::parse("5s").unwrap());
        built.end = Some(TimeSpec::parse("250").unwrap());
        built.decision = Some(TimeSpec::parse("75%").unwrap());
        let line: Plan = serde_json::from_str(
            r#"{"id": "event-1", "source": "raw.mp4", "span": {"start": "5s", "end": 250},
                "decision": "75%", "exports": [{"kind": "clip"}, {"kind": "frames", "count": 16}]}"#,
        )
        .unwrap();
        let defaults = crate::media::encode::EncodeSettings::default();
        assert_ne!(built, line, "the span is spelt differently");
        assert_eq!(built.normalized(&defaults), line.normalized(&defaults));
        // Normalising twice changes nothing, and the form survives a round trip through JSON.
        let once = line.normalized(&defaults);
        assert_eq!(once.normalized(&defaults), once);
        let text = serde_json::to_string(&once).unwrap();
        assert_eq!(serde_json::from_str::<Plan>(&text).unwrap(), once);
    }
    use super::*;

    fn parse(text: &str) -> Result<Plan, String> {
        let plan: Plan = serde_json::from_str(text).map_err(|e| e.to_string())?;
        plan.check()?;
        Ok(plan)
    }

    #[test]
    fn a_full_item_reads_and_round_trips() {
        let text = r#"{"id": "q1", "source": "v.mp4", "span": {"start": "1s", "end": 50},
            "decision": "75%", "boxes": "gt.txt", "annotations": {"format": "mot", "thickness": 3},
            "insert": {"sequence": "seq", "seed": 7, "fit": "crop", "overlay": true},
            "exports": [{"kind": "clip"}, {"kind": "video", "max_base64_bytes": 5000000},
                        {"kind": "frames", "name": "f8", "count": 8, "sampler": "qwen", "payload": "gemini", "strip": 3}]}"#;
        let plan = parse(text).unwrap();
        assert_eq!(
            plan.span(),
            (
                Some(TimeSpec::Seconds(crate::time::Time::from_secs(1))),
                Some(TimeSpec::Frame(50))
            )
        );
        assert_eq!(plan.box_options().format, Format::Mot);
        assert_eq!(plan.insert.as_ref().unwrap().position(), Position::Seed(7));
        assert_eq!(plan.exports[2].name(), "f8");
        let ExportSpec::Frames(f) = &plan.exports[2] else {
            panic!()
        };
        assert_eq!(f.strip, Strip(Some(3)));
        assert_eq!(f.request(), Request::Count(8));
        // Serialised and read again, it is the same plan.
        let again: Plan = serde_json::from_str(&serde_json::to_string(&plan).unwrap()).unwrap();
        assert_eq!(again, plan);
    }

    #[test]
    fn mistakes_are_refused_with_what_was_expected() {
        let err = |t: &str| parse(t).unwrap_err();
        assert!(err(r#"{"id": "a", "source": "v.mp4", "colour": "red"}"#)
            .contains("unknown field `colour`"));
        assert!(
            err(r#"{"id": "a", "source": "v.mp4", "exports": [{"kind": "gif"}]}"#)
                .contains("unknown variant `gif`")
        );
        assert!(err(r#"{"id": "a", "source": "v.mp4", "exports": [{"kind": "frames", "sampler": "decord"}]}"#).contains("uniform"));
        assert!(err(
            r#"{"id": "a", "source": "v.mp4", "exports": [{"kind": "clip"}, {"kind": "clip"}]}"#
        )
        .contains("used twice"));
        assert!(err(
            r#"{"id": "a", "source": "v.mp4", "insert": {"sequence": "s", "at": "1s", "seed": 3}}"#
        )
        .contains("exactly one of"));
        assert!(err(r#"{"id": "a", "source": "v.mp4", "start": "10%"}"#).contains("percentage"));
        assert!(err(r#"{"id": "a", "source": "v.mp4", "exports": []}"#).contains("non-empty"));
        assert!(err(
            r#"{"id": "a", "source": "v.mp4", "exports": [{"kind": "clip", "name": "item"}]}"#
        )
        .contains("reserved"));
        assert!(err(r#"{"id": "report.jsonl", "source": "v.mp4"}"#).contains("reserved"));
        assert!(err(r#"{"id": "../x", "source": "v.mp4"}"#).contains("file name"));
        assert!(
            err(r#"{"id": "a", "source": "v.mp4", "boxes": {"path": "b.txt", "colr": 1}}"#)
                .contains("unknown field `colr`")
        );
        assert!(err(r#"{"id": "a", "source": "v.mp4", "decision": "1s", "exports": [{"kind": "clip", "copy": true}]}"#).contains("decision"));
        assert!(err(
            r#"{"id": "a", "source": "v.mp4", "exports": [{"kind": "frames", "quality": 0}]}"#
        )
        .contains("quality"));
    }

    #[test]
    fn boxes_as_a_path_or_an_object() {
        let p = parse(r#"{"id": "a", "source": "v.mp4", "boxes": "gt.txt"}"#).unwrap();
        assert!(
            p.boxes_request().unwrap().draw.is_some(),
            "drawn by default"
        );
        let p = parse(r#"{"id": "a", "source": "v.mp4", "boxes": {"path": "gt.txt", "draw": false, "fill": "hold"}}"#).unwrap();
        let r = p.boxes_request().unwrap();
        assert!(r.draw.is_none());
        assert_eq!(r.fill, Fill::Hold);
    }
}
