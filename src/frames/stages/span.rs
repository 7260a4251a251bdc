//! The span stage: which source frames the processed stream holds and where it ends (the
//! decision point), resolved by [`super::resolve`]'s rules.

use crate::error::Result;
use crate::frames::stages::builder::{Stage, StreamBuilder};
use crate::frames::stages::resolve::{resolve_clip, ClipSpec};

/// The span stage of a plan.
pub(crate) struct SpanStage {
    pub spec: ClipSpec,
}

impl Stage for SpanStage {
    fn shape(&self, stream: &mut StreamBuilder) -> Result<()> {
        stream.resolved = resolve_clip(&stream.source, &stream.table, &self.spec)?;
        Ok(())
    }
}
