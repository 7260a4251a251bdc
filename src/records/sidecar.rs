//! The JSON sidecar written beside every output: which tool version made it, from which
//! sources, what was asked and what was really kept, and for every output frame its source
//! frame index and source timestamp (as runs), plus the encode settings.

use std::path::Path;

use serde::Serialize;

pub(crate) use crate::call::output::write_json;
use crate::error::Result;
use crate::media::encode::WriteReport;
use crate::media::input::VideoStreamInfo;
use crate::media::table::FrameTable;
use crate::vocab::time::{decimal_text, Time};
use crate::vocab::EncodeSettings;
use crate::vocab::Ratio;

/// vidprep's version, as every sidecar, report and record names it (`vidprep_version`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// One input of a job, as the sidecar describes it.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct SourceRecord {
    /// The input's path (or URL), as vidprep opened it.
    pub path: String,
    /// Its size in bytes (an image sequence's: all its images; 0 where it has none, as a URL).
    pub size_bytes: u64,
    /// Its frames: the length of vidprep's frame table of it.
    pub frames: usize,
    /// A frame's width as vidprep reads it (after `rotation_cw`).
    pub width: u32,
    /// A frame's height as vidprep reads it (after `rotation_cw`).
    pub height: u32,
    /// The rotation vidprep applied to show the stored pictures upright, in degrees clockwise
    /// (0 where it keeps them as stored).
    pub rotation_cw: u32,
    /// The video stream's time base.
    pub time_base: Ratio,
    /// The stream's average frame rate, as FFmpeg reports it (`avg_frame_rate`).
    pub avg_frame_rate: Ratio,
    /// Where its last frame ends, in seconds of source time (from the frame table).
    pub duration_s: f64,
    /// What source time 0 is: the input's start as ffmpeg uses it for `-ss`/`-t` (its
    /// earliest stream start), as an absolute time (pts x time base, exact text).
    pub time_origin: String,
    /// Source time of its frame 0 (after the input's start when the video starts late).
    pub first_frame_time: String,
    /// Where the frame times come from: `packets` or `decoder` (timestamps the packets do
    /// not carry reliably).
    pub frame_times_from: crate::media::table::TimesFrom,
    /// Damage the source is known to have (packets that do not decode, concealed frames).
    #[serde(skip_serializing_if = "crate::media::table::Damage::is_empty")]
    pub damage: crate::media::table::Damage,
    /// For an image sequence: its folder, layout, how frame `i` names its file, the rate and
    /// where the rate comes from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub images: Option<crate::media::images::ImagesRecord>,
}

impl SourceRecord {
    /// The record of the input at `path`.
    pub(crate) fn new(
        path: &Path,
        info: &VideoStreamInfo,
        table: &FrameTable,
        upright: bool,
    ) -> SourceRecord {
        let rotation = if upright {
            info.rotation
        } else {
            crate::vocab::Rotation::None
        };
        let (width, height) = rotation.displayed_size(info.stored_width, info.stored_height);
        SourceRecord {
            path: path.display().to_string(),
            size_bytes: std::fs::metadata(path)
                .ok()
                .filter(|m| m.is_file())
                .map_or(0, |m| m.len()),
            frames: table.len(),
            width,
            height,
            rotation_cw: rotation.degrees_cw(),
            time_base: table.time_base,
            avg_frame_rate: info.avg_frame_rate,
            duration_s: table.end_time().as_secs_f64(),
            time_origin: decimal_text(table.origin()),
            first_frame_time: decimal_text(table.time(0)),
            frame_times_from: table.times_from,
            damage: table.damage.clone(),
            images: None,
        }
    }

    /// The record with an image sequence's facts (and its size: all its images).
    pub(crate) fn with_images(
        mut self,
        sequence: Option<&crate::media::images::ImageSequence>,
    ) -> Self {
        if let Some(seq) = sequence {
            self.size_bytes = seq.total_bytes();
            self.images = Some(seq.record());
        }
        self
    }
}

/// A run of output frames that come from consecutive source frames with evenly spaced
/// timestamps: output frame `output_start + k` is source frame `source_start + k`, with source
/// pts `source_pts_start + k * source_pts_step`, shown in the output at
/// `output_time_start + k * source_pts_step * time_base` (`time_base` of that source). A new
/// run starts wherever any of this would stop being true (a retimed needle, for example,
/// gives a run per frame when its rate differs from the host's).
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct FrameRun {
    pub output_start: usize,
    pub count: usize,
    /// Index into the sidecar's `sources`.
    pub source: usize,
    pub source_start: usize,
    pub source_pts_start: i64,
    pub source_pts_step: i64,
    /// Exact output time of the first frame of the run, in seconds (`"num/den"` or decimal).
    pub output_time_start: String,
    pub output_time_start_s: f64,
    pub source_time_start_s: f64,
    #[serde(skip)]
    pub(crate) output_time: Time,
}

/// An output frame whose source picture the decoder marked as damaged.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct DamagedOutputFrame {
    pub output_frame: usize,
    pub source: usize,
    pub source_frame: usize,
}

/// The output file as the sidecar describes it.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct OutputRecord {
    pub path: String,
    pub frames: usize,
    pub width: u32,
    pub height: u32,
    pub cropped_right: u32,
    pub cropped_bottom: u32,
    /// Exact duration (seconds, `"num/den"` or decimal).
    pub duration: String,
    pub duration_s: f64,
    pub audio: Option<crate::media::audio::AudioFormat>,
    /// The video's colour description as the file carries it (its source's matrix,
    /// primaries and transfer; the range of the pictures written).
    pub colour: crate::media::encode::ColourRecord,
}

impl OutputRecord {
    pub fn from_report(path: &Path, report: &WriteReport) -> OutputRecord {
        OutputRecord {
            path: path.display().to_string(),
            frames: report.frames,
            width: report.width,
            height: report.height,
            cropped_right: report.cropped_right,
            cropped_bottom: report.cropped_bottom,
            duration: decimal_text(report.duration),
            duration_s: report.duration.as_secs_f64(),
            audio: report.audio,
            colour: report.colour.clone(),
        }
    }
}

/// The whole sidecar of a video output. Every door (command or manifest line) writes the
/// same sidecar for the same request: `request` is the plan, `export` the export's part of it.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Sidecar {
    pub vidprep_version: &'static str,
    /// The export kind that made the output.
    #[schemars(extend("enum" = ["clip", "video", "preview"]))]
    pub kind: &'static str,
    pub output: OutputRecord,
    pub sources: Vec<SourceRecord>,
    /// The plan (the manifest line) that asked for the output.
    #[schemars(with = "crate::plan::Plan")]
    pub request: serde_json::Value,
    /// The export that made it.
    #[schemars(with = "crate::plan::ExportSpec")]
    pub export: serde_json::Value,
    /// What the plan resolved to on this source: frame ranges, exact times, the decision
    /// point, the insertion.
    pub resolved: serde_json::Value,
    pub frames: Vec<FrameRun>,
    /// Output frames whose source pictures the decoder marked as damaged (errors
    /// concealed), when there are any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub damaged_frames: Vec<DamagedOutputFrame>,
    pub encode: Option<EncodeSettings>,
    /// The boxes of the output, in its own frames and pixels (vidprep annotation JSON).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Value>")]
    pub annotations: Option<Box<serde_json::value::RawValue>>,
    /// Sections particular to an export kind (a capped video's budget, a copy's GOPs).
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Writes `value` as pretty JSON (with a final newline) at `path` (a temporary path of an
/// output group).
/// Refuses to write `sidecar` for the video `main` when it belongs to something else: a file
/// that is not a vidprep sidecar (vidprep never replaces a file it did not write), or the
/// sidecar of another output still beside it. Sidecars are named after their video's stem,
/// so `a.mp4`, `a.mkv` and `a.mov` in one folder would share `a.json`; the second is refused
/// rather than leaving the first without the record of its frames.
pub(crate) fn check_sidecar_owner(sidecar: &Path, main: &Path) -> Result<()> {
    use crate::error::Error;
    if !sidecar.is_file() {
        return Ok(());
    }
    let owner = std::fs::read_to_string(sidecar)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .filter(|v| v.get("vidprep_version").is_some())
        .map(|v| v["output"]["path"].as_str().map(str::to_string));
    let Some(owner) = owner else {
        return Err(Error::request(
            sidecar,
            format!(
                "is in the way of {}'s sidecar and is not a vidprep sidecar; vidprep does not replace files it did not write: move it, or name the output differently",
                main.display()
            ),
        ));
    };
    let Some(owner_name) = owner
        .as_deref()
        .and_then(|o| Path::new(o).file_name().map(|n| n.to_os_string()))
    else {
        return Ok(());
    };
    if Some(owner_name.as_os_str()) == main.file_name() {
        return Ok(());
    }
    let other = sidecar.with_file_name(&owner_name);
    let same_file = || match (std::fs::canonicalize(&other), std::fs::canonicalize(main)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if !other.is_file() || same_file() {
        return Ok(());
    }
    Err(Error::request(
        main,
        format!(
            "its sidecar {} would replace the sidecar of {}, which is still there (sidecars are named after the video's stem, so outputs in one folder need different stems); name this output differently, or remove {} and its sidecar first",
            sidecar.display(),
            other.display(),
            other.display()
        ),
    ))
}

/// A time as exact text plus seconds, for sidecar fields.
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct TimeRecord {
    pub exact: String,
    pub seconds: f64,
}

impl From<Time> for TimeRecord {
    fn from(t: Time) -> TimeRecord {
        TimeRecord {
            exact: decimal_text(t),
            seconds: t.as_secs_f64(),
        }
    }
}
