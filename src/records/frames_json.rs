//! `frames.json`'s records: the file a frames export writes beside its images ([`FramesJson`])
//! and one line of it per written image ([`FrameRecord`]). Their JSON Schema is
//! `vidprep schema frames` (`docs/schema/frames.schema.json`).

use serde::Serialize;

use crate::plan::ImageFormat;
use crate::profiles::sampling::{Arranged, Sampled};
use crate::records::sidecar::SourceRecord;

/// `frames.json`: where each image came from and how it was chosen.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct FramesJson {
    /// The vidprep that wrote it.
    pub vidprep_version: &'static str,
    /// The inputs (0: the video; 1: an inserted sequence).
    pub sources: Vec<SourceRecord>,
    /// The plan (the manifest line) that asked for the frames.
    #[schemars(with = "crate::plan::Plan")]
    pub request: serde_json::Value,
    /// The export that made them.
    #[schemars(with = "crate::plan::ExportSpec")]
    pub export: serde_json::Value,
    /// What the plan resolved to on the source (the span, decision point and insertion, in
    /// frames and times).
    pub resolved: serde_json::Value,
    /// Frames in the processed stream the sampler chose from.
    pub total_frames: usize,
    /// What the sampler chose, from the processed stream's frames.
    pub sampled: Sampled,
    /// The order the images are in.
    pub order: Arranged,
    /// The images' file format.
    pub format: ImageFormat,
    /// One record per image, by position.
    pub frames: Vec<FrameRecord>,
    /// The strip image's file, when asked.
    pub strip: Option<String>,
    /// The API payload's file, when asked.
    pub payload: Option<String>,
    /// The JSON Lines file, when asked.
    pub jsonl: Option<String>,
    /// The model profile that chose the frames and their size, with every rule it applied.
    /// (Its fields: `docs/profiles.md`.)
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub profile: Option<serde_json::Value>,
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
    /// What the run warned about (also in the run's report).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// One written frame, a line of `frames.json`.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct FrameRecord {
    /// Its position among the images (0-based).
    pub position: usize,
    /// Its file name in the export's folder (the name it would have, for a run kept in
    /// memory).
    pub file: String,
    /// Which input it came from (0: the video; 1: an inserted sequence).
    pub source: usize,
    /// Its index in that input, and its pts there.
    pub source_frame: usize,
    /// Its pts in that input's time base.
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
    /// `time` in seconds, as a float.
    pub time_s: f64,
    /// Exact presentation time in the processed stream it was sampled from (seconds from that
    /// stream's first frame: a span's first frame, or the video's first frame, is at 0).
    pub stream_time: String,
    /// `stream_time` in seconds, as a float.
    pub stream_time_s: f64,
    /// The image's width in pixels.
    pub width: u32,
    /// The image's height in pixels.
    pub height: u32,
    /// The boxes on this image, in its pixels (when the item has boxes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boxes: Option<Vec<ImageBox>>,
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

/// A box on one exported image, in the image's pixels.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct ImageBox {
    /// Which input the box comes from (0: the video; 1: an inserted sequence).
    pub source: usize,
    /// The track id (absent for untracked detections).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub track: Option<String>,
    /// The track's or detection's label, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Left edge, in pixels from the image's left.
    pub x1: f64,
    /// Top edge, in pixels from the image's top.
    pub y1: f64,
    /// Right edge (excluded).
    pub x2: f64,
    /// Bottom edge (excluded).
    pub y2: f64,
}
