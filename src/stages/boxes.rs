//! The boxes stage: the source's annotations read in their format, resolved onto its frames
//! (keys interpolated or held as asked), recorded into every output in its own frames and
//! pixels, and drawn on each export's frames after that export's resize (so line widths and
//! labels suit the pixels the model sees).

use std::sync::Arc;

use crate::error::Result;
use crate::overlay::{BoxesRequest, SourceBoxes};
use crate::stages::stream::StreamBuilder;
use crate::stages::Stage;

/// The boxes stage of a plan.
pub(crate) struct BoxesStage {
    pub request: BoxesRequest,
}

impl Stage for BoxesStage {
    fn shape(&self, stream: &mut StreamBuilder) -> Result<()> {
        let (w, h) = stream.size;
        let boxes = Arc::new(SourceBoxes::load(&self.request, &stream.table, w, h)?);
        stream.warnings.extend(boxes.warnings.iter().cloned());
        stream.add_box_source(0, boxes, self.request.draw.clone());
        Ok(())
    }
}
