//! The boxes stage: the source's annotations read in their format, resolved onto its frames
//! (keys interpolated, held or tracked as asked: `fill: track` runs `tracking` over the
//! source's exact frames), recorded into every output in its own frames and
//! pixels, and drawn on each export's frames after that export's resize (so line widths and
//! labels suit the pixels the model sees).

use std::sync::Arc;

use crate::annotations::Fill;
use crate::error::Result;
use crate::frames::overlay::{BoxesRequest, SourceBoxes};
use crate::frames::stages::builder::{Stage, StreamBuilder};
use crate::frames::tracking::{fill_gaps, TrackOptions};

/// The boxes stage of a plan.
pub(crate) struct BoxesStage {
    pub request: BoxesRequest,
}

impl Stage for BoxesStage {
    fn shape(&self, stream: &mut StreamBuilder) -> Result<()> {
        let (w, h) = stream.size;
        // Only the frames the output keeps (and each track's nearest keys around them).
        let span = stream.resolved.kept.start..stream.resolved.kept.end;
        let display = stream.info.displayed_size();
        let mut boxes = SourceBoxes::load(
            &self.request,
            &stream.table,
            (w, h),
            display,
            Some(span),
            &stream.call,
        )?;
        if let Fill::Track(kind) = self.request.fill {
            // The gaps resolution listed, tracked over the source's exact frames.
            let ids: Vec<String> = boxes
                .annotations
                .tracks
                .iter()
                .map(|t| t.id.clone())
                .collect();
            let options = TrackOptions::new(kind);
            // Only the gaps that reach the frames the output keeps are worth tracking.
            let (kept_start, kept_end) = (stream.resolved.kept.start, stream.resolved.kept.end);
            boxes.resolved.gaps.retain(|g| {
                let end = match g.to {
                    Some((b, _)) => b,
                    None => g.end.min(g.from.0 + 1 + options.forward_limit),
                };
                g.from.0 + 1 < kept_end && end > kept_start
            });
            let records = fill_gaps(
                &stream.input,
                stream.table.clone(),
                &mut boxes.resolved,
                &ids,
                &options,
                &stream.call,
            )?;
            for w in records
                .iter()
                .filter_map(|g| g.warning(options.min_drift_iou))
            {
                boxes
                    .warnings
                    .push(format!("{}: {w}", self.request.path.display()));
            }
            boxes.tracked = records;
        }
        let boxes = Arc::new(boxes);
        stream.warnings.extend(boxes.warnings.iter().cloned());
        stream.add_box_source(0, boxes, self.request.draw.clone());
        Ok(())
    }
}
