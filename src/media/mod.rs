//! Everything FFmpeg: opening sources, the frame table, decoding with exact seeking, pixel
//! work, encoding and probing; and H.264 headers parsed without FFmpeg ([`bitstream`]). The
//! one module that names FFmpeg's binding.
//!
//! The rest of the crate sees vidprep's own types ([`Source`], [`FrameTable`],
//! [`FrameReader`], [`Frame`], [`Picture`], [`PixelFormat`], [`Scaling`], `FfmpegError`),
//! held by the architecture test `only_media_names_ffmpeg`. The raw calls are in `ffi.rs`,
//! FFmpeg versions in `compat.rs`.

pub(crate) mod audio;
pub(crate) mod audio_clock;
pub(crate) mod bitstream;
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
