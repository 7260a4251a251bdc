//! The `glm-4.6v` profile: transformers 5.25's `Glm46VVideoProcessor`
//! (`models/glm46v/video_processing_glm46v.py`) with `do_sample_frames=True`, reading with
//! torchcodec (`video_utils.read_video_torchcodec`: its `num_frames`, `average_fps` and
//! `duration_seconds`), and the frame strings of `Glm46VProcessor.replace_video_token`
//! (`processing_glm46v.py`).
//!
//! Its `sample_frames` ignores `num_frames` and `fps`: a hardcoded rate table picks the frames
//! (`DYNAMIC_FPS_THRES = {30: 3, 300: 1, 2400: 0.5}`, `MAX_FRAME_COUNT_DYNAMIC = 640`,
//! `MAX_DURATION = 2400`: transformers PR #42122). The frame count is
//! `extract_t = min(int(min(duration, 2400) · rate · 2), 640)`; a walk over every frame's time
//! `i / fps` keeps the first frame at or after each step of `1 / (2 · rate)` s up to
//! `int(duration)`; too few or too many give `np.linspace(..., extract_t, dtype=int)` instead;
//! repeats are dropped and an odd count is padded with the last frame (the temporal patch
//! is 2). The size is `smart_resize(num_frames, h, w, temporal_factor=2, factor=28,
//! min_pixels=112·112, max_pixels=28·28·2·30000)` (the Qwen3-VL one over the whole clip:
//! [`super::qwen::smart_resize_video`]), the resize torchvision's v2 uint8 bicubic. The
//! processor writes `<|begin_of_image|>` + the frame's tokens + `<|end_of_image|>` +
//! `f"{t:.1f} seconds"` for each temporal patch, `t` the time of its first frame
//! (`metadata.timestamps[::2]`).
//!
//! The video path is the same in every transformers release from 5.0.0 to 5.25.0 (the
//! released wheels' `video_processing_glm46v.py` differ in imports and in
//! `get_num_of_video_patches`' keyword handling only).

use serde_json::json;

use super::qwen::{processor_applied, rule, smart_resize_video, ProcessorOutcome};
use super::{Applied, Mirror, Profile, ProfileError, ProfileInput, ProfileRequest, Rule};
use crate::profiles::sampling::numpy_linspace;

/// `DYNAMIC_FPS_THRES`, `MAX_FRAME_COUNT_DYNAMIC`, `MAX_DURATION`.
const RATES: [(f64, f64); 3] = [(30.0, 3.0), (300.0, 1.0), (2400.0, 0.5)];
const MAX_FRAMES: usize = 640;
const MAX_DURATION: f64 = 2400.0;
const TEMPORAL_PATCH: usize = 2;
/// `size`: `shortest_edge` 112·112, `longest_edge` 28·28·2·30000.
const SHORTEST_EDGE: f64 = 112.0 * 112.0;
const LONGEST_EDGE: f64 = 28.0 * 28.0 * 2.0 * 30000.0;
/// `patch_size * merge_size`.
const FACTOR: f64 = 28.0;

/// `np.linspace(start, end, n, dtype=int)` (numpy floors the values for an integer dtype).
fn linspace_int(start: usize, end: usize, n: usize) -> Vec<usize> {
    numpy_linspace(start as f64, end as f64, n)
        .into_iter()
        .map(|v| v.floor() as usize)
        .collect()
}

/// What `Glm46VVideoProcessor.sample_frames` decides for a video of `total` frames at `fps`
/// lasting `duration` seconds (torchcodec's metadata): the indices, and the rules.
fn sample_frames(
    total: usize,
    fps: f64,
    duration: f64,
) -> Result<(Vec<usize>, String, Vec<Rule>), String> {
    let mut rules = Vec::new();
    let max_frame_idx = total - 1;
    // `metadata.duration or round(max_frame_idx / metadata.fps) + 1`
    let duration = if duration > 0.0 {
        duration
    } else {
        (max_frame_idx as f64 / fps).round_ties_even() + 1.0
    };
    let effective = duration.min(MAX_DURATION);
    let rate = RATES
        .iter()
        .find(|(up_to, _)| effective <= *up_to)
        .map_or(RATES[2].1, |r| r.1);
    let extract_t = ((effective * rate * TEMPORAL_PATCH as f64).trunc() as usize).min(MAX_FRAMES);
    rules.push(rule(
        "extract_t",
        format!(
            "min(int(min(duration {duration}, 2400) * {rate} * 2), 640) (DYNAMIC_FPS_THRES: 3 fps \
             up to 30 s, 1 up to 300 s, 0.5 beyond)"
        ),
        json!(extract_t),
    ));
    if extract_t == 0 {
        return Err(format!(
            "the package samples no frames from a video of {duration} s (extract_t = \
             int({duration} * {rate} * 2) = 0), and its processor then fails: t:0 must be \
             larger than temporal_factor:2"
        ));
    }
    let per_frame = 1.0 / fps;
    let max_second = duration.trunc();
    let (mut indices, how) = if total < extract_t {
        (
            linspace_int(0, max_frame_idx, extract_t),
            format!("np.linspace(0, {max_frame_idx}, {extract_t}, dtype=int) (fewer frames than extract_t)"),
        )
    } else {
        let mut picked = Vec::new();
        let mut current = 0.0f64;
        let step = 1.0 / (TEMPORAL_PATCH as f64 * rate);
        for i in 0..total {
            if i as f64 * per_frame >= current {
                current += step;
                picked.push(i);
                if current >= max_second {
                    break;
                }
            }
        }
        let walked = format!(
            "the first frame at or after each step of {step} s (frame i at i * (1 / {fps}) s) up \
             to {max_second} s"
        );
        if picked.len() < extract_t {
            let (start, end) = match (picked.first(), picked.last()) {
                (Some(&a), Some(&b)) => (a, b),
                _ => (0, max_frame_idx),
            };
            (
                linspace_int(start, end, extract_t),
                format!(
                    "{walked}: {} frames, fewer than {extract_t}, so np.linspace({start}, {end}, \
                     {extract_t}, dtype=int)",
                    picked.len()
                ),
            )
        } else if picked.len() > extract_t {
            (
                linspace_int(0, max_frame_idx, extract_t),
                format!(
                    "{walked}: {} frames, more than {extract_t}, so np.linspace(0, \
                     {max_frame_idx}, {extract_t}, dtype=int)",
                    picked.len()
                ),
            )
        } else {
            (picked, walked)
        }
    };
    let mut seen = std::collections::HashSet::new();
    indices.retain(|i| seen.insert(*i));
    let padded = indices.len() % 2 == 1;
    if padded {
        indices.push(*indices.last().expect("at least one frame"));
    }
    let formula = format!(
        "{how}; repeats dropped{}",
        if padded {
            ", the last frame repeated to an even count"
        } else {
            ""
        }
    );
    rules.push(rule("sample_frames", formula.clone(), json!(indices.len())));
    Ok((indices, formula, rules))
}

/// The text after each `<|end_of_image|>`: `f"{t:.1f} seconds"` for the first frame of each
/// temporal patch (`metadata.timestamps[::2]`, `t = index / fps`).
pub fn glm_timestamps(indices: &[usize], fps: f64) -> Vec<String> {
    let grid_t = indices.len().div_ceil(TEMPORAL_PATCH);
    let mut times: Vec<f64> = indices
        .iter()
        .step_by(2)
        .map(|&i| i as f64 / fps)
        .take(grid_t)
        .collect();
    while times.len() < grid_t {
        times.push(times.last().copied().unwrap_or(0.0));
    }
    times.iter().map(|t| format!("{t:.1} seconds")).collect()
}

/// `glm-4.6v`.
pub struct Glm46v;

impl Profile for Glm46v {
    fn name(&self) -> &'static str {
        "glm-4.6v"
    }
    fn mirrors(&self) -> Mirror {
        Mirror {
            package: "transformers",
            version: "5.25",
            function: "Glm46VVideoProcessor (sample_frames: the rate table of PR #42122, \
                       resize) + Glm46VProcessor.replace_video_token",
        }
    }
    fn options(&self) -> &'static [&'static str] {
        &["shortest_edge", "longest_edge"]
    }
    fn refuse(&self, request: &ProfileRequest) -> Option<String> {
        (request.count.is_some() || request.fps.is_some()).then(|| {
            "Glm46VVideoProcessor.sample_frames ignores num_frames and fps: its rate table picks \
             the frames (3 fps up to 30 s, 1 fps up to 300 s, 0.5 fps beyond, at most 640 \
             frames); drop --count / --fps"
                .to_string()
        })
    }
    fn timestamps_of(&self, indices: &[usize], input: &ProfileInput) -> Option<Vec<String>> {
        (!indices.is_empty()).then(|| glm_timestamps(indices, input.frames.nominal_fps()))
    }
    fn apply(
        &self,
        input: &ProfileInput,
        request: &ProfileRequest,
    ) -> Result<Applied, ProfileError> {
        let name = self.name();
        let fail = |reason: String| ProfileError {
            profile: name,
            reason,
        };
        if let Some(reason) = self.refuse(request) {
            return Err(fail(reason));
        }
        let opt = |k: &str| request.options.get(k).copied();
        let total = input.frames.total();
        if total == 0 {
            return Err(fail("the video has no frames".into()));
        }
        let fps = input.frames.nominal_fps();
        if !(fps.is_finite() && fps > 0.0) {
            return Err(fail(format!(
                "the video's fps is {fps} (the package needs the metadata's fps to sample)"
            )));
        }
        let duration = input.frames.duration().as_secs_f64();
        let (indices, formula, mut rules) = sample_frames(total, fps, duration).map_err(&fail)?;
        let n = indices.len();
        let shortest = opt("shortest_edge").unwrap_or(SHORTEST_EDGE);
        let longest = opt("longest_edge").unwrap_or(LONGEST_EDGE);
        let (h, w) = smart_resize_video(
            n as f64,
            input.height as f64,
            input.width as f64,
            FACTOR,
            shortest,
            longest,
        )
        .map_err(fail)?;
        rules.push(rule(
            "smart_resize",
            format!(
                "smart_resize(num_frames={n}, {}, {}, temporal_factor=2, factor=28, \
                 min_pixels={shortest}, max_pixels={longest})",
                input.height, input.width
            ),
            json!({"height": h, "width": w}),
        ));
        let grid_t = n.div_ceil(TEMPORAL_PATCH) as u64;
        let tokens = grid_t * (h as u64 / 28) * (w as u64 / 28);
        Ok(processor_applied(ProcessorOutcome {
            profile: name,
            mirrors: self.mirrors(),
            timestamps: glm_timestamps(&indices, fps),
            indices,
            formula,
            size: (h, w),
            tokens,
            tokens_formula: format!(
                "grid_t {grid_t} frames of ({h} / 14) * ({w} / 14) // 2^2 image tokens each"
            ),
            rules,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values printed by transformers 5.25's `Glm46VVideoProcessor().sample_frames` on
    /// `VideoMetadata(total_num_frames, fps, duration)`.
    #[test]
    fn sample_frames_follows_the_rate_table() {
        // 20 s at 30 fps: 3 fps, 120 frames, every 5th.
        let (i, _, _) = sample_frames(600, 30.0, 20.0).unwrap();
        assert_eq!(i.len(), 120);
        assert_eq!(&i[..4], &[0, 5, 10, 15]);
        // (float times: frame 596 is the first at or after 19.8333... s)
        assert_eq!(&i[117..], &[585, 590, 596]);
        // 45 s at 10 fps: 1 fps, 90 frames, every 5th.
        let (i, _, _) = sample_frames(450, 10.0, 45.0).unwrap();
        assert_eq!(i.len(), 90);
        assert_eq!(&i[..3], &[0, 5, 10]);
        assert_eq!(*i.last().unwrap(), 445);
        // 79.5 s at 10 fps: the walk gives 158 < 159, linspace(0, 785, 159), padded to 160.
        let (i, f, _) = sample_frames(795, 10.0, 79.5).unwrap();
        assert_eq!(i.len(), 160);
        assert_eq!(&i[..3], &[0, 4, 9]);
        assert_eq!(&i[157..], &[780, 785, 785]);
        assert!(f.contains("np.linspace(0, 785, 159"), "{f}");
        // An hour at 1 fps: 2400 s, 0.5 fps, 640 frames at most.
        let (i, _, _) = sample_frames(3600, 1.0, 3600.0).unwrap();
        assert_eq!(i.len(), 640);
        assert_eq!(
            (&i[..3], &i[637..]),
            (&[0, 5, 11][..], &[3587, 3593, 3599][..])
        );
        // Too short to sample anything.
        assert!(sample_frames(1, 10.0, 0.1).is_err());
    }

    #[test]
    fn timestamps_are_each_temporal_patchs_first_frame() {
        assert_eq!(
            glm_timestamps(&[0, 5, 10, 15, 595, 595], 30.0),
            ["0.0 seconds", "0.3 seconds", "19.8 seconds"]
        );
    }
}
