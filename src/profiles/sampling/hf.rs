//! The `hf` sampler: transformers' `get_uniform_frame_indices`
//! (`np.arange(0, total, total / N).astype(int)`, float64 and truncated).

use super::numeric::hf_arange_astype_indices;
use super::transformers::{arange_picked, transformers_fps};
use super::{Formula, FrameTimes, Picked, SampleError, Sampler};

/// `hf`: transformers `src/transformers/video_utils.py` `get_uniform_frame_indices`
/// (4.x to 5.24, deprecated in 5.24):
/// `np.arange(0, total_num_frames, total_num_frames / num_frames).astype(int)`. numpy's
/// arange has `ceil(total / (total / N))` elements (in f64; `ctors.c` `_calc_length`) with
/// values `0 + i * step` (`DOUBLE_fill`), truncated. Float rounding can give `N + 1`
/// elements (total 15, N 13: `15 / (15 / 13)` is `13.000000000000002`, so 14 indices, all
/// kept), and the extra one can be `total` itself (total 17, N 7: `7 * (17 / 7)` rounds to
/// `17.0`), an index no frame has, which is dropped; both are reported in
/// [`Sampled::note`](super::Sampled::note). The function has no fps mode; fps requests
/// use `default_sample_indices_fn`'s 4.x rule `num_frames = int(total_num_frames /
/// video_fps * fps)` (which raises when that exceeds the total).
#[derive(Clone, Copy, Debug)]
pub struct Hf;

impl Formula for Hf {
    fn name(&self) -> &'static str {
        "hf"
    }

    fn count(&self, total: usize, n: usize) -> Result<Picked, SampleError> {
        Ok(arange_picked(
            hf_arange_astype_indices(total, n),
            format!("numpy.arange(0, {total}, {total} / {n}).astype(int)"),
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
        transformers_fps(Sampler::of(&Hf), video, fps, max_frames, false)
    }
}
