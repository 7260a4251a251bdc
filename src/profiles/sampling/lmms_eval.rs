//! The `lmms-eval` sampler: lmms-eval's video loaders (`numpy.linspace(..., dtype=int)`), and
//! for fps requests the frame stepping of its `llava_vid` model.

use super::numeric::lmms_eval_indices;
use super::{nominal_fps_checked, picked, Formula, FrameTimes, Picked, SampleError, Sampler};

/// `lmms-eval`: `numpy.linspace(0, total_frame_num - 1, max_frames_num, dtype=int)`
/// (numpy floors the float values, i.e. truncates), from lmms-eval
/// `lmms_eval/models/model_utils/load_video.py` (`read_video_pyav`, `load_video_decord`)
/// and `lmms_eval/models/simple/llava_vid.py` (`load_video`).
///
/// Fps requests follow `llava_vid.py` `load_video`:
/// `fps = round(vr.get_avg_fps() / fps); frame_idx = [i for i in range(0, len(vr), fps)]`,
/// and `if len(frame_idx) > max_frames_num: frame_idx = np.linspace(0, total_frame_num - 1,
/// max_frames_num, dtype=int)` (Python `round`: half to even). Without `max_frames` there
/// is no fallback.
///
/// Note: `read_video_pyav` clamps `num_frm = min(total_frames, num_frm)` while the decord
/// loaders do not; `allow_repeats` reproduces the decord loaders (repeated indices).
#[derive(Clone, Copy, Debug)]
pub struct LmmsEval;

impl Formula for LmmsEval {
    fn name(&self) -> &'static str {
        "lmms-eval"
    }

    fn count(&self, total: usize, n: usize) -> Result<Picked, SampleError> {
        let last = total - 1;
        Ok(picked(
            lmms_eval_indices(total, n),
            format!("numpy.linspace(0, {last}, {n}, dtype=int)"),
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
        let sampler = Sampler::of(&LmmsEval);
        let total = video.total();
        let last = total - 1;
        let vfps = nominal_fps_checked(video, sampler)?;
        // fps = round(vr.get_avg_fps() / fps)  (Python round: half to even)
        let interval = (vfps / fps).round_ties_even();
        if interval < 1.0 {
            return Err(SampleError::Toolkit {
                sampler,
                reason: format!(
                    "llava_vid's load_video steps through the frames by round({vfps} / {fps}) \
                     = 0 frames (range() arg 3 must not be zero); lower the fps"
                ),
            });
        }
        let interval = interval as u128;
        let count = (total as u128).div_ceil(interval);
        if let Some(m) = max_frames {
            if count > m as u128 {
                return Ok(picked(
                    lmms_eval_indices(total, m),
                    format!("numpy.linspace(0, {last}, {m}, dtype=int)"),
                    Some(format!(
                        "range(0, {total}, round({vfps} / {fps}) = {interval}) gave {count} \
                         frames > max {m}: fell back to linspace(0, {last}, {m}, dtype=int) \
                         as llava_vid does"
                    )),
                ));
            }
        }
        // count <= total here because interval >= 1.
        let indices = (0..total).step_by(interval as usize).collect();
        Ok(picked(
            indices,
            format!("list(range(0, {total}, {interval}))"),
            None,
        ))
    }
}
