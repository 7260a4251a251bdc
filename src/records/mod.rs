//! The records vidprep reads and writes, typed, with their JSON Schemas ([`json_schema`],
//! `vidprep schema`): the sidecar, `frames.json` ([`FramesJson`]), `item.json`, a batch
//! report's line, `vidprep check`'s report and the parity record.
//!
//! Public are their types, read-only (`#[non_exhaustive]`: later versions may add fields),
//! [`VERSION`], the version every record names, and [`require_utf8`], the rule every path a
//! record names keeps; `item.json` is what `--resume` compares; the parity record is
//! [`ParityRecord`].
//
// `frames.json` is also [`MemoryFrames::frames_json`](crate::exec::MemoryFrames::frames_json)
// of a run kept in memory (`docs/schema/frames.schema.json`).

pub(crate) mod check_report;
pub(crate) mod frames_json;
pub(crate) mod item_json;
pub(crate) mod parity;
pub(crate) mod report;
pub(crate) mod schema;
pub(crate) mod sidecar;

pub use crate::error::require_utf8;
pub use crate::media::images::{ImagesRecord, Layout};
pub use crate::media::table::{
    CorruptPacket, Damage, DamagedPacket, DemuxerErrors, LostPackets, TimesFrom, TruncatedImage,
    UnreadableTail,
};
pub use crate::profiles::api::Estimate as TokenEstimate;
pub use crate::profiles::sampling::order::Arranged;
pub use crate::vocab::Ratio;
pub use frames_json::{FrameRecord, FramesJson, ImageBox};
pub use parity::{
    FrameComparison, ParityRecord, ParityRequest, ParitySeconds, PositionCheck, ReferenceCheck,
};
pub use schema::{json_schema, json_schema_text, SchemaKind};
pub use sidecar::{SourceRecord, VERSION};
