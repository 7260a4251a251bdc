//! The records vidprep writes: each output's sidecar, a batch item's `item.json` (what `--resume`
//! compares), `frames.json` ([`FramesJson`]; its JSON Schema: `vidprep schema frames`) and the
//! parity record ([`ParityRecord`], `vidprep schema parity`). Public are `frames.json`'s types,
//! read-only (`#[non_exhaustive]`: later versions may add fields), the parity record, and
//! [`VERSION`], the version every record names.
//
// `frames.json` is also [`MemoryFrames::frames_json`](crate::exec::MemoryFrames::frames_json)
// of a run kept in memory (`docs/schema/frames.schema.json`). The JSON Schemas of every record
// are `crate::schemas` (public as `vidprep::schemas`), above the executor and the batch runner
// whose reports it also describes.

pub(crate) mod frames_json;
pub(crate) mod item_json;
pub(crate) mod parity;
pub(crate) mod sidecar;

pub use crate::media::images::{ImagesRecord, Layout};
pub use crate::media::table::{
    CorruptPacket, Damage, DamagedPacket, DemuxerErrors, LostPackets, TimesFrom, TruncatedImage,
    UnreadableTail,
};
pub use crate::profiles::api::Estimate as TokenEstimate;
pub use crate::sampling::order::Arranged;
pub use crate::vocab::Ratio;
pub use frames_json::{FrameRecord, FramesJson, ImageBox};
pub use parity::{
    FrameComparison, ParityRecord, ParityRequest, ParitySeconds, PositionCheck, ReferenceCheck,
};
pub use sidecar::{SourceRecord, VERSION};
