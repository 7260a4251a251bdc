//! What a stage is ([`Stage`]) and what it sees and changes while the processed stream is
//! built ([`StreamBuilder`]): the source, its frame table, the resolved span, the needle, the
//! box sources and warnings. The stages (`span`, `insert`, `boxes`) and the stream
//! ([`super::stream`]) use it; it uses only the records they fill ([`super::resolve`]'s
//! `ResolvedClip`, [`super::needle`]'s `PreparedNeedle`).

use std::path::PathBuf;
use std::sync::Arc;

use crate::call::context::CallContext;
use crate::error::Result;
use crate::frames::overlay::{SourceBoxes, Style};
use crate::frames::stages::needle::PreparedNeedle;
use crate::frames::stages::resolve::ResolvedClip;
use crate::media::input::VideoStreamInfo;
use crate::media::source::Source;
use crate::media::table::FrameTable;
use crate::vocab::time::Time;
use crate::vocab::Fit;

/// A step of the processed stream, built from a plan.
pub(crate) trait Stage {
    /// Applies the stage while the stream is built: narrows the source frames, splices in
    /// frames, adds box sources to record and draw, adds sidecar facts.
    fn shape(&self, stream: &mut StreamBuilder) -> Result<()>;
}

/// A needle spliced into the stream.
pub(crate) struct NeedleSegment {
    pub prepared: PreparedNeedle,
    /// Index in the clip of the frame the needle goes before.
    pub at: usize,
    /// Clip time of the insertion.
    pub time: Time,
    pub seed: Option<u64>,
    pub fit: Fit,
}

/// What stages see and change while the stream is built.
pub(crate) struct StreamBuilder {
    pub source: PathBuf,
    /// The source with its rate, as the media layer opens it.
    pub input: Source,
    pub table: Arc<FrameTable>,
    pub info: VideoStreamInfo,
    /// Size of the source's frames as decoded: upright, stored pixels.
    pub size: (u32, u32),
    pub resolved: ResolvedClip,
    pub needle: Option<NeedleSegment>,
    /// Box sources by pipeline source id (0: the video, 1: a needle).
    pub box_sources: Vec<(usize, Arc<SourceBoxes>)>,
    /// Boxes to draw on every export's frames.
    pub draws: Vec<(usize, Arc<SourceBoxes>, Style)>,
    pub warnings: Vec<String>,
    /// The call the stream is built for (a stage that reads the source, tracking, reads
    /// for it).
    pub call: CallContext,
}

impl StreamBuilder {
    /// Records `boxes` (of pipeline source `source`) into every output, and draws them when
    /// `draw` says how.
    pub fn add_box_source(&mut self, source: usize, boxes: Arc<SourceBoxes>, draw: Option<Style>) {
        if let Some(style) = draw {
            self.draws.push((source, boxes.clone(), style));
        }
        self.box_sources.push((source, boxes));
    }
}
