//! Frame-index samplers and frame orders for exporting N frames of a video to image-only models.
//!
//! Scores from different evaluation toolkits are only comparable when the exact frame sampler
//! is known, so every [`Sampler`] here reproduces one toolkit's published formula bit for bit,
//! including its floating-point arithmetic (f64 for numpy and Python, f32 for `torch.linspace` /
//! `torch.arange`). Each formula is quoted, with the file and function it comes from, on its
//! variant of [`Sampler`]. `fixtures/sampling/` holds golden tables produced by the real numpy
//! and torch, and the tests compare against them (and against a live numpy when one is present).
//!
//! # What the samplers are given
//!
//! A video is described by [`FrameTimes`]: the true decoded frame count, the exact duration,
//! which frame is on screen at an exact time (so variable frame rate is handled correctly), and
//! the container's nominal float frame rate, which some toolkit formulas use as is (decord's
//! `get_avg_fps()`). [`ConstantRate`] and [`FrameList`] (any list of presentation times, e.g. a
//! VFR stream) implement it.
//!
//! # Requests, repeats and errors
//!
//! A [`Request`] is either a frame count or a sampling rate. When more frames are asked for than
//! the video has (`N > total`, or an fps above the video's frame rate) the default is an error
//! that names both numbers ([`SampleError::TooManyFrames`], [`SampleError::RepeatedFrames`]):
//! silently repeating frames changes what a model sees. With `allow_repeats = true` the toolkit's
//! formula is applied as is and its repeated indices are returned, exactly as the toolkit would
//! produce them; where the toolkit itself refuses (qwen-vl-utils, the transformers video
//! processor) the toolkit's refusal is reported instead ([`SampleError::Toolkit`]).
//!
//! # Orders
//!
//! [`arrange`] reorders a sample for ablations ([`Order`]): shuffled with a recorded seed and
//! permutation (SplitMix64 + Fisher–Yates, identical on every machine), reversed, or only the
//! last frame.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::time::Time;

// ---------------------------------------------------------------------------------------------
// Video description
// ---------------------------------------------------------------------------------------------

/// What a sampler needs to know about a video.
///
/// Times are measured from the presentation time of the first frame (frame 0 is shown at 0).
pub trait FrameTimes {
    /// The true number of decoded frames (the caller guarantees this is exact).
    fn total(&self) -> usize;
    /// Exact duration: from the first frame's presentation time to the end of the last frame.
    fn duration(&self) -> Time;
    /// The frame on screen at `t`: the frame with the largest presentation time `<= t`
    /// (frame 0 for `t` before it, the last frame for `t` past the end).
    fn frame_shown_at(&self, t: Time) -> usize;
    /// The container's nominal frame rate as a float, as toolkits read it (decord's
    /// `get_avg_fps()`, PyAV's `average_rate`). Only the toolkit fps rules use it.
    fn nominal_fps(&self) -> f64;
}

/// A constant-frame-rate video: frame `i` is shown during `[i/rate, (i+1)/rate)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConstantRate {
    total: usize,
    rate_num: i64,
    rate_den: i64,
    nominal_fps: Option<f64>,
}

impl ConstantRate {
    /// `total` frames at `rate_num / rate_den` frames per second (e.g. 30000/1001).
    /// Panics if the rate is not positive (a programming error).
    pub fn new(total: usize, rate_num: i64, rate_den: i64) -> ConstantRate {
        assert!(rate_num > 0 && rate_den > 0, "frame rate must be positive");
        ConstantRate { total, rate_num, rate_den, nominal_fps: None }
    }

    /// The same video, but reporting `fps` as its nominal float frame rate (what the container
    /// or decord says, e.g. `29.97002997` for a 30000/1001 stream). By default the nominal rate
    /// is `rate_num as f64 / rate_den as f64`.
    pub fn with_nominal_fps(self, fps: f64) -> ConstantRate {
        ConstantRate { nominal_fps: Some(fps), ..self }
    }
}

impl FrameTimes for ConstantRate {
    fn total(&self) -> usize {
        self.total
    }
    fn duration(&self) -> Time {
        Time::new(self.rate_den, self.rate_num) * self.total as i64
    }
    fn frame_shown_at(&self, t: Time) -> usize {
        if self.total == 0 || t.is_negative() {
            return 0;
        }
        let frame = t.div_floor(Time::new(self.rate_den, self.rate_num));
        (frame.max(0) as usize).min(self.total - 1)
    }
    fn nominal_fps(&self) -> f64 {
        self.nominal_fps.unwrap_or(self.rate_num as f64 / self.rate_den as f64)
    }
}

/// A video given by the presentation time of every frame (variable frame rate welcome).
#[derive(Clone, Debug, PartialEq)]
pub struct FrameList {
    /// Presentation times relative to the first frame, strictly increasing, first one 0.
    pts: Vec<Time>,
    duration: Time,
    nominal_fps: f64,
}

impl FrameList {
    /// `pts`: every frame's presentation time in decode-output order (strictly increasing);
    /// `end`: the time the last frame stops being shown (its pts plus its duration), on the same
    /// clock; `nominal_fps`: the container's float frame rate. Times are shifted so that the
    /// first frame is at 0. Returns `None` if `pts` is not strictly increasing or `end` is not
    /// after the last pts.
    pub fn new(pts: Vec<Time>, end: Time, nominal_fps: f64) -> Option<FrameList> {
        if pts.windows(2).any(|w| w[0] >= w[1]) {
            return None;
        }
        let Some(&first) = pts.first() else {
            return Some(FrameList { pts, duration: Time::ZERO, nominal_fps });
        };
        if end <= *pts.last().unwrap() {
            return None;
        }
        let pts: Vec<Time> = pts.into_iter().map(|p| p - first).collect();
        Some(FrameList { pts, duration: end - first, nominal_fps })
    }
}

impl FrameTimes for FrameList {
    fn total(&self) -> usize {
        self.pts.len()
    }
    fn duration(&self) -> Time {
        self.duration
    }
    fn frame_shown_at(&self, t: Time) -> usize {
        self.pts.partition_point(|p| *p <= t).saturating_sub(1)
    }
    fn nominal_fps(&self) -> f64 {
        self.nominal_fps
    }
}

// ---------------------------------------------------------------------------------------------
// Samplers, requests, results, errors
// ---------------------------------------------------------------------------------------------

/// The default fps of qwen-vl-utils (`FPS = 2.0` in `qwen_vl_utils/vision_process.py`).
pub const QWEN_DEFAULT_FPS: f64 = 2.0;
/// `FRAME_FACTOR` of qwen-vl-utils: frame counts are multiples of 2.
pub const QWEN_FRAME_FACTOR: usize = 2;
/// `FPS_MIN_FRAMES` of qwen-vl-utils.
pub const QWEN_FPS_MIN_FRAMES: usize = 4;
/// `FPS_MAX_FRAMES` of qwen-vl-utils.
pub const QWEN_FPS_MAX_FRAMES: usize = 768;

/// Which toolkit's frame-index formula to use. Names (for [`FromStr`], [`fmt::Display`] and
/// JSON) are given on each variant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Sampler {
    /// `uniform` (the default; vidprep's own): `numpy.round(numpy.linspace(0, total - 1, N))`,
    /// i.e. evenly spaced over first..last frame, rounded half to even, exactly as numpy
    /// computes it (`step = (total-1)/(N-1)`, `y[i] = i*step + 0`, last element set to
    /// `total-1`; `N = 1` gives frame 0). Fps requests use the generic fps rule (see
    /// [`Request::Fps`]).
    #[default]
    #[serde(rename = "uniform")]
    Uniform,
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
    #[serde(rename = "lmms-eval")]
    LmmsEval,
    /// `vlmevalkit`: VLMEvalKit `save_video_frames` / `frame_paths` (e.g.
    /// `vlmeval/dataset/videomme.py`). Count mode: `step_size = len(vid) / (self.nframe + 1)`,
    /// `indices = [int(i * step_size) for i in range(1, self.nframe + 1)]` (the first and last
    /// frames are never taken). Fps mode: `total_duration = n_frames / fps;
    /// required_frames = int(total_duration * self.fps); step_size = fps / self.fps;
    /// indices = [int(i * step_size) for i in range(required_frames)]`, with `fps` the
    /// container's float rate ([`FrameTimes::nominal_fps`]). Fps mode has no frame cap.
    #[serde(rename = "vlmevalkit")]
    VlmEvalKit,
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
    #[serde(rename = "qwen")]
    Qwen,
    /// `hf`: transformers `src/transformers/video_utils.py` `get_uniform_frame_indices`
    /// (4.x to 5.24, deprecated in 5.24):
    /// `np.arange(0, total_num_frames, total_num_frames / num_frames).astype(int)`. numpy's
    /// arange has `ceil(total / (total / N))` elements (in f64; `ctors.c` `_calc_length`) with
    /// values `0 + i * step` (`DOUBLE_fill`), truncated. Float rounding can give `N + 1`
    /// elements (e.g. total 49, N 3: `49 / (49 / 3)` is `3.0000000000000004`), which is
    /// reproduced and reported in [`Sampled::note`]. The function has no fps mode; fps requests
    /// use `default_sample_indices_fn`'s 4.x rule `num_frames = int(total_num_frames /
    /// video_fps * fps)` (which raises when that exceeds the total).
    #[serde(rename = "hf")]
    Hf,
    /// `hf-load-video`: transformers `video_utils.py` `default_sample_indices_fn` as in
    /// transformers 4.x to 5.15 (checked: 4.57.6, 5.0.0, 5.12.0, 5.15.0), what
    /// `load_video(..., num_frames=N)` uses when no `sample_indices_fn` is given:
    /// `np.arange(0, total_num_frames, total_num_frames / num_frames, dtype=int)`. With an
    /// integer dtype numpy stores `int(0)` and `int(0 + step)` and fills `start + i * delta`
    /// with the integer `delta = int(step)` (`LONG_fill`), so the spacing is `trunc(total / N)`
    /// (total 300, N 16 gives 0, 18, 36, ..., 270 where `hf` gives 0, 18, 37, ..., 281), and
    /// `N > total` gives all zeros. Fps: `num_frames = int(total_num_frames / video_fps * fps)`,
    /// raising when it exceeds the total.
    #[serde(rename = "hf-load-video")]
    HfLoadVideo,
    /// `hf-processor`: transformers `video_processing_utils.py`
    /// `BaseVideoProcessor.sample_frames` as in transformers 4.x to 5.15 (the video processors'
    /// `do_sample_frames=True` path): `torch.arange(0, total_num_frames, total_num_frames /
    /// num_frames).int()`, raising when `num_frames > total_num_frames` (so `allow_repeats`
    /// cannot apply). torch's float32 `arange` on CPU: length `ceil(total / step)` in f64
    /// (`RangeFactories.cpp`), values from `RangeFactoriesKernel.cpp` `arange_kernel` with the
    /// double accumulation type and torch's AVX2 vector path (8 floats a vector, two vectors
    /// per loop step, the remainder scalar): a vector starting at `b` holds
    /// `(float)((double)(float)(step * b) + j * step)` for `j` in 0..8, a scalar element is
    /// `(float)(step * i)`; then truncation. (AVX512 CPUs run the same AVX2 kernel, because
    /// `REGISTER_DISPATCH` leaves the AVX512 slot empty; ARM builds may differ in rare cases.)
    /// Verified against torch 2.15.0 on 24,660 (total, N) pairs; the plain scalar formula
    /// differs in 293 of them. Fps: `num_frames = int(total_num_frames / metadata.fps * fps)`.
    #[serde(rename = "hf-processor")]
    HfProcessor,
    /// `hf-default`: transformers `video_utils.py` `default_sample_indices_fn` from 5.18 on
    /// (checked: 5.18.0, 5.20.0, 5.22.0, 5.24.0), which `BaseVideoProcessor.sample_frames` and
    /// `load_video` both use: `np.arange(num_frames, dtype=int) * total_num_frames //
    /// num_frames`, i.e. exact integers `floor(i * total / N)`; raises when `num_frames >
    /// total_num_frames`. Fps: `num_frames = max(1, int(total_num_frames / video_fps * fps))`
    /// (the `max(1, ...)` is in 5.22 and 5.24, not in 5.18 or 5.20).
    #[serde(rename = "hf-default")]
    HfDefault,
}

impl Sampler {
    /// Every sampler, in the order of [`Sampler::NAMES`].
    pub const ALL: [Sampler; 8] = [
        Sampler::Uniform,
        Sampler::LmmsEval,
        Sampler::VlmEvalKit,
        Sampler::Qwen,
        Sampler::Hf,
        Sampler::HfLoadVideo,
        Sampler::HfProcessor,
        Sampler::HfDefault,
    ];
    /// The names accepted by [`FromStr`].
    pub const NAMES: [&'static str; 8] = [
        "uniform",
        "lmms-eval",
        "vlmevalkit",
        "qwen",
        "hf",
        "hf-load-video",
        "hf-processor",
        "hf-default",
    ];

    pub fn name(self) -> &'static str {
        Sampler::NAMES[Sampler::ALL.iter().position(|s| *s == self).unwrap()]
    }
}

impl fmt::Display for Sampler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown sampler or order name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} '{got}'; expected one of: {valid}")]
pub struct UnknownName {
    pub what: &'static str,
    pub got: String,
    pub valid: String,
}

impl FromStr for Sampler {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Sampler, UnknownName> {
        Sampler::NAMES.iter().position(|n| *n == s).map(|i| Sampler::ALL[i]).ok_or_else(|| {
            UnknownName { what: "sampler", got: s.to_string(), valid: Sampler::NAMES.join(", ") }
        })
    }
}

/// What to sample.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Request {
    /// `N` frames.
    Count(usize),
    /// A sampling rate. Samplers with a toolkit fps rule use it (see [`Sampler`]); `uniform`
    /// uses the generic rule: the frame shown at each of the exact times `0, 1/F, 2/F, ...`
    /// before the end of the video ([`FrameTimes::frame_shown_at`], so variable frame rate is
    /// handled), and if that is more than `max_frames` frames, the uniform count-`max_frames`
    /// rule instead (V-STaR's protocol: 1 fps, uniform fallback at the model's frame limit).
    /// `F` is taken as the nearest fraction with a denominator of at most 10^6, so decimal
    /// rates such as 0.5, 2, 23.976 or 29.97 are exact.
    Fps { fps: f64, max_frames: Option<usize> },
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Request::Count(n) => write!(f, "{n} frames"),
            Request::Fps { fps, max_frames: None } => write!(f, "{fps} fps"),
            Request::Fps { fps, max_frames: Some(m) } => write!(f, "{fps} fps, at most {m} frames"),
        }
    }
}

/// A sampled set of frame indices, ready for a JSON sidecar.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sampled {
    /// Frame indices into the decoded frame sequence, in the sampler's order (ascending).
    pub indices: Vec<usize>,
    pub sampler: Sampler,
    pub requested: Request,
    /// The formula that produced `indices`, as the toolkit writes it.
    pub formula: String,
    /// Anything the reader of the sidecar should know: a fallback, a rounded frame count,
    /// repeated frames, an extra element.
    pub note: Option<String>,
}

/// Why a sample could not be taken.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SampleError {
    #[error("asked for 0 frames; ask for at least 1")]
    ZeroFrames,
    #[error("fps must be a finite number greater than 0, got {0}")]
    InvalidFps(f64),
    #[error(
        "the {sampler} fps rule needs the video's frame rate, but its nominal frame rate is {fps}; \
         ask for a frame count instead"
    )]
    InvalidVideoFps { sampler: Sampler, fps: f64 },
    #[error("the video has no frames; sampling needs at least one decoded frame")]
    EmptyVideo,
    #[error(
        "asked for {requested} frames but the video has {total}; ask for at most {total}, or pass \
         --allow-repeats to let the sampler repeat frames as the toolkit would"
    )]
    TooManyFrames { requested: usize, total: usize },
    #[error(
        "{what} takes {samples} samples but they show only {distinct} distinct frames (the video \
         has {total}): the rate is above the video's frame rate; lower the fps, set a frame \
         limit, or pass --allow-repeats to keep the repeated frames"
    )]
    RepeatedFrames { what: String, samples: usize, distinct: usize, total: usize },
    #[error(
        "the {sampler} fps rule gives {got} frames, more than the limit of {max}, and that toolkit \
         has no fallback in fps mode; lower the fps, raise the limit, or use the uniform sampler \
         (which falls back to {max} evenly spaced frames)"
    )]
    ExceedsMax { sampler: Sampler, got: usize, max: usize },
    #[error("fps sampling would take {0} samples, more than vidprep handles (10000000); lower the fps")]
    TooManySamples(u128),
    #[error("the {sampler} toolkit rejects this request: {reason}")]
    Toolkit { sampler: Sampler, reason: String },
}

/// Upper bound on materialised fps samples (a guard against absurd rates, not a toolkit rule).
const MAX_SAMPLES: u128 = 10_000_000;

/// Samples frame indices from `video` with `sampler`'s formula.
///
/// `allow_repeats`: when the request needs more frames than the video has, return the
/// toolkit formula's repeated indices instead of [`SampleError::TooManyFrames`] /
/// [`SampleError::RepeatedFrames`] (see the module documentation).
pub fn sample<V: FrameTimes + ?Sized>(
    video: &V,
    sampler: Sampler,
    request: Request,
    allow_repeats: bool,
) -> Result<Sampled, SampleError> {
    let total = video.total();
    match request {
        Request::Count(0) => return Err(SampleError::ZeroFrames),
        Request::Fps { fps, .. } if !(fps.is_finite() && fps > 0.0) => {
            return Err(SampleError::InvalidFps(fps))
        }
        Request::Fps { max_frames: Some(0), .. } => return Err(SampleError::ZeroFrames),
        _ => {}
    }
    if total == 0 {
        return Err(SampleError::EmptyVideo);
    }
    let out = match request {
        Request::Count(n) => sample_count(sampler, total, n, allow_repeats)?,
        Request::Fps { fps, max_frames } => {
            sample_fps(video, sampler, fps, max_frames, allow_repeats)?
        }
    };
    debug_assert!(out.indices.iter().all(|&i| i < total));
    Ok(Sampled {
        indices: out.indices,
        sampler,
        requested: request,
        formula: out.formula,
        note: out.note,
    })
}

struct Picked {
    indices: Vec<usize>,
    formula: String,
    note: Option<String>,
}

fn picked(indices: Vec<usize>, formula: String, note: Option<String>) -> Picked {
    Picked { indices, formula, note }
}

fn join_notes(a: Option<String>, b: Option<String>) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
        (a, b) => a.or(b),
    }
}

fn repeats_note(indices: &[usize], total: usize) -> Option<String> {
    let distinct = count_distinct_sorted(indices);
    (distinct < indices.len()).then(|| {
        format!(
            "{} indices but only {distinct} distinct frames (video has {total}): frames repeat, \
             as the toolkit formula gives",
            indices.len()
        )
    })
}

fn count_distinct_sorted(indices: &[usize]) -> usize {
    let mut v = indices.to_vec();
    v.sort_unstable();
    v.dedup();
    v.len()
}

fn sample_count(
    sampler: Sampler,
    total: usize,
    n: usize,
    allow_repeats: bool,
) -> Result<Picked, SampleError> {
    // qwen-vl-utils and the transformers video processor refuse on their own terms.
    let refuses_repeats =
        matches!(sampler, Sampler::Qwen | Sampler::HfProcessor | Sampler::HfDefault);
    if n > total && !allow_repeats && !refuses_repeats {
        return Err(SampleError::TooManyFrames { requested: n, total });
    }
    let last = total - 1;
    let p = match sampler {
        Sampler::Uniform => picked(
            uniform_indices(total, n),
            format!("numpy.round(numpy.linspace(0, {last}, {n})).astype(int)"),
            None,
        ),
        Sampler::LmmsEval => picked(
            lmms_eval_indices(total, n),
            format!("numpy.linspace(0, {last}, {n}, dtype=int)"),
            None,
        ),
        Sampler::VlmEvalKit => picked(
            vlmevalkit_count_indices(total, n),
            format!("[int(i * ({total} / {})) for i in range(1, {})]", n + 1, n + 1),
            None,
        ),
        Sampler::Qwen => {
            let nframes = qwen_nframes_for_count(n);
            if !(QWEN_FRAME_FACTOR <= nframes && nframes <= total) {
                return Err(qwen_range_error(n, nframes, total, "rounded to a multiple of 2"));
            }
            let note = (nframes != n).then(|| {
                format!("qwen-vl-utils rounds nframes {n} to {nframes} (round(n / 2) * 2)")
            });
            picked(
                qwen_indices(total, nframes),
                format!("torch.linspace(0, {last}, {nframes}).round().long()"),
                note,
            )
        }
        Sampler::Hf => {
            let idx = hf_arange_astype_indices(total, n);
            let note = extra_note(idx.len(), n, total);
            picked(
                idx,
                format!("numpy.arange(0, {total}, {total} / {n}).astype(int)"),
                note,
            )
        }
        Sampler::HfLoadVideo => {
            let idx = hf_arange_dtype_int_indices(total, n);
            let note = extra_note(idx.len(), n, total);
            picked(
                idx,
                format!("numpy.arange(0, {total}, {total} / {n}, dtype=int)"),
                note,
            )
        }
        Sampler::HfProcessor => {
            if n > total {
                return Err(hf_refusal(sampler, n, total));
            }
            let idx = hf_torch_arange_indices(total, n);
            let note = extra_note(idx.len(), n, total);
            picked(idx, format!("torch.arange(0, {total}, {total} / {n}).int()"), note)
        }
        Sampler::HfDefault => {
            if n > total {
                return Err(hf_refusal(sampler, n, total));
            }
            picked(
                hf_default_indices(total, n),
                format!("numpy.arange({n}, dtype=int) * {total} // {n}"),
                None,
            )
        }
    };
    let note = join_notes(p.note, if n > total { repeats_note(&p.indices, total) } else { None });
    Ok(Picked { note, ..p })
}

fn extra_note(len: usize, n: usize, total: usize) -> Option<String> {
    (len != n).then(|| {
        format!(
            "arange returned {len} indices for {n} requested (ceil({total} / ({total} / {n})) \
             rounds to {len} in f64); kept as the toolkit returns them"
        )
    })
}

fn qwen_range_error(n: usize, nframes: usize, total: usize, how: &str) -> SampleError {
    SampleError::Toolkit {
        sampler: Sampler::Qwen,
        reason: format!(
            "qwen-vl-utils needs nframes in [{QWEN_FRAME_FACTOR}, {total}] (the video's frame \
             count) and never repeats frames, but {n} {how} gives {nframes}"
        ),
    }
}

fn hf_refusal(sampler: Sampler, n: usize, total: usize) -> SampleError {
    SampleError::Toolkit {
        sampler,
        reason: format!(
            "num_frames={n} exceeds total_num_frames={total}, and transformers raises rather \
             than repeat frames"
        ),
    }
}

fn nominal_fps_checked<V: FrameTimes + ?Sized>(
    video: &V,
    sampler: Sampler,
) -> Result<f64, SampleError> {
    let fps = video.nominal_fps();
    if fps.is_finite() && fps > 0.0 {
        Ok(fps)
    } else {
        Err(SampleError::InvalidVideoFps { sampler, fps })
    }
}

fn sample_fps<V: FrameTimes + ?Sized>(
    video: &V,
    sampler: Sampler,
    fps: f64,
    max_frames: Option<usize>,
    allow_repeats: bool,
) -> Result<Picked, SampleError> {
    let total = video.total();
    let last = total - 1;
    match sampler {
        Sampler::Uniform => generic_fps(video, fps, max_frames, allow_repeats),
        Sampler::LmmsEval => {
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
            Ok(picked(indices, format!("list(range(0, {total}, {interval}))"), None))
        }
        Sampler::VlmEvalKit => {
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
                    return Err(SampleError::ExceedsMax { sampler, got: required, max: m });
                }
            }
            let step_size = vfps / fps;
            let indices: Vec<usize> =
                (0..required).map(|i| (i as f64 * step_size) as usize).collect();
            if let Some(&bad) = indices.iter().find(|&&i| i >= total) {
                return Err(SampleError::Toolkit {
                    sampler,
                    reason: format!("the fps rule selects frame {bad}, past the last frame {last}"),
                });
            }
            let formula = format!(
                "[int(i * ({vfps} / {fps})) for i in range(int({total} / {vfps} * {fps}))]"
            );
            fps_repeats_check(indices, formula, allow_repeats, total, || {
                format!("VLMEvalKit's fps rule at {fps} fps")
            })
        }
        Sampler::Qwen => {
            let vfps = nominal_fps_checked(video, sampler)?;
            let nframes = qwen_nframes_for_fps(total, vfps, fps, max_frames);
            if !(QWEN_FRAME_FACTOR <= nframes && nframes <= total) {
                return Err(qwen_range_error(
                    total,
                    nframes,
                    total,
                    &format!("frames at {fps} fps (smart_nframes)"),
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
        Sampler::Hf | Sampler::HfLoadVideo | Sampler::HfProcessor | Sampler::HfDefault => {
            let vfps = nominal_fps_checked(video, sampler)?;
            // num_frames = int(total_num_frames / video_fps * fps), and from transformers 5.22
            // (hf-default) max(1, ...).
            let mut n = (total as f64 / vfps * fps).trunc();
            if sampler == Sampler::HfDefault {
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
                    return Err(SampleError::ExceedsMax { sampler, got: n, max: m });
                }
            }
            let p = sample_count(sampler, total, n, false)?;
            let note = join_notes(
                Some(format!("num_frames = int({total} / {vfps} * {fps}) = {n}")),
                p.note,
            );
            Ok(Picked { note, ..p })
        }
    }
}

fn fps_repeats_check(
    indices: Vec<usize>,
    formula: String,
    allow_repeats: bool,
    total: usize,
    what: impl FnOnce() -> String,
) -> Result<Picked, SampleError> {
    let distinct = count_distinct_sorted(&indices);
    if distinct < indices.len() {
        if !allow_repeats {
            return Err(SampleError::RepeatedFrames {
                what: what(),
                samples: indices.len(),
                distinct,
                total,
            });
        }
        let note = repeats_note(&indices, total);
        return Ok(picked(indices, formula, note));
    }
    Ok(picked(indices, formula, None))
}

/// The generic fps rule (see [`Request::Fps`]).
fn generic_fps<V: FrameTimes + ?Sized>(
    video: &V,
    fps: f64,
    max_frames: Option<usize>,
    allow_repeats: bool,
) -> Result<Picked, SampleError> {
    let total = video.total();
    let (p, q) = rational_approx(fps, 1_000_000);
    let duration = video.duration();
    // Sample k is at t_k = k * q / p seconds; count the k >= 0 with t_k < duration:
    // k * q * dd < dn * p  <=>  k < dn * p / (q * dd).  At least the frame at t = 0.
    let (dn, dd) = (duration.numer() as i128, duration.denom() as i128);
    let samples: u128 = if dn <= 0 {
        1
    } else {
        let num = dn * p as i128;
        let den = q as i128 * dd;
        ((num + den - 1) / den).max(1) as u128
    };
    let period = if p == 1 { format!("{q}") } else { format!("{q}/{p}") };
    if let Some(m) = max_frames {
        if samples > m as u128 {
            let last = total - 1;
            if m > total && !allow_repeats {
                return Err(SampleError::TooManyFrames { requested: m, total });
            }
            let indices = uniform_indices(total, m);
            let note = join_notes(
                Some(format!(
                    "{fps} fps gave {samples} frames > max {m}: fell back to uniform {m}"
                )),
                if m > total { repeats_note(&indices, total) } else { None },
            );
            return Ok(picked(
                indices,
                format!("numpy.round(numpy.linspace(0, {last}, {m})).astype(int)"),
                note,
            ));
        }
    }
    if samples > MAX_SAMPLES {
        return Err(SampleError::TooManySamples(samples));
    }
    if samples > total as u128 && !allow_repeats {
        return Err(SampleError::RepeatedFrames {
            what: format!("sampling at {fps} fps"),
            samples: samples as usize,
            distinct: total.min(samples as usize),
            total,
        });
    }
    let step = Time::new(q, p);
    let indices: Vec<usize> =
        (0..samples as i64).map(|k| video.frame_shown_at(step * k)).collect();
    let formula = format!(
        "frame shown at t = k * {period} s for k = 0, 1, ... while t < {} s",
        duration
    );
    fps_repeats_check(indices, formula, allow_repeats, total, || format!("sampling at {fps} fps"))
}

// ---------------------------------------------------------------------------------------------
// The formulas
// ---------------------------------------------------------------------------------------------

/// `numpy.linspace(0, stop, num)` in f64, as numpy 2.x `_core/function_base.py` `linspace`
/// computes it: `delta = stop - start; y = arange(0, num) * (delta / div)` (or, when the step
/// is 0, `y / div * delta`); `y += start`; `y[-1] = stop` when `num > 1`; with `div = num - 1`
/// and, for `num == 1`, `y = [0] * delta + start`.
pub fn numpy_linspace(start: f64, stop: f64, num: usize) -> Vec<f64> {
    let div = num.saturating_sub(1);
    let delta = stop - start;
    let mut y: Vec<f64> = (0..num).map(|i| i as f64).collect();
    if div > 0 {
        let step = delta / div as f64;
        if step == 0.0 {
            for v in &mut y {
                *v = *v / div as f64 * delta;
            }
        } else {
            for v in &mut y {
                *v *= step;
            }
        }
    } else {
        for v in &mut y {
            *v *= delta;
        }
    }
    for v in &mut y {
        *v += start;
    }
    if num > 1 {
        y[num - 1] = stop;
    }
    y
}

/// `uniform`: `numpy.round(numpy.linspace(0, total - 1, n))` (half to even).
pub fn uniform_indices(total: usize, n: usize) -> Vec<usize> {
    numpy_linspace(0.0, (total - 1) as f64, n)
        .into_iter()
        .map(|v| v.round_ties_even() as usize)
        .collect()
}

/// `lmms-eval`: `numpy.linspace(0, total - 1, n, dtype=int)` (numpy floors, then casts).
pub fn lmms_eval_indices(total: usize, n: usize) -> Vec<usize> {
    numpy_linspace(0.0, (total - 1) as f64, n).into_iter().map(|v| v.floor() as usize).collect()
}

/// `vlmevalkit` count mode: `[int(i * (total / (n + 1))) for i in range(1, n + 1)]`.
pub fn vlmevalkit_count_indices(total: usize, n: usize) -> Vec<usize> {
    let step_size = total as f64 / (n + 1) as f64;
    (1..=n).map(|i| (i as f64 * step_size) as usize).collect()
}

/// `torch.linspace(start, end, steps)` with the default float32 dtype on CPU
/// (`RangeFactoriesKernel.cpp` `linspace_kernel`): `step = (float(end) - float(start)) /
/// (steps - 1)` in f32; element `i` is `start + step * i` for `i < steps / 2` and
/// `end - step * (steps - i - 1)` otherwise, each rounded to f32 once (the product of an f32
/// and an integer below 2^29 is exact in f64, and so is the sum here, so computing in f64 and
/// rounding to f32 is exactly torch's fused multiply-add); `steps == 1` gives `[start]`
/// (`RangeFactories.cpp` `linspace_out`: `fill_(start)`).
pub fn torch_linspace_f32(start: i64, end: i64, steps: usize) -> Vec<f32> {
    match steps {
        0 => return Vec::new(),
        1 => return vec![start as f32],
        _ => {}
    }
    let s = start as f32;
    let e = end as f32;
    let step = (e - s) / ((steps - 1) as i64 as f32);
    let (s, e, step64) = (s as f64, e as f64, step as f64);
    let halfway = steps / 2;
    (0..steps)
        .map(|i| {
            if i < halfway {
                (s + step64 * i as f64) as f32
            } else {
                (e - step64 * (steps - i - 1) as f64) as f32
            }
        })
        .collect()
}

/// `qwen`: `torch.linspace(0, total - 1, nframes).round().long()` (f32, half to even).
pub fn qwen_indices(total: usize, nframes: usize) -> Vec<usize> {
    torch_linspace_f32(0, total as i64 - 1, nframes)
        .into_iter()
        .map(|v| v.round_ties_even() as usize)
        .collect()
}

/// qwen-vl-utils `smart_nframes` for `{"nframes": n}`: `round(n / 2) * 2`.
pub fn qwen_nframes_for_count(n: usize) -> usize {
    ((n as f64 / QWEN_FRAME_FACTOR as f64).round_ties_even() as usize) * QWEN_FRAME_FACTOR
}

fn qwen_max_frames(total: usize, max_frames: Option<usize>) -> usize {
    // floor_by_factor(ele.get("max_frames", min(FPS_MAX_FRAMES, total_frames)), FRAME_FACTOR)
    let m = max_frames.unwrap_or(QWEN_FPS_MAX_FRAMES.min(total));
    (m as f64 / QWEN_FRAME_FACTOR as f64).floor() as usize * QWEN_FRAME_FACTOR
}

/// qwen-vl-utils `smart_nframes` for `{"fps": fps}` (optionally `"max_frames"`), in f64 as
/// Python computes it.
pub fn qwen_nframes_for_fps(
    total: usize,
    video_fps: f64,
    fps: f64,
    max_frames: Option<usize>,
) -> usize {
    let factor = QWEN_FRAME_FACTOR as f64;
    let min_frames = (QWEN_FPS_MIN_FRAMES as f64 / factor).ceil() * factor;
    let max_frames = qwen_max_frames(total, max_frames) as f64;
    let nframes = total as f64 / video_fps * fps;
    let nframes = nframes.max(min_frames).min(max_frames).min(total as f64);
    ((nframes / factor).floor() * factor) as usize
}

/// numpy `arange(0, stop, step)` length (`ctors.c` `_calc_length`): `ceil((stop - start) / step)`
/// in f64, with `stop` a Python int and `step` a float.
fn numpy_arange_len(total: usize, step: f64) -> usize {
    (total as f64 / step).ceil() as usize
}

/// `hf`: `np.arange(0, total, total / n).astype(int)`: values `0 + i * step` in f64
/// (numpy's `DOUBLE_fill`: `start + i*delta`, `delta = (start + step) - start`), truncated.
pub fn hf_arange_astype_indices(total: usize, n: usize) -> Vec<usize> {
    let step = total as f64 / n as f64;
    let len = numpy_arange_len(total, step);
    let delta = (0.0 + step) - 0.0;
    (0..len).map(|i| (0.0 + i as f64 * delta) as usize).collect()
}

/// `hf-load-video`: `np.arange(0, total, total / n, dtype=int)`: numpy stores `int(0)` and
/// `int(0 + step)` and fills `start + i * delta` with the integer `delta = int(step)`
/// (`LONG_fill`).
pub fn hf_arange_dtype_int_indices(total: usize, n: usize) -> Vec<usize> {
    let step = total as f64 / n as f64;
    let len = numpy_arange_len(total, step);
    let delta = step.trunc() as usize;
    (0..len).map(|i| i * delta).collect()
}

/// Floats per `Vectorized<float>` in torch's x86 AVX2 kernels.
const TORCH_VEC_FLOATS: usize = 8;

/// `hf-processor`: `torch.arange(0, total, total / n).int()` (see [`Sampler::HfProcessor`]):
/// torch's `vectorized_loop` takes two vectors of [`TORCH_VEC_FLOATS`] per step while at least
/// that many elements remain, each from `Vectorized<float>::arange(base, step)` with
/// `base = (float)(start + step * idx)` and elements `base + j * step` computed in double and
/// stored as float; the remaining elements come from the scalar `start + step * idx`.
pub fn hf_torch_arange_indices(total: usize, n: usize) -> Vec<usize> {
    let step = total as f64 / n as f64;
    let len = numpy_arange_len(total, step);
    let start = 0.0f64;
    let mut out: Vec<f32> = Vec::with_capacity(len);
    let mut i = 0;
    while i + 2 * TORCH_VEC_FLOATS <= len {
        for block in [i, i + TORCH_VEC_FLOATS] {
            let base = (start + step * block as f64) as f32;
            out.extend((0..TORCH_VEC_FLOATS).map(|j| (base as f64 + j as f64 * step) as f32));
        }
        i += 2 * TORCH_VEC_FLOATS;
    }
    out.extend((i..len).map(|k| (start + step * k as f64) as f32));
    out.into_iter().map(|v| v as i32 as usize).collect()
}

/// `hf-default`: `np.arange(n, dtype=int) * total // n`, exact integers.
pub fn hf_default_indices(total: usize, n: usize) -> Vec<usize> {
    (0..n).map(|i| (i as u128 * total as u128 / n as u128) as usize).collect()
}

/// The nearest fraction `p / q` to `x > 0` with `q <= max_den` (continued fractions with
/// semiconvergents). Returns at least `1 / max_den`.
fn rational_approx(x: f64, max_den: i64) -> (i64, i64) {
    let max_den = max_den as i128;
    let (mut p0, mut q0, mut p1, mut q1) = (0i128, 1i128, 1i128, 0i128);
    let mut r = x;
    let mut best: (i128, i128);
    loop {
        let a = r.floor();
        if a > 1e15 {
            best = (p1, q1);
            break;
        }
        let a = a as i128;
        let (p2, q2) = (a * p1 + p0, a * q1 + q0);
        if q2 > max_den {
            let t = (max_den - q0) / q1;
            let (ps, qs) = (t * p1 + p0, t * q1 + q0);
            let err_s = (x - ps as f64 / qs as f64).abs();
            let err_c = (x - p1 as f64 / q1 as f64).abs();
            best = if q1 > 0 && err_c <= err_s { (p1, q1) } else { (ps, qs) };
            break;
        }
        (p0, q0, p1, q1) = (p1, q1, p2, q2);
        let frac = r - a as f64;
        if frac == 0.0 || p1 as f64 / q1 as f64 == x {
            best = (p1, q1);
            break;
        }
        r = 1.0 / frac;
    }
    if best.0 <= 0 || best.1 <= 0 {
        best = (1, max_den);
    }
    let p = best.0.min(i64::MAX as i128) as i64;
    (p, best.1 as i64)
}

// ---------------------------------------------------------------------------------------------
// Orders
// ---------------------------------------------------------------------------------------------

/// How to order the sampled frames (for ablations).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// As sampled (ascending time).
    #[default]
    Ordered,
    /// A seeded random permutation ([`shuffle_permutation`]).
    Shuffled,
    /// Descending time.
    Reversed,
    /// Only the last sampled frame.
    Last,
}

impl Order {
    pub const ALL: [Order; 4] = [Order::Ordered, Order::Shuffled, Order::Reversed, Order::Last];
    pub const NAMES: [&'static str; 4] = ["ordered", "shuffled", "reversed", "last"];

    pub fn name(self) -> &'static str {
        Order::NAMES[Order::ALL.iter().position(|o| *o == self).unwrap()]
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Order {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Order, UnknownName> {
        Order::NAMES.iter().position(|n| *n == s).map(|i| Order::ALL[i]).ok_or_else(|| {
            UnknownName { what: "order", got: s.to_string(), valid: Order::NAMES.join(", ") }
        })
    }
}

/// Sampled frames after [`arrange`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Arranged {
    /// The frame indices in presentation order: `indices[j] = input[permutation[j]]`.
    pub indices: Vec<usize>,
    /// For each output position, the position in the input it came from (record it to
    /// reproduce or undo the order).
    pub permutation: Vec<usize>,
    pub order: Order,
    /// The seed used (only meaningful for [`Order::Shuffled`]).
    pub seed: u64,
}

/// Reorders sampled `indices` as `order` says; `seed` drives [`Order::Shuffled`] and is
/// ignored otherwise. [`Order::Last`] keeps only the last element (nothing for empty input).
pub fn arrange(indices: &[usize], order: Order, seed: u64) -> Arranged {
    let n = indices.len();
    let permutation: Vec<usize> = match order {
        Order::Ordered => (0..n).collect(),
        Order::Shuffled => shuffle_permutation(n, seed),
        Order::Reversed => (0..n).rev().collect(),
        Order::Last => n.checked_sub(1).into_iter().collect(),
    };
    Arranged {
        indices: permutation.iter().map(|&p| indices[p]).collect(),
        permutation,
        order,
        seed,
    }
}

/// SplitMix64 (Steele, Lea & Flood 2014; the reference `splitmix64.c` by Vigna): the state
/// advances by `0x9E3779B97F4A7C15` and each output is the state mixed by
/// `z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9; z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
/// z ^ (z >> 31)` (wrapping arithmetic). Fully specified, so a seed gives the same stream on
/// every machine and in every language.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..bound` (`bound > 0`) without modulo bias: draws are rejected while
    /// `r < (2^64 - bound) % bound`, then `r % bound` is returned.
    pub fn below(&mut self, bound: u64) -> u64 {
        assert!(bound > 0);
        let threshold = bound.wrapping_neg() % bound;
        loop {
            let r = self.next_u64();
            if r >= threshold {
                return r % bound;
            }
        }
    }
}

/// The permutation of `0..n` for `seed`: Fisher–Yates (Durstenfeld) from the end,
/// `for i in (1..n).rev() { j = rng.below(i + 1); p.swap(i, j) }`, starting from the identity,
/// with [`SplitMix64`] seeded by `seed`.
pub fn shuffle_permutation(n: usize, seed: u64) -> Vec<usize> {
    let mut rng = SplitMix64::new(seed);
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        p.swap(i, j);
    }
    p
}
