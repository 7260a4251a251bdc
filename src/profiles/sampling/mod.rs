//! Frame-index samplers and frame orders for exporting N frames of a video to image-only models.
//!
//! Scores from different evaluation toolkits are only comparable when the exact frame sampler
//! is known, so every [`Sampler`] here reproduces one toolkit's published formula bit for bit,
//! including its floating-point arithmetic (f64 for numpy and Python, f32 for `torch.linspace` /
//! `torch.arange`). Each formula is quoted, with the file and function it comes from, on its
//! struct in its own file (`uniform::Uniform`, `lmms_eval::LmmsEval`,
//! `vlmevalkit::VlmEvalKit`, `qwen::Qwen`, `hf::Hf`, `hf_load_video::HfLoadVideo`,
//! `hf_processor::HfProcessor`, `hf_default::HfDefault`). One sampler has no formula:
//! `explicit::Explicit` takes the frames given by index ([`Request::Frames`]).
//! `fixtures/sampling/` holds golden
//! tables produced by the real numpy and torch, and the tests compare against them (and against
//! a live numpy when one is present).
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
//! A [`Request`] is a frame count, a sampling rate, or (for the `explicit` sampler only) the
//! frames themselves by index. When more frames are asked for than
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
//! samplers: `hf::Hf` (`get_uniform_frame_indices`), `hf_load_video::HfLoadVideo` and
//! `hf_processor::HfProcessor` (`load_video` and the video processors up to 5.15), and
//! `hf_default::HfDefault` (both from 5.18). Model-specific video processors that override
//! `sample_frames` (Qwen2-VL, LLaVA-OneVision, ...) are not covered.
//!
//! # Orders
//!
//! `arrange` reorders a sample for ablations ([`Order`]): shuffled with a recorded seed and
//! permutation (SplitMix64 + Fisher–Yates, identical on every machine), reversed, or only the
//! last frame.
//!
//! # Where things are
//!
//! - this file: [`Request`], [`Sampled`], [`SampleError`], [`sample`], the [`Formula`] trait,
//!   the registry of samplers and the [`Sampler`] handle, and the rules every formula shares
//!   (the too-many-frames check, repeat notes, the generic fps rule);
//! - one file per sampler (`uniform.rs`, `lmms_eval.rs`, `vlmevalkit.rs`, `qwen.rs`, `hf.rs`,
//!   `hf_load_video.rs`, `hf_processor.rs`, `hf_default.rs`, `explicit.rs`), with what the four transformers
//!   samplers share in `transformers.rs`;
//! - `numeric.rs`: the exact numpy/torch arithmetic the formulas use (`numpy_linspace`,
//!   `torch_linspace_f32`, the `arange`s, qwen-vl-utils' frame counts, ...);
//! - `video.rs`: [`FrameTimes`], [`ConstantRate`], [`FrameList`];
//! - `order.rs`: [`Order`], `arrange`, `SplitMix64`, `shuffle_permutation`;
//! - `tests.rs`: the unit tests, the golden table and the live Python parity test.
//!
//! # Adding a sampler
//!
//! 1. Write `src/profiles/sampling/<name>.rs`: a unit struct implementing [`Formula`] (its name, its
//!    count rule, its fps rule, and whether the toolkit itself refuses repeated frames), with a
//!    doc comment quoting the toolkit's code and where it lives (file, function, version).
//! 2. Add one line to the registry, `FORMULAS` below (and the file's `mod` line beside it).
//! 3. Add golden rows to `fixtures/sampling/golden.json` if you can generate them with the real
//!    toolkit (`fixtures/sampling/reference.py`), and the sampler's line in `docs/export.md`.
//!
//! The sampler's name is then accepted everywhere (`--sampler`, manifests), written in JSON
//! sidecars, and listed in the error for an unknown name.

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::vocab::time::Time;

mod numeric;
pub(crate) mod order;
#[cfg(test)]
mod tests;
mod transformers;
mod video;

pub(crate) use numeric::uniform_indices;
pub(crate) use numeric::{numpy_linspace, torch_linspace_f32};
// Only the unit tests name these by this path.
#[cfg(test)]
pub(crate) use numeric::{lmms_eval_indices, qwen_nframes_for_count, QWEN_DEFAULT_FPS};
pub use order::Order;
pub(crate) use order::{arrange, shuffle_permutation, Arranged, SplitMix64};
pub use video::{ConstantRate, FrameList, FrameTimes};

use numeric::rational_approx;

// ---------------------------------------------------------------------------------------------
// The registry
// ---------------------------------------------------------------------------------------------

mod explicit;
mod hf;
mod hf_default;
mod hf_load_video;
mod hf_processor;
mod lmms_eval;
mod qwen;
mod uniform;
pub(crate) mod vlmevalkit;

/// Every sampler, one line each. The order is the order of [`Sampler::all`] and
/// [`Sampler::names`] (so of the names listed for an unknown one) and each sampler's serde
/// variant index; [`Sampler::default`] is `uniform` whatever its place.
const FORMULAS: &[&dyn Formula] = &[
    &uniform::Uniform,
    &lmms_eval::LmmsEval,
    &vlmevalkit::VlmEvalKit,
    &qwen::Qwen,
    &hf::Hf,
    &hf_load_video::HfLoadVideo,
    &hf_processor::HfProcessor,
    &hf_default::HfDefault,
    &explicit::Explicit,
];

/// One toolkit's frame-index formula: what a sampler file implements (on a unit struct) and
/// the registry lists.
///
/// [`sample`] calls these with the shared checks already made and the shared notes added
/// after: a request for 0 frames, a non-positive or non-finite fps, an fps limit of 0 and an
/// empty video are refused before any formula runs, so `total >= 1` and `n >= 1` here; a count
/// of more than `total` frames reaches [`Formula::count`] only with `allow_repeats` or when
/// the formula [refuses repeats](Formula::refuses_repeats) itself, and the note on repeated
/// frames is added to what it returns.
///
/// A formula writes its errors with its own [`Sampler`] (`SampleError::Toolkit { sampler, .. }`),
/// which it gets from `Sampler::of(&ItsStruct)`.
pub trait Formula: Sync {
    /// The sampler's name, as `--sampler`, manifests and JSON sidecars spell it (unique in the
    /// registry).
    fn name(&self) -> &'static str;

    /// Whether the toolkit itself refuses a request for more frames than the video has, even
    /// where repeating would be allowed (qwen-vl-utils, the transformers video processors).
    /// Then [`sample`] leaves `N > total` to [`Formula::count`], which reports the toolkit's
    /// refusal ([`SampleError::Toolkit`]) instead of [`SampleError::TooManyFrames`].
    fn refuses_repeats(&self) -> bool {
        false
    }

    /// Whether it takes the frames given by index ([`Request::Frames`]) rather than picking
    /// them by a formula: only `explicit`. [`sample`] refuses a list of frames for any other
    /// sampler ([`SampleError::FramesNotTaken`]).
    fn takes_frames(&self) -> bool {
        false
    }

    /// The frames given, for a sampler that [takes them](Formula::takes_frames); [`sample`]
    /// has checked that there is at least one, that each is below the frame count and that
    /// none repeats unless repeats are allowed. (Never called for the others.)
    fn frames(&self, indices: &[usize]) -> Result<Picked, SampleError> {
        Ok(picked(indices.to_vec(), String::new(), None))
    }

    /// The indices for `n` frames of a video of `total` frames, the formula as the toolkit
    /// writes it (with these numbers) and anything the toolkit changed (a rounded count, an
    /// extra element).
    fn count(&self, total: usize, n: usize) -> Result<Picked, SampleError>;

    /// The indices for a rate of `fps` frames per second, by the toolkit's own fps rule where
    /// it has one (or the generic rule, `generic_fps`, as `uniform` does), with the frame limit
    /// `max_frames` applied as the toolkit applies it (a fallback, its own cap, or
    /// [`SampleError::ExceedsMax`] where it has neither). `allow_repeats`: keep indices that
    /// repeat because the rate is above the video's, rather than refuse them
    /// ([`SampleError::RepeatedFrames`]).
    fn fps(
        &self,
        video: &dyn FrameTimes,
        fps: f64,
        max_frames: Option<usize>,
        allow_repeats: bool,
    ) -> Result<Picked, SampleError>;
}

// ---------------------------------------------------------------------------------------------
// Samplers, requests, results, errors
// ---------------------------------------------------------------------------------------------

/// Which toolkit's frame-index formula to use: a handle on one registered `Formula`. Its name
/// (each formula's `Formula::name`: `uniform`, `lmms-eval`, `vlmevalkit`, `qwen`, `hf`,
/// `hf-load-video`, `hf-processor`, `hf-default`) is what [`FromStr`], [`fmt::Display`] and
/// JSON use; two handles are equal when their names are.
#[derive(Clone, Copy)]
pub struct Sampler(&'static dyn Formula);

impl Sampler {
    /// Every registered sampler, in registry order (that of [`Sampler::names`]).
    pub fn all() -> impl ExactSizeIterator<Item = Sampler> + Clone {
        FORMULAS.iter().map(|f| Sampler(*f))
    }

    /// The registered names, in the order of [`Sampler::all`]: the names [`FromStr`] accepts.
    pub fn names() -> &'static [&'static str] {
        static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
        NAMES.get_or_init(|| FORMULAS.iter().map(|f| f.name()).collect())
    }

    /// The sampler's name (`uniform`, `qwen`, ...).
    pub fn name(self) -> &'static str {
        self.0.name()
    }

    /// The formula behind the sampler.
    pub fn formula(self) -> &'static dyn Formula {
        self.0
    }

    /// The handle on `formula`, for a formula that names itself in an error
    /// (`Sampler::of(&Qwen)`); the formula must be in the registry.
    fn of(formula: &'static dyn Formula) -> Sampler {
        Sampler(formula)
    }

    /// The sampler's place in the registry (its serde variant index).
    fn index(self) -> usize {
        Sampler::names()
            .iter()
            .position(|n| *n == self.name())
            .expect("every sampler is in the registry")
    }
}

/// The `explicit` sampler (the frames given by index).
pub(crate) fn explicit_sampler() -> Sampler {
    Sampler(&explicit::Explicit)
}

impl Default for Sampler {
    /// `uniform`.
    fn default() -> Sampler {
        Sampler(&uniform::Uniform)
    }
}

impl PartialEq for Sampler {
    fn eq(&self, other: &Sampler) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Sampler {}

impl std::hash::Hash for Sampler {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name().hash(state)
    }
}

impl fmt::Debug for Sampler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Sampler").field(&self.name()).finish()
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
    /// What was named: `sampler` or `order`.
    pub what: &'static str,
    /// The name given.
    pub got: String,
    /// The valid names, comma-separated.
    pub valid: String,
}

impl FromStr for Sampler {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Sampler, UnknownName> {
        Sampler::all()
            .find(|sampler| sampler.name() == s)
            .ok_or_else(|| UnknownName {
                what: "sampler",
                got: s.to_string(),
                valid: Sampler::names().join(", "),
            })
    }
}

/// As a unit variant of an enum `Sampler` named by the sampler's name, the way
/// `#[derive(Serialize)]` wrote the enum this handle replaced (JSON: the name as a string).
impl Serialize for Sampler {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_unit_variant("Sampler", self.index() as u32, self.name())
    }
}

/// A registered name (`uniform`, `qwen`, ...), as [`FromStr`] reads it. (serde_json also
/// takes the enum's map form, `{"qwen": null}`, which no manifest writes: left out.)
impl schemars::JsonSchema for Sampler {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Sampler".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        crate::vocab::textual::names(
            "The toolkit whose formula picks the frames (docs/export.md).",
            Sampler::names(),
        )
    }
}

/// As `#[derive(Deserialize)]` read the enum this handle replaced, with the same errors: a
/// registered name (JSON: `"qwen"`, or `{"qwen": null}`), or, where a format identifies
/// variants by number, a registry index.
impl<'de> Deserialize<'de> for Sampler {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Sampler, D::Error> {
        use serde::de::{self, EnumAccess, Unexpected, VariantAccess, Visitor};

        struct Variant(Sampler);

        impl<'de> Deserialize<'de> for Variant {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Variant, D::Error> {
                struct VariantVisitor;
                impl Visitor<'_> for VariantVisitor {
                    type Value = Variant;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str("variant identifier")
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Variant, E> {
                        usize::try_from(v)
                            .ok()
                            .and_then(|i| FORMULAS.get(i))
                            .map(|f| Variant(Sampler(*f)))
                            .ok_or_else(|| {
                                E::invalid_value(
                                    Unexpected::Unsigned(v),
                                    &format!("variant index 0 <= i < {}", FORMULAS.len()).as_str(),
                                )
                            })
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<Variant, E> {
                        v.parse::<Sampler>()
                            .map(Variant)
                            .map_err(|_| E::unknown_variant(v, Sampler::names()))
                    }
                    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Variant, E> {
                        match std::str::from_utf8(v).ok().and_then(|s| s.parse().ok()) {
                            Some(sampler) => Ok(Variant(sampler)),
                            None => Err(E::unknown_variant(
                                &String::from_utf8_lossy(v),
                                Sampler::names(),
                            )),
                        }
                    }
                }
                d.deserialize_identifier(VariantVisitor)
            }
        }

        struct SamplerVisitor;
        impl<'de> Visitor<'de> for SamplerVisitor {
            type Value = Sampler;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("enum Sampler")
            }
            fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Sampler, A::Error> {
                let (Variant(sampler), variant) = data.variant()?;
                variant.unit_variant()?;
                Ok(sampler)
            }
        }

        deserializer.deserialize_enum("Sampler", Sampler::names(), SamplerVisitor)
    }
}

/// What to sample.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Request {
    /// `N` frames.
    Count(usize),
    /// A sampling rate. Samplers with a toolkit fps rule use it (see `Formula::fps`); `uniform`
    /// uses the generic rule: the frame shown at each of the exact times `0, 1/F, 2/F, ...`
    /// before the end of the video ([`FrameTimes::frame_shown_at`], so variable frame rate is
    /// handled), and if that is more than `max_frames` frames, the uniform count-`max_frames`
    /// rule instead (V-STaR's protocol: 1 fps, uniform fallback at the model's frame limit).
    /// `F` is taken as the nearest fraction with a denominator of at most 10^6, so decimal
    /// rates such as 0.5, 2, 23.976 or 29.97 are exact.
    Fps {
        /// Frames per second (`F`).
        fps: f64,
        /// At most this many frames (`None`: no limit).
        max_frames: Option<usize>,
    },
    /// These frames, by 0-based index into the decoded frames, in this order (the
    /// `explicit` sampler's request; repeats only with `allow_repeats`).
    Frames(Vec<usize>),
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
            Request::Frames(list) => write!(f, "{} given frames", list.len()),
        }
    }
}

/// A sampled set of frame indices, ready for a JSON sidecar.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Sampled {
    /// Frame indices into the decoded frame sequence, in the sampler's order: ascending, or
    /// non-decreasing when frames repeat (`allow_repeats`).
    pub indices: Vec<usize>,
    /// The sampler that chose them.
    pub sampler: Sampler,
    /// What was asked for.
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
    /// A count (or an fps limit) of 0 frames.
    #[error("asked for 0 frames; ask for at least 1")]
    ZeroFrames,
    /// An fps that is not a finite number above 0.
    #[error("fps must be a finite number greater than 0, got {0}")]
    InvalidFps(f64),
    #[error(
        "the {sampler} fps rule needs the video's frame rate, but its nominal frame rate is {fps}; \
         ask for a frame count instead"
    )]
    /// A toolkit fps rule on a video whose nominal frame rate is not a finite number above 0.
    InvalidVideoFps {
        /// The sampler whose fps rule needs the rate.
        sampler: Sampler,
        /// The video's nominal frame rate.
        fps: f64,
    },
    /// A video without frames.
    #[error("the video has no frames; sampling needs at least one decoded frame")]
    EmptyVideo,
    #[error(
        "asked for {requested} frames but the video has {total}; ask for at most {total}, or set \
         `allow_repeats` to let the sampler repeat frames as the toolkit would"
    )]
    /// More frames than the video has, without `allow_repeats`.
    TooManyFrames {
        /// Frames asked for.
        requested: usize,
        /// Frames in the video.
        total: usize,
    },
    #[error(
        "{what} takes {samples} samples but they show only {distinct} distinct frames (the video \
         has {total}): the rate is above the video's frame rate; lower the fps, set a frame \
         limit, or set `allow_repeats` to keep the repeated frames"
    )]
    /// An fps above the video's frame rate (so frames repeat), without `allow_repeats`.
    RepeatedFrames {
        /// The rule that took the samples.
        what: String,
        /// Samples taken.
        samples: usize,
        /// Distinct frames among them.
        distinct: usize,
        /// Frames in the video.
        total: usize,
    },
    #[error(
        "the {sampler} fps rule gives {got} frames, more than the limit of {max}, and that toolkit \
         has no fallback in fps mode; lower the fps, raise the limit, or use the uniform sampler \
         (which falls back to {max} evenly spaced frames)"
    )]
    /// A toolkit fps rule without a fallback gives more frames than the limit.
    ExceedsMax {
        /// The sampler.
        sampler: Sampler,
        /// Frames its fps rule gives.
        got: usize,
        /// The limit.
        max: usize,
    },
    #[error(
        "the request would take {0} samples, more than vidprep handles ({MAX_SAMPLES}, a 24-hour \
         video at 240 fps); ask for fewer frames or a lower fps"
    )]
    /// More samples than vidprep materialises (a guard against absurd requests).
    TooManySamples(u128),
    /// A given frame (`Request::Frames`) at or past the end of the video.
    #[error(
        "frame {index} (position {position} of the frames given) is past the end: the video \
         has {total} frames (0 to {last}); give indices below {total}",
        last = total.saturating_sub(1)
    )]
    FrameOutOfRange {
        /// The index given.
        index: usize,
        /// Its place in the list given (0-based).
        position: usize,
        /// Frames in the video.
        total: usize,
    },
    /// A frame given twice (`Request::Frames`) without `allow_repeats`.
    #[error(
        "frame {index} is given twice (positions {first} and {again} of the frames given); \
         give each frame once, or set `allow_repeats` to show it again"
    )]
    RepeatedGivenFrame {
        /// The index given twice.
        index: usize,
        /// Its first place in the list (0-based).
        first: usize,
        /// The place it comes again.
        again: usize,
    },
    /// A list of frames asked of a sampler that picks its own.
    #[error(
        "the {sampler} sampler picks its frames by a count or an fps; frames given by index \
         are the explicit sampler's (leave the sampler out, or name the explicit one)"
    )]
    FramesNotTaken {
        /// The sampler asked.
        sampler: Sampler,
    },
    /// The toolkit itself would raise (or select nothing) for this request.
    #[error("the {sampler} toolkit rejects this request: {reason}")]
    Toolkit {
        /// The sampler.
        sampler: Sampler,
        /// What the toolkit objects to.
        reason: String,
    },
}

/// Upper bound on materialised samples (a guard against absurd rates, not a toolkit rule):
/// the most frames a plan may ask for ([`crate::vocab::MAX_FRAMES`], what a plan's check
/// allows), so a request that passed its check is never refused here.
const MAX_SAMPLES: u128 = crate::vocab::MAX_FRAMES as u128;

/// Samples frame indices from `video` with `sampler`'s formula.
///
/// `allow_repeats`: when the request needs more frames than the video has, return the
/// toolkit formula's repeated indices instead of [`SampleError::TooManyFrames`] /
/// [`SampleError::RepeatedFrames`] (see the module documentation).
pub fn sample(
    video: &dyn FrameTimes,
    sampler: Sampler,
    request: Request,
    allow_repeats: bool,
) -> Result<Sampled, SampleError> {
    let total = video.total();
    match &request {
        Request::Count(0) => return Err(SampleError::ZeroFrames),
        Request::Frames(list) if list.is_empty() => return Err(SampleError::ZeroFrames),
        Request::Frames(_) if !sampler.0.takes_frames() => {
            return Err(SampleError::FramesNotTaken { sampler })
        }
        Request::Fps { fps, .. } if !(fps.is_finite() && *fps > 0.0) => {
            return Err(SampleError::InvalidFps(*fps))
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
    let out = match &request {
        Request::Count(n) => sample_count(sampler, total, *n, allow_repeats)?,
        Request::Fps { fps, max_frames } => {
            sampler.0.fps(video, *fps, *max_frames, allow_repeats)?
        }
        Request::Frames(list) => sample_given(sampler, total, list, allow_repeats)?,
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

// ---------------------------------------------------------------------------------------------
// What the formulas share
// ---------------------------------------------------------------------------------------------

/// What a [`Formula`] picked.
#[derive(Clone, Debug, PartialEq)]
pub struct Picked {
    /// Frame indices, each below the video's frame count.
    pub indices: Vec<usize>,
    /// The formula that produced them, as the toolkit writes it, with this request's numbers.
    pub formula: String,
    /// Anything the reader of the sidecar should know (see [`Sampled::note`]).
    pub note: Option<String>,
}

/// A [`Picked`] from its parts.
fn picked(indices: Vec<usize>, formula: String, note: Option<String>) -> Picked {
    Picked {
        indices,
        formula,
        note,
    }
}

/// Both notes, `a` first, joined by `; `.
fn join_notes(a: Option<String>, b: Option<String>) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
        (a, b) => a.or(b),
    }
}

/// The note for indices that repeat frames, if they do.
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

/// The number of distinct indices.
fn count_distinct_sorted(indices: &[usize]) -> usize {
    let mut v = indices.to_vec();
    v.sort_unstable();
    v.dedup();
    v.len()
}

/// A count request through `sampler`'s [`Formula::count`], with what every formula shares
/// around it: more frames than the video has are refused unless `allow_repeats` (or the
/// toolkit refuses on its own terms), and repeated frames are noted.
fn sample_count(
    sampler: Sampler,
    total: usize,
    n: usize,
    allow_repeats: bool,
) -> Result<Picked, SampleError> {
    // qwen-vl-utils and the transformers video processor refuse on their own terms.
    if n > total && !allow_repeats && !sampler.0.refuses_repeats() {
        return Err(SampleError::TooManyFrames {
            requested: n,
            total,
        });
    }
    let p = sampler.0.count(total, n)?;
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

/// A list of given frames through `sampler`'s [`Formula::frames`], with the checks every
/// list gets: each index below `total`, and no index twice unless `allow_repeats` (then the
/// repeats are noted).
fn sample_given(
    sampler: Sampler,
    total: usize,
    list: &[usize],
    allow_repeats: bool,
) -> Result<Picked, SampleError> {
    if list.len() as u128 > MAX_SAMPLES {
        return Err(SampleError::TooManySamples(list.len() as u128));
    }
    if let Some((position, &index)) = list.iter().enumerate().find(|(_, &i)| i >= total) {
        return Err(SampleError::FrameOutOfRange {
            index,
            position,
            total,
        });
    }
    let mut first_at = std::collections::HashMap::with_capacity(list.len());
    let mut repeated = false;
    for (position, &index) in list.iter().enumerate() {
        if let Some(&first) = first_at.get(&index) {
            if !allow_repeats {
                return Err(SampleError::RepeatedGivenFrame {
                    index,
                    first,
                    again: position,
                });
            }
            repeated = true;
        } else {
            first_at.insert(index, position);
        }
    }
    let p = sampler.0.frames(list)?;
    let note = repeated.then(|| {
        format!(
            "{} frames given but only {} distinct (video has {total}): frames repeat, as given",
            list.len(),
            first_at.len()
        )
    });
    Ok(Picked {
        note: join_notes(p.note, note),
        ..p
    })
}

/// The video's nominal frame rate, which `sampler`'s fps rule needs: a finite number above 0.
fn nominal_fps_checked(video: &dyn FrameTimes, sampler: Sampler) -> Result<f64, SampleError> {
    let fps = video.nominal_fps();
    if fps.is_finite() && fps > 0.0 {
        Ok(fps)
    } else {
        Err(SampleError::InvalidVideoFps { sampler, fps })
    }
}

/// Fps samples that repeat frames (a rate above the video's): refused unless `allow_repeats`,
/// then kept with a note.
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
fn generic_fps(
    video: &dyn FrameTimes,
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
