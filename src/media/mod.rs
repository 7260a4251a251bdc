//! The media core: opening files, the frame table, decoding with exact seeking, pixel work,
//! encoding H.264/AAC MP4, and probing. Jobs never touch ffmpeg directly; they go through here.

pub mod audio;
pub mod decode;
pub mod encode;
pub mod ffi;
pub mod frame;
pub mod input;
pub mod probe;
pub mod still;
pub mod table;

pub use audio::{AudioFormat, AudioPlan, AudioSegment};
pub use decode::{DecodeOptions, FrameReader};
pub use encode::{EncodeSettings, Mp4Writer, VideoFormat, WriteReport};
pub use frame::Frame;
pub use input::{init, Ratio, Rotation, VideoInput, VideoStreamInfo};
pub use probe::{probe, MediaInfo};
pub use table::FrameTable;
