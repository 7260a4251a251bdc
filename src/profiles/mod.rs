//! What a model's toolkit feeds it: the frame samplers, one file per toolkit's formula
//! ([`sampling`]), and the model profiles: for a named model family, exactly the frames,
//! sizes, pixels and timestamps its own preprocessing gives it.
//!
//! A profile is an export rule over the frames export's sparse reader (it picks the frame
//! indices and the resized size, and names the resampling), never a decode loop of its own;
//! `frames.json` records its `profile` block (the profile, the package and version it
//! mirrors, every rule applied with its value). `vidprep parity` runs the mirrored package on
//! the same video and compares.
//!
//! Frames chosen elsewhere ([`with_frames`]): a frames export's explicit `frames`, or the
//! frames a package really showed (`follow_package`, a `vidprep parity` record), take the
//! place of the profile's own indices position by position; its size, resampling and token
//! rules stay as the package computes them for that many frames.
//!
//! Adding a profile: one file here with a type implementing [`Profile`], one line in
//! [`PROFILES`], and its line in `docs/profiles.md`.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::profiles::sampling::{FrameTimes, Sampler};

pub mod api;
mod glm;
mod internvl;
mod llava;
mod lmms_eval;
pub mod pil;
pub mod pil_jpeg;
mod qwen;
pub mod resample;
pub mod sampling;
mod vlmevalkit;

/// Every registered profile.
const PROFILES: &[&dyn Profile] = &[
    &qwen::Qwen25Vl,
    &qwen::Qwen3Vl,
    &qwen::QWEN3_VL_HF,
    &qwen::QWEN35,
    &glm::Glm46v,
    &lmms_eval::LmmsEvalReadVideo,
    &llava::LlavaOnevision,
    &internvl::InternVl,
    &vlmevalkit::VlmEvalKitCache,
];

/// The profile named `name`.
pub fn find(name: &str) -> Option<&'static dyn Profile> {
    PROFILES.iter().copied().find(|p| p.name() == name)
}

/// The package (its PyPI name) the profile `name` mirrors, for messages (`vidprep parity`);
/// `None` for an unknown profile.
pub fn mirrored_package(name: &str) -> Option<&'static str> {
    find(name).map(|p| p.mirrors().package)
}

/// The names of every profile, in registry order.
pub fn names() -> Vec<&'static str> {
    PROFILES.iter().map(|p| p.name()).collect()
}

/// The error for an unknown profile name.
pub fn unknown(name: &str) -> String {
    format!(
        "unknown profile {name:?}; known profiles: {}",
        names().join(", ")
    )
}

/// The package a profile reproduces.
#[derive(Clone, Debug, Serialize)]
pub struct Mirror {
    /// Its PyPI name.
    pub package: &'static str,
    /// The version whose source the profile follows.
    pub version: &'static str,
    /// The function or class whose behaviour it is.
    pub function: &'static str,
}

/// What the export asked of a profile.
#[derive(Clone, Debug, Default)]
pub struct ProfileRequest {
    /// A frame count (the package's `nframes` / `num_frames`).
    pub count: Option<usize>,
    /// Frames per second (the package's `fps`; its default when neither is given).
    pub fps: Option<f64>,
    /// The package's other options by name (`min_pixels`, `video_start`, ...).
    pub options: BTreeMap<String, f64>,
}

/// The video as the package sees it.
pub struct ProfileInput<'a> {
    /// The decoded frames (their count is exact).
    pub frames: &'a dyn FrameTimes,
    /// The decoded picture size (what the package's decoder returns, before any display
    /// scaling).
    pub width: u32,
    pub height: u32,
    /// What the container says, as the package's reader reads it.
    pub container: ContainerFacts<'a>,
}

/// The container's own claims, which some packages use instead of the decoded frames.
#[derive(Clone, Copy, Debug)]
pub struct ContainerFacts<'a> {
    /// The path as the package is given it (lmms-eval branches on its text).
    pub path: &'a Path,
    /// The frame count the header claims (PyAV's `stream.frames`; 0 when it does not say).
    pub header_frames: u64,
    /// The average frame rate `(num, den)` (PyAV's `stream.average_rate`; `None` when either
    /// term is 0, as PyAV returns `None`).
    pub average_rate: Option<(i64, i64)>,
}

impl ContainerFacts<'static> {
    /// A container that claims nothing (unit tests).
    #[cfg(test)]
    pub fn unknown() -> ContainerFacts<'static> {
        ContainerFacts {
            path: Path::new("video.mp4"),
            header_frames: 0,
            average_rate: None,
        }
    }
}

/// One rule the package applied, with what it gave.
#[derive(Clone, Debug, Serialize)]
pub struct Rule {
    /// The package's name for it (`smart_nframes`, `smart_resize`, ...).
    pub rule: String,
    /// The inputs and the result, as the package computes them.
    pub formula: String,
    pub value: serde_json::Value,
}

/// How the frames are resized.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Resample {
    /// torch's antialiased bicubic on float ([`resample::TorchBicubic`]) on the RGB frame:
    /// torchvision's v1 `functional.resize` of a uint8 tensor casts it to float32 first.
    TorchBicubicAntialias,
    /// torch's uint8 antialiased bicubic ([`pil::Fixed8::TorchUint8`]): torchvision's v2
    /// `functional.resize` of a uint8 tensor on CPU, as transformers' video processors do it.
    TorchBicubicAntialiasUint8,
    /// Pillow 13's `Image.resize(size, BICUBIC)` ([`pil::PilBicubic`]) on the RGB frame.
    PilBicubic,
    /// Pillow 12.2-12.3's (the pass order differs: [`pil::Fixed8`]).
    #[serde(rename = "pil-bicubic-12")]
    PilBicubic12,
    /// No resize: the decoded frame as RGB24 (PyAV's `to_ndarray(format="rgb24")`).
    None,
}

impl Resample {
    /// Whether it is one of the 8-bit fixed-point resizers of [`pil::PilBicubic`] (Pillow's,
    /// torch's uint8 kernel), which take the RGB image rather than the converted rows.
    pub fn is_fixed8(self) -> bool {
        matches!(
            self,
            Self::PilBicubic | Self::PilBicubic12 | Self::TorchBicubicAntialiasUint8
        )
    }
}

/// How a profile's package writes its frames as image files, when it writes them itself
/// (a cache the package reads back).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ImageEncoding {
    /// Pillow's `Image.fromarray(rgb).save(path)` as JPEG with its defaults
    /// ([`pil_jpeg::encode`]: quality 75, 4:2:0, baseline), byte for byte.
    PillowJpeg,
}

/// How the package's reader turns a decoded YUV picture into RGB, where that is not
/// vidprep's default (swscale with the ffmpeg CLI's bicubic flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RgbConversion {
    /// swscale with bilinear flags (decord 0.6's filter graph: libavfilter's default scale
    /// flags). The same bytes as bicubic but on odd sizes.
    SwscaleBilinear,
}

/// What a profile decided for one video.
#[derive(Clone, Debug, Serialize)]
pub struct Applied {
    /// The profile's name.
    pub profile: &'static str,
    pub mirrors: Mirror,
    /// Frame indices into the decoded frames, in the package's order.
    #[serde(skip)]
    pub indices: Vec<usize>,
    /// The closest registered sampler (recorded as the sample's sampler).
    #[serde(skip)]
    pub sampler: Sampler,
    /// The index formula as the package writes it.
    #[serde(skip)]
    pub formula: String,
    /// The size every frame is resized to.
    pub width: u32,
    pub height: u32,
    pub resample: Resample,
    /// The text the model's processor puts before each group of frames, by group (Qwen3-VL:
    /// `<t seconds>` before each pair), when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamps: Option<Vec<String>>,
    /// The visual tokens the frames cost the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// The file name of each frame, in the package's order, when the package writes them
    /// itself (VLMEvalKit's `frame-{i}-of-{n}.jpg`); the export names its images so.
    #[serde(skip)]
    pub files: Option<Vec<String>>,
    /// How the package's reader makes RGB, when not as vidprep does by default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rgb: Option<RgbConversion>,
    /// How the package encodes those files (the export then ignores `format` and `quality`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<ImageEncoding>,
    /// Every rule, in the order the package applies them.
    pub rules: Vec<Rule>,
}

/// Why a profile refuses a video or a request: the package's own refusal.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("profile {profile}: {reason}")]
pub struct ProfileError {
    pub profile: &'static str,
    pub reason: String,
}

/// A model family's preprocessing.
pub trait Profile: Sync {
    /// Its name (`--profile NAME`).
    fn name(&self) -> &'static str;
    /// The package and version it reproduces.
    fn mirrors(&self) -> Mirror;
    /// The options (besides count and fps) it accepts, by the package's names.
    fn options(&self) -> &'static [&'static str];
    /// What is wrong with `request` that is known without the video (beyond the option names
    /// and ranges [`check_request`] checks), in the package's terms: refused before the video
    /// is opened (exit 2).
    fn refuse(&self, _request: &ProfileRequest) -> Option<String> {
        None
    }
    /// How the package writes its frames as files, when it does: then an export with this
    /// profile writes its images so, under [`Applied::files`] names, and refuses another
    /// `format`, `quality` or `order`.
    fn encoding(&self) -> Option<ImageEncoding> {
        None
    }
    /// The timestamps the model's processor derives from the frame indices (Qwen3-VL's
    /// `<t seconds>`), for `indices` given in place of the package's own; `None` when its
    /// timestamps (if any) do not depend on the indices.
    fn timestamps_of(&self, _indices: &[usize], _input: &ProfileInput) -> Option<Vec<String>> {
        None
    }
    /// The frames and size for `input`.
    fn apply(
        &self,
        input: &ProfileInput,
        request: &ProfileRequest,
    ) -> Result<Applied, ProfileError>;
}

/// `profile` applied to `input`; a refusal of a request with options names them with their
/// values, unless the reason already names the option it is about.
pub fn apply(
    profile: &dyn Profile,
    input: &ProfileInput,
    request: &ProfileRequest,
) -> Result<Applied, ProfileError> {
    profile.apply(input, request).map_err(|mut e| {
        if !request.options.is_empty() && !e.reason.contains("option ") {
            let given: Vec<String> = request
                .options
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            e.reason = format!(
                "{} (with the option{} {}: check {} against what the package accepts, \
                 docs/profiles.md)",
                e.reason,
                if given.len() == 1 { "" } else { "s" },
                given.join(", "),
                if given.len() == 1 { "it" } else { "them" }
            );
        }
        e
    })
}

/// Where the frames put in place of a profile's own come from ([`with_frames`]).
#[derive(Clone, Debug)]
pub enum FramesFrom {
    /// Given by index (a frames export's `frames`): the processor's index-derived timestamps
    /// are derived again from them, as it would derive them from frames it was handed.
    Given,
    /// What the package really showed at each position (`follow_package`), per the record
    /// named: the timestamps stay those of the indices the package named, as the model got
    /// them.
    Package {
        /// The parity record, as the plan names it.
        record: String,
    },
}

/// `applied` with `indices` in place of the frames the profile picked, position by position
/// (as many as it picked: a list of another length is refused, naming the count the package
/// takes); the size, resampling and token rules stay as they are, and a rule `frames` says
/// what was put in place of what.
pub fn with_frames(
    profile: &dyn Profile,
    mut applied: Applied,
    indices: Vec<usize>,
    from: &FramesFrom,
    input: &ProfileInput,
) -> Result<Applied, ProfileError> {
    if indices.len() != applied.indices.len() {
        return Err(ProfileError {
            profile: applied.profile,
            reason: format!(
                "the package takes {} frames when asked for {} (nframes={}: {}); give {} frames",
                applied.indices.len(),
                indices.len(),
                indices.len(),
                applied.formula,
                applied.indices.len()
            ),
        });
    }
    let (formula, value) = match from {
        FramesFrom::Given => {
            if let Some(stamps) = profile.timestamps_of(&indices, input) {
                applied.timestamps = Some(stamps);
            }
            (
                format!(
                    "the frames given replace the package's {} position by position; its size and \
                     token rules stay (for {} frames){}",
                    applied.formula,
                    indices.len(),
                    if applied.timestamps.is_some() {
                        ", the timestamps are those of the frames given"
                    } else {
                        ""
                    }
                ),
                serde_json::json!({"package_indices": applied.indices, "indices": indices}),
            )
        }
        FramesFrom::Package { record } => (
            format!(
                "at each position the frame the package showed (vidprep parity record {record}: \
                 reference.positions[].package_shows) replaces the frame it named ({}); size, \
                 tokens and timestamps stay the package's",
                applied.formula
            ),
            serde_json::json!({"package_names": applied.indices, "package_shows": indices}),
        ),
    };
    applied.rules.push(Rule {
        rule: "frames".into(),
        formula,
        value,
    });
    applied.indices = indices;
    Ok(applied)
}

/// Checks `request`'s option names against `profile`'s (everything needing no media).
pub fn check_request(profile: &dyn Profile, request: &ProfileRequest) -> Result<(), String> {
    let most = crate::vocab::MAX_FRAMES;
    if let Some(n) = request.count.filter(|n| *n > most) {
        return Err(format!(
            "profile {}: a frame count must be at most {most} (a 24-hour video at 240 fps), found {n}",
            profile.name()
        ));
    }
    for (key, value) in &request.options {
        if !value.is_finite() {
            return Err(format!(
                "profile {}: option {key:?} must be a finite number, found {value}",
                profile.name()
            ));
        }
        if !profile.options().contains(&key.as_str()) {
            return Err(format!(
                "profile {} has no option {key:?}; it takes {}",
                profile.name(),
                profile.options().join(", ")
            ));
        }
        if let Some(expected) = out_of_range(key, *value) {
            return Err(format!(
                "profile {}: option {key:?} must be {expected}, found {value}",
                profile.name()
            ));
        }
    }
    if request.count.is_some() && request.fps.is_some() {
        return Err(format!(
            "profile {}: give a frame count or an fps, not both (the package accepts one)",
            profile.name()
        ));
    }
    if let Some(reason) = profile.refuse(request) {
        return Err(format!("profile {}: {reason}", profile.name()));
    }
    Ok(())
}

/// What an option's value must be, when `value` is not that (known without the video): a
/// side in pixels is a whole number from 1, a frame count at least 1, internvl's tile counts
/// and input size within what dynamic_preprocess takes. (A pixel budget the
/// package itself refuses, `max_pixels` below `min_pixels`, is refused with the package's
/// words when the profile is applied.)
/// The most frames a count may ask for: [`crate::vocab::MAX_FRAMES`], the most a
/// video vidprep reads may have.
const MOST_FRAMES: f64 = crate::vocab::MAX_FRAMES as f64;

fn out_of_range(key: &str, value: f64) -> Option<&'static str> {
    let whole = value.fract() == 0.0;
    match key {
        "resized_height" | "resized_width" | "height" | "width"
            if !(whole && (1.0..=65535.0).contains(&value)) =>
        {
            Some("a whole number of pixels from 1 to 65535")
        }
        "min_frames" | "max_frames" if !(1.0..=MOST_FRAMES).contains(&value) => {
            Some("a frame count from 1 to 20736000 (a 24-hour video at 240 fps)")
        }
        // internvl's dynamic_preprocess tile counts and its input size.
        "max_num" | "min_num" if !(whole && (1.0..=40.0).contains(&value)) => {
            Some("a whole number of tiles from 1 to 40")
        }
        "input_size" if !(whole && (14.0..=4096.0).contains(&value)) => {
            Some("a whole number of pixels from 14 to 4096")
        }
        // The Pillow whose pass order internvl follows.
        "pillow" if value != 12.0 && value != 13.0 => {
            Some("12 (Pillow 12.2-12.3's pass order) or 13 (13.0's, the default)")
        }
        // lmms-eval's frame count.
        "num_frm" if !(whole && (1.0..=MOST_FRAMES).contains(&value)) => {
            Some("a whole number of frames from 1 to 20736000")
        }
        "int_fps" if !(value == 0.0 || value == 1.0) => Some("0 or 1"),
        // The transformers release a transformers-processor profile follows.
        "transformers"
            if !qwen::TRANSFORMERS_RELEASES
                .iter()
                .any(|(v, _)| (v - value).abs() < 1e-9) =>
        {
            Some("a transformers release from 5.21 to 5.25 (5.21, 5.22, 5.23, 5.24 or 5.25)")
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found() {
        let n = names();
        let mut sorted = n.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), n.len());
        for name in n {
            assert_eq!(find(name).unwrap().name(), name);
        }
        assert!(unknown("x").contains("qwen3-vl"));
    }
}
