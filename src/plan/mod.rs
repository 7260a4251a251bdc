//! The plan: one declarative, serde-typed description of everything vidprep makes from one
//! source (its span, decision point, boxes, needle insertion and exports), checked without
//! opening media. A manifest line is a plan in JSON.
//!
//! Every command that makes files from a source builds a plan (or many) from its flags; one
//! executor (`crate::exec`) runs any plan. So the same request gives the same files whichever
//! door it comes in by.
//!
//! Deserialisation is strict: unknown fields are refused (a misspelt field is never ignored),
//! enum-like values are checked against their names, and [`Plan::check`] validates what needs
//! no media (exactly one insertion position, unique export names, ranges of numbers, ...).
//! Defaults live here, in one place.
//!
//! The files, one job each: `schema.rs` (the types and their defaults), `text.rs` (the values
//! spelt as text, with hand-written serde), `check.rs` ([`Plan::check`]), `checked.rs` (the
//! proof of it, [`CheckedPlan`], so that an item is checked once), `normalise.rs`
//! ([`Plan::normalized`]), `limits.rs` (the providers' limits on a video request). Manifests
//! (JSONL / JSON arrays with line numbers) are `crate::batch::manifest`'s.

mod check;
mod checked;
mod limits;
mod normalise;
mod schema;
mod text;

pub use crate::annotations::{Fill, Format, Grid, KeyKind, Units};
pub use crate::profiles::sampling::{Order, Sampler};
pub use crate::vocab::Fit;
pub use crate::vocab::FrameRate;
pub use crate::vocab::Rgb;
pub use crate::vocab::{EncodeSettings, X264_PRESETS};
pub use check::validate_id;
pub use checked::CheckedPlan;
pub(crate) use checked::NormalPlan;
pub use limits::{Preset, ServerSampling, PROMPT_RESERVE_BYTES};
pub(crate) use schema::without_retired_fields;
pub use schema::{
    BoxOptions, BoxesSpec, ClipExport, ExportSpec, FramesExport, InsertSpec, Plan, Position,
    PreviewExport, VideoExport,
};
pub use text::{BoxesOut, FrameLabel, ImageFormat, Limits, Payload, Size, Strip, VideoPayload};
