//! The `qwen` sampler: qwen-vl-utils' `smart_nframes` (the frame count, rounded to a multiple
//! of 2 and, for fps requests, clamped) and its float32 `torch.linspace` indices. The toolkit
//! refuses rather than repeat frames, and so does this sampler.

use super::numeric::{
    qwen_indices, qwen_max_frames, qwen_nframes_for_count, qwen_nframes_for_fps,
    QWEN_FPS_MIN_FRAMES, QWEN_FRAME_FACTOR,
};
use super::{nominal_fps_checked, picked, Formula, FrameTimes, Picked, SampleError, Sampler};

/// `qwen`: qwen-vl-utils (0.0.14, `qwen-vl-utils/src/qwen_vl_utils/vision_process.py`)
/// `smart_nframes` + `_read_video_*`: `idx = torch.linspace(0, total_frames - 1,
/// nframes).round().long()`: torch's default float32 `linspace` on CPU
/// (`aten/src/ATen/native/cpu/RangeFactoriesKernel.cpp`, `linspace_kernel`):
/// `step = (float(end) - float(start)) / (steps - 1)` in f32, element `i` is
/// `start + step * i` for `i < steps / 2` and `end - step * (steps - i - 1)` from there
/// (so the last element is exactly `end`), `steps == 1` gives `[start]`; each element is
/// rounded to f32 once (torch's AVX2 build fuses the multiply-add: verified against torch
/// 2.15.0 on 28,700 (total, steps) pairs, where two f32 roundings differ in 16,452), then
/// `round()` half to even.
///
/// `nframes`: for a count request, `round_by_factor(nframes, FRAME_FACTOR)` =
/// `round(N / 2) * 2` (Python round, half to even: 5 -> 4, 7 -> 8, 1 -> 0); for an fps
/// request, `min_frames = ceil_by_factor(FPS_MIN_FRAMES=4, 2)`, `max_frames =
/// floor_by_factor(max_frames or min(FPS_MAX_FRAMES=768, total_frames), 2)`,
/// `nframes = total_frames / video_fps * fps`, `nframes = min(min(max(nframes, min_frames),
/// max_frames), total_frames)`, `nframes = floor_by_factor(nframes, 2)`. Then
/// qwen-vl-utils requires `2 <= nframes <= total_frames` and raises otherwise; so does this
/// sampler (even with `allow_repeats`). The [4, 768] clamp applies to fps requests only:
/// an explicit count is only rounded to a multiple of 2, as in the source.
#[derive(Clone, Copy, Debug)]
pub struct Qwen;

impl Formula for Qwen {
    fn name(&self) -> &'static str {
        "qwen"
    }

    fn refuses_repeats(&self) -> bool {
        true
    }

    fn count(&self, total: usize, n: usize) -> Result<Picked, SampleError> {
        let last = total - 1;
        let nframes = qwen_nframes_for_count(n);
        if !(QWEN_FRAME_FACTOR <= nframes && nframes <= total) {
            return Err(qwen_range_error(
                &format!("nframes {n} rounded to a multiple of 2 (round(n / 2) * 2)"),
                nframes,
                total,
            ));
        }
        let note = (nframes != n)
            .then(|| format!("qwen-vl-utils rounds nframes {n} to {nframes} (round(n / 2) * 2)"));
        Ok(picked(
            qwen_indices(total, nframes),
            format!("torch.linspace(0, {last}, {nframes}).round().long()"),
            note,
        ))
    }

    fn fps(
        &self,
        video: &dyn FrameTimes,
        fps: f64,
        max_frames: Option<usize>,
        _allow_repeats: bool,
    ) -> Result<Picked, SampleError> {
        let total = video.total();
        let last = total - 1;
        let vfps = nominal_fps_checked(video, Sampler::of(&Qwen))?;
        let nframes = qwen_nframes_for_fps(total, vfps, fps, max_frames);
        if !(QWEN_FRAME_FACTOR <= nframes && nframes <= total) {
            return Err(qwen_range_error(
                &format!("smart_nframes for {total} frames at {vfps} fps sampled at {fps} fps"),
                nframes,
                total,
            ));
        }
        Ok(picked(
            qwen_indices(total, nframes),
            format!("torch.linspace(0, {last}, {nframes}).round().long()"),
            Some(format!(
                "smart_nframes: {total} / {vfps} * {fps} clamped to [{QWEN_FPS_MIN_FRAMES}, \
                 {}] and floored to a multiple of 2 gives {nframes}",
                qwen_max_frames(total, max_frames)
            )),
        ))
    }
}

/// qwen-vl-utils' refusal of a frame count outside `[2, total]`.
fn qwen_range_error(what: &str, nframes: usize, total: usize) -> SampleError {
    SampleError::Toolkit {
        sampler: Sampler::of(&Qwen),
        reason: format!(
            "qwen-vl-utils needs nframes in [{QWEN_FRAME_FACTOR}, {total}] (the video's frame \
             count) and never repeats frames, but {what} gives {nframes}"
        ),
    }
}
