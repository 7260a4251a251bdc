//! The `hf-processor` sampler: transformers' `BaseVideoProcessor.sample_frames` up to 5.15
//! (`torch.arange(0, total, total / N).int()`, float32 as torch's CPU kernel computes it).
//! transformers refuses rather than repeat frames, and so does this sampler.

use super::numeric::hf_torch_arange_indices;
use super::transformers::{arange_picked, hf_refusal, transformers_fps};
use super::{Formula, FrameTimes, Picked, SampleError, Sampler};

/// `hf-processor`: transformers `video_processing_utils.py`
/// `BaseVideoProcessor.sample_frames` as in transformers 4.x to 5.15 (the video processors'
/// `do_sample_frames=True` path): `torch.arange(0, total_num_frames, total_num_frames /
/// num_frames).int()`, raising when `num_frames > total_num_frames` (so `allow_repeats`
/// cannot apply). torch's float32 `arange` on CPU: length `ceil(total / step)` in f64
/// (`RangeFactories.cpp`), values from `RangeFactoriesKernel.cpp` `arange_kernel` with the
/// double accumulation type and torch's AVX2 vector path (8 floats a vector, two vectors
/// per loop step, the remainder scalar): a vector starting at `b` holds
/// `(float)((double)(float)(step * b) + j * step)` for `j` in 0..8, a scalar element is
/// `(float)(step * i)`; then truncation. (AVX512 CPUs run the same AVX2 kernel, because
/// `REGISTER_DISPATCH` leaves the AVX512 slot empty; ARM builds may differ in rare cases.)
/// Verified against torch 2.15.0 on 24,660 (total, N) pairs; the plain scalar formula
/// differs in 293 of them. This is torch on one thread; above 32,768 frames (torch's
/// `GRAIN_SIZE`) a multi-threaded torch splits the range into per-thread chunks whose
/// vector blocks start at the chunk start, so its result then depends on the thread count.
/// Fps: `num_frames = int(total_num_frames / metadata.fps * fps)`.
#[derive(Clone, Copy, Debug)]
pub struct HfProcessor;

impl Formula for HfProcessor {
    fn name(&self) -> &'static str {
        "hf-processor"
    }

    fn refuses_repeats(&self) -> bool {
        true
    }

    fn count(&self, total: usize, n: usize) -> Result<Picked, SampleError> {
        if n > total {
            return Err(hf_refusal(Sampler::of(&HfProcessor), n, total));
        }
        Ok(arange_picked(
            hf_torch_arange_indices(total, n),
            format!("torch.arange(0, {total}, {total} / {n}).int()"),
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
        transformers_fps(Sampler::of(&HfProcessor), video, fps, max_frames, false)
    }
}
