//! The `hf-load-video` sampler: transformers' `default_sample_indices_fn` up to 5.15, what
//! `load_video(..., num_frames=N)` uses (`np.arange(0, total, total / N, dtype=int)`, an
//! integer step).

use super::numeric::hf_arange_dtype_int_indices;
use super::transformers::{arange_picked, transformers_fps};
use super::{Formula, FrameTimes, Picked, SampleError, Sampler};

/// `hf-load-video`: transformers `video_utils.py` `default_sample_indices_fn` as in
/// transformers 4.x to 5.15 (checked: 4.57.6, 5.0.0, 5.12.0, 5.15.0), what
/// `load_video(..., num_frames=N)` uses when no `sample_indices_fn` is given:
/// `np.arange(0, total_num_frames, total_num_frames / num_frames, dtype=int)`. With an
/// integer dtype numpy stores `int(0)` and `int(0 + step)` and fills `start + i * delta`
/// with the integer `delta = int(step)` (`LONG_fill`), so the spacing is `trunc(total / N)`
/// (total 300, N 16 gives 0, 18, 36, ..., 270 where `hf` gives 0, 18, 37, ..., 281), and
/// `N > total` gives all zeros. Fps: `num_frames = int(total_num_frames / video_fps * fps)`,
/// raising when it exceeds the total.
#[derive(Clone, Copy, Debug)]
pub struct HfLoadVideo;

impl Formula for HfLoadVideo {
    fn name(&self) -> &'static str {
        "hf-load-video"
    }

    fn count(&self, total: usize, n: usize) -> Result<Picked, SampleError> {
        Ok(arange_picked(
            hf_arange_dtype_int_indices(total, n),
            format!("numpy.arange(0, {total}, {total} / {n}, dtype=int)"),
            n,
            total,
        ))
    }

    fn fps(
        &self,
        video: &dyn FrameTimes,
        fps: f64,
        max_frames: Option<usize>,
        _allow_repeats: bool,
    ) -> Result<Picked, SampleError> {
        transformers_fps(Sampler::of(&HfLoadVideo), video, fps, max_frames, false)
    }
}
