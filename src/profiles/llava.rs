//! The `llava-onevision` profile: transformers 5.24's `LlavaOnevisionVideoProcessor`
//! (`models/llava_onevision/video_processing_llava_onevision.py`) with `do_sample_frames=True`,
//! over `BaseVideoProcessor` (`video_processing_utils.py`): `sample_frames` is
//! `video_utils.default_sample_indices_fn`: with `fps`, `num_frames = max(1, int(total /
//! video_fps * fps))`; refused when `num_frames > total`; `indices = np.arange(num_frames) *
//! total // num_frames`; neither: every frame. Then `resize` to `size = {"height": 384,
//! "width": 384}` with `resample = BICUBIC` through the torchvision backend
//! (`tvF.resize(video, (384, 384), interpolation=BICUBIC, antialias=True)` on the uint8
//! frames: torchvision's v2 `resize_image` keeps a uint8 tensor uint8 on CPU for BICUBIC
//! (`_do_native_uint8_resize_on_cpu`), so torch runs its uint8 fixed-point kernel, not the
//! float one qwen-vl-utils' v1 `functional.resize` reaches: [`super::pil::Fixed8::TorchUint8`]),
//! then rescale and CLIP normalisation (float; the profile stops at the uint8 resize, which
//! the parity check compares).
//!
//! LLaVA-NeXT's own loader (`llava/.../load_video`, and lmms-eval's `llava_onevision`) picks
//! `np.linspace(0, total - 1, n, dtype=int)` instead: that is the `lmms-eval` profile's rule.

use serde_json::json;

use super::{Applied, Mirror, Profile, ProfileError, ProfileInput, ProfileRequest, Resample, Rule};
use crate::profiles::sampling::Sampler;

fn rule(rule: &str, formula: String, value: serde_json::Value) -> Rule {
    Rule {
        rule: rule.into(),
        formula,
        value,
    }
}

/// `llava-onevision`: `LlavaOnevisionVideoProcessor(do_sample_frames=True)`.
pub struct LlavaOnevision;

impl Profile for LlavaOnevision {
    fn name(&self) -> &'static str {
        "llava-onevision"
    }
    fn mirrors(&self) -> Mirror {
        Mirror {
            package: "transformers",
            version: "5.24",
            function: "LlavaOnevisionVideoProcessor (do_sample_frames=True: sample_frames, resize)",
        }
    }
    fn options(&self) -> &'static [&'static str] {
        &["height", "width"]
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
        let opt = |k: &str| request.options.get(k).copied();
        let total = input.frames.total();
        let mut rules = Vec::new();
        let n = match (request.count, request.fps) {
            (Some(n), _) => Some(n),
            (None, Some(fps)) => {
                let video_fps = input.frames.nominal_fps();
                if !(video_fps.is_finite() && video_fps > 0.0) {
                    return Err(fail(
                        "Asked to sample `fps` frames per second but no original FPS was \
                         provided in video metadata"
                            .into(),
                    ));
                }
                let n = ((total as f64 / video_fps * fps).trunc() as usize).max(1);
                rules.push(rule(
                    "num_frames",
                    format!("max(1, int({total} / {video_fps} * {fps}))"),
                    json!(n),
                ));
                Some(n)
            }
            (None, None) => None,
        };
        let (indices, formula): (Vec<usize>, String) = match n {
            Some(0) => return Err(fail("num_frames must be at least 1".into())),
            Some(n) if n > total => {
                return Err(fail(format!(
                    "When loading the video with num_frames={n}, the requested number of \
                     frames exceeds total_num_frames={total}. Please set num_frames or fps to \
                     a smaller value."
                )))
            }
            Some(n) => (
                (0..n).map(|i| i * total / n).collect(),
                format!("np.arange({n}) * {total} // {n}"),
            ),
            None => ((0..total).collect(), format!("np.arange(0, {total})")),
        };
        rules.push(rule(
            "sample_frames",
            format!("default_sample_indices_fn: {formula}"),
            json!(indices.len()),
        ));
        let side = |k: &str| -> Result<u32, ProfileError> {
            match opt(k) {
                None => Ok(384),
                Some(v) if v >= 1.0 && v.fract() == 0.0 && v <= 65535.0 => Ok(v as u32),
                Some(v) => Err(fail(format!(
                    "{k} must be a whole number of pixels, got {v}"
                ))),
            }
        };
        let (h, w) = (side("height")?, side("width")?);
        rules.push(rule(
            "resize",
            format!(
                "tvF.resize(video, ({h}, {w}), interpolation=BICUBIC, antialias=True) (uint8 \
                 tensor on CPU: torch's uint8 fixed-point kernel, int16 weights, the width \
                 first, each pass rounded to uint8)"
            ),
            json!({"height": h, "width": w}),
        ));
        Ok(Applied {
            profile: name,
            mirrors: self.mirrors(),
            indices,
            sampler: "uniform".parse::<Sampler>().expect("a registered sampler"),
            formula,
            width: w,
            height: h,
            resample: Resample::TorchBicubicAntialiasUint8,
            timestamps: None,
            tokens: None,
            files: None,
            rgb: None,
            encoding: None,
            rules,
        })
    }
}
