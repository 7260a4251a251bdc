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
//! # transformers
//!
//! transformers has changed its default sampler between releases, so there are four `hf`
//! samplers: [`Sampler::Hf`] (`get_uniform_frame_indices`), [`Sampler::HfLoadVideo`] and
//! [`Sampler::HfProcessor`] (`load_video` and the video processors up to 5.15), and
//! [`Sampler::HfDefault`] (both from 5.18). Model-specific video processors that override
//! `sample_frames` (Qwen2-VL, LLaVA-OneVision, ...) are not covered.
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
    /// How long a frame typically lasts (the median spacing of the frames): sampling faster
    /// than this repeats frames because the rate is above the video's, while a slower rate
    /// repeats a frame only where the video holds it (a freeze in variable frame rate).
    fn typical_frame_duration(&self) -> Option<Time> {
        let fps = self.nominal_fps();
        (fps.is_finite() && fps > 0.0).then(|| {
            let (p, q) = rational_approx(fps, 1_000_000);
            Time::new(q as i64, p as i64)
        })
    }
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
        ConstantRate {
            total,
            rate_num,
            rate_den,
            nominal_fps: None,
        }
    }

    /// The same video, but reporting `fps` as its nominal float frame rate (what the container
    /// or decord says, e.g. `29.97002997` for a 30000/1001 stream). By default the nominal rate
    /// is `rate_num as f64 / rate_den as f64`.
    pub fn with_nominal_fps(self, fps: f64) -> ConstantRate {
        ConstantRate {
            nominal_fps: Some(fps),
            ..self
        }
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
        self.nominal_fps
            .unwrap_or(self.rate_num as f64 / self.rate_den as f64)
    }
    fn typical_frame_duration(&self) -> Option<Time> {
        Some(Time::new(self.rate_den, self.rate_num))
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
            return Some(FrameList {
                pts,
                duration: Time::ZERO,
                nominal_fps,
            });
        };
        if end <= *pts.last().unwrap() {
            return None;
        }
        let pts: Vec<Time> = pts.into_iter().map(|p| p - first).collect();
        Some(FrameList {
            pts,
            duration: end - first,
            nominal_fps,
        })
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
    fn typical_frame_duration(&self) -> Option<Time> {
        let mut steps: Vec<Time> = self.pts.windows(2).map(|w| w[1] - w[0]).collect();
        if steps.is_empty() {
            return (self.duration > Time::ZERO).then_some(self.duration);
        }
        steps.sort();
        Some(steps[steps.len() / 2])
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
    /// `vlmeval/dataset/videomme.py`; most of its video datasets copy it, a few clamp or shift
    /// it slightly). Count mode: `step_size = len(vid) / (self.nframe + 1)`,
    /// `indices = [int(i * step_size) for i in range(1, self.nframe + 1)]` (points strictly
    /// inside the video, so frame 0 and the last frame are skipped unless N is close to the
    /// total). Fps mode: `total_duration = n_frames / fps;
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
    /// elements (total 15, N 13: `15 / (15 / 13)` is `13.000000000000002`, so 14 indices, all
    /// kept), and the extra one can be `total` itself (total 17, N 7: `7 * (17 / 7)` rounds to
    /// `17.0`), an index no frame has, which is dropped; both are reported in
    /// [`Sampled::note`]. The function has no fps mode; fps requests
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
    /// differs in 293 of them. This is torch on one thread; above 32,768 frames (torch's
    /// `GRAIN_SIZE`) a multi-threaded torch splits the range into per-thread chunks whose
    /// vector blocks start at the chunk start, so its result then depends on the thread count.
    /// Fps: `num_frames = int(total_num_frames / metadata.fps * fps)`.
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
        Sampler::NAMES
            .iter()
            .position(|n| *n == s)
            .map(|i| Sampler::ALL[i])
            .ok_or_else(|| UnknownName {
                what: "sampler",
                got: s.to_string(),
                valid: Sampler::NAMES.join(", "),
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
            Request::Fps {
                fps,
                max_frames: None,
            } => write!(f, "{fps} fps"),
            Request::Fps {
                fps,
                max_frames: Some(m),
            } => write!(f, "{fps} fps, at most {m} frames"),
        }
    }
}

/// A sampled set of frame indices, ready for a JSON sidecar.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sampled {
    /// Frame indices into the decoded frame sequence, in the sampler's order: ascending, or
    /// non-decreasing when frames repeat (`allow_repeats`).
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
        "asked for {requested} frames but the video has {total}; ask for at most {total}, or set \
         `allow_repeats` to let the sampler repeat frames as the toolkit would"
    )]
    TooManyFrames { requested: usize, total: usize },
    #[error(
        "{what} takes {samples} samples but they show only {distinct} distinct frames (the video \
         has {total}): the rate is above the video's frame rate; lower the fps, set a frame \
         limit, or set `allow_repeats` to keep the repeated frames"
    )]
    RepeatedFrames {
        what: String,
        samples: usize,
        distinct: usize,
        total: usize,
    },
    #[error(
        "the {sampler} fps rule gives {got} frames, more than the limit of {max}, and that toolkit \
         has no fallback in fps mode; lower the fps, raise the limit, or use the uniform sampler \
         (which falls back to {max} evenly spaced frames)"
    )]
    ExceedsMax {
        sampler: Sampler,
        got: usize,
        max: usize,
    },
    #[error(
        "the request would take {0} samples, more than vidprep handles (10000000); ask for fewer \
         frames or a lower fps"
    )]
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
        Request::Fps {
            max_frames: Some(0),
            ..
        } => return Err(SampleError::ZeroFrames),
        _ => {}
    }
    if total == 0 {
        return Err(SampleError::EmptyVideo);
    }
    if let Request::Count(n) = request {
        if n as u128 > MAX_SAMPLES {
            return Err(SampleError::TooManySamples(n as u128));
        }
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
    Picked {
        indices,
        formula,
        note,
    }
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
    let refuses_repeats = matches!(
        sampler,
        Sampler::Qwen | Sampler::HfProcessor | Sampler::HfDefault
    );
    if n > total && !allow_repeats && !refuses_repeats {
        return Err(SampleError::TooManyFrames {
            requested: n,
            total,
        });
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
            format!(
                "[int(i * ({total} / {})) for i in range(1, {})]",
                n + 1,
                n + 1
            ),
            None,
        ),
        Sampler::Qwen => {
            let nframes = qwen_nframes_for_count(n);
            if !(QWEN_FRAME_FACTOR <= nframes && nframes <= total) {
                return Err(qwen_range_error(
                    &format!("nframes {n} rounded to a multiple of 2 (round(n / 2) * 2)"),
                    nframes,
                    total,
                ));
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
        Sampler::Hf => arange_picked(
            hf_arange_astype_indices(total, n),
            format!("numpy.arange(0, {total}, {total} / {n}).astype(int)"),
            n,
            total,
        ),
        Sampler::HfLoadVideo => arange_picked(
            hf_arange_dtype_int_indices(total, n),
            format!("numpy.arange(0, {total}, {total} / {n}, dtype=int)"),
            n,
            total,
        ),
        Sampler::HfProcessor => {
            if n > total {
                return Err(hf_refusal(sampler, n, total));
            }
            arange_picked(
                hf_torch_arange_indices(total, n),
                format!("torch.arange(0, {total}, {total} / {n}).int()"),
                n,
                total,
            )
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
    let note = join_notes(
        p.note,
        if n > total {
            repeats_note(&p.indices, total)
        } else {
            None
        },
    );
    Ok(Picked { note, ..p })
}

/// The `arange`-based transformers formulas can return one element more than asked
/// (`ceil(total / (total / N))` rounds up to `N + 1`), and that element can be `total` itself,
/// one past the last frame (float rounding of `N * step`). An extra in-range element is kept,
/// as the toolkit returns it; an index `>= total` is dropped, since no frame has it
/// (transformers' pyav and opencv readers skip it silently; tensor indexing and decord raise).
/// Both are reported in the note.
fn arange_picked(raw: Vec<usize>, formula: String, n: usize, total: usize) -> Picked {
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

fn qwen_range_error(what: &str, nframes: usize, total: usize) -> SampleError {
    SampleError::Toolkit {
        sampler: Sampler::Qwen,
        reason: format!(
            "qwen-vl-utils needs nframes in [{QWEN_FRAME_FACTOR}, {total}] (the video's frame \
             count) and never repeats frames, but {what} gives {nframes}"
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
            Ok(picked(
                indices,
                format!("list(range(0, {total}, {interval}))"),
                None,
            ))
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
                    &format!("smart_nframes for {total} frames at {vfps} fps sampled at {fps} fps"),
                    nframes,
                    total,
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
    let period = if p == 1 {
        format!("{q}")
    } else {
        format!("{q}/{p}")
    };
    if let Some(m) = max_frames {
        if samples > m as u128 {
            let last = total - 1;
            if m > total && !allow_repeats {
                return Err(SampleError::TooManyFrames {
                    requested: m,
                    total,
                });
            }
            let indices = uniform_indices(total, m);
            let note = join_notes(
                Some(format!(
                    "{fps} fps gave {samples} frames > max {m}: fell back to uniform {m}"
                )),
                if m > total {
                    repeats_note(&indices, total)
                } else {
                    None
                },
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
    let indices: Vec<usize> = (0..samples as i64)
        .map(|k| video.frame_shown_at(step * k))
        .collect();
    let formula = format!(
        "frame shown at t = k * {period} s for k = 0, 1, ... while t < {} s",
        duration
    );
    // Sampling over time: where the video holds a frame (a freeze), several sample times show
    // it, which is what a viewer sees. Only a rate above the video's own is refused.
    let faster_than_video = video
        .typical_frame_duration()
        .is_some_and(|frame| step < frame);
    if faster_than_video {
        return fps_repeats_check(indices, formula, allow_repeats, total, || {
            format!("sampling at {fps} fps")
        });
    }
    let distinct = count_distinct_sorted(&indices);
    let note = (distinct < indices.len()).then(|| {
        format!(
            "{} samples show {distinct} distinct frames: the video holds some frames longer \
             than the sampling period (variable frame rate), so they repeat",
            indices.len()
        )
    });
    Ok(picked(indices, formula, note))
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
    numpy_linspace(0.0, (total - 1) as f64, n)
        .into_iter()
        .map(|v| v.floor() as usize)
        .collect()
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
    (0..len)
        .map(|i| (0.0 + i as f64 * delta) as usize)
        .collect()
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
pub const TORCH_VEC_FLOATS: usize = 8;

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
    (0..n)
        .map(|i| (i as u128 * total as u128 / n as u128) as usize)
        .collect()
}

/// The nearest fraction `p / q` to `x > 0` with `q <= max_den` (continued fractions with
/// semiconvergents). Returns at least `1 / max_den`; rates of 10^12 and more (absurd, and
/// refused later as too many samples) come back as `min(x, 10^15) / 1`.
fn rational_approx(x: f64, max_den: i64) -> (i64, i64) {
    if x >= 1e12 {
        return (x.min(1e15).round() as i64, 1);
    }
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
            best = if q1 > 0 && err_c <= err_s {
                (p1, q1)
            } else {
                (ps, qs)
            };
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
    pub const ALL: [Order; 4] = [
        Order::Ordered,
        Order::Shuffled,
        Order::Reversed,
        Order::Last,
    ];
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
        Order::NAMES
            .iter()
            .position(|n| *n == s)
            .map(|i| Order::ALL[i])
            .ok_or_else(|| UnknownName {
                what: "order",
                got: s.to_string(),
                valid: Order::NAMES.join(", "),
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

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde::Deserialize;
    use serde_json::{json, Value};

    /// The reference implementation (real numpy/torch/qwen-vl-utils/transformers where
    /// installed), shared with the golden-table generator.
    const REFERENCE_PY: &str = include_str!("../fixtures/sampling/reference.py");
    const GOLDEN_JSON: &str = include_str!("../fixtures/sampling/golden.json");

    fn cfr(total: usize, num: i64, den: i64) -> ConstantRate {
        ConstantRate::new(total, num, den)
    }

    fn count(total: usize, sampler: Sampler, n: usize) -> Result<Vec<usize>, SampleError> {
        sample(&cfr(total, 30, 1), sampler, Request::Count(n), false).map(|s| s.indices)
    }

    fn count_rep(total: usize, sampler: Sampler, n: usize) -> Result<Vec<usize>, SampleError> {
        sample(&cfr(total, 30, 1), sampler, Request::Count(n), true).map(|s| s.indices)
    }

    fn fnv1a64(indices: &[usize]) -> String {
        let text = indices
            .iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let mut h: u64 = 0xCBF2_9CE4_8422_2325;
        for b in text.bytes() {
            h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01B3);
        }
        format!("{h:016x}")
    }

    /// Runs one reference-format case through vidprep (with `allow_repeats`, so the toolkit
    /// formula itself is compared).
    fn run_case(case: &Value) -> Result<Sampled, SampleError> {
        let sampler: Sampler = case["s"].as_str().unwrap().parse().unwrap();
        let total = case["t"].as_u64().unwrap() as usize;
        if let Some(n) = case.get("n") {
            return sample(
                &cfr(total, 30, 1),
                sampler,
                Request::Count(n.as_u64().unwrap() as usize),
                true,
            );
        }
        let fps = case["fps"].as_f64().unwrap();
        let max_frames = case.get("max").and_then(Value::as_u64).map(|m| m as usize);
        let video = match case.get("rate") {
            Some(r) => cfr(total, r[0].as_i64().unwrap(), r[1].as_i64().unwrap()),
            None => cfr(total, 30, 1).with_nominal_fps(case["vfps"].as_f64().unwrap()),
        };
        sample(&video, sampler, Request::Fps { fps, max_frames }, true)
    }

    /// Compares vidprep with one reference result; `None` if they agree.
    fn disagreement(case: &Value, expected: &Value) -> Option<String> {
        let got = run_case(case);
        let short = |v: &[usize]| {
            if v.len() <= 40 {
                format!("{v:?}")
            } else {
                format!(
                    "{} indices {:?} ... {:?}",
                    v.len(),
                    &v[..20],
                    &v[v.len() - 20..]
                )
            }
        };
        let got_text = match &got {
            Ok(s) => format!("Ok({}, note {:?})", short(&s.indices), s.note),
            Err(e) => format!("Err({e})"),
        };
        let expected_text = {
            let t = expected.to_string();
            if t.len() > 300 {
                format!("{}...", &t[..300])
            } else {
                t
            }
        };
        let mismatch = |what: String| Some(format!("case {case}: {what}; vidprep gave {got_text}"));
        if expected.get("e").is_some()
            || expected
                .get("i")
                .is_some_and(|i| i.as_array().unwrap().is_empty())
        {
            // The toolkit raises (or selects nothing): vidprep must refuse too.
            return match &got {
                Err(SampleError::Toolkit { .. }) => None,
                _ => mismatch(format!(
                    "toolkit gives {expected_text}, expected a toolkit error"
                )),
            };
        }
        let Ok(s) = &got else {
            return mismatch(format!("toolkit gives {expected_text}"));
        };
        if let Some(i) = expected.get("i") {
            let want: Vec<usize> = serde_json::from_value(i.clone()).unwrap();
            if s.indices != want {
                return mismatch(format!("indices differ from {}", short(&want)));
            }
        } else {
            let len = expected["len"].as_u64().unwrap() as usize;
            let head: Vec<usize> = serde_json::from_value(expected["head"].clone()).unwrap();
            let tail: Vec<usize> = serde_json::from_value(expected["tail"].clone()).unwrap();
            let ok = s.indices.len() == len
                && s.indices[..4] == head[..]
                && s.indices[len - 4..] == tail[..]
                && fnv1a64(&s.indices) == expected["fnv"].as_str().unwrap();
            if !ok {
                return mismatch(format!(
                    "long list differs from len {len} head {head:?} tail {tail:?}"
                ));
            }
        }
        if expected.get("oor").is_some()
            && !s
                .note
                .as_deref()
                .unwrap_or("")
                .contains("one past the last frame")
        {
            return mismatch("the dropped out-of-range index is not noted".into());
        }
        None
    }

    #[test]
    fn golden_table_matches() {
        let golden: Value = serde_json::from_str(GOLDEN_JSON).unwrap();
        let cases = golden["cases"].as_array().unwrap();
        assert!(cases.len() > 2000, "golden table too small");
        let mut bad = Vec::new();
        let mut per_sampler = std::collections::BTreeMap::new();
        for case in cases {
            *per_sampler
                .entry(case["s"].as_str().unwrap().to_string())
                .or_insert(0) += 1;
            if let Some(msg) = disagreement(case, case) {
                bad.push(msg);
            }
        }
        assert_eq!(
            per_sampler.len(),
            Sampler::ALL.len(),
            "every sampler is in the table"
        );
        assert!(
            bad.is_empty(),
            "{} of {} golden cases differ:\n{}",
            bad.len(),
            cases.len(),
            bad[..bad.len().min(20)].join("\n")
        );
    }

    fn python() -> Option<String> {
        let candidates: Vec<String> = std::env::var("VIDPREP_PYTHON")
            .ok()
            .into_iter()
            .chain(["python3".to_string()])
            .collect();
        candidates.into_iter().find(|py| {
            std::process::Command::new(py)
                .args(["-c", "import numpy"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
    }

    #[derive(Deserialize)]
    struct PyOut {
        meta: Value,
        results: Vec<Value>,
    }

    fn live_cases() -> Vec<Value> {
        let mut cases = Vec::new();
        let numpy_samplers = [
            "uniform",
            "lmms-eval",
            "vlmevalkit",
            "hf",
            "hf-load-video",
            "hf-default",
        ];
        let torch_samplers = ["qwen", "hf-processor"];
        let mut totals: Vec<usize> = (1..=400).collect();
        totals.extend([
            1799, 1800, 4501, 107892, 1800000, 16777216, 16777217, 16777218, 16777219, 33554435,
            123456789,
        ]);
        let mut ns: Vec<usize> = (1..=64).collect();
        ns.push(768);
        for &t in &totals {
            for &n in &ns {
                if n == 768 && t < 1000 {
                    continue;
                }
                for s in numpy_samplers.iter().chain(&torch_samplers) {
                    cases.push(json!({"s": s, "t": t, "n": n}));
                }
            }
        }
        let rates: [(i64, i64, f64); 7] = [
            (30000, 1001, 29.97002997),
            (24000, 1001, 23.976),
            (25, 1, 25.0),
            (30, 1, 30.0),
            (60, 1, 60.0),
            (1, 2, 0.5),
            (15, 2, 7.5),
        ];
        let fpss = [0.5, 1.0, 2.0, 3.0, 0.1, 0.25, 23.976, 29.97002997, 60.0];
        let fps_totals = [
            1, 2, 3, 5, 13, 30, 31, 59, 60, 61, 299, 300, 301, 901, 1800, 4501, 107892,
        ];
        for (num, den, vfps) in rates {
            for t in fps_totals {
                for fps in fpss {
                    // Keep the reference's lists (and run time) reasonable.
                    let frames_at_rate = t as f64 / vfps.min(num as f64 / den as f64) * fps;
                    if frames_at_rate > 20_000.0 {
                        continue;
                    }
                    for s in numpy_samplers.iter().chain(&torch_samplers) {
                        let caps: &[Option<usize>] =
                            if matches!(*s, "uniform" | "lmms-eval" | "qwen") {
                                &[None, Some(8), Some(32), Some(100)]
                            } else {
                                &[None]
                            };
                        for &mx in caps {
                            let mut c = json!({"s": s, "t": t, "fps": fps});
                            if *s == "uniform" {
                                c["rate"] = json!([num, den]);
                            } else {
                                c["vfps"] = json!(vfps);
                            }
                            if let Some(m) = mx {
                                c["max"] = json!(m);
                            }
                            cases.push(c);
                        }
                    }
                }
            }
        }
        cases
    }

    /// Parity with the real numpy (and torch, qwen-vl-utils, transformers where installed) on
    /// many cases, when a Python with numpy is available (`VIDPREP_PYTHON`, else `python3`).
    #[test]
    fn parity_with_python_reference() {
        let Some(py) = python() else {
            eprintln!("SKIP parity_with_python_reference: no Python with numpy (set VIDPREP_PYTHON or install numpy for python3)");
            return;
        };
        let cases = live_cases();
        let mut child = std::process::Command::new(&py)
            .args(["-c", REFERENCE_PY])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .spawn()
            .expect("start python");
        let started = std::time::Instant::now();
        let input = serde_json::to_vec(&cases).unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || {
            use std::io::Write;
            stdin.write_all(&input).unwrap();
        });
        let out = child.wait_with_output().expect("python runs");
        writer.join().unwrap();
        assert!(out.status.success(), "reference.py failed");
        let out: PyOut = serde_json::from_slice(&out.stdout).expect("reference.py output");
        let python_time = started.elapsed();
        assert_eq!(out.results.len(), cases.len());
        let mut bad = Vec::new();
        let mut skipped = std::collections::BTreeSet::new();
        let mut compared = 0usize;
        for (case, expected) in cases.iter().zip(&out.results) {
            if expected.get("skip").is_some() {
                skipped.insert(case["s"].as_str().unwrap().to_string());
                continue;
            }
            compared += 1;
            if let Some(msg) = disagreement(case, expected) {
                bad.push(msg);
            }
        }
        eprintln!(
            "parity_with_python_reference: {compared} cases compared with {py} ({}) in {:.1?} \
             (python {python_time:.1?}); skipped samplers (no torch): {skipped:?}",
            out.meta,
            started.elapsed()
        );
        assert!(
            bad.is_empty(),
            "{} of {compared} cases differ from the Python reference:\n{}",
            bad.len(),
            bad[..bad.len().min(20)].join("\n")
        );
    }

    // --- hand-checked values ------------------------------------------------------------------

    #[test]
    fn hand_checked_values() {
        assert_eq!(
            count(300, Sampler::Uniform, 16).unwrap(),
            [0, 20, 40, 60, 80, 100, 120, 140, 159, 179, 199, 219, 239, 259, 279, 299]
        );
        // numpy.linspace(0, 9, 4) = [0, 3, 6, 9]; (0, 10, 5) = [0, 2.5, 5, 7.5, 10] -> half to even.
        assert_eq!(count(11, Sampler::Uniform, 5).unwrap(), [0, 2, 5, 8, 10]);
        assert_eq!(count(11, Sampler::LmmsEval, 5).unwrap(), [0, 2, 5, 7, 10]);
        assert_eq!(
            count(300, Sampler::VlmEvalKit, 4).unwrap(),
            [60, 120, 180, 240]
        );
        assert_eq!(
            count(300, Sampler::Hf, 16).unwrap(),
            [0, 18, 37, 56, 75, 93, 112, 131, 150, 168, 187, 206, 225, 243, 262, 281]
        );
        assert_eq!(
            count(300, Sampler::HfLoadVideo, 16).unwrap(),
            [0, 18, 36, 54, 72, 90, 108, 126, 144, 162, 180, 198, 216, 234, 252, 270]
        );
        assert_eq!(
            count(300, Sampler::HfDefault, 16).unwrap(),
            [0, 18, 37, 56, 75, 93, 112, 131, 150, 168, 187, 206, 225, 243, 262, 281]
        );
        assert_eq!(
            count(300, Sampler::Qwen, 16).unwrap(),
            [0, 20, 40, 60, 80, 100, 120, 140, 159, 179, 199, 219, 239, 259, 279, 299]
        );
        assert_eq!(count(10, Sampler::HfLoadVideo, 4).unwrap(), [0, 2, 4, 6]);
        assert_eq!(count(10, Sampler::Hf, 4).unwrap(), [0, 2, 5, 7]);
    }

    #[test]
    fn n_equals_one_and_total() {
        for s in Sampler::ALL {
            let one = count(10, s, 1);
            match s {
                Sampler::Qwen => assert!(
                    matches!(one, Err(SampleError::Toolkit { .. })),
                    "{s}: round(1/2)*2 = 0"
                ),
                Sampler::VlmEvalKit => assert_eq!(one.unwrap(), [5], "{s}"),
                _ => assert_eq!(one.unwrap(), [0], "{s}"),
            }
            let all = count(10, s, 10).unwrap();
            assert_eq!(
                all,
                (0..10).collect::<Vec<_>>(),
                "{s}: N = total takes every frame"
            );
        }
        // total = 1: every sampler takes frame 0 once (qwen refuses: it needs >= 2 frames).
        for s in Sampler::ALL {
            let r = count(1, s, 1);
            if s == Sampler::Qwen {
                assert!(matches!(r, Err(SampleError::Toolkit { .. })));
            } else {
                assert_eq!(r.unwrap(), [0], "{s}");
            }
        }
    }

    #[test]
    fn more_frames_than_the_video_has() {
        let e = count(10, Sampler::Uniform, 16).unwrap_err();
        assert_eq!(
            e,
            SampleError::TooManyFrames {
                requested: 16,
                total: 10
            }
        );
        assert_eq!(
            e.to_string(),
            "asked for 16 frames but the video has 10; ask for at most 10, or set `allow_repeats` \
             to let the sampler repeat frames as the toolkit would"
        );
        for s in [
            Sampler::Uniform,
            Sampler::LmmsEval,
            Sampler::VlmEvalKit,
            Sampler::Hf,
            Sampler::HfLoadVideo,
        ] {
            assert_eq!(
                count(10, s, 11).unwrap_err(),
                SampleError::TooManyFrames {
                    requested: 11,
                    total: 10
                },
                "{s}"
            );
            let r = sample(&cfr(10, 30, 1), s, Request::Count(11), true).unwrap();
            assert!(
                r.note.as_deref().unwrap().contains("frames repeat"),
                "{s}: {:?}",
                r.note
            );
            assert!(r.indices.iter().all(|&i| i < 10));
        }
        // Toolkit repeats, exactly as the toolkits compute them.
        assert_eq!(
            count_rep(10, Sampler::Uniform, 11).unwrap(),
            [0, 1, 2, 3, 4, 4, 5, 6, 7, 8, 9]
        );
        assert_eq!(
            count_rep(10, Sampler::LmmsEval, 11).unwrap(),
            [0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
        );
        assert_eq!(
            count_rep(3, Sampler::HfLoadVideo, 5).unwrap(),
            [0, 0, 0, 0, 0]
        );
        assert_eq!(count_rep(1, Sampler::Uniform, 3).unwrap(), [0, 0, 0]);
        // qwen-vl-utils and the transformers processors refuse instead of repeating.
        for s in [Sampler::Qwen, Sampler::HfProcessor, Sampler::HfDefault] {
            for allow in [false, true] {
                let r = sample(&cfr(10, 30, 1), s, Request::Count(16), allow);
                assert!(
                    matches!(r, Err(SampleError::Toolkit { .. })),
                    "{s} {allow}: {r:?}"
                );
            }
        }
        // qwen rounds 11 to 12 (> 10: refused) but 9 to 8 (wait: round(4.5) = 4 -> 8).
        assert_eq!(count(10, Sampler::Qwen, 9).unwrap().len(), 8);
        let r = sample(&cfr(4, 30, 1), Sampler::Qwen, Request::Count(5), false).unwrap();
        assert_eq!(r.indices, [0, 1, 2, 3]);
        assert!(r.note.unwrap().contains("rounds nframes 5 to 4"));
    }

    #[test]
    fn errors_say_what_was_expected() {
        let v = cfr(100, 25, 1);
        assert_eq!(
            sample(&v, Sampler::Uniform, Request::Count(0), false).unwrap_err(),
            SampleError::ZeroFrames
        );
        for fps in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = sample(
                &v,
                Sampler::Uniform,
                Request::Fps {
                    fps,
                    max_frames: None,
                },
                false,
            )
            .unwrap_err();
            assert!(matches!(e, SampleError::InvalidFps(_)), "{e}");
            assert!(e.to_string().contains("finite number greater than 0"));
        }
        let e = sample(&cfr(0, 25, 1), Sampler::Uniform, Request::Count(4), false).unwrap_err();
        assert_eq!(e, SampleError::EmptyVideo);
        let e = sample(
            &v.with_nominal_fps(0.0),
            Sampler::VlmEvalKit,
            Request::Fps {
                fps: 1.0,
                max_frames: None,
            },
            false,
        )
        .unwrap_err();
        assert!(matches!(e, SampleError::InvalidVideoFps { .. }), "{e}");
        let e = "bogus".parse::<Sampler>().unwrap_err().to_string();
        assert_eq!(e, "unknown sampler 'bogus'; expected one of: uniform, lmms-eval, vlmevalkit, qwen, hf, hf-load-video, hf-processor, hf-default");
        let e = "sideways".parse::<Order>().unwrap_err().to_string();
        assert_eq!(
            e,
            "unknown order 'sideways'; expected one of: ordered, shuffled, reversed, last"
        );
    }

    #[test]
    fn names_round_trip() {
        for (s, n) in Sampler::ALL.iter().zip(Sampler::NAMES) {
            assert_eq!(s.to_string(), n);
            assert_eq!(n.parse::<Sampler>().unwrap(), *s);
            assert_eq!(serde_json::to_value(s).unwrap(), json!(n));
        }
        for (o, n) in Order::ALL.iter().zip(Order::NAMES) {
            assert_eq!(n.parse::<Order>().unwrap(), *o);
            assert_eq!(serde_json::to_value(o).unwrap(), json!(n));
        }
        assert_eq!(Sampler::default(), Sampler::Uniform);
        assert_eq!(Order::default(), Order::Ordered);
    }

    #[test]
    fn sampled_serializes_for_the_sidecar() {
        let s = sample(
            &cfr(300, 30, 1),
            Sampler::Uniform,
            Request::Fps {
                fps: 1.0,
                max_frames: Some(4),
            },
            false,
        )
        .unwrap();
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v["indices"], json!([0, 100, 199, 299]));
        assert_eq!(v["sampler"], json!("uniform"));
        assert_eq!(
            v["requested"],
            json!({"fps": {"fps": 1.0, "max_frames": 4}})
        );
        assert_eq!(
            v["note"],
            json!("1 fps gave 10 frames > max 4: fell back to uniform 4")
        );
        assert_eq!(
            v["formula"],
            json!("numpy.round(numpy.linspace(0, 299, 4)).astype(int)")
        );
        let c = serde_json::to_value(
            sample(&cfr(9, 30, 1), Sampler::Hf, Request::Count(3), false).unwrap(),
        )
        .unwrap();
        assert_eq!(c["requested"], json!({"count": 3}));
        assert_eq!(c["note"], Value::Null);
    }

    // --- fps -----------------------------------------------------------------------------------

    #[test]
    fn generic_fps_on_constant_rate() {
        // 10 s at 30000/1001: 1 fps samples at 0..=9 s -> frames floor(k * 30000/1001).
        let v = cfr(300, 30000, 1001); // 300 frames = 10.01 s
        let s = sample(
            &v,
            Sampler::Uniform,
            Request::Fps {
                fps: 1.0,
                max_frames: None,
            },
            false,
        )
        .unwrap();
        assert_eq!(
            s.indices,
            [0, 29, 59, 89, 119, 149, 179, 209, 239, 269, 299]
        );
        // 2 s of 25 fps at 0.5 fps: t = 0 only.
        let s = sample(
            &cfr(50, 25, 1),
            Sampler::Uniform,
            Request::Fps {
                fps: 0.5,
                max_frames: None,
            },
            false,
        )
        .unwrap();
        assert_eq!(s.indices, [0]);
        // Exactly 4 s at 25 fps, 1 fps: t = 0, 1, 2, 3 (t = 4 is the end, excluded).
        let s = sample(
            &cfr(100, 25, 1),
            Sampler::Uniform,
            Request::Fps {
                fps: 1.0,
                max_frames: None,
            },
            false,
        )
        .unwrap();
        assert_eq!(s.indices, [0, 25, 50, 75]);
        // A rate above the video's: repeats refused, or kept with allow_repeats.
        let e = sample(
            &cfr(10, 5, 1),
            Sampler::Uniform,
            Request::Fps {
                fps: 10.0,
                max_frames: None,
            },
            false,
        )
        .unwrap_err();
        assert!(
            matches!(
                e,
                SampleError::RepeatedFrames {
                    samples: 20,
                    total: 10,
                    ..
                }
            ),
            "{e}"
        );
        let s = sample(
            &cfr(10, 5, 1),
            Sampler::Uniform,
            Request::Fps {
                fps: 10.0,
                max_frames: None,
            },
            true,
        )
        .unwrap();
        assert_eq!(
            s.indices,
            [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9]
        );
    }

    #[test]
    fn fps_falls_back_to_uniform_at_the_frame_limit() {
        // V-STaR: 1 fps, uniform fallback at the model's limit. 30 min at 30 fps = 1800 samples.
        let v = cfr(54000, 30, 1);
        let s = sample(
            &v,
            Sampler::Uniform,
            Request::Fps {
                fps: 1.0,
                max_frames: Some(32),
            },
            false,
        )
        .unwrap();
        assert_eq!(s.indices, uniform_indices(54000, 32));
        assert_eq!(
            s.note.as_deref(),
            Some("1 fps gave 1800 frames > max 32: fell back to uniform 32")
        );
        // At or under the limit: no fallback.
        let s = sample(
            &v,
            Sampler::Uniform,
            Request::Fps {
                fps: 1.0,
                max_frames: Some(1800),
            },
            false,
        )
        .unwrap();
        assert_eq!(s.indices.len(), 1800);
        assert_eq!(s.note, None);
        // llava_vid (lmms-eval) falls back to linspace(dtype=int).
        let v = cfr(54000, 30, 1).with_nominal_fps(30.0);
        let s = sample(
            &v,
            Sampler::LmmsEval,
            Request::Fps {
                fps: 1.0,
                max_frames: Some(32),
            },
            false,
        )
        .unwrap();
        assert_eq!(s.indices, lmms_eval_indices(54000, 32));
        let s = sample(
            &v,
            Sampler::LmmsEval,
            Request::Fps {
                fps: 1.0,
                max_frames: None,
            },
            false,
        )
        .unwrap();
        assert_eq!(s.indices.len(), 1800);
        assert_eq!(s.indices[1], 30);
        // Toolkits without a cap in fps mode refuse to exceed one rather than silently cap.
        let e = sample(
            &v,
            Sampler::VlmEvalKit,
            Request::Fps {
                fps: 1.0,
                max_frames: Some(32),
            },
            false,
        )
        .unwrap_err();
        assert_eq!(
            e,
            SampleError::ExceedsMax {
                sampler: Sampler::VlmEvalKit,
                got: 1800,
                max: 32
            }
        );
        // qwen's own cap: max_frames goes into smart_nframes.
        let s = sample(
            &v,
            Sampler::Qwen,
            Request::Fps {
                fps: 2.0,
                max_frames: Some(33),
            },
            false,
        )
        .unwrap();
        assert_eq!(s.indices.len(), 32);
        let s = sample(
            &v,
            Sampler::Qwen,
            Request::Fps {
                fps: 2.0,
                max_frames: None,
            },
            false,
        )
        .unwrap();
        assert_eq!(s.indices.len(), 768);
    }

    #[test]
    fn toolkit_fps_rules() {
        // VLMEvalKit at 1 fps on 29.97: step 29.97..., required int(300 / 29.97 * 1) = 10.
        let v = cfr(300, 30000, 1001).with_nominal_fps(29.97002997);
        let s = sample(
            &v,
            Sampler::VlmEvalKit,
            Request::Fps {
                fps: 1.0,
                max_frames: None,
            },
            false,
        )
        .unwrap();
        assert_eq!(s.indices, [0, 29, 59, 89, 119, 149, 179, 209, 239, 269]);
        // Too short for one frame.
        let v = cfr(10, 25, 1);
        let e = sample(
            &v,
            Sampler::VlmEvalKit,
            Request::Fps {
                fps: 1.0,
                max_frames: None,
            },
            false,
        )
        .unwrap_err();
        assert!(matches!(e, SampleError::Toolkit { .. }), "{e}");
        // VLMEvalKit above the video's rate repeats frames.
        let e = sample(
            &v,
            Sampler::VlmEvalKit,
            Request::Fps {
                fps: 50.0,
                max_frames: None,
            },
            false,
        )
        .unwrap_err();
        assert!(
            matches!(
                e,
                SampleError::RepeatedFrames {
                    samples: 20,
                    distinct: 10,
                    ..
                }
            ),
            "{e}"
        );
        // qwen at 2 fps on a 10 s 30 fps video: 20 frames.
        let v = cfr(300, 30, 1);
        let s = sample(
            &v,
            Sampler::Qwen,
            Request::Fps {
                fps: QWEN_DEFAULT_FPS,
                max_frames: None,
            },
            false,
        )
        .unwrap();
        assert_eq!(s.indices.len(), 20);
        // ... and at least 4 frames on a 1 s video.
        let s = sample(
            &cfr(30, 30, 1),
            Sampler::Qwen,
            Request::Fps {
                fps: 0.5,
                max_frames: None,
            },
            false,
        )
        .unwrap();
        assert_eq!(s.indices, [0, 10, 19, 29]);
        // lmms-eval: round(25 / 60) = 0 -> range() step 0 raises.
        let e = sample(
            &cfr(100, 25, 1),
            Sampler::LmmsEval,
            Request::Fps {
                fps: 60.0,
                max_frames: None,
            },
            false,
        )
        .unwrap_err();
        assert!(matches!(e, SampleError::Toolkit { .. }), "{e}");
        // HF: num_frames = int(300 / 30 * 0.05) = 0 -> refused; hf-default clamps to 1.
        let e = sample(
            &v,
            Sampler::Hf,
            Request::Fps {
                fps: 0.05,
                max_frames: None,
            },
            false,
        )
        .unwrap_err();
        assert!(matches!(e, SampleError::Toolkit { .. }), "{e}");
        let s = sample(
            &v,
            Sampler::HfDefault,
            Request::Fps {
                fps: 0.05,
                max_frames: None,
            },
            false,
        )
        .unwrap();
        assert_eq!(s.indices, [0]);
    }

    #[test]
    fn variable_frame_rate() {
        // 0-1 s at 10 fps, 1-2 s at 2 fps, 2-3 s at 30 fps (one 1 s gap), ends at 4 s.
        let mut pts: Vec<Time> = (0..10).map(|i| Time::new(i, 10)).collect();
        pts.extend((0..2).map(|i| Time::new(2 + i, 2)));
        pts.extend((0..30).map(|i| Time::new(60 + i, 30)));
        let video = FrameList::new(pts.clone(), Time::from_secs(4), 14.0).unwrap();
        assert_eq!(video.total(), 42);
        assert_eq!(video.duration(), Time::from_secs(4));
        assert_eq!(video.frame_shown_at(Time::new(3, 2)), 11);
        assert_eq!(video.frame_shown_at(Time::new(29, 10)), 39);
        assert_eq!(video.frame_shown_at(Time::new(7, 2)), 41); // after the last frame: still it
        let s = sample(
            &video,
            Sampler::Uniform,
            Request::Fps {
                fps: 1.0,
                max_frames: None,
            },
            false,
        )
        .unwrap();
        assert_eq!(s.indices, [0, 10, 12, 41]);
        // At 2 fps, t = 3 and 3.5 s both fall in the last frame's long display: the video
        // holds that frame, so it repeats (what a viewer sees), with a note.
        let two = Request::Fps {
            fps: 2.0,
            max_frames: None,
        };
        let held = sample(&video, Sampler::Uniform, two, false).unwrap();
        assert_eq!(held.indices, [0, 5, 10, 11, 12, 27, 41, 41]);
        assert!(held
            .note
            .as_deref()
            .unwrap_or("")
            .contains("variable frame rate"));
        // Faster than the video's typical frame rate (1/30 s spacing) is refused.
        let e = sample(
            &video,
            Sampler::Uniform,
            Request::Fps {
                fps: 60.0,
                max_frames: None,
            },
            false,
        )
        .unwrap_err();
        assert!(matches!(e, SampleError::RepeatedFrames { .. }), "{e}");
        let s = sample(&video, Sampler::Uniform, two, true).unwrap();
        assert_eq!(s.indices, [0, 5, 10, 11, 12, 27, 41, 41]);
        // Times are taken relative to the first frame.
        let shifted: Vec<Time> = pts.iter().map(|&p| p + Time::new(1, 3)).collect();
        let video2 = FrameList::new(shifted, Time::from_secs(4) + Time::new(1, 3), 14.0).unwrap();
        let s2 = sample(
            &video2,
            Sampler::Uniform,
            Request::Fps {
                fps: 1.0,
                max_frames: None,
            },
            false,
        )
        .unwrap();
        assert_eq!(s2.indices, [0, 10, 12, 41]);
        // Bad lists are refused.
        assert!(FrameList::new(vec![Time::ZERO, Time::ZERO], Time::from_secs(1), 1.0).is_none());
        assert!(FrameList::new(
            vec![Time::ZERO, Time::from_secs(2)],
            Time::from_secs(1),
            1.0
        )
        .is_none());
    }

    #[test]
    fn fps_fraction_is_exact_for_decimal_rates() {
        assert_eq!(rational_approx(1.0, 1_000_000), (1, 1));
        assert_eq!(rational_approx(0.5, 1_000_000), (1, 2));
        assert_eq!(rational_approx(23.976, 1_000_000), (2997, 125));
        assert_eq!(rational_approx(29.97, 1_000_000), (2997, 100));
        assert_eq!(rational_approx(0.123456, 1_000_000), (1929, 15625));
        assert_eq!(rational_approx(1.0 / 3.0, 1_000_000), (1, 3));
        assert_eq!(rational_approx(1e-9, 1_000_000), (1, 1_000_000));
        assert_eq!(
            rational_approx(1e300, 1_000_000),
            (1_000_000_000_000_000, 1)
        );
        let e = sample(
            &cfr(100, 25, 1),
            Sampler::Uniform,
            Request::Fps {
                fps: 1e300,
                max_frames: None,
            },
            true,
        );
        assert!(matches!(e, Err(SampleError::TooManySamples(_))), "{e:?}");
        let e = sample(
            &cfr(100, 25, 1),
            Sampler::Uniform,
            Request::Count(usize::MAX),
            true,
        );
        assert!(matches!(e, Err(SampleError::TooManySamples(_))), "{e:?}");
    }

    #[test]
    fn huge_totals() {
        // f32 cannot hold 16777217 exactly; torch.linspace's end rounds to 16777216.
        // (Values from torch 2.15.0 and numpy 2.4.6.)
        let q = count(16_777_218, Sampler::Qwen, 4).unwrap();
        assert_eq!(q, [0, 5_592_406, 11_184_810, 16_777_216]);
        let u = count(16_777_218, Sampler::Uniform, 4).unwrap();
        assert_eq!(u, [0, 5_592_406, 11_184_811, 16_777_217]);
        for s in Sampler::ALL {
            let r = count(1_800_000, s, 768).unwrap();
            assert!(
                r.len() == 768
                    && r.windows(2).all(|w| w[0] < w[1])
                    && *r.last().unwrap() < 1_800_000,
                "{s}"
            );
        }
    }

    #[test]
    fn hf_extra_and_out_of_range_elements_are_reported() {
        // 15 / (15 / 13) = 13.000000000000002 -> 14 elements, all in range: kept.
        let s = sample(&cfr(15, 30, 1), Sampler::Hf, Request::Count(13), false).unwrap();
        assert_eq!(s.indices, [0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14]);
        assert!(
            s.note
                .as_deref()
                .unwrap()
                .contains("14 indices for 13 requested"),
            "{:?}",
            s.note
        );
        // 17 / 7: 8 elements, the last one is 7 * 2.4285714285714284 = 17.0: dropped.
        let s = sample(&cfr(17, 30, 1), Sampler::Hf, Request::Count(7), false).unwrap();
        assert_eq!(s.indices, [0, 2, 4, 7, 9, 12, 14]);
        assert!(
            s.note
                .as_deref()
                .unwrap()
                .contains("one past the last frame"),
            "{:?}",
            s.note
        );
    }

    // --- orders ----------------------------------------------------------------------------------

    #[test]
    fn orders() {
        let idx = [3, 10, 20, 40];
        assert_eq!(arrange(&idx, Order::Ordered, 0).indices, idx);
        let r = arrange(&idx, Order::Reversed, 0);
        assert_eq!(r.indices, [40, 20, 10, 3]);
        assert_eq!(r.permutation, [3, 2, 1, 0]);
        let l = arrange(&idx, Order::Last, 0);
        assert_eq!((l.indices, l.permutation), (vec![40], vec![3]));
        assert_eq!(arrange(&[], Order::Last, 0).indices, Vec::<usize>::new());
        let s = arrange(&idx, Order::Shuffled, 42);
        assert_eq!(
            s.indices,
            s.permutation.iter().map(|&p| idx[p]).collect::<Vec<_>>()
        );
        assert_eq!(s.seed, 42);
    }

    #[test]
    fn splitmix64_reference_values() {
        // Outputs of Vigna's splitmix64.c for seed 1234567.
        let mut r = SplitMix64::new(1234567);
        assert_eq!(
            [
                r.next_u64(),
                r.next_u64(),
                r.next_u64(),
                r.next_u64(),
                r.next_u64()
            ],
            [
                6457827717110365317,
                3203168211198807973,
                9817491932198370423,
                4593380528125082431,
                16408922859458223821
            ]
        );
        // The permutation for a seed is fixed forever (it is recorded in sidecars).
        assert_eq!(shuffle_permutation(10, 7), SHUFFLE_10_SEED_7);
    }

    /// `shuffle_permutation(10, 7)`, as an independent Python transcription of the documented
    /// algorithm computes it.
    const SHUFFLE_10_SEED_7: [usize; 10] = [8, 1, 5, 9, 0, 4, 3, 2, 6, 7];

    // --- properties ------------------------------------------------------------------------------

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn prop_count_sorted_in_range(total in 1usize..5000, n in 1usize..800, si in 0usize..8) {
            let sampler = Sampler::ALL[si];
            let n = n.min(total);
            match sample(&cfr(total, 30, 1), sampler, Request::Count(n), false) {
                Ok(s) => {
                    prop_assert!(s.indices.windows(2).all(|w| w[0] < w[1]), "{sampler} {total} {n}: {:?}", s.indices);
                    prop_assert!(s.indices.iter().all(|&i| i < total));
                    match sampler {
                        Sampler::Uniform | Sampler::LmmsEval | Sampler::VlmEvalKit | Sampler::HfDefault => {
                            prop_assert_eq!(s.indices.len(), n)
                        }
                        Sampler::Qwen => prop_assert_eq!(s.indices.len(), qwen_nframes_for_count(n)),
                        _ => prop_assert!(s.indices.len() == n || s.indices.len() == n + 1),
                    }
                    if sampler == Sampler::Uniform {
                        prop_assert_eq!(s.indices[0], 0);
                        if n > 1 { prop_assert_eq!(*s.indices.last().unwrap(), total - 1); }
                    }
                }
                Err(e) => {
                    // Only qwen refuses counts <= total (fewer than 2 frames after rounding,
                    // or rounding up past the total).
                    prop_assert_eq!(sampler, Sampler::Qwen, "{}", e);
                    let q = qwen_nframes_for_count(n);
                    prop_assert!(!(2..=total).contains(&q));
                }
            }
        }

        #[test]
        fn prop_generic_fps_sorted(total in 1usize..3000, num in 1i64..120, den in 1i64..3, fps_milli in 1u32..5000, cap in proptest::option::of(1usize..200)) {
            let v = cfr(total, num, den);
            let fps = fps_milli as f64 / 1000.0;
            match sample(&v, Sampler::Uniform, Request::Fps { fps, max_frames: cap }, false) {
                Ok(s) => {
                    prop_assert!(s.indices.windows(2).all(|w| w[0] < w[1]));
                    prop_assert!(s.indices.iter().all(|&i| i < total));
                    if let Some(m) = cap { prop_assert!(s.indices.len() <= m); }
                }
                Err(e) => prop_assert!(matches!(e, SampleError::RepeatedFrames { .. } | SampleError::TooManyFrames { .. }), "{}", e),
            }
        }

        #[test]
        fn prop_shuffle_is_a_deterministic_permutation(n in 0usize..300, seed in any::<u64>()) {
            let idx: Vec<usize> = (0..n).map(|i| i * 3 + 1).collect();
            let a = arrange(&idx, Order::Shuffled, seed);
            let b = arrange(&idx, Order::Shuffled, seed);
            prop_assert_eq!(&a, &b);
            let mut p = a.permutation.clone();
            p.sort_unstable();
            prop_assert_eq!(p, (0..n).collect::<Vec<_>>());
            prop_assert_eq!(a.indices, a.permutation.iter().map(|&p| idx[p]).collect::<Vec<_>>());
        }
    }
}
