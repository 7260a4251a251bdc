//! The `vlmevalkit` sampler: VLMEvalKit's `save_video_frames` / `frame_paths`, in count mode
//! (points strictly inside the video) and fps mode (steps of the container's float rate).

use super::numeric::vlmevalkit_count_indices;
use super::{
    fps_repeats_check, nominal_fps_checked, picked, Formula, FrameTimes, Picked, SampleError,
    Sampler, MAX_SAMPLES,
};

/// `vlmevalkit`: VLMEvalKit `save_video_frames` / `frame_paths` (e.g.
/// `vlmeval/dataset/videomme.py`; most of its video datasets copy it, a few clamp or shift
/// it slightly). Count mode: `step_size = len(vid) / (self.nframe + 1)`,
/// `indices = [int(i * step_size) for i in range(1, self.nframe + 1)]` (points strictly
/// inside the video, so frame 0 and the last frame are skipped unless N is close to the
/// total). Fps mode: `total_duration = n_frames / fps;
/// required_frames = int(total_duration * self.fps); step_size = fps / self.fps;
/// indices = [int(i * step_size) for i in range(required_frames)]`, with `fps` the
/// container's float rate ([`FrameTimes::nominal_fps`]). Fps mode has no frame cap.
#[derive(Clone, Copy, Debug)]
pub struct VlmEvalKit;

impl Formula for VlmEvalKit {
    fn name(&self) -> &'static str {
        "vlmevalkit"
    }

    fn count(&self, total: usize, n: usize) -> Result<Picked, SampleError> {
        Ok(picked(
            vlmevalkit_count_indices(total, n),
            format!(
                "[int(i * ({total} / {})) for i in range(1, {})]",
                n + 1,
                n + 1
            ),
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
        let sampler = Sampler::of(&VlmEvalKit);
        let total = video.total();
        if total == 0 {
            return Err(SampleError::Toolkit {
                sampler,
                reason: "the video has no frames".into(),
            });
        }
        let last = total - 1;
        let vfps = nominal_fps_checked(video, sampler)?;
        let total_duration = total as f64 / vfps;
        let required = (total_duration * fps).trunc();
        if required < 1.0 {
            return Err(SampleError::Toolkit {
                sampler,
                reason: format!(
                    "int({total} / {vfps} * {fps}) = 0: VLMEvalKit's fps mode selects no \
                     frames for this video; raise the fps or ask for a frame count"
                ),
            });
        }
        if required as u128 > MAX_SAMPLES {
            return Err(SampleError::TooManySamples(required as u128));
        }
        let required = required as usize;
        if let Some(m) = max_frames {
            if required > m {
                return Err(SampleError::ExceedsMax {
                    sampler,
                    got: required,
                    max: m,
                });
            }
        }
        let step_size = vfps / fps;
        let indices: Vec<usize> = (0..required)
            .map(|i| (i as f64 * step_size) as usize)
            .collect();
        if let Some(&bad) = indices.iter().find(|&&i| i >= total) {
            return Err(SampleError::Toolkit {
                sampler,
                reason: format!("the fps rule selects frame {bad}, past the last frame {last}"),
            });
        }
        let formula =
            format!("[int(i * ({vfps} / {fps})) for i in range(int({total} / {vfps} * {fps}))]");
        fps_repeats_check(indices, formula, allow_repeats, total, || {
            format!("VLMEvalKit's fps rule at {fps} fps")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiles::sampling::ConstantRate;

    /// Found by the `profile_options` fuzz entry (10,000 mutations, seed 1): the fps mode on a
    /// video of no frames subtracted 1 from 0 frames (a panic); it is refused with the reason.
    #[test]
    fn no_frames_is_refused_not_a_panic() {
        let e = VlmEvalKit
            .fps(&ConstantRate::new(0, 30, 1), 1.0, None, true)
            .unwrap_err();
        assert!(e.to_string().contains("no frames"), "{e}");
    }
}
