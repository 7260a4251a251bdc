//! `vidprep track`'s reading: the tracker's frames come from the executor's stream of the whole
//! source ([`super::read_stream`]: the call's table cache, the one mismatch retry), decoded from
//! the input the stream was opened with. The tracking itself is `crate::frames::tracking`.

use crate::annotations::{Annotations, Fill};
use crate::call::context::CallContext;
use crate::error::Result;
use crate::frames::tracking::{DecodedFrames, GapRecord, TrackTiming};
use crate::media::source::Source;
use crate::media::table::TableCache;
use crate::plan::Plan;

use super::ExecOptions;

/// `vidprep track`: the tracks of `annotations` (hand-drawn keys, often one box) filled over
/// `source`'s frames before `end` (exclusive; `None`: to the end) as `fill` says. With
/// `Fill::Track`: between keys both ways, after each track's last key forward to `end` (while
/// the tracker holds the object). The result has a frame key for every frame with a box
/// (pixels of the upright frame), what was done to each gap, and the time it took.
pub fn track_source(
    source: &Source,
    annotations: &Annotations,
    end: Option<usize>,
    fill: Fill,
    ctx: &CallContext,
) -> Result<(Annotations, Vec<GapRecord>, TrackTiming)> {
    track_source_in(source, annotations, end, fill, &TableCache::new(), ctx)
}

/// [`track_source`] with the frame tables of `tables` (a caller that read the source's table
/// before, to check the keys against its frames, hands its cache on: the source is scanned
/// once).
pub fn track_source_in(
    source: &Source,
    annotations: &Annotations,
    end: Option<usize>,
    fill: Fill,
    tables: &TableCache,
    ctx: &CallContext,
) -> Result<(Annotations, Vec<GapRecord>, TrackTiming)> {
    // The whole source, as a plan with nothing to export: the executor's stream of it.
    let mut plan = Plan::new("track", source.path(), Vec::new());
    plan.source_fps = source.fps();
    let mut options = ExecOptions::default().in_context(ctx);
    options.tables = tables.clone();
    super::read_stream(&plan, &options, ctx, |stream| {
        let mut frames = DecodedFrames::of(stream.source_reader()?);
        crate::frames::tracking::track_frames(
            source,
            &stream.table,
            &mut frames,
            annotations,
            end,
            fill,
        )
    })
}
