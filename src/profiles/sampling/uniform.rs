//! The `uniform` sampler, vidprep's own and the default: frames evenly spaced from the first
//! to the last, exactly as `numpy.round(numpy.linspace(...))` computes them. Its fps requests
//! use the generic fps rule (see [`Request::Fps`](super::Request::Fps)).

use super::numeric::uniform_indices;
use super::{generic_fps, picked, Formula, FrameTimes, Picked, SampleError};

/// `uniform` (the default; vidprep's own): `numpy.round(numpy.linspace(0, total - 1, N))`,
/// i.e. evenly spaced over first..last frame, rounded half to even, exactly as numpy
/// computes it (`step = (total-1)/(N-1)`, `y[i] = i*step + 0`, last element set to
/// `total-1`; `N = 1` gives frame 0). Fps requests use the generic fps rule (see
/// [`Request::Fps`](super::Request::Fps)).
#[derive(Clone, Copy, Debug)]
pub struct Uniform;

impl Formula for Uniform {
    fn name(&self) -> &'static str {
        "uniform"
    }

    fn count(&self, total: usize, n: usize) -> Result<Picked, SampleError> {
        let last = total - 1;
        Ok(picked(
            uniform_indices(total, n),
            format!("numpy.round(numpy.linspace(0, {last}, {n})).astype(int)"),
            None,
        ))
    }

    fn fps(
        &self,
        video: &dyn FrameTimes,
        fps: f64,
        max_frames: Option<usize>,
        allow_repeats: bool,
    ) -> Result<Picked, SampleError> {
        generic_fps(video, fps, max_frames, allow_repeats)
    }
}
