//! The plan's vocabulary, at the bottom of the library: exact time and spans ([`time`]),
//! frame rates, sizes and placement, colours, rotation and encoder settings, and the text
//! each is spelt in (`textual.rs`). Needs nothing else of vidprep.
//!
//! Each type here parses, prints and serialises itself and checks its own range, so the plan
//! (`crate::plan`, the public schema) needs nothing that opens media, decodes or draws; what
//! the engine does with a value lives above (`media` opens at a [`FrameRate`], `frames::fit`
//! places by a [`Fit`], `frames::draw` paints an [`Rgb`], `media::encode` encodes by
//! [`EncodeSettings`]).

mod colour;
mod encode;
mod fit;
mod rate;
mod rotation;
pub(crate) mod textual;
pub mod time;

pub use colour::Rgb;
pub use encode::{EncodeSettings, InvalidEncodeSettings, X264_PRESETS};
pub use fit::{parse_size, Fit};
pub use rate::{FrameRate, Ratio};
pub use rotation::Rotation;

/// The most frames a video vidprep reads may have (a day at 240 frames per second): a frame
/// table, a count or a list asking for more is refused before anything is sized by it.
pub const MAX_FRAMES: usize = 24 * 3600 * 240;
