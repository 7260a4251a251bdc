//! What the four transformers samplers (`hf`, `hf-load-video`, `hf-processor`, `hf-default`)
//! share: the fps rule `num_frames = int(total_num_frames / video_fps * fps)`, transformers'
//! refusal to repeat frames, and the report of the extra (or out-of-range) element that the
//! `arange`-based formulas can return.

use super::{
    join_notes, nominal_fps_checked, picked, sample_count, FrameTimes, Picked, SampleError, Sampler,
};

/// The transformers fps rule: `num_frames = int(total_num_frames / video_fps * fps)` (from
/// transformers 5.22, `hf-default`, `max(1, ...)`: `at_least_one`), raising when that exceeds
/// the total; then `sampler`'s count formula for `num_frames`.
pub(super) fn transformers_fps(
    sampler: Sampler,
    video: &dyn FrameTimes,
    fps: f64,
    max_frames: Option<usize>,
    at_least_one: bool,
) -> Result<Picked, SampleError> {
    let total = video.total();
    let vfps = nominal_fps_checked(video, sampler)?;
    // num_frames = int(total_num_frames / video_fps * fps), and from transformers 5.22
    // (hf-default) max(1, ...).
    let mut n = (total as f64 / vfps * fps).trunc();
    if at_least_one {
        n = n.max(1.0);
    }
    if n > total as f64 {
        return Err(SampleError::Toolkit {
            sampler,
            reason: format!(
                "int({total} / {vfps} * {fps}) = {n} exceeds total_num_frames={total} \
                 (transformers raises)"
            ),
        });
    }
    let n = n as usize;
    if n == 0 {
        return Err(SampleError::Toolkit {
            sampler,
            reason: format!(
                "int({total} / {vfps} * {fps}) = 0 frames (transformers would divide \
                 by zero); raise the fps or ask for a frame count"
            ),
        });
    }
    if let Some(m) = max_frames {
        if n > m {
            return Err(SampleError::ExceedsMax {
                sampler,
                got: n,
                max: m,
            });
        }
    }
    let p = sample_count(sampler, total, n, false)?;
    let note = join_notes(
        Some(format!("num_frames = int({total} / {vfps} * {fps}) = {n}")),
        p.note,
    );
    Ok(Picked { note, ..p })
}

/// The `arange`-based transformers formulas can return one element more than asked
/// (`ceil(total / (total / N))` rounds up to `N + 1`), and that element can be `total` itself,
/// one past the last frame (float rounding of `N * step`). An extra in-range element is kept,
/// as the toolkit returns it; an index `>= total` is dropped, since no frame has it
/// (transformers' pyav and opencv readers skip it silently; tensor indexing and decord raise).
/// Both are reported in the note.
pub(super) fn arange_picked(raw: Vec<usize>, formula: String, n: usize, total: usize) -> Picked {
    let len = raw.len();
    let indices: Vec<usize> = raw.into_iter().filter(|&i| i < total).collect();
    let dropped = len - indices.len();
    let mut notes = Vec::new();
    if len != n {
        notes.push(format!(
            "arange returned {len} indices for {n} requested (ceil({total} / ({total} / {n})) \
             is {len} in f64)"
        ));
    }
    if dropped > 0 {
        notes.push(format!(
            "it included index {total}, one past the last frame (float rounding), which was \
             dropped: transformers' pyav/opencv readers skip it, tensor indexing and decord raise"
        ));
    } else if len != n {
        notes.push("the extra in-range index was kept, as the toolkit returns it".to_string());
    }
    let note = (!notes.is_empty()).then(|| notes.join("; "));
    picked(indices, formula, note)
}

/// transformers' refusal of `num_frames > total_num_frames` (the video processors raise).
pub(super) fn hf_refusal(sampler: Sampler, n: usize, total: usize) -> SampleError {
    SampleError::Toolkit {
        sampler,
        reason: format!(
            "num_frames={n} exceeds total_num_frames={total}, and transformers raises rather \
             than repeat frames"
        ),
    }
}
