//! Bitstream parsing without FFmpeg: what vidprep reads from coded video itself. H.264 only
//! today: `h264` (NAL units, the `avcC` record, the SPS fields a re-encoded part must match)
//! and `h264_refs` (which pictures a picture may be predicted from, from the slice headers).
//! Pure parsing of untrusted bytes (fuzzed: `fuzzing.rs`); nothing here opens a file or calls
//! FFmpeg, so `media` (frame tables, sparse reading) and `exports::smart` build on it.

pub(crate) mod h264;
pub(crate) mod h264_refs;

#[cfg(test)]
mod against_h264_reader;
