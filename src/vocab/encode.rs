//! [`EncodeSettings`]: how a plan's video outputs are encoded (x264 CRF or bit rate, preset,
//! keyframe interval, B-frames, AAC audio), and the presets x264 accepts. The encoder itself is
//! `crate::media::encode`.

use serde::{Deserialize, Serialize};

/// How outputs are encoded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EncodeSettings {
    /// x264 constant rate factor (0-51, lower is better quality). Ignored when `bit_rate` is
    /// set.
    pub crf: f32,
    /// x264 preset (ultrafast ... placebo).
    pub preset: String,
    /// Target video bit rate in bits per second (rate-controlled encode instead of CRF).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub bit_rate: Option<u64>,
    /// Encode the matching audio (AAC) when the source has audio.
    pub audio: bool,
    /// AAC bit rate for stereo, bits per second (mono gets half).
    pub audio_bit_rate: u64,
    /// Largest keyframe interval in frames (x264's `keyint`; default: x264's 250). Review
    /// previews use a short one so a browser seeks to any frame quickly.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub gop: Option<u32>,
    /// Most consecutive B-frames (x264's `bframes`; default: the preset's). 0 gives a stream
    /// whose decode order is its display order.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub bframes: Option<u32>,
}

impl Default for EncodeSettings {
    fn default() -> Self {
        EncodeSettings {
            crf: 18.0,
            preset: "medium".into(),
            bit_rate: None,
            audio: true,
            audio_bit_rate: 128_000,
            gop: None,
            bframes: None,
        }
    }
}

/// The x264 presets [`EncodeSettings::preset`] accepts, fastest (largest files) first.
pub const X264_PRESETS: [&str; 10] = [
    "ultrafast",
    "superfast",
    "veryfast",
    "faster",
    "fast",
    "medium",
    "slow",
    "slower",
    "veryslow",
    "placebo",
];

/// Encoder settings out of range: what is wrong, in the plan's words. Converts into
/// `Error::Usage` (the vocabulary sits below the error type).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidEncodeSettings(pub String);

impl std::fmt::Display for InvalidEncodeSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidEncodeSettings {}

impl EncodeSettings {
    /// Checks values a user can get wrong.
    pub fn validate(&self) -> Result<(), InvalidEncodeSettings> {
        if !(0.0..=51.0).contains(&self.crf) {
            return Err(InvalidEncodeSettings(format!(
                "`crf` {} is outside 0..51",
                self.crf
            )));
        }
        if !X264_PRESETS.contains(&self.preset.as_str()) {
            return Err(InvalidEncodeSettings(format!(
                "unknown x264 preset {:?}; expected one of {}",
                self.preset,
                X264_PRESETS.join(", ")
            )));
        }
        if let Some(g) = self.gop {
            if !(1..=1000).contains(&g) {
                return Err(InvalidEncodeSettings(format!(
                    "keyframe interval {g} is outside 1..1000 frames"
                )));
            }
        }
        if let Some(b) = self.bframes {
            if b > 16 {
                return Err(InvalidEncodeSettings(format!("{b} B-frames: at most 16")));
            }
        }
        Ok(())
    }
}
