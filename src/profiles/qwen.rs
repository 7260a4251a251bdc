//! The Qwen-VL profiles. `qwen2.5-vl` and `qwen3-vl` are qwen-vl-utils 0.0.14's
//! `fetch_video` (`qwen_vl_utils/vision_process.py`) with its decord / torchcodec readers:
//! `calculate_video_frame_range` for `video_start` / `video_end`, `smart_nframes`,
//! `torch.linspace(start, end, nframes).round()`, the per-frame pixel budget and
//! `smart_resize` (factor `image_patch_size * 2`: 28 for Qwen2.5-VL's patch 14, 32 for
//! Qwen3-VL's 16), then torchvision's antialiased bicubic resize. `qwen3-vl-hf` is
//! transformers 5.25's `Qwen3VLVideoProcessor` (`video_processing_qwen3_vl.py`) sampling the
//! frames itself (`sample_frames`, its own `smart_resize` over the whole clip); `qwen3.5` is
//! the same code under Qwen3.5's name (transformers maps the model type `qwen3_5` to that
//! processor). The Qwen3-VL profiles record the `<t seconds>` strings `Qwen3VLProcessor.replace_video_token`
//! (`processing_qwen3_vl.py`) puts before each pair of frames.

use serde_json::json;

use super::{Applied, Mirror, Profile, ProfileError, ProfileInput, ProfileRequest, Resample, Rule};
use crate::profiles::sampling::{numpy_linspace, torch_linspace_f32, Sampler};

/// qwen-vl-utils' constants (`vision_process.py`).
const FRAME_FACTOR: f64 = 2.0;
const FPS: f64 = 2.0;
const FPS_MIN_FRAMES: f64 = 4.0;
const FPS_MAX_FRAMES: f64 = 768.0;
const VIDEO_MIN_TOKEN_NUM: f64 = 128.0;
const VIDEO_MAX_TOKEN_NUM: f64 = 768.0;
const IMAGE_MIN_TOKEN_NUM: f64 = 4.0;
const IMAGE_MAX_TOKEN_NUM: f64 = 16384.0;
/// `MODEL_SEQ_LEN`'s default (the package reads it from the environment; here it is the
/// `model_seq_len` option).
const MODEL_SEQ_LEN: f64 = 128000.0;
const MAX_RATIO: f64 = 200.0;

/// Python's `round` (half to even) of a float.
fn py_round(x: f64) -> f64 {
    x.round_ties_even()
}
fn round_by_factor(x: f64, f: f64) -> f64 {
    py_round(x / f) * f
}
fn ceil_by_factor(x: f64, f: f64) -> f64 {
    (x / f).ceil() * f
}
fn floor_by_factor(x: f64, f: f64) -> f64 {
    (x / f).floor() * f
}

/// qwen-vl-utils' `smart_resize(height, width, factor, min_pixels, max_pixels)`: `(h, w)`.
pub fn smart_resize(
    height: f64,
    width: f64,
    factor: f64,
    min_pixels: Option<f64>,
    max_pixels: Option<f64>,
) -> Result<(u32, u32), String> {
    let max_pixels = max_pixels.unwrap_or(IMAGE_MAX_TOKEN_NUM * factor * factor);
    let min_pixels = min_pixels.unwrap_or(IMAGE_MIN_TOKEN_NUM * factor * factor);
    if max_pixels < min_pixels {
        return Err(format!(
            "smart_resize needs max_pixels ({max_pixels}) >= min_pixels ({min_pixels})"
        ));
    }
    let ratio = height.max(width) / height.min(width);
    if ratio > MAX_RATIO {
        return Err(format!(
            "absolute aspect ratio must be smaller than {MAX_RATIO}, got {ratio}"
        ));
    }
    let mut h = factor.max(round_by_factor(height, factor));
    let mut w = factor.max(round_by_factor(width, factor));
    if h * w > max_pixels {
        let beta = ((height * width) / max_pixels).sqrt();
        h = floor_by_factor(height / beta, factor);
        w = floor_by_factor(width / beta, factor);
    } else if h * w < min_pixels {
        let beta = (min_pixels / (height * width)).sqrt();
        h = ceil_by_factor(height * beta, factor);
        w = ceil_by_factor(width * beta, factor);
    }
    Ok((h as u32, w as u32))
}

/// transformers' Qwen3-VL `smart_resize(num_frames, height, width, temporal_factor, factor,
/// min_pixels, max_pixels)` (over the whole clip): `(h, w)`.
pub fn smart_resize_video(
    num_frames: f64,
    mut height: f64,
    mut width: f64,
    factor: f64,
    min_pixels: f64,
    max_pixels: f64,
) -> Result<(u32, u32), String> {
    let temporal = 2.0;
    if num_frames < temporal {
        return Err(format!(
            "t:{num_frames} must be larger than temporal_factor:{temporal}"
        ));
    }
    if height < factor || width < factor {
        let scale = (factor / height).max(factor / width);
        height = (height * scale).trunc();
        width = (width * scale).trunc();
    }
    let ratio = height.max(width) / height.min(width);
    if ratio > MAX_RATIO {
        return Err(format!(
            "absolute aspect ratio must be smaller than 200, got {ratio}"
        ));
    }
    let mut h = py_round(height / factor) * factor;
    let mut w = py_round(width / factor) * factor;
    let t = py_round(num_frames / temporal) * temporal;
    if t * h * w > max_pixels {
        let beta = ((num_frames * height * width) / max_pixels).sqrt();
        h = factor.max((height / beta / factor).floor() * factor);
        w = factor.max((width / beta / factor).floor() * factor);
    } else if t * h * w < min_pixels {
        let beta = (min_pixels / (num_frames * height * width)).sqrt();
        h = (height * beta / factor).ceil() * factor;
        w = (width * beta / factor).ceil() * factor;
    }
    Ok((h as u32, w as u32))
}

pub(super) fn rule(rule: &str, formula: String, value: serde_json::Value) -> Rule {
    Rule {
        rule: rule.into(),
        formula,
        value,
    }
}

/// Python's `f"{x:.1f}"`.
fn one_decimal(x: f64) -> String {
    format!("{x:.1}")
}

/// `Qwen3VLProcessor._calculate_timestamps(indices, fps, merge_size=2)` as the `<t seconds>`
/// strings: the list padded with its last index to a multiple of 2, each pair's mean time.
pub fn qwen3_timestamps(indices: &[usize], fps: f64) -> Vec<String> {
    let mut idx: Vec<usize> = indices.to_vec();
    if idx.len() % 2 != 0 {
        idx.push(*idx.last().expect("at least one frame"));
    }
    idx.chunks(2)
        .map(|p| {
            let t = (p[0] as f64 / fps + p[1] as f64 / fps) / 2.0;
            format!("<{} seconds>", one_decimal(t))
        })
        .collect()
}

/// qwen-vl-utils' `fetch_video` with the decord / torchcodec reader, for `image_patch_size`
/// `patch`.
fn fetch_video(
    name: &'static str,
    mirrors: Mirror,
    patch: f64,
    timestamps: bool,
    input: &ProfileInput,
    request: &ProfileRequest,
) -> Result<Applied, ProfileError> {
    let fail = |reason: String| ProfileError {
        profile: name,
        reason,
    };
    let opt = |k: &str| request.options.get(k).copied();
    let mut rules = Vec::new();
    let all = input.frames.total();
    let video_fps = input.frames.nominal_fps();
    if !(video_fps.is_finite() && video_fps > 0.0) {
        return Err(fail(format!(
            "video_fps must be a positive number, got {video_fps} (the video's nominal frame rate)"
        )));
    }
    if all == 0 {
        return Err(fail(
            "total_frames must be a positive integer, got 0".into(),
        ));
    }
    // calculate_video_frame_range
    let (start, end, total) = match (opt("video_start"), opt("video_end")) {
        (None, None) => (0usize, all - 1, all),
        (vs, ve) => {
            let max_duration = all as f64 / video_fps;
            let start = vs.map_or(0, |s| {
                (s.min(max_duration).max(0.0) * video_fps).ceil() as usize
            });
            let end = ve.map_or(all - 1, |e| {
                ((e.min(max_duration).max(0.0) * video_fps).floor() as usize).min(all - 1)
            });
            if start >= end {
                let given: Vec<String> = [("video_start", vs), ("video_end", ve)]
                    .into_iter()
                    .filter_map(|(k, v)| v.map(|v| format!("{k}={v}")))
                    .collect();
                return Err(fail(format!(
                    "option {} selects no frames: expected seconds with 0 <= video_start < \
                     video_end <= {max_duration:.2} (the video lasts {max_duration:.2} s, {all} \
                     frames at {video_fps} fps); the package says: Invalid time range: start \
                     frame {start} exceeds end frame {end}",
                    given.join(" and ")
                )));
            }
            rules.push(rule(
                "calculate_video_frame_range",
                format!(
                    "start_frame = ceil(clamp(video_start) * {video_fps}), end_frame = \
                     min(floor(clamp(video_end) * {video_fps}), {})",
                    all - 1
                ),
                json!({"start_frame": start, "end_frame": end, "total_frames": end - start + 1}),
            ));
            (start, end, end - start + 1)
        }
    };
    // smart_nframes
    let nframes = if let Some(n) = request.count {
        let n = round_by_factor(n as f64, FRAME_FACTOR);
        rules.push(rule(
            "smart_nframes",
            format!("round_by_factor(nframes={}, 2)", request.count.unwrap()),
            json!(n as usize),
        ));
        n
    } else {
        let fps = request.fps.unwrap_or(FPS);
        let min_frames = ceil_by_factor(opt("min_frames").unwrap_or(FPS_MIN_FRAMES), FRAME_FACTOR);
        let max_frames = floor_by_factor(
            opt("max_frames").unwrap_or(FPS_MAX_FRAMES.min(total as f64)),
            FRAME_FACTOR,
        );
        let raw = total as f64 / video_fps * fps;
        let n = floor_by_factor(
            raw.max(min_frames).min(max_frames).min(total as f64),
            FRAME_FACTOR,
        );
        rules.push(rule(
            "smart_nframes",
            format!(
                "floor_by_factor(min(min(max({total} / {video_fps} * {fps}, {min_frames}), \
                 {max_frames}), {total}), 2)"
            ),
            json!(n as usize),
        ));
        n
    };
    if !(FRAME_FACTOR <= nframes && nframes <= total as f64) {
        return Err(fail(format!(
            "nframes should in interval [2, {total}], but got {nframes}"
        )));
    }
    let nframes = nframes as usize;
    let indices: Vec<usize> = torch_linspace_f32(start as i64, end as i64, nframes)
        .into_iter()
        .map(|v| v.round_ties_even() as usize)
        .collect();
    let formula = format!("torch.linspace({start}, {end}, {nframes}).round().long()");
    let sample_fps = nframes as f64 / (total as f64).max(1e-6) * video_fps;
    rules.push(rule(
        "sample_fps",
        format!("{nframes} / {total} * {video_fps}"),
        json!(sample_fps),
    ));
    // fetch_video's pixel budget
    let factor = patch * 2.0;
    let min_pixels = opt("min_pixels").unwrap_or(VIDEO_MIN_TOKEN_NUM * factor * factor);
    let seq = opt("model_seq_len").unwrap_or(MODEL_SEQ_LEN);
    let total_pixels = opt("total_pixels").unwrap_or(seq * factor * factor * 0.9);
    let budget = (VIDEO_MAX_TOKEN_NUM * factor * factor)
        .min(total_pixels / nframes as f64 * FRAME_FACTOR)
        .max((min_pixels * 1.05).trunc());
    let max_pixels = opt("max_pixels").unwrap_or(budget).min(budget);
    rules.push(rule(
        "max_pixels",
        format!(
            "min(max_pixels option, max(min({} * {factor}^2, total_pixels {total_pixels} / \
             {nframes} * 2), int(min_pixels {min_pixels} * 1.05)))",
            VIDEO_MAX_TOKEN_NUM
        ),
        json!(max_pixels),
    ));
    let (h, w) = match (opt("resized_height"), opt("resized_width")) {
        (Some(rh), Some(rw)) => smart_resize(rh, rw, factor, None, None),
        _ => smart_resize(
            input.height as f64,
            input.width as f64,
            factor,
            Some(min_pixels),
            Some(max_pixels),
        ),
    }
    .map_err(fail)?;
    rules.push(rule(
        "smart_resize",
        format!(
            "smart_resize({}, {}, factor={factor}, min_pixels={min_pixels}, max_pixels={max_pixels})",
            input.height, input.width
        ),
        json!({"height": h, "width": w}),
    ));
    rules.push(rule(
        "resize",
        "transforms.functional.resize(video, [h, w], interpolation=BICUBIC, antialias=True) \
         (torchvision's v1 functional: the uint8 frames cast to float32, resized, rounded)"
            .into(),
        json!("torch-bicubic-antialias"),
    ));
    let tokens =
        (nframes as u64).div_ceil(2) * (h as u64 / factor as u64) * (w as u64 / factor as u64);
    rules.push(rule(
        "tokens",
        format!("ceil({nframes} / 2) * ({h} / {factor}) * ({w} / {factor})"),
        json!(tokens),
    ));
    let timestamps = timestamps.then(|| qwen3_timestamps(&indices, video_fps));
    if !timestamps.is_some() {
        rules.push(rule(
            "second_per_grid_ts",
            format!("2 / sample_fps ({sample_fps})"),
            json!(FRAME_FACTOR / sample_fps),
        ));
    }
    Ok(Applied {
        profile: name,
        mirrors,
        indices,
        sampler: "qwen".parse::<Sampler>().expect("a registered sampler"),
        formula,
        width: w,
        height: h,
        resample: Resample::TorchBicubicAntialias,
        timestamps,
        tokens: Some(tokens),
        files: None,
        rgb: None,
        encoding: None,
        rules,
    })
}

const QWEN_VL_UTILS_OPTIONS: &[&str] = &[
    "video_start",
    "video_end",
    "min_frames",
    "max_frames",
    "min_pixels",
    "max_pixels",
    "total_pixels",
    "model_seq_len",
    "resized_height",
    "resized_width",
];

fn qwen_vl_utils(function: &'static str) -> Mirror {
    Mirror {
        package: "qwen-vl-utils",
        version: "0.0.14",
        function,
    }
}

/// `qwen2.5-vl`: `fetch_video(ele, image_patch_size=14)`.
pub struct Qwen25Vl;

impl Profile for Qwen25Vl {
    fn name(&self) -> &'static str {
        "qwen2.5-vl"
    }
    fn mirrors(&self) -> Mirror {
        qwen_vl_utils("fetch_video(ele, image_patch_size=14)")
    }
    fn options(&self) -> &'static [&'static str] {
        QWEN_VL_UTILS_OPTIONS
    }
    fn apply(
        &self,
        input: &ProfileInput,
        request: &ProfileRequest,
    ) -> Result<Applied, ProfileError> {
        fetch_video(self.name(), self.mirrors(), 14.0, false, input, request)
    }
}

/// `qwen3-vl`: `fetch_video(ele, image_patch_size=16)`, with Qwen3-VL's timestamps.
pub struct Qwen3Vl;

impl Profile for Qwen3Vl {
    fn name(&self) -> &'static str {
        "qwen3-vl"
    }
    fn mirrors(&self) -> Mirror {
        qwen_vl_utils("fetch_video(ele, image_patch_size=16)")
    }
    fn options(&self) -> &'static [&'static str] {
        QWEN_VL_UTILS_OPTIONS
    }
    fn timestamps_of(&self, indices: &[usize], input: &ProfileInput) -> Option<Vec<String>> {
        (!indices.is_empty()).then(|| qwen3_timestamps(indices, input.frames.nominal_fps()))
    }
    fn apply(
        &self,
        input: &ProfileInput,
        request: &ProfileRequest,
    ) -> Result<Applied, ProfileError> {
        fetch_video(self.name(), self.mirrors(), 16.0, true, input, request)
    }
}

/// The transformers releases the transformers-processor profiles follow (the `transformers`
/// option; the newest, 5.25, by default), as `(option value, version)`. Their video paths
/// for Qwen3-VL / Qwen3.5 and GLM-4.6V differ in one switch only (the diffs of the released
/// wheels): from 5.25 a `max_video_tokens` given with the call is honoured by the per-frame
/// cap, before it the processor's own (768) is used. `cap_pixels_per_frame` stays unset
/// (uncapped) by default in every one of them: the change to `True` that its warning
/// announces for 5.22 was not released (5.21.1, 5.22.0, 5.23.0, 5.24.0, 5.25.0 all keep
/// `cap_pixels_per_frame = None`, read as `False`).
pub(super) const TRANSFORMERS_RELEASES: &[(f64, &str)] = &[
    (5.21, "5.21"),
    (5.22, "5.22"),
    (5.23, "5.23"),
    (5.24, "5.24"),
    (5.25, "5.25"),
];

/// The transformers release a request asks to follow: `(minor version, version text)`.
pub(super) fn transformers_release(request: &ProfileRequest) -> (u32, &'static str) {
    let v = request.options.get("transformers").copied().unwrap_or(5.25);
    TRANSFORMERS_RELEASES
        .iter()
        .find(|(x, _)| (x - v).abs() < 1e-9)
        .map(|(x, name)| (((x - 5.0) * 100.0).round() as u32, *name))
        .unwrap_or((25, "5.25"))
}

/// The options of transformers' `Qwen3VLVideoProcessor` the profiles take.
const QWEN3_VL_PROCESSOR_OPTIONS: &[&str] = &[
    "min_frames",
    "max_frames",
    "shortest_edge",
    "longest_edge",
    "cap_pixels_per_frame",
    "max_video_tokens",
    "transformers",
];

/// A profile of transformers' `Qwen3VLVideoProcessor` with `do_sample_frames=True`, under a
/// model's name.
pub struct Qwen3VlProcessor {
    name: &'static str,
    /// What the mirror names: the classes, as transformers reaches them for this model.
    function: &'static str,
}

/// `qwen3-vl-hf`: Qwen3-VL's processor.
pub const QWEN3_VL_HF: Qwen3VlProcessor = Qwen3VlProcessor {
    name: "qwen3-vl-hf",
    function: "Qwen3VLVideoProcessor (sample_frames, resize) + Qwen3VLProcessor timestamps",
};

/// `qwen3.5`: Qwen3.5 (and Qwen3.5-MoE) in transformers: `AutoVideoProcessor` maps the model
/// type `qwen3_5` to `Qwen3VLVideoProcessor` and `AutoProcessor` to `Qwen3VLProcessor`
/// (`models/auto/video_processing_auto.py`, `processing_auto.py`), and the model has no
/// video processing of its own, so this is `qwen3-vl-hf`'s code with Qwen3.5's name: the
/// same class defaults (patch 16, merge 2, temporal patch 2, `size` `[128·32², 768·32²]`,
/// fps 2, `[4, 768]` frames, `cap_pixels_per_frame` unset).
pub const QWEN35: Qwen3VlProcessor = Qwen3VlProcessor {
    name: "qwen3.5",
    function: "Qwen3VLVideoProcessor as AutoVideoProcessor maps model type qwen3_5 \
               (sample_frames, resize) + Qwen3VLProcessor timestamps",
};

impl Qwen3VlProcessor {
    fn mirror(&self, version: &'static str) -> Mirror {
        Mirror {
            package: "transformers",
            version,
            function: self.function,
        }
    }
}

impl Profile for Qwen3VlProcessor {
    fn name(&self) -> &'static str {
        self.name
    }
    fn mirrors(&self) -> Mirror {
        self.mirror("5.25")
    }
    fn options(&self) -> &'static [&'static str] {
        QWEN3_VL_PROCESSOR_OPTIONS
    }
    fn timestamps_of(&self, indices: &[usize], input: &ProfileInput) -> Option<Vec<String>> {
        (!indices.is_empty()).then(|| qwen3_timestamps(indices, input.frames.nominal_fps()))
    }
    fn apply(
        &self,
        input: &ProfileInput,
        request: &ProfileRequest,
    ) -> Result<Applied, ProfileError> {
        let (_, version) = transformers_release(request);
        qwen3_vl_video_processor(self.name, self.mirror(version), input, request)
    }
}

/// transformers' `Qwen3VLVideoProcessor` with `do_sample_frames=True` (`sample_frames`, its
/// `resize` with the optional per-frame cap, `smart_resize` over the whole clip), and the
/// `<t seconds>` strings of `Qwen3VLProcessor.replace_video_token`, for the release the
/// `transformers` option names.
fn qwen3_vl_video_processor(
    name: &'static str,
    mirrors: Mirror,
    input: &ProfileInput,
    request: &ProfileRequest,
) -> Result<Applied, ProfileError> {
    let fail = |reason: String| ProfileError {
        profile: name,
        reason,
    };
    let opt = |k: &str| request.options.get(k).copied();
    let (minor, version) = transformers_release(request);
    let mut rules = Vec::new();
    let total = input.frames.total();
    if total == 0 {
        // (transformers' np.linspace(0, -1, n) indexes past it: an IndexError.)
        return Err(fail("the video has no frames".into()));
    }
    let video_fps = input.frames.nominal_fps();
    let (min_frames, max_frames) = (
        opt("min_frames").unwrap_or(4.0),
        opt("max_frames").unwrap_or(768.0),
    );
    let n = match request.count {
        Some(n) => n,
        None => {
            let fps = request.fps.unwrap_or(2.0);
            if !(video_fps.is_finite() && video_fps > 0.0) {
                return Err(fail(format!("the video's fps is {video_fps}")));
            }
            let n = (total as f64 / video_fps * fps).trunc();
            let n = n.max(min_frames).min(max_frames).min(total as f64) as usize;
            rules.push(rule(
                "sample_frames",
                format!(
                    "min(max(int({total} / {video_fps} * {fps}), {min_frames}), {max_frames}, {total})"
                ),
                json!(n),
            ));
            n
        }
    };
    if n == 0 {
        return Err(fail("asked for 0 frames".into()));
    }
    let indices: Vec<usize> = numpy_linspace(0.0, total as f64 - 1.0, n)
        .into_iter()
        .map(|v| v.round_ties_even() as usize)
        .collect();
    let formula = format!("np.linspace(0, {}, {n}).round().astype(int)", total - 1);
    let factor = 32.0;
    let shortest = opt("shortest_edge").unwrap_or(128.0 * 32.0 * 32.0);
    let longest = opt("longest_edge").unwrap_or(32.0 * 32.0 * 768.0);
    let capped = opt("cap_pixels_per_frame").is_some_and(|v| v != 0.0);
    // A max_video_tokens given with the call: honoured from 5.25, the class's 768 before.
    let tokens_cap = match opt("max_video_tokens") {
        Some(t) if minor >= 25 => t,
        _ => 768.0,
    };
    let max_pixels = if capped {
        let frame_cap = tokens_cap * factor * factor;
        let per = frame_cap
            .min((longest / n as f64).floor())
            .max((shortest * 1.05).trunc());
        per * n as f64
    } else {
        longest
    };
    rules.push(rule(
        "max_pixels",
        if capped {
            format!(
                "cap_pixels_per_frame: max(min(max_video_tokens ({}) * 32^2, {longest} // {n}), \
                 int({shortest} * 1.05)) * {n}",
                if opt("max_video_tokens").is_some() && minor < 25 {
                    format!("768: transformers {version} ignores a max_video_tokens given with the call")
                } else {
                    format!("{tokens_cap}")
                }
            )
        } else {
            format!(
                "size.longest_edge (cap_pixels_per_frame unset: uncapped, the default of \
                 transformers {version}; the change to capped its warning announces for 5.22 \
                 is in no release up to 5.25)"
            )
        },
        json!(max_pixels),
    ));
    let (h, w) = smart_resize_video(
        n as f64,
        input.height as f64,
        input.width as f64,
        factor,
        shortest,
        max_pixels,
    )
    .map_err(fail)?;
    rules.push(rule(
        "smart_resize",
        format!(
            "smart_resize(num_frames={n}, {}, {}, temporal_factor=2, factor=32, \
             min_pixels={shortest}, max_pixels={max_pixels})",
            input.height, input.width
        ),
        json!({"height": h, "width": w}),
    ));
    let tokens = (n as u64).div_ceil(2) * (h as u64 / 32) * (w as u64 / 32);
    Ok(processor_applied(ProcessorOutcome {
        profile: name,
        mirrors,
        timestamps: qwen3_timestamps(&indices, video_fps),
        indices,
        formula,
        size: (h, w),
        tokens,
        tokens_formula: format!("ceil({n} / 2) * ({h} / 32) * ({w} / 32)"),
        rules,
    }))
}

/// What a transformers video processor profile decided, up to its size.
pub(super) struct ProcessorOutcome {
    pub profile: &'static str,
    pub mirrors: Mirror,
    pub indices: Vec<usize>,
    pub formula: String,
    /// `(height, width)`.
    pub size: (u32, u32),
    pub tokens: u64,
    pub tokens_formula: String,
    /// The processor's per-group text (time strings).
    pub timestamps: Vec<String>,
    /// The rules applied so far (up to `smart_resize`).
    pub rules: Vec<Rule>,
}

/// The profile outcome of a transformers video processor (`BaseVideoProcessor.resize`:
/// torchvision's v2 `resize` of the uint8 frames, torch's uint8 kernel on CPU), with its
/// `resize` and `tokens` rules.
pub(super) fn processor_applied(o: ProcessorOutcome) -> Applied {
    let mut rules = o.rules;
    rules.push(rule(
        "resize",
        "tvF.resize(video, (h, w), interpolation=BICUBIC, antialias=True) (torchvision's \
         v2 functional on the uint8 frames: torch's uint8 fixed-point kernel on CPU)"
            .into(),
        json!("torch-bicubic-antialias-uint8"),
    ));
    rules.push(rule("tokens", o.tokens_formula, json!(o.tokens)));
    Applied {
        profile: o.profile,
        mirrors: o.mirrors,
        indices: o.indices,
        sampler: "uniform".parse::<Sampler>().expect("a registered sampler"),
        formula: o.formula,
        width: o.size.1,
        height: o.size.0,
        resample: Resample::TorchBicubicAntialiasUint8,
        timestamps: Some(o.timestamps),
        tokens: Some(o.tokens),
        files: None,
        rgb: None,
        encoding: None,
        rules,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiles::sampling::ConstantRate;

    /// Values computed with qwen-vl-utils 0.0.14's `smart_resize` (Python).
    #[test]
    fn smart_resize_matches_qwen_vl_utils() {
        // fetch_video budget for 1280x720, 20 frames, factor 32.
        assert_eq!(
            smart_resize(720.0, 1280.0, 32.0, Some(131072.0), Some(786432.0)).unwrap(),
            (640, 1152)
        );
        assert_eq!(
            smart_resize(720.0, 1280.0, 28.0, Some(100352.0), Some(602112.0)).unwrap(),
            (560, 1008)
        );
        assert_eq!(
            smart_resize(120.0, 160.0, 28.0, Some(100352.0), Some(602112.0)).unwrap(),
            (280, 392)
        );
        assert!(smart_resize(1.0, 300.0, 28.0, None, None).is_err());
    }

    #[test]
    fn timestamps_pair_and_pad() {
        assert_eq!(
            qwen3_timestamps(&[0, 15, 30], 30.0),
            vec!["<0.2 seconds>", "<1.0 seconds>"]
        );
        // Python's f"{0.25:.1f}" and f"{1.25:.1f}" (ties to even on the binary value).
        assert_eq!(one_decimal(0.25), "0.2");
        assert_eq!(one_decimal(1.25), "1.2");
        assert_eq!(one_decimal(0.35), "0.3");
    }

    /// Found by `cargo fuzz run profile_options` (fuzz/regressions/profile_options/): a frame
    /// count asked of a video of no frames subtracted 1 from 0 (`total - 1`).
    #[test]
    fn qwen3_vl_hf_on_no_frames_is_refused_not_a_panic() {
        let v = ConstantRate::new(0, 30, 1);
        let input = ProfileInput {
            frames: &v,
            width: 1280,
            height: 720,
            container: crate::profiles::ContainerFacts::unknown(),
        };
        let request = ProfileRequest {
            count: Some(2),
            ..ProfileRequest::default()
        };
        let e = QWEN3_VL_HF.apply(&input, &request).unwrap_err();
        assert!(e.to_string().contains("no frames"), "{e}");
    }

    #[test]
    fn fetch_video_on_a_constant_rate_video() {
        let v = ConstantRate::new(300, 30, 1);
        let input = ProfileInput {
            frames: &v,
            width: 1280,
            height: 720,
            container: crate::profiles::ContainerFacts::unknown(),
        };
        let a = Qwen3Vl.apply(&input, &ProfileRequest::default()).unwrap();
        assert_eq!(a.indices.len(), 20);
        assert_eq!((a.indices[0], *a.indices.last().unwrap()), (0, 299));
        assert_eq!(a.timestamps.as_ref().unwrap().len(), 10);
    }

    #[test]
    fn frames_given_or_followed_take_the_place_of_the_packages() {
        use crate::profiles::{with_frames, FramesFrom};
        let v = ConstantRate::new(120, 30, 1);
        let input = ProfileInput {
            frames: &v,
            width: 320,
            height: 240,
            container: crate::profiles::ContainerFacts::unknown(),
        };
        let request = ProfileRequest {
            count: Some(4),
            ..ProfileRequest::default()
        };
        let own = Qwen3Vl.apply(&input, &request).unwrap();
        assert_eq!(own.indices, [0, 40, 79, 119]);
        // Given: the size stays, the timestamps are the given frames'.
        let given = with_frames(
            &Qwen3Vl,
            own.clone(),
            vec![90, 0, 31, 60],
            &FramesFrom::Given,
            &input,
        )
        .unwrap();
        assert_eq!(
            (given.width, given.height, given.tokens),
            (own.width, own.height, own.tokens)
        );
        assert_eq!(given.indices, [90, 0, 31, 60]);
        assert_eq!(
            given.timestamps.as_deref().unwrap(),
            ["<1.5 seconds>", "<1.5 seconds>"]
        );
        assert_eq!(given.rules.last().unwrap().rule, "frames");
        // Followed: the timestamps stay those of the indices the package named.
        let followed = with_frames(
            &Qwen3Vl,
            own.clone(),
            vec![0, 39, 78, 118],
            &FramesFrom::Package {
                record: "p.json".into(),
            },
            &input,
        )
        .unwrap();
        assert_eq!(followed.timestamps, own.timestamps);
        assert!(followed.rules.last().unwrap().formula.contains("p.json"));
        // Another count than the package takes.
        let e = with_frames(&Qwen3Vl, own, vec![1, 2, 3], &FramesFrom::Given, &input).unwrap_err();
        assert!(e.reason.contains("takes 4 frames when asked for 3"), "{e}");
    }
}
