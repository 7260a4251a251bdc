//! The `hf-default` sampler: transformers' `default_sample_indices_fn` from 5.18 on, used by
//! both `load_video` and the video processors (`np.arange(N, dtype=int) * total // N`, exact
//! integers). transformers refuses rather than repeat frames, and so does this sampler.

use super::numeric::hf_default_indices;
use super::transformers::{hf_refusal, transformers_fps};
use super::{picked, Formula, FrameTimes, Picked, SampleError, Sampler};

/// `hf-default`: transformers `video_utils.py` `default_sample_indices_fn` from 5.18 on
/// (checked: 5.18.0, 5.20.0, 5.22.0, 5.24.0), which `BaseVideoProcessor.sample_frames` and
/// `load_video` both use: `np.arange(num_frames, dtype=int) * total_num_frames //
/// num_frames`, i.e. exact integers `floor(i * total / N)`; raises when `num_frames >
/// total_num_frames`. Fps: `num_frames = max(1, int(total_num_frames / video_fps * fps))`
/// (the `max(1, ...)` is in 5.22 and 5.24, not in 5.18 or 5.20).
#[derive(Clone, Copy, Debug)]
pub struct HfDefault;

impl Formula for HfDefault {
    fn name(&self) -> &'static str {
        "hf-default"
    }

    fn refuses_repeats(&self) -> bool {
        true
    }

    fn count(&self, total: usize, n: usize) -> Result<Picked, SampleError> {
        if n > total {
            return Err(hf_refusal(Sampler::of(&HfDefault), n, total));
        }
        Ok(picked(
            hf_default_indices(total, n),
            format!("numpy.arange({n}, dtype=int) * {total} // {n}"),
            None,
        ))
    }

    fn fps(
        &self,
        video: &dyn FrameTimes,
        fps: f64,
        max_frames: Option<usize>,
        _allow_repeats: bool,
    ) -> Result<Picked, SampleError> {
        // max(1, ...) is in transformers 5.22 and 5.24.
        transformers_fps(Sampler::of(&HfDefault), video, fps, max_frames, true)
    }
}
