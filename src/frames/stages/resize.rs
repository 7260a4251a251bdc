//! General pipeline stages: resizing ([`ScaleStage`]) and frame-rate reduction
//! ([`DecimateStage`]). Both keep the frames' geometry and timing true, so boxes and sidecars
//! follow them.

use crate::error::{Error, Result};
use crate::frames::pipeline::{FrameStage, Geometry, PipelineFrame};
use crate::media::{Converter, PixelFormat, Scaling};

/// Resizes every frame to `size` (bicubic, like the ffmpeg CLI's scale filter).
pub struct ScaleStage {
    size: (u32, u32),
    converter: Converter,
    /// RGB-coded pictures ([`PipelineFrame::rgb`]) are scaled in RGB, as the ffmpeg CLI's
    /// `scale` filter followed by `-pix_fmt rgb24` does.
    rgb: Converter,
}

impl ScaleStage {
    pub fn new(size: (u32, u32)) -> ScaleStage {
        ScaleStage {
            size,
            converter: Converter::new(PixelFormat::PIPELINE, Some(size), Scaling::BICUBIC),
            rgb: Converter::new(PixelFormat::RGB24, Some(size), Scaling::BICUBIC),
        }
    }
}

impl FrameStage for ScaleStage {
    fn apply(&mut self, frame: &mut PipelineFrame) -> Result<()> {
        let (w, h) = (frame.image.width(), frame.image.height());
        if (w, h) == self.size {
            return Ok(());
        }
        let failed = |e| {
            Error::Usage(format!(
                "cannot scale frame {} to {}x{}: {e}",
                frame.index, self.size.0, self.size.1
            ))
        };
        frame.image = self.converter.convert(&frame.image).map_err(failed)?;
        if let Some(rgb) = frame.rgb.take() {
            frame.rgb = Some(self.rgb.convert(&rgb).map_err(failed)?);
        }
        let resize = Geometry {
            scale_x: self.size.0 as f64 / w as f64,
            scale_y: self.size.1 as f64 / h as f64,
            offset_x: 0.0,
            offset_y: 0.0,
        };
        frame.geometry = frame.geometry.then(&resize);
        Ok(())
    }
}

/// Keeps one frame in `every`, each kept frame shown for the time of the frames it stands for.
pub struct DecimateStage {
    every: usize,
    seen: usize,
}

impl DecimateStage {
    pub fn new(every: usize) -> DecimateStage {
        DecimateStage {
            every: every.max(1),
            seen: 0,
        }
    }
}

impl FrameStage for DecimateStage {
    fn keeps(&mut self, _frame: &PipelineFrame) -> bool {
        let keep = self.seen.is_multiple_of(self.every);
        self.seen += 1;
        keep
    }

    fn apply(&mut self, frame: &mut PipelineFrame) -> Result<()> {
        frame.duration = frame.duration * self.every as i64;
        Ok(())
    }
}
