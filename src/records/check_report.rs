//! What `vidprep check` reports (`vidprep schema check`): per source, its verdict, what
//! vidprep does with it, how much was compared with the plain decode, the damage and the
//! differences found. The check itself is `crate::check`.

use schemars::JsonSchema;
use serde::Serialize;

use crate::media::frame::SizeChange;
use crate::media::table::TimesFrom;

/// The outcome of one source's check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Verdict {
    /// Every way vidprep reads gives the reference's frames, times and pixels; no damage.
    Exact,
    /// vidprep reads what the reference decodes, and the source is damaged: vidprep lists the
    /// damaged frames (`--strict` refuses the source).
    Damaged,
    /// vidprep reads the reference's frames and pixels, but the stream's own timestamps go
    /// back or jump ahead of later ones, and vidprep keeps its times increasing there (see
    /// `timestamps`): its times for those frames are not ffmpeg's.
    Mended,
    /// Some read differs from the reference (see `differences`).
    Differs,
    /// vidprep cannot read the source (see `error`): every request on it is refused.
    Failed,
    /// The check did not finish within its time limit.
    TimedOut,
}

/// One difference between a read of vidprep's and the reference.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Difference {
    /// Which read: `table`, `time_to_frame`, `sequential`, `seek`, `seek_time`, `span`,
    /// `sparse`.
    pub read: String,
    /// What differs: `count`, `time`, `origin`, `frame`, `pixels`, `damage`, `error`.
    pub what: String,
    /// The frame (0-based, in the reference's order), where one is concerned.
    pub frame: Option<usize>,
    /// What the reference gives.
    pub expected: String,
    /// What vidprep gives.
    pub found: String,
}

/// How much was compared, per read.
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
pub struct Compared {
    /// Frames whose timestamp and time the table gives.
    pub times: usize,
    /// Frames looked up by their time in the table.
    pub time_lookups: usize,
    /// Frames read in order from the start.
    pub sequential: usize,
    /// Frames read after a seek to their index.
    pub seeks: usize,
    /// Frames read after a seek to their time.
    pub seek_times: usize,
    /// Frames of a cut's span read after a seek to its first.
    pub span: usize,
    /// Frames read by the sparse reader.
    pub sparse: usize,
}

/// The frame table vidprep uses for the source.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct TableFacts {
    /// Frames in the table.
    pub frames: usize,
    /// Where its times come from.
    pub times_from: TimesFrom,
    /// The table built from packets disagreed with the decoder at this frame, and was
    /// rebuilt by decoding (as every request on the source does).
    pub rebuilt_at_frame: Option<usize>,
}

/// The damage found.
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
pub struct DamageFacts {
    /// Frames the reference decode marked damaged (errors concealed).
    pub reference_frames: Vec<usize>,
    /// Frames vidprep's reads marked damaged (what its sidecars list).
    pub reported_frames: Vec<usize>,
    /// Packets the reference's decoder refused.
    pub rejected_packets: usize,
    /// Where the demuxer stopped on data it could not read past, in its words.
    pub read_error: Option<String>,
    /// The damage vidprep's table records (a table built by decoding), in words.
    pub table: Option<String>,
    /// Frames a read gave with other pixels than the reference's and marked damaged (listed
    /// in that output's sidecar): how a decoder conceals depends on what it decoded before,
    /// so a seek into damage may differ from the decode from the start, and is then listed,
    /// as vidprep promises (a frame is the plain decode's, or listed as damaged).
    pub listed_differing_frames: Vec<usize>,
}

/// Where the stream's own timestamps are out of order (a restart at 0, a repeat, a lone jump
/// ahead) and vidprep's times differ from them: vidprep keeps one increasing clock (a
/// timestamp that goes back is placed one frame after the frame before; a lone jump ahead is
/// taken as missing), so every output and sidecar gives those frames its times, not the
/// stream's.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct MendedTimestamps {
    /// The first frame whose time vidprep mended (0-based, in the reference's order).
    pub first_frame: usize,
    /// The stream's time of that frame, in seconds from the container's start.
    pub stream_time_s: f64,
    /// vidprep's time of it.
    pub vidprep_time_s: f64,
    /// How many frames' times differ so.
    pub frames: usize,
}

/// One frame of the reference decode (with `CheckOptions::list_frames` (`vidprep check --list-frames`)).
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ReferenceFrame {
    /// Best-effort presentation timestamp, in the stream's time base.
    pub pts: Option<i64>,
    /// MD5 (hex) of the YUV 4:2:0 planes, packed: for a `yuv420p` source what
    /// `ffmpeg -f framemd5` prints.
    pub md5: String,
    /// The decoder marked it damaged.
    pub damaged: bool,
}

/// One source's check.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct SourceCheck {
    /// The source as given.
    pub source: String,
    /// The outcome.
    pub verdict: Verdict,
    /// What vidprep does with the source, in words.
    pub action: String,
    /// Seconds the check took.
    pub seconds: f64,
    /// Frames the reference decoded.
    pub reference_frames: Option<usize>,
    /// The frame table vidprep reads the source by.
    pub table: Option<TableFacts>,
    /// How much was compared.
    pub compared: Compared,
    /// The damage found.
    pub damage: DamageFacts,
    /// The differences (the first ones; `differences_total` counts them all).
    pub differences: Vec<Difference>,
    /// Every difference found.
    pub differences_total: usize,
    /// Frames whose times vidprep mends where the stream's timestamps are out of order (not
    /// counted as differences).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamps: Option<MendedTimestamps>,
    /// Why the source cannot be read (a `failed` or `timed_out` verdict).
    pub error: Option<String>,
    /// Where the picture size changes mid-stream (recordings joined together), the first
    /// few: an output keeps one size, so vidprep refuses one made across such a frame.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub size_changes: Vec<SizeChange>,
    /// The reference's frames, with `CheckOptions::list_frames` (`vidprep check --list-frames`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames: Option<Vec<ReferenceFrame>>,
}

/// All sources' checks.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct CheckReport {
    /// Every source read exactly (the command's exit status 0).
    pub exact: bool,
    /// One check per source, in the order given.
    pub sources: Vec<SourceCheck>,
}
