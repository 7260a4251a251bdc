//! The media core: opening files, the frame table, decoding with exact seeking, pixel work,
//! encoding H.264/AAC MP4, and probing. Jobs never touch ffmpeg directly; they go through here.

pub(crate) mod audio;
pub(crate) mod audio_clock;
pub(crate) mod compat;
pub(crate) mod decode;
pub(crate) mod demux;
pub(crate) mod demuxer_kind;
pub(crate) mod encode;
pub(crate) mod errors;
pub(crate) mod ffi;
pub(crate) mod frame;
pub(crate) mod images;
pub(crate) mod init;
pub(crate) mod input;
pub(crate) mod pool;
pub(crate) mod probe;
pub(crate) mod recipe;
pub(crate) mod reference;
pub(crate) mod remux;
pub(crate) mod rewind;
pub(crate) mod smart_parts;
pub(crate) mod source;
pub(crate) mod still;
pub(crate) mod table;
pub(crate) mod wav;

pub use decode::{DecodeOptions, FrameReader};
pub use ffi::{build_facts, BuildFacts};
pub use frame::{Converter, Frame, Picture, PixelFormat, Scaling, TaggedMatrix};
pub use source::Source;
pub use table::{FrameTable, TableCache};
