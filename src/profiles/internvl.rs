//! The `internvl` profile: InternVL's video loader as its model cards give it
//! (InternVL2.5 / InternVL3 / InternVL3.5 Hugging Face cards, and
//! `internvl_chat/README.md` of OpenGVLab/InternVL at commit
//! `2410d1dbf208f0e799459aff9376e5747dbf41a2`, file last changed in `2d57e218`):
//! `load_video(video_path, bound=None, input_size=448, max_num=1, num_segments=32)`.
//!
//! - `vr = VideoReader(video_path, ctx=cpu(0), num_threads=1)`; `max_frame = len(vr) - 1`
//!   (decord's length: one per video packet, the decoded frames for an intact file);
//!   `fps = float(vr.get_avg_fps())` (the stream's `avg_frame_rate`, used only with `bound`).
//! - `get_index(bound, fps, max_frame, first_idx=0, num_segments)`: without a bound
//!   `start, end = -100000, 100000`; `start_idx = max(first_idx, round(start * fps))`,
//!   `end_idx = min(round(end * fps), max_frame)` (Python's `round`, half to even),
//!   `seg_size = float(end_idx - start_idx) / num_segments`, index
//!   `int(start_idx + (seg_size / 2) + np.round(seg_size * idx))`: segment midpoints, the
//!   last frame never reached exactly, repeats when `num_segments > max_frame`.
//! - each frame: `Image.fromarray(vr[i].asnumpy()).convert('RGB')`, then
//!   `dynamic_preprocess(img, image_size=input_size, use_thumbnail=True, max_num=max_num)`:
//!   the grid `(i, j)` with `min_num <= i * j <= max_num` whose ratio `i / j` is closest to
//!   `width / height` (`find_closest_aspect_ratio`: ties go to the later, larger grid when
//!   `area > 0.5 * image_size² * i * j`), `image.resize((image_size * i, image_size * j))`
//!   (Pillow's default for RGB: BICUBIC), cut into `i * j` tiles row by row, plus, when there
//!   is more than one tile, a thumbnail `image.resize((image_size, image_size))`.
//! - `build_transform`: `T.Resize((input_size, input_size), BICUBIC)` on each tile (the tile
//!   is that size already: torchvision returns it unchanged), `ToTensor`, ImageNet
//!   `Normalize` (float; the profile stops at the uint8 image, which the parity check
//!   compares).
//! - the prompt: `''.join([f'Frame{i+1}: <image>\n' for i in range(len(num_patches_list))])`
//!   (the repository's top-level README writes `Frame-{i+1}`; the model cards and
//!   `internvl_chat/README.md` write `Frame{i+1}`).
//!
//! The image a frame export writes is the resized grid: its `i * j` tiles are its exact
//! crops (`box = (col * s, row * s, (col + 1) * s, (row + 1) * s)`), recorded in the rules.

use serde_json::json;

use super::pil::Fixed8;
use super::{
    Applied, Mirror, Profile, ProfileError, ProfileInput, ProfileRequest, Resample, RgbConversion,
    Rule,
};
use crate::profiles::sampling::Sampler;

fn rule(rule: &str, formula: String, value: serde_json::Value) -> Rule {
    Rule {
        rule: rule.into(),
        formula,
        value,
    }
}

/// `get_index(bound, fps, max_frame, first_idx=0, num_segments)` as Python and numpy compute
/// it; the indices may be negative or past `max_frame` for a bound outside the video (the
/// caller refuses those).
pub fn get_index(bound: Option<(f64, f64)>, fps: f64, max_frame: i64, n: usize) -> Vec<i64> {
    let (start, end) = bound.unwrap_or((-100000.0, 100000.0));
    // Python's round(float) -> int, half to even.
    let start_idx = ((start * fps).round_ties_even() as i64).max(0);
    let end_idx = ((end * fps).round_ties_even() as i64).min(max_frame);
    let seg_size = (end_idx - start_idx) as f64 / n as f64;
    (0..n)
        .map(|idx| {
            let v = (start_idx as f64 + seg_size / 2.0) + (seg_size * idx as f64).round_ties_even();
            v.trunc() as i64
        })
        .collect()
}

/// `find_closest_aspect_ratio` over `dynamic_preprocess`'s `target_ratios`: the grid
/// `(columns, rows)`.
pub fn closest_grid(
    width: u32,
    height: u32,
    min_num: u32,
    max_num: u32,
    image_size: u32,
) -> (u32, u32) {
    let aspect_ratio = width as f64 / height as f64;
    // set((i, j) for n in range(min_num, max_num + 1) for i in 1..=n for j in 1..=n
    //     if min_num <= i * j <= max_num), sorted by i * j. The sort is stable over the set's
    // iteration order; among grids of one product the order decides only when two are
    // exactly as close (the aspect ratio exactly the mean of i/j and j/i), which this does
    // not reproduce (it keeps the generation order).
    let mut ratios: Vec<(u32, u32)> = Vec::new();
    for n in min_num..=max_num {
        for i in 1..=n {
            for j in 1..=n {
                let p = i * j;
                if p <= max_num && p >= min_num && !ratios.contains(&(i, j)) {
                    ratios.push((i, j));
                }
            }
        }
    }
    let mut sorted = ratios;
    sorted.sort_by_key(|r| r.0 * r.1);
    let mut best_diff = f64::INFINITY;
    let mut best = (1, 1);
    let area = width as f64 * height as f64;
    for (i, j) in sorted {
        let target = i as f64 / j as f64;
        let diff = (aspect_ratio - target).abs();
        if diff < best_diff {
            best_diff = diff;
            best = (i, j);
        } else if diff == best_diff
            && area > 0.5 * image_size as f64 * image_size as f64 * i as f64 * j as f64
        {
            best = (i, j);
        }
    }
    best
}

/// The refusal of an fps request.
const NO_FPS: &str = "InternVL's load_video has no fps rule: it takes num_segments frames; give \
                      a frame count (--count N is num_segments; 32 by default)";
/// The refusal of half a bound.
const NO_PAIR: &str =
    "bound is a (start, end) pair in seconds: give both bound_start and bound_end";

/// `internvl`: the model cards' `load_video` with `dynamic_preprocess` and `build_transform`.
pub struct InternVl;

impl Profile for InternVl {
    fn name(&self) -> &'static str {
        "internvl"
    }
    fn mirrors(&self) -> Mirror {
        Mirror {
            package: "OpenGVLab/InternVL (model card code; not a package)",
            version: "internvl_chat/README.md at 2410d1dbf208f0e799459aff9376e5747dbf41a2",
            function: "load_video (get_index, dynamic_preprocess, build_transform), decord 0.6 \
                       reader, Pillow 13.0 BICUBIC (option pillow=12: Pillow 12.2-12.3's)",
        }
    }
    fn options(&self) -> &'static [&'static str] {
        &[
            "max_num",
            "min_num",
            "input_size",
            "bound_start",
            "bound_end",
            "pillow",
        ]
    }
    fn refuse(&self, request: &ProfileRequest) -> Option<String> {
        let opt = |k: &str| request.options.get(k).copied();
        if request.fps.is_some() {
            return Some(NO_FPS.into());
        }
        if request.count == Some(0) {
            return Some("num_segments must be at least 1".into());
        }
        let (min_num, max_num) = (opt("min_num").unwrap_or(1.0), opt("max_num").unwrap_or(1.0));
        if min_num > max_num {
            return Some(format!(
                "min_num must be a whole number from 1 to max_num ({max_num}), got {min_num}"
            ));
        }
        if opt("bound_start").is_some() != opt("bound_end").is_some() {
            return Some(NO_PAIR.into());
        }
        None
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
        let whole = |k: &str, default: u32, min: u32, max: u32| -> Result<u32, ProfileError> {
            match request.options.get(k).copied() {
                None => Ok(default),
                Some(v) if v.fract() == 0.0 && v >= min as f64 && v <= max as f64 => Ok(v as u32),
                Some(v) => Err(fail(format!(
                    "{k} must be a whole number from {min} to {max}, got {v}"
                ))),
            }
        };
        if request.fps.is_some() {
            return Err(fail(NO_FPS.into()));
        }
        let max_num = whole("max_num", 1, 1, 40)?;
        let min_num = whole("min_num", 1, 1, max_num)?;
        let image_size = whole("input_size", 448, 14, 4096)?;
        // The Pillow whose pass order to follow: 13 (13.0, the default) or 12 (12.2-12.3).
        let pillow = whole("pillow", 13, 12, 13)?;
        let n = request.count.unwrap_or(32);
        if n == 0 {
            return Err(fail("num_segments must be at least 1".into()));
        }
        let bound = match (
            request.options.get("bound_start"),
            request.options.get("bound_end"),
        ) {
            (None, None) => None,
            (Some(&s), Some(&e)) => Some((s, e)),
            _ => return Err(fail(NO_PAIR.into())),
        };
        let total = input.frames.total();
        if total == 0 {
            return Err(fail("the video has no frames".into()));
        }
        let max_frame = total as i64 - 1;
        let mut rules = Vec::new();
        // decord's get_avg_fps: avg_frame_rate.num / avg_frame_rate.den.
        let (fps, fps_from) = match input.container.average_rate {
            Some((num, den)) => (num as f64 / den as f64, "avg_frame_rate".to_string()),
            None => (
                input.frames.nominal_fps(),
                "no avg_frame_rate: the nominal rate".to_string(),
            ),
        };
        rules.push(rule(
            "max_frame",
            format!("len(vr) - 1 = {total} - 1"),
            json!(max_frame),
        ));
        if bound.is_some() && !(fps.is_finite() && fps > 0.0) {
            return Err(fail(format!(
                "a bound needs the video's frame rate, and decord's get_avg_fps() gives {fps} \
                 for this video"
            )));
        }
        rules.push(rule(
            "fps",
            format!("float(vr.get_avg_fps()) ({fps_from})"),
            json!(fps),
        ));
        let raw = get_index(bound, fps, max_frame, n);
        let (bs, be) = bound.unwrap_or((-100000.0, 100000.0));
        let formula = format!(
            "start_idx = max(0, round({bs} * {fps})); end_idx = min(round({be} * {fps}), \
             {max_frame}); seg_size = (end_idx - start_idx) / {n}; [int(start_idx + seg_size / 2 \
             + np.round(seg_size * idx)) for idx in range({n})]"
        );
        if let Some(&bad) = raw.iter().find(|&&i| i < 0 || i > max_frame) {
            return Err(fail(format!(
                "get_index gives frame {bad}, outside the video's frames 0..={max_frame}: the \
                 bound ({bs}, {be}) s is not inside the video (decord would wrap a negative \
                 index or raise)"
            )));
        }
        let indices: Vec<usize> = raw.iter().map(|&i| i as usize).collect();
        rules.push(rule("get_index", formula.clone(), json!(indices.clone())));
        let (w0, h0) = (input.width, input.height);
        if w0 == 0 || h0 == 0 {
            return Err(fail("the video's frames have no size".into()));
        }
        let (cols, rows) = closest_grid(w0, h0, min_num, max_num, image_size);
        let blocks = cols * rows;
        let (w, h) = (image_size * cols, image_size * rows);
        rules.push(rule(
            "find_closest_aspect_ratio",
            format!(
                "aspect {w0}/{h0} = {:.6} against the grids i x j with {min_num} <= i*j <= \
                 {max_num}, ties to the larger when {w0}*{h0} > 0.5*{image_size}²*i*j",
                w0 as f64 / h0 as f64
            ),
            json!([cols, rows]),
        ));
        rules.push(rule(
            "resize",
            format!(
                "image.resize(({w}, {h})) (Pillow BICUBIC, the default for RGB) of the \
                 {w0}x{h0} frame"
            ),
            json!({"width": w, "height": h}),
        ));
        let (fixed, resample, order_rule) = if pillow == 12 {
            (
                Fixed8::Pillow12,
                Resample::PilBicubic12,
                format!("Pillow 12.3 Image.resize: the height first only when {h0} > {w0} * 100 and {h} < {h0}"),
            )
        } else {
            (
                Fixed8::Pillow13,
                Resample::PilBicubic,
                format!(
                    "Pillow 13.0 ImagingResampleInner: the height first when {h} < {h0} and \
                     {h0} - {h} > 2 * ({w0} - {w})"
                ),
            )
        };
        rules.push(rule(
            "pass_order",
            order_rule,
            json!(
                if fixed.height_first(w0 as usize, h0 as usize, w as usize, h as usize) {
                    "height first"
                } else {
                    "width first"
                }
            ),
        ));
        let tiles: Vec<[u32; 4]> = (0..blocks)
            .map(|i| {
                let (c, r) = (i % cols, i / cols);
                [
                    c * image_size,
                    r * image_size,
                    (c + 1) * image_size,
                    (r + 1) * image_size,
                ]
            })
            .collect();
        rules.push(rule(
            "tiles",
            format!(
                "resized_img.crop(box) for i in range({blocks}), row by row: the written image \
                 is these tiles side by side"
            ),
            json!(tiles),
        ));
        let thumbnail = blocks != 1;
        rules.push(rule(
            "thumbnail",
            if thumbnail {
                format!(
                    "use_thumbnail=True and {blocks} tiles: image.resize(({image_size}, \
                     {image_size})) of the whole frame is appended as tile {} (not in the \
                     written image)",
                    blocks + 1
                )
            } else {
                "use_thumbnail=True but one tile: no thumbnail".into()
            },
            json!(thumbnail),
        ));
        let patches = blocks + thumbnail as u32;
        rules.push(rule(
            "build_transform",
            format!(
                "T.Resize(({image_size}, {image_size}), BICUBIC) (the tiles are that size \
                 already: unchanged), ToTensor, Normalize(IMAGENET_MEAN, IMAGENET_STD) (float, \
                 after the written uint8 image)"
            ),
            json!({"num_patches": patches}),
        ));
        let per_tile = ((image_size / 14) as u64).pow(2) / 4;
        let tokens = indices.len() as u64 * patches as u64 * per_tile;
        rules.push(rule(
            "tokens",
            format!(
                "{} frames * {patches} patches * num_image_token ((({image_size} // 14)²) * \
                 0.5², InternVL2.5/3's patch 14 and downsample_ratio 0.5)",
                indices.len()
            ),
            json!(tokens),
        ));
        let prompt: Vec<String> = (1..=indices.len())
            .map(|i| format!("Frame{i}: <image>\n"))
            .collect();
        rules.push(rule(
            "video_prefix",
            "''.join([f'Frame{i+1}: <image>\\n' for i in range(len(num_patches_list))])".into(),
            json!(prompt.concat()),
        ));
        Ok(Applied {
            profile: name,
            mirrors: self.mirrors(),
            indices,
            sampler: "uniform".parse::<Sampler>().expect("a registered sampler"),
            formula,
            width: w,
            height: h,
            resample,
            timestamps: Some(prompt),
            tokens: Some(tokens),
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

    #[test]
    fn get_index_is_the_model_cards_segment_midpoints() {
        // Computed with the model card's get_index (Python 3.11, numpy 2.4).
        assert_eq!(
            get_index(None, 25.0, 99, 8),
            vec![6, 18, 31, 43, 56, 68, 80, 93]
        );
        assert_eq!(get_index(None, 25.0, 2, 4), vec![0, 0, 1, 2]);
        assert_eq!(
            get_index(Some((1.0, 3.0)), 25.0, 99, 4),
            vec![31, 43, 56, 69]
        );
    }

    #[test]
    fn grids_are_dynamic_preprocess_s() {
        assert_eq!(closest_grid(320, 240, 1, 1, 448), (1, 1));
        assert_eq!(closest_grid(1280, 720, 1, 12, 448), (4, 2));
        assert_eq!(closest_grid(1920, 1080, 1, 6, 448), (2, 1));
        assert_eq!(closest_grid(640, 480, 1, 12, 448), (4, 3));
        assert_eq!(closest_grid(480, 640, 1, 12, 448), (3, 4));
        assert_eq!(closest_grid(1000, 1000, 1, 12, 448), (3, 3));
        assert_eq!(closest_grid(300, 300, 1, 12, 448), (1, 1));
    }
}
