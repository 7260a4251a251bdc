//! Exports: what an item writes. Each kind is a file here implementing [`Export`]; the
//! registry is [`maker`], one line per kind (with its variant in [`crate::plan::ExportSpec`],
//! the serde-tagged form a manifest line spells).
//!
//! An export's life: it claims its files in the item's output group before any decoding
//! (so collisions and inputs are refused first), says which frames of the processed stream it
//! wants, receives them through its sink (behind its own frame stages: resize, drawing), and
//! finishes by writing everything (video, sidecar, extras) at its temporary paths. The group
//! then puts all of them in place at once.

pub(crate) mod claimed;
pub(crate) mod clip;
pub(crate) mod copy;
pub(crate) mod follow;
pub(crate) mod frames;
pub(crate) mod preview;
pub(crate) mod request;
pub(crate) mod smart;
pub(crate) mod subtitles;
pub(crate) mod video;

use std::path::{Path, PathBuf};

use crate::call::output::group::OutputGroup;
use crate::error::Result;
use crate::frames::pipeline::{FrameSink, Progress};
use crate::frames::stages::stream::ProcessedStream;
use crate::plan::{ExportSpec, Plan};
use crate::vocab::EncodeSettings;

/// Where an export's files go.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportTarget {
    /// The video file (clip, video) or the folder (frames).
    pub main: PathBuf,
    /// The sidecar of a video file (default: `main` with `.json`).
    pub sidecar: Option<PathBuf>,
    /// The Base64 text of a capped video (default: `main` with `.b64`).
    pub base64: Option<PathBuf>,
    /// The boxes written beside an output (default: `NAME.vstar.json` / `NAME.boxes.json`
    /// beside `main`).
    pub boxes: Option<PathBuf>,
}

impl ExportTarget {
    /// A target with only the main path given.
    pub fn at(main: impl Into<PathBuf>) -> ExportTarget {
        ExportTarget {
            main: main.into(),
            sidecar: None,
            base64: None,
            boxes: None,
        }
    }

    /// The sidecar path.
    pub fn sidecar_path(&self) -> PathBuf {
        self.sidecar
            .clone()
            .unwrap_or_else(|| self.main.with_extension("json"))
    }

    /// A file beside `main` named `STEM<suffix>`.
    pub fn beside(&self, suffix: &str) -> PathBuf {
        let stem = self
            .main
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        self.main.with_file_name(format!("{stem}{suffix}"))
    }
}

/// Which frames of the processed stream an export needs.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Wants {
    /// Every frame, in order.
    All,
    /// Only these stream frames (any order).
    Frames(Vec<usize>),
    /// None (the output is made without decoding: a copy or a pass-through).
    Nothing,
}

/// Encoding defaults and resources every export of a run shares.
#[derive(Clone, Debug)]
pub(crate) struct ExportContext {
    /// CRF, preset and audio for exports that do not set their own.
    pub defaults: EncodeSettings,
    /// The most bytes frames kept in memory may take ([`crate::ExecOptions::memory_budget`]).
    pub memory_budget: u64,
}

/// What an export made, for reports and the command line.
#[derive(Clone, Debug, serde::Serialize)]
#[non_exhaustive]
pub struct ExportReport {
    /// The export's name.
    pub name: String,
    /// Its kind (`clip`, `video`, `frames`).
    pub kind: &'static str,
    /// Every file it wrote (final paths).
    pub files: Vec<PathBuf>,
    /// A line for people.
    pub summary: String,
    /// Frames in the output (images for frames exports).
    pub frames: usize,
    /// Things about this export that did not stop it but deserve a look (absent from the
    /// JSON when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// One export of an item.
pub(crate) trait Export {
    /// Where it writes inside an item folder `dir`: `DIR/NAME.mp4` (with its `.json`) for
    /// videos, `DIR/NAME/` for a folder of frames.
    fn target_in(&self, dir: &Path) -> ExportTarget;
    /// Claims every file it will write in `group` (before any decoding).
    fn claim(&mut self, target: &ExportTarget, plan: &Plan, group: &mut OutputGroup) -> Result<()>;
    /// Prepares for the stream; says which frames it needs.
    fn start(
        &mut self,
        stream: &ProcessedStream,
        ctx: &ExportContext,
        group: &mut OutputGroup,
    ) -> Result<Wants>;
    /// Where frames go (when it wants any).
    fn sink(&mut self) -> Option<&mut dyn FrameSink>;
    /// Instead of [`claim`](Self::claim): the output is kept in memory
    /// ([`crate::Destination::Memory`]) and nothing is written. Only kinds that can say so
    /// override this; the executor refuses the others before asking.
    fn keep_in_memory(&mut self) -> Result<()> {
        Err(crate::error::Error::internal(
            "this export kind cannot be kept in memory",
        ))
    }
    /// What memory mode made, after [`finish`](Self::finish).
    fn take_memory(&mut self) -> Option<frames::memory::MemoryFrames> {
        None
    }
    /// Writes everything at the group's temporary paths.
    fn finish(
        &mut self,
        stream: &ProcessedStream,
        ctx: &ExportContext,
        group: &mut OutputGroup,
        progress: &mut dyn Progress,
    ) -> Result<ExportReport>;
}

/// The export for a spec (the registry of export kinds).
pub(crate) fn maker(spec: &ExportSpec) -> Box<dyn Export> {
    match spec {
        ExportSpec::Clip(c) => Box::new(clip::ClipMaker::new(spec, c)),
        ExportSpec::Video(v) => Box::new(video::VideoMaker::new(spec, v)),
        ExportSpec::Frames(f) => Box::new(frames::FramesMaker::new(spec, f)),
        ExportSpec::Preview(p) => Box::new(preview::PreviewMaker::new(spec, p)),
    }
}

/// Refuses a stream whose pictures H.264 cannot hold (after odd sizes are cropped to even, a
/// side would be 0), naming the source rather than the output.
pub(crate) fn check_encodable(stream: &ProcessedStream) -> Result<()> {
    let (width, height) = stream.display_size();
    if width < 2 || height < 2 {
        return Err(crate::error::Error::request(
            &stream.source,
            format!(
                "its pictures are {width}x{height}; an H.264 output needs at least 2x2 pixels \
                 (export frames can still sample it as images)"
            ),
        ));
    }
    Ok(())
}

/// The encode settings of an export: its own values, else the run's defaults.
pub(crate) fn encode_settings(
    ctx: &ExportContext,
    crf: Option<f32>,
    preset: Option<&str>,
    audio: Option<bool>,
) -> EncodeSettings {
    let mut e = ctx.defaults.clone();
    if let Some(c) = crf {
        e.crf = c;
    }
    if let Some(p) = preset {
        e.preset = p.to_string();
    }
    if let Some(a) = audio {
        e.audio = a;
    }
    e
}
