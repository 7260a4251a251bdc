//! The record `vidprep parity SRC --profile P --out RECORD.json` writes: a model profile's
//! frames against the package it mirrors (indices, sizes, timestamps, tokens, pixels, and
//! which side shows other frames than it names), and what `export frames --follow-package
//! RECORD` reads back (`exports::follow`). One type for both; its JSON Schema is
//! `vidprep schema parity` (`docs/schema/parity.schema.json`).
//!
//! The reader needs the source, the request, the profile, the package and the per-position
//! frames; every other field has a default, so a record cut down by hand still reads.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::records::sidecar::SourceRecord;

/// A profile's parity check, as `vidprep parity --out` writes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ParityRecord {
    /// The vidprep that wrote the record.
    #[serde(default)]
    pub vidprep_version: String,
    /// The source as `vidprep parity` was given it.
    pub source: PathBuf,
    /// The source as vidprep read it: `frames.json`'s record of it (size, frames, picture size,
    /// duration, ...), what `--follow-package` compares with the source it exports.
    #[schemars(with = "Option<SourceRecord>")]
    pub vidprep_source: Option<Value>,
    /// What was asked.
    pub request: ParityRequest,
    /// The profile's part of `frames.json` (`profile`, its options, the timestamps and
    /// tokens it gives).
    pub profile: Option<Value>,
    /// What the package's runner reported (`scripts/parity_runner.py`): `package`,
    /// `version`, `backend`, the `indices` it named and, where it has them, `timestamps`,
    /// `tokens`, `seconds`.
    #[schemars(with = "BTreeMap<String, Value>")]
    pub package: Value,
    /// The Python interpreter that ran the package.
    #[serde(default)]
    pub python: PathBuf,
    /// Whether both sides named the same frame indices (`null`: the package names none).
    #[serde(default)]
    pub indices_equal: Option<bool>,
    /// Whether both sides gave as many frames of the same size.
    #[serde(default)]
    pub sizes_equal: bool,
    /// vidprep's frames: count, height, width, channels.
    #[serde(default)]
    pub vidprep_shape: [usize; 4],
    /// Whether the timestamps the profile gives are the package's (`null`: it gives none).
    #[serde(default)]
    pub timestamps_equal: Option<bool>,
    /// Whether the visual tokens are the package's (`null`: not reported).
    #[serde(default)]
    pub tokens_equal: Option<bool>,
    /// Every value of every frame equal.
    #[serde(default)]
    pub bit_exact: bool,
    /// The lowest PSNR over the frames, in dB (`null`: none compared, or all identical).
    #[serde(default)]
    pub min_psnr_db: Option<f64>,
    /// The PSNR a pass needs.
    #[serde(default)]
    pub psnr_threshold_db: f64,
    /// Each position compared (when the sizes agree).
    #[serde(default)]
    pub frames: Vec<FrameComparison>,
    /// Both sides' pictures matched against a plain sequential FFmpeg decode, where they
    /// differ: which frame each side shows at each position.
    #[serde(default)]
    pub reference: Option<ReferenceCheck>,
    /// How long each side took.
    #[serde(default)]
    pub seconds: ParitySeconds,
    /// The check passed: sizes, indices, timestamps and tokens equal, pixels above the PSNR
    /// threshold.
    #[serde(default)]
    pub pass: bool,
}

/// The request a parity record was made for (and a following export must ask).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ParityRequest {
    /// Frames asked for.
    pub count: Option<usize>,
    /// Frames a second asked for.
    pub fps: Option<f64>,
    /// The profile's options.
    #[serde(default)]
    pub profile_options: BTreeMap<String, f64>,
}

/// One position's pictures, vidprep's against the package's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FrameComparison {
    /// 0-based position.
    pub position: usize,
    /// The frame index vidprep names there.
    pub index: Option<u64>,
    /// PSNR in dB (`null` where identical).
    pub psnr_db: Option<f64>,
    /// The largest difference of one value.
    pub max_abs_diff: u8,
    /// How many values differ.
    pub differing_values: usize,
}

/// Which frames the two sides show, found against a plain sequential FFmpeg decode.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReferenceCheck {
    /// How the reference frames were decoded.
    #[serde(default)]
    pub decode: String,
    /// `right` when vidprep shows the frames it names at every position, else `wrong`.
    #[serde(default)]
    pub vidprep: String,
    /// The same for the package.
    #[serde(default)]
    pub package: String,
    /// Which side is wrong where, in words.
    #[serde(default)]
    pub summary: String,
    /// Each position.
    pub positions: Vec<PositionCheck>,
}

/// What each side names and shows at one position.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PositionCheck {
    /// 0-based position.
    pub position: usize,
    /// The index vidprep names.
    pub vidprep_names: Option<usize>,
    /// The frame vidprep's picture is (`null`: none of those looked at).
    #[serde(default)]
    pub vidprep_shows: Option<usize>,
    /// How close vidprep's picture is to that frame, in dB.
    #[serde(default)]
    pub vidprep_psnr_db: Option<f64>,
    /// The index the package names.
    pub package_names: Option<usize>,
    /// The frame the package's picture is (`null`: none of those looked at).
    #[serde(default)]
    pub package_shows: Option<usize>,
    /// How close the package's picture is to that frame, in dB.
    #[serde(default)]
    pub package_psnr_db: Option<f64>,
}

/// How long a parity check's sides took, in seconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ParitySeconds {
    /// vidprep's frames.
    pub vidprep: f64,
    /// The package's process, start to end.
    pub package_process: f64,
    /// The package's call alone, as its runner timed it.
    pub package_call: Option<f64>,
}
