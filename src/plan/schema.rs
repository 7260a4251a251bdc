//! The plan's schema: [`Plan`] and the structs and enums a manifest line is made of (span,
//! boxes, insertion, each export's options), their serde attributes and defaults, and the
//! accessors the rest of the crate reads a plan through. Deserialisation is strict: unknown
//! fields are refused, so a misspelt field is never ignored. Defaults live here, in one place.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::text::{BoxesOut, FrameLabel, ImageFormat, Limits, Payload, Size, Strip, VideoPayload};
use crate::annotations::{Fill, Format, Grid, KeyKind, Units};
use crate::profiles::sampling::{Order, Request, Sampler};
use crate::vocab::time::TimeSpec;
use crate::vocab::Fit;
use crate::vocab::FrameRate;

/// One item: a source and what to make of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
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
    /// The first source frame kept: a frame, seconds or a timecode (not a percentage).
    /// `None`: from the start of the source. The span kept is half-open, `[start, end)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<TimeSpec>,
    /// Where the kept part ends, excluded: a frame, seconds or a timecode (not a
    /// percentage). `None`: to the end of the source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<TimeSpec>,
    /// The decision point, relative to the clip: frames at or after it are dropped and the
    /// output (video and audio) ends there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<TimeSpec>,
    /// Annotations of the source: a file path, or an object with the path and options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boxes: Option<BoxesSpec>,
    /// A GOT-10k sequence inserted into the clip.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insert: Option<InsertSpec>,
    /// What to write (default: one clip).
    #[serde(default = "default_exports")]
    pub exports: Vec<ExportSpec>,
    /// Treat damaged input (packets that do not decode, frames decoded with errors) as an
    /// error instead of decoding what can be decoded, as ffmpeg does, and reporting it.
    #[serde(default, skip_serializing_if = "is_false")]
    #[schemars(extend("default" = false))]
    pub strict: bool,
    /// Why this item exists, as its proposer wrote it (`vidprep detect` puts the detector and
    /// its scores here). Carried, never acted on: it changes no output and is left out of
    /// the form `--resume` compares.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<serde_json::Value>,
    /// `"span": {"start", "end"}`, the span's older spelling: refused with its rewrite
    /// rather than as an unknown field.
    #[serde(
        default,
        rename = "span",
        skip_serializing,
        deserialize_with = "retired::span"
    )]
    #[schemars(skip)]
    retired_span: retired::Field,
    /// `"annotations"`, the box options' older spelling (they go in `boxes`): refused with
    /// its rewrite.
    #[serde(
        default,
        rename = "annotations",
        skip_serializing,
        deserialize_with = "retired::annotations"
    )]
    #[schemars(skip)]
    retired_annotations: retired::Field,
}

/// serde's message for an unknown plan field without the retired spellings among the fields
/// it lists as expected (they are read only to be refused: a misspelt field must not be told
/// to use `span` or `annotations`).
pub(crate) fn without_retired_fields(message: &str) -> String {
    message
        .replace(", `span`, `annotations`", "")
        .replace(", `span`", "")
        .replace(", `annotations`", "")
}

/// The plan fields that had a second spelling: each is read only to refuse it with the
/// rewrite, so that a manifest written for an older vidprep fails with what to change.
mod retired {
    use serde::de::{Deserializer, Error, IgnoredAny};
    use serde::Deserialize;

    /// Never set: a plan that names a retired field is not read.
    #[derive(Clone, Copy, Debug, Default, PartialEq)]
    pub(super) struct Field;

    pub(super) fn span<'de, D: Deserializer<'de>>(d: D) -> Result<Field, D::Error> {
        IgnoredAny::deserialize(d)?;
        Err(D::Error::custom(
            "\"span\" is not a plan field: write its ends at the top level of the item, \
             \"start\": A, \"end\": B (the same half-open span [A, B))",
        ))
    }

    pub(super) fn annotations<'de, D: Deserializer<'de>>(d: D) -> Result<Field, D::Error> {
        IgnoredAny::deserialize(d)?;
        Err(D::Error::custom(
            "\"annotations\" is not a plan field: give the box options with the file, \
             \"boxes\": {\"path\": FILE, \"format\": ..., ...}",
        ))
    }
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

/// How annotation boxes are read and drawn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BoxOptions {
    /// The format (default: detected).
    #[serde(default)]
    pub format: Format,
    /// Frames between keys: `linear`, `cubic`, `hold`, `none` or `track` (`track-kcf`).
    #[serde(default)]
    pub fill: Fill,
    /// Draw the boxes on the frames (default). `false` only carries them into the sidecars.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    #[schemars(extend("default" = true))]
    pub draw: bool,
    /// Draw a label tab above each box (default).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    #[schemars(extend("default" = true))]
    pub labels: bool,
    /// Line width in pixels (default: scaled to the frame).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thickness: Option<u32>,
    /// One colour for every box (`RRGGBB` or a name) instead of one per track.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<crate::vocab::Rgb>,
    /// MOT: drop boxes whose confidence is below this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_confidence: Option<f64>,
    /// V-STaR: the item (vid) to read from a benchmark file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item: Option<String>,
    /// `time` or `frame` keys, when a file has both.
    #[serde(default, skip_serializing_if = "is_default")]
    #[schemars(extend("default" = "time"))]
    pub keys: KeyKind,
    /// Plain/Waymo coordinates: `auto`, `pixels` or `normalized`.
    #[serde(default, skip_serializing_if = "is_default")]
    #[schemars(extend("default" = "auto"))]
    pub units: Units,
    /// Waymo: the camera to read when the file has several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub camera: Option<String>,
    /// The pixel grid of the boxes: `stored` (the upright stored pictures, as `ffmpeg -i SRC
    /// f%d.png` writes them) or `display` (square pixels, as players show non-square-pixel
    /// video).
    #[serde(default, skip_serializing_if = "is_default")]
    #[schemars(extend("default" = "stored"))]
    pub grid: Grid,
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
            grid: Grid::Stored,
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

/// What the hand-written `Deserialize` below accepts: a non-empty path, or an object with
/// `path` and the fields of [`BoxOptions`] (and no other).
impl JsonSchema for BoxesSpec {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "BoxesSpec".into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut object = BoxOptions::json_schema(generator);
        object.remove("description");
        let map = object.ensure_object();
        if let Some(serde_json::Value::Object(properties)) = map.get_mut("properties") {
            let path = serde_json::json!({
                "description": "The annotation file or folder.",
                "type": "string",
            });
            // `path` first, as a reader expects it.
            let rest = std::mem::take(properties);
            properties.insert("path".into(), path);
            properties.extend(rest);
        }
        map.insert("required".into(), serde_json::json!(["path"]));
        schemars::json_schema!({
            "description": "The source's annotations: a file path, or an object with `path` and the box options.",
            "oneOf": [
                {"type": "string", "minLength": 1},
                object
            ]
        })
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
            color: Option<crate::vocab::Rgb>,
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
            #[serde(default)]
            grid: Grid,
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
                        grid: f.grid,
                    }),
                })
            }
        }
        d.deserialize_any(BoxesVisitor)
    }
}

/// Where and how a GOT-10k sequence goes into the clip.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
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
    #[schemars(extend("default" = false))]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
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

/// A clip: the processed stream as H.264 (+AAC) in MP4/MOV/MKV.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
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
    #[schemars(extend("default" = false))]
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
    #[schemars(extend("default" = false))]
    pub smart: bool,
    /// After writing, decode the output and compare every frame with the frame it should be:
    /// copied frames bit-identical, re-encoded ones at least 40 dB PSNR. A mismatch fails.
    #[serde(default, skip_serializing_if = "is_false")]
    #[schemars(extend("default" = false))]
    pub verify: bool,
}

/// A capped video for video-native models.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VideoExport {
    /// The base name of the export's files, unique within the item (default: `video`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Largest width x height (aspect kept, never upscaled).
    #[serde(default = "default_max_video")]
    pub max_size: Size,
    /// Largest Base64 text of the file (default: the `limits` preset's; `vistr`: 10 MB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_base64_bytes: Option<u64>,
    /// The provider's limits the output must meet: `vistr` (the paper's 10 MB of Base64,
    /// the default), `gemini`, `vllm`, `seed` or `mimo` (`docs/export.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Limits>,
    /// Also write `NAME.payload.json`, a request body holding the clip: `gemini-video`
    /// (a Gemini `generateContent` body, `inlineData` and `videoMetadata`) or
    /// `openai-video` (an OpenAI-compatible chat body with a `video_url` data URL). Its whole
    /// size is held within the preset's request limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<VideoPayload>,
    /// Also write `NAME.b64`.
    #[serde(default, skip_serializing_if = "is_false")]
    #[schemars(extend("default" = false))]
    pub base64: bool,
    /// x264 preset; default from the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// Keep the audio; default from the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audio: Option<bool>,
    /// Re-encode even a file that already is a standard model input within the caps.
    #[serde(default, skip_serializing_if = "is_false")]
    #[schemars(extend("default" = false))]
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
            max_base64_bytes: None,
            limits: None,
            payload: None,
            base64: false,
            preset: None,
            audio: None,
            reencode: false,
            boxes_out: None,
        }
    }
}

/// A preview for people: every frame of the processed stream, small, quick to seek.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
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

/// Sampled frames for image-only models.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct FramesExport {
    /// The name of the export's folder and files, unique within the item (default:
    /// `frames`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `N` frames (default 16 when `fps` and `frames` are not given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<usize>,
    /// Or `F` frames per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fps: Option<f64>,
    /// With `fps`: at most this many frames (uniform beyond: V-STaR's protocol).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_frames: Option<usize>,
    /// Or these source frames, by 0-based index (`[0, 5, 17]`), in this order: the
    /// `explicit` sampler (instead of `count` / `fps`). With a span, indices are the source's
    /// and must lie in the span. With a `profile`, its size and token rules apply to these
    /// frames instead of the ones it would pick.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frames: Option<Vec<usize>>,
    /// With a `profile`: a `vidprep parity` record (its `--out` JSON) of the same source,
    /// profile and options; each position then shows the frame the package showed there
    /// (the record's `reference.positions[].package_shows`), even where that is not the
    /// frame it names: exactly what the model was fed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follow_package: Option<PathBuf>,
    /// Which toolkit's formula picks the frames (`explicit` with `frames`).
    #[serde(default)]
    pub sampler: Sampler,
    /// Let the formula repeat frames where the toolkit would.
    #[serde(default, skip_serializing_if = "is_false")]
    #[schemars(extend("default" = false))]
    pub allow_repeats: bool,
    /// `ordered`, `shuffled`, `reversed` or `last`.
    #[serde(default)]
    pub order: Order,
    /// Seed of the shuffled order.
    #[serde(default, skip_serializing_if = "is_default")]
    #[schemars(extend("default" = 0))]
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
    #[schemars(extend("default" = false))]
    pub strip: Strip,
    /// An API payload fragment with the images as Base64: `openai`, `anthropic`, `gemini`,
    /// or a vLLM chat body (`vllm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Payload>,
    /// The openai, anthropic and gemini payloads put a text part with each frame's time
    /// before its image (`<1.5 seconds>`, or the profile's own markers); `false` leaves them
    /// out.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    #[schemars(extend("default" = true))]
    pub time_markers: bool,
    /// `frames.jsonl`: one line per image with its Base64 data.
    #[serde(default, skip_serializing_if = "is_false")]
    #[schemars(extend("default" = false))]
    pub jsonl: bool,
    /// A model profile (`qwen3-vl`, ...: `docs/profiles.md`): the frames, sizes and pixels
    /// that model's own preprocessing gives it. It replaces `sampler` and `max_size`;
    /// `count` / `fps` are the package's `nframes` / `fps`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The profile's other options by the package's names (`min_pixels`, `video_start`, ...).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    #[schemars(extend("default" = {}))]
    pub profile_options: std::collections::BTreeMap<String, f64>,
    /// Drawn on each frame as NumPro does (red, 40 px, bottom right): `frame` (its number
    /// in the stream) or `time` (its time in seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<FrameLabel>,
    /// An SRT or WebVTT file: each frame's subtitle text by VLMEvalKit's Video-MME rule, in
    /// `frames.json` and the payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subtitles: Option<PathBuf>,
    /// `audio.wav`: the span's audio as 16 kHz mono 16-bit PCM, sample 0 at time 0 of the
    /// frames' times.
    #[serde(default, skip_serializing_if = "is_false")]
    #[schemars(extend("default" = false))]
    pub audio: bool,
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
            frames: None,
            follow_package: None,
            sampler: Sampler::default(),
            allow_repeats: false,
            order: Order::Ordered,
            seed: 0,
            format: ImageFormat::Jpg,
            quality: default_quality(),
            max_size: None,
            strip: Strip::default(),
            payload: None,
            time_markers: true,
            jsonl: false,
            profile: None,
            profile_options: Default::default(),
            label: None,
            subtitles: None,
            audio: false,
        }
    }
}

impl FramesExport {
    /// What the profile is asked (count, fps and its options): with `frames`, as many frames
    /// as are given (the package's `nframes`).
    pub(crate) fn profile_request(&self) -> crate::profiles::ProfileRequest {
        crate::profiles::ProfileRequest {
            count: self.frames.as_ref().map(Vec::len).or(self.count),
            fps: self.fps,
            options: self.profile_options.clone(),
        }
    }

    /// What to sample: `frames`, `count`, or `fps` with its limit; 16 frames by default.
    /// (`frames` are the source's indices; the export maps them into its processed stream.)
    pub fn request(&self) -> Request {
        match (&self.frames, self.count, self.fps) {
            (Some(list), _, _) => Request::Frames(list.clone()),
            (None, _, Some(fps)) => Request::Fps {
                fps,
                max_frames: self.max_frames,
            },
            (None, Some(n), None) => Request::Count(n),
            (None, None, None) => Request::Count(16),
        }
    }

    /// The sampler in effect: `explicit` when `frames` are given, else `sampler`.
    pub fn effective_sampler(&self) -> Sampler {
        if self.frames.is_some() {
            crate::profiles::sampling::explicit_sampler()
        } else {
            self.sampler
        }
    }
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
            start: None,
            end: None,
            decision: None,
            boxes: None,
            insert: None,
            exports,
            strict: false,
            evidence: None,
            retired_span: retired::Field,
            retired_annotations: retired::Field,
        }
    }

    /// The span's start and end.
    pub fn span(&self) -> (Option<TimeSpec>, Option<TimeSpec>) {
        (self.start, self.end)
    }

    /// The box options in effect: those given with `boxes`, else the defaults.
    pub fn box_options(&self) -> BoxOptions {
        self.boxes
            .as_ref()
            .and_then(|b| b.options.clone())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Plan, String> {
        let plan: Plan = serde_json::from_str(text).map_err(|e| e.to_string())?;
        plan.check()?;
        Ok(plan)
    }

    #[test]
    fn a_full_item_reads_and_round_trips() {
        let text = r#"{"id": "q1", "source": "v.mp4", "start": "1s", "end": 50,
            "decision": "75%", "boxes": {"path": "gt.txt", "format": "mot", "thickness": 3},
            "insert": {"sequence": "seq", "seed": 7, "fit": "crop", "overlay": true},
            "exports": [{"kind": "clip"}, {"kind": "video", "max_base64_bytes": 5000000},
                        {"kind": "frames", "name": "f8", "count": 8, "sampler": "qwen", "payload": "gemini", "strip": 3}]}"#;
        let plan = parse(text).unwrap();
        assert_eq!(
            plan.span(),
            (
                Some(TimeSpec::Seconds(crate::vocab::time::Time::from_secs(1))),
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
    fn the_older_spellings_are_refused_with_their_rewrite() {
        let e =
            parse(r#"{"id": "a", "source": "v.mp4", "span": {"start": 5, "end": 9}}"#).unwrap_err();
        assert!(
            e.contains("\"span\" is not a plan field") && e.contains("\"start\": A, \"end\": B"),
            "{e}"
        );
        let e = parse(
            r#"{"id": "a", "source": "v.mp4", "boxes": "gt.txt", "annotations": {"format": "mot"}}"#,
        )
        .unwrap_err();
        assert!(
            e.contains("\"annotations\" is not a plan field")
                && e.contains("\"boxes\": {\"path\": FILE"),
            "{e}"
        );
        // Neither is written: a plan serialises in the one spelling.
        let plan =
            parse(r#"{"id": "a", "source": "v.mp4", "start": 5, "boxes": "gt.txt"}"#).unwrap();
        let text = serde_json::to_string(&plan).unwrap();
        assert!(
            !text.contains("span") && !text.contains("annotations"),
            "{text}"
        );
    }

    #[test]
    fn a_misspelt_field_is_not_told_of_the_retired_ones() {
        let e = serde_json::from_str::<Plan>(r#"{"id": "a", "source": "v.mp4", "exprots": []}"#)
            .unwrap_err()
            .to_string();
        let e = without_retired_fields(&e);
        assert!(
            e.contains("unknown field `exprots`") && e.contains("`exports`"),
            "{e}"
        );
        assert!(!e.contains("`span`") && !e.contains("`annotations`"), "{e}");
    }

    #[test]
    fn boxes_as_a_path_or_an_object() {
        let p = parse(r#"{"id": "a", "source": "v.mp4", "boxes": "gt.txt"}"#).unwrap();
        assert!(
            p.boxes.is_some() && p.box_options().draw,
            "drawn by default"
        );
        let p = parse(r#"{"id": "a", "source": "v.mp4", "boxes": {"path": "gt.txt", "draw": false, "fill": "hold"}}"#).unwrap();
        let o = p.box_options();
        assert!(!o.draw);
        assert_eq!(o.fill, Fill::Hold);
    }
}
