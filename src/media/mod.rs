//! Everything FFmpeg: opening sources, the frame table, decoding with exact seeking, pixel
//! work, encoding and probing; and H.264 headers parsed without FFmpeg (`bitstream/`). The
//! one module that names FFmpeg's binding.
//!
//! The rest of the crate sees vidprep's own types ([`Source`], [`FrameTable`],
//! [`FrameReader`], [`Frame`], `Picture`, `PixelFormat`, `Scaling`, [`FfmpegError`]), held by
//! the architecture test `only_media_names_ffmpeg`. The raw calls are in `ffi.rs`, FFmpeg
//! versions in `compat.rs`.

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

pub use crate::error::FfmpegError;
pub use decode::{DecodeOptions, FrameReader};
pub use ffi::{build_facts, BuildFacts};
pub use frame::Frame;
pub(crate) use frame::{Converter, Picture, PixelFormat, Scaling, TaggedMatrix};
pub use init::set_ffmpeg_log;
pub use probe::{probe, probe_source, probe_source_in, AudioInfo, MediaInfo, VideoInfo};
pub use reference::rgb_frames_at as reference_rgb_frames;
pub use source::{input_paths, Source};
pub use table::{FrameTable, TableCache};
