//! The `lmms-eval` profile: lmms-eval 0.7.3's `read_video` (alias `read_video_pyav`) in
//! `lmms_eval/models/model_utils/load_video.py` with its default PyAV backend (the file is
//! byte-identical at commit 75571cfe0fa36ca5ec2e6aa2bb268f9d38295af3 of
//! EvolvingLMMs-Lab/lmms-eval, sha256 e65cd440...54ec). Its rules, in its order:
//!
//! - a path whose text contains `webm` or `mkv` goes to `record_video_length_packet`, which
//!   decodes and returns **every** frame (no sampling at all);
//! - otherwise `load_video_stream`: `total_frames = stream.frames` (the header's count),
//!   `frame_rate = stream.average_rate`; with `fps`, `num_frm = min(num_frm,
//!   int(total_frames / frame_rate * fps))`; `sampled_frm = min(total_frames, num_frm)`;
//!   `indices = np.linspace(0, total_frames - 1, sampled_frm, dtype=int)`; with
//!   `force_include_last_frame`, when the last frame is not among them,
//!   `np.linspace(0, total_frames - 2, sampled_frm - 1, dtype=int)` plus the last; then
//!   `record_video_length_stream` keeps the decoded frames whose decode-order number is in
//!   the set (stopping after the last), so indices past the decoded frames are dropped;
//! - any exception there (no header count: `indices[0]` of an empty array; no rate with
//!   `fps`) falls back to `record_video_length_packet`: every frame;
//! - each frame is `frame.to_ndarray(format="rgb24")` at its decoded size (no resize).

use serde_json::json;

use super::{
    Applied, Mirror, Profile, ProfileError, ProfileInput, ProfileRequest, Resample, RgbConversion,
    Rule,
};
use crate::profiles::sampling::{numpy_linspace, Sampler};

fn rule(rule: &str, formula: String, value: serde_json::Value) -> Rule {
    Rule {
        rule: rule.into(),
        formula,
        value,
    }
}

/// `np.linspace(0, stop, num, dtype=int)` (numpy truncates the float values); numpy refuses
/// a negative `num`.
fn linspace_int(stop: f64, num: i64) -> Result<Vec<i64>, String> {
    if num < 0 {
        return Err(format!("Number of samples, {num}, must be non-negative."));
    }
    Ok(numpy_linspace(0.0, stop, num as usize)
        .into_iter()
        .map(|v| v.trunc() as i64)
        .collect())
}

/// What `load_video_stream` picks, or the reason it raises (the package then decodes every
/// frame).
fn load_video_stream(
    total_frames: u64,
    frame_rate: Option<(i64, i64)>,
    num_frm: i64,
    fps: Option<f64>,
    force_last: bool,
    rules: &mut Vec<Rule>,
) -> Result<Vec<i64>, String> {
    let total = total_frames as i64;
    let mut num_frm = num_frm;
    if let Some(fps) = fps {
        let Some((num, den)) = frame_rate else {
            return Err("TypeError: total_frames / None (the stream has no average_rate)".into());
        };
        // Fraction(total) / Fraction(num, den) * fps: the Fraction becomes a float first.
        let video_length = (total as f64 * den as f64) / num as f64;
        let limit = (video_length * fps).trunc() as i64;
        num_frm = num_frm.min(limit);
        rules.push(rule(
            "num_frm",
            format!("min(num_frm, int({total} / ({num}/{den}) * {fps}))"),
            json!(num_frm),
        ));
    }
    let sampled = total.min(num_frm);
    let mut indices = linspace_int((total - 1) as f64, sampled)?;
    let mut formula = format!("np.linspace(0, {}, {sampled}, dtype=int)", total - 1);
    if force_last && !indices.contains(&(total - 1)) {
        indices = linspace_int((total - 2) as f64, sampled - 1)?;
        indices.push(total - 1);
        formula = format!(
            "np.append(np.linspace(0, {}, {}, dtype=int), {})",
            total - 2,
            sampled - 1,
            total - 1
        );
    }
    rules.push(rule(
        "indices",
        format!("sampled_frm = min({total}, {num_frm}); {formula}"),
        json!(indices),
    ));
    if indices.is_empty() {
        return Err("IndexError: indices[0] of an empty index array".into());
    }
    Ok(indices)
}

/// `lmms-eval`: `read_video(path, num_frm=8, fps=None, force_include_last_frame=False)`.
pub struct LmmsEvalReadVideo;

impl Profile for LmmsEvalReadVideo {
    fn name(&self) -> &'static str {
        "lmms-eval"
    }
    fn mirrors(&self) -> Mirror {
        Mirror {
            package: "lmms-eval",
            version: "0.7.3",
            function: "lmms_eval.models.model_utils.load_video.read_video (backend pyav)",
        }
    }
    fn options(&self) -> &'static [&'static str] {
        &["num_frm", "force_include_last_frame"]
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
        let decoded = input.frames.total();
        if decoded == 0 {
            return Err(fail(
                "IndexError: frames[0]: the video decodes to no frames".into(),
            ));
        }
        // `count` is num_frm; with an fps both may be given (num_frm as the option).
        let num_frm = request
            .count
            .map(|n| n as f64)
            .or(opt("num_frm"))
            .unwrap_or(8.0);
        if num_frm.fract() != 0.0 {
            return Err(fail(format!(
                "num_frm must be a whole number, got {num_frm}"
            )));
        }
        let num_frm = num_frm as i64;
        let force_last = opt("force_include_last_frame").is_some_and(|v| v != 0.0);
        let path = input.container.path.to_string_lossy();
        let mut rules = Vec::new();
        let picked = if path.contains("webm") || path.contains("mkv") {
            rules.push(rule(
                "read_video",
                "\"webm\" or \"mkv\" in the path: record_video_length_packet (every frame)".into(),
                json!("every frame"),
            ));
            None
        } else {
            match load_video_stream(
                input.container.header_frames,
                input.container.average_rate,
                num_frm,
                request.fps,
                force_last,
                &mut rules,
            ) {
                Ok(indices) => Some(indices),
                Err(why) => {
                    rules.push(rule(
                        "read_video",
                        format!("load_video_stream raised ({why}): record_video_length_packet"),
                        json!("every frame"),
                    ));
                    None
                }
            }
        };
        let (indices, formula): (Vec<usize>, String) = match picked {
            None => (
                (0..decoded).collect(),
                format!("record_video_length_packet: all {decoded} frames"),
            ),
            Some(wanted) => {
                // record_video_length_stream: the decoded frames in the index set, in order.
                let mut set: Vec<usize> = wanted
                    .iter()
                    .filter(|&&i| i >= 0)
                    .map(|&i| i as usize)
                    .collect();
                set.sort_unstable();
                set.dedup();
                let kept: Vec<usize> = set.into_iter().filter(|&i| i < decoded).collect();
                if kept.is_empty() {
                    return Err(fail(format!(
                        "IndexError: frames[0]: none of the indices {wanted:?} is among the \
                         {decoded} decoded frames (the header claims {})",
                        input.container.header_frames
                    )));
                }
                if kept.len() < wanted.len() {
                    rules.push(rule(
                        "record_video_length_stream",
                        format!(
                            "the header claims {} frames, {decoded} decode: indices past the \
                             end are dropped",
                            input.container.header_frames
                        ),
                        json!(kept.len()),
                    ));
                }
                let f = rules
                    .iter()
                    .rev()
                    .find(|r| r.rule == "indices")
                    .map(|r| r.formula.clone())
                    .unwrap_or_default();
                (kept, f)
            }
        };
        rules.push(rule(
            "to_ndarray",
            "frame.to_ndarray(format=\"rgb24\") at the decoded size (no resize)".into(),
            json!({"height": input.height, "width": input.width}),
        ));
        Ok(Applied {
            profile: name,
            mirrors: self.mirrors(),
            indices,
            sampler: "lmms-eval"
                .parse::<Sampler>()
                .expect("a registered sampler"),
            formula,
            width: input.width,
            height: input.height,
            resample: Resample::None,
            timestamps: None,
            tokens: None,
            files: None,
            rgb: Some(RgbConversion::SwscaleBilinear),
            encoding: None,
            rules,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiles::sampling::ConstantRate;
    use crate::profiles::ContainerFacts;
    use std::path::Path;

    fn run(path: &str, header: u64, decoded: usize, req: ProfileRequest) -> Vec<usize> {
        let v = ConstantRate::new(decoded, 30, 1);
        let input = ProfileInput {
            frames: &v,
            width: 64,
            height: 48,
            container: ContainerFacts {
                path: Path::new(path),
                header_frames: header,
                average_rate: Some((30, 1)),
            },
        };
        LmmsEvalReadVideo.apply(&input, &req).unwrap().indices
    }

    /// Values printed by lmms-eval 0.7.3's own index code (numpy 2.4) for these counts.
    #[test]
    fn indices_as_lmms_eval_computes_them() {
        let count = |n| ProfileRequest {
            count: Some(n),
            ..Default::default()
        };
        assert_eq!(
            run("a.mp4", 100, 100, count(8)),
            [0, 14, 28, 42, 56, 70, 84, 99]
        );
        let mut last = count(6);
        last.options.insert("force_include_last_frame".into(), 1.0);
        // linspace(0, 99, 6) = [0 19 39 59 79 99]: the last is there already.
        assert_eq!(
            run("a.mp4", 100, 100, last.clone()),
            [0, 19, 39, 59, 79, 99]
        );
        assert_eq!(
            run("a.mp4", 101, 101, count(7)),
            [0, 16, 33, 50, 66, 83, 100]
        );
        // fps 1 over 100 frames at 30 fps: int(3.33) = 3 frames.
        let fps = ProfileRequest {
            fps: Some(1.0),
            ..Default::default()
        };
        assert_eq!(run("a.mp4", 100, 100, fps), [0, 49, 99]);
        // mkv in the path: every frame; no header count: every frame.
        assert_eq!(run("a.mkv", 100, 10, count(4)).len(), 10);
        assert_eq!(run("a.mp4", 0, 10, count(4)).len(), 10);
        // A header that claims more than decode: the missing ones are dropped.
        assert_eq!(run("a.avi", 200, 100, count(4)), [0, 66]);
    }
}
