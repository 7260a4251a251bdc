//! The `vlmevalkit` profile: VLMEvalKit's frame cache, as `VideoBaseDataset` writes it
//! (`vlmeval/dataset/video_base.py` at commit `e8e78f05f308` of open-compass/VLMEvalKit:
//! `save_video_frames`, `frame_paths`, `frame_paths_fps`). It reads the video with decord
//! (`decord.VideoReader(path)`, `vid[i].asnumpy()`: the decoded picture as RGB, no resize),
//! picks the frames by the `vlmevalkit` sampler's rules, and saves each with
//! `Image.fromarray(frame).save(path)` into `LMUData/images/<dataset>/<video>/` as
//! `frame-{i}-of-{n}.jpg` (count mode, `i` from 1) or `frame-{i}-of-{n}-{fps}fps.jpg` (fps
//! mode, `{fps}` the dataset's fps as Python prints it). An export with this profile writes
//! exactly those names and bytes ([`super::pil_jpeg`]), so that its folder can stand in for
//! VLMEvalKit's: it finds every file and decodes none of the video.

use serde_json::json;

use super::{
    Applied, ImageEncoding, Mirror, Profile, ProfileError, ProfileInput, ProfileRequest, Resample,
    RgbConversion, Rule,
};
use crate::profiles::sampling::vlmevalkit::VlmEvalKit;
use crate::profiles::sampling::{Formula, Sampler};

fn rule(rule: &str, formula: String, value: serde_json::Value) -> Rule {
    Rule {
        rule: rule.into(),
        formula,
        value,
    }
}

/// `x` as Python's `str(x)` / `format(x)` prints a float (the shortest text that reads back
/// as `x`; fixed notation for exponents -4 to 15, with `.0` when whole; else `1e+16`,
/// `1.5e-05`).
pub fn python_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    // Rust's `{:e}` is the shortest round-trip digits too: `d[.ddd]e[-]x`.
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let exp: i32 = exp.parse().expect("an integer exponent");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let sign = if x < 0.0 { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let n = digits.len() as i32;
        let text = if exp < 0 {
            format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
        } else if exp + 1 >= n {
            format!("{digits}{}.0", "0".repeat((exp + 1 - n) as usize))
        } else {
            let (a, b) = digits.split_at((exp + 1) as usize);
            format!("{a}.{b}")
        };
        format!("{sign}{text}")
    } else {
        let (first, rest) = digits.split_at(1);
        let mantissa = if rest.is_empty() {
            first.to_string()
        } else {
            format!("{first}.{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{mantissa}e{esign}{:02}", exp.abs())
    }
}

/// `vlmevalkit`: VLMEvalKit's `save_video_frames` cache.
pub struct VlmEvalKitCache;

impl Profile for VlmEvalKitCache {
    fn name(&self) -> &'static str {
        "vlmevalkit"
    }
    fn mirrors(&self) -> Mirror {
        Mirror {
            package: "VLMEvalKit",
            version: "git e8e78f05f3080fe28154f2130321f17951c3be94 \
                      (vlmeval/dataset/video_base.py), decord 0.6, Pillow",
            function: "VideoBaseDataset.save_video_frames (frame_paths, frame_paths_fps; \
                       Image.fromarray(vid[i].asnumpy()).save(path))",
        }
    }
    fn options(&self) -> &'static [&'static str] {
        &["int_fps"]
    }
    fn encoding(&self) -> Option<ImageEncoding> {
        Some(ImageEncoding::PillowJpeg)
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
        let total = input.frames.total();
        let int_fps = request.options.get("int_fps").copied().unwrap_or(0.0) == 1.0;
        let mut rules = Vec::new();
        let (picked, files) = match (request.count, request.fps) {
            (Some(n), None) => {
                if int_fps {
                    return Err(fail(
                        "option int_fps=1 names fps-mode files; this is a count (nframe) \
                         request: drop it"
                            .into(),
                    ));
                }
                let picked = VlmEvalKit
                    .count(total, n)
                    .map_err(|e| fail(e.to_string()))?;
                rules.push(rule(
                    "save_video_frames",
                    format!(
                        "step_size = len(vid) / (nframe + 1); indices = {}",
                        picked.formula
                    ),
                    json!(picked.indices.len()),
                ));
                let files: Vec<String> = (1..=n).map(|i| format!("frame-{i}-of-{n}.jpg")).collect();
                rules.push(rule(
                    "frame_paths",
                    format!(
                        "'frame-{{}}-of-{{}}.jpg'.format(i, {n}) for i in range(1, {})",
                        n + 1
                    ),
                    json!(files.first()),
                ));
                (picked, files)
            }
            (None, Some(fps)) => {
                let text = if int_fps {
                    if fps.fract() != 0.0 || fps.abs() > 1e15 {
                        return Err(fail(format!(
                            "option int_fps=1 prints the fps as a Python int, but {fps} is \
                             not a whole number: drop int_fps"
                        )));
                    }
                    format!("{}", fps as i64)
                } else {
                    python_float(fps)
                };
                let picked = VlmEvalKit
                    .fps(input.frames, fps, None, true)
                    .map_err(|e| fail(e.to_string()))?;
                let n = picked.indices.len();
                rules.push(rule(
                    "save_video_frames",
                    format!(
                        "video_fps = vid.get_avg_fps(); required_frames = \
                         int(len(vid) / video_fps * fps); indices = {}",
                        picked.formula
                    ),
                    json!(n),
                ));
                let files: Vec<String> = (1..=n)
                    .map(|i| format!("frame-{i}-of-{n}-{text}fps.jpg"))
                    .collect();
                rules.push(rule(
                    "frame_paths_fps",
                    format!(
                        "'frame-{{}}-of-{{}}-{{}}fps.jpg'.format(i, {n}, {text}) for i in \
                         range(1, {})",
                        n + 1
                    ),
                    json!(files.first()),
                ));
                (picked, files)
            }
            _ => {
                return Err(fail(
                    "VLMEvalKit caches frames only with nframe or fps set (else it hands \
                     the model the video file): give --count N (\"count\") or --fps F (\"fps\")"
                        .into(),
                ))
            }
        };
        rules.push(rule(
            "save",
            "Image.fromarray(vid[i].asnumpy()).save(path): the decoded picture as RGB (decord: \
             swscale, bilinear flags), no resize; JPEG as Pillow writes it by default (libjpeg, quality 75, 4:2:0, \
             baseline, standard Huffman tables, JFIF 1.01 density 1:1)"
                .into(),
            json!({"width": input.width, "height": input.height, "quality": super::pil_jpeg::QUALITY}),
        ));
        Ok(Applied {
            profile: name,
            mirrors: self.mirrors(),
            indices: picked.indices,
            sampler: "vlmevalkit"
                .parse::<Sampler>()
                .expect("a registered sampler"),
            formula: picked.formula,
            width: input.width,
            height: input.height,
            resample: Resample::None,
            timestamps: None,
            tokens: None,
            files: Some(files),
            rgb: Some(RgbConversion::SwscaleBilinear),
            encoding: Some(ImageEncoding::PillowJpeg),
            rules,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_python_prints_them() {
        for (x, py) in [
            (1.0, "1.0"),
            (0.5, "0.5"),
            (2.0, "2.0"),
            (0.1, "0.1"),
            (1.0 / 3.0, "0.3333333333333333"),
            (123.25, "123.25"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (2.5e20, "2.5e+20"),
            (-0.5, "-0.5"),
            (30000.0 / 1001.0, "29.97002997002997"),
        ] {
            assert_eq!(python_float(x), py, "{x:e}");
        }
    }
}
