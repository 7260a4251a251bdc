//! The FFmpeg side of smart encoding (`exports/smart/` plans which GOPs are copied and which
//! frames re-encoded; everything that opens, reads, encodes or writes is here, taking plain
//! data):
//! - `source.rs`: the source's H.264 stream as smart encoding needs it: its avcC record and
//!   SPS, its packets in decoding order with their IDR flags (as the frame table's scan
//!   recorded them), and the opened input that the copied GOPs are read from;
//! - `x264.rs`: x264 runs whose settings match the source's SPS, under their own
//!   parameter-set id, feeding their packets to a packet sink;
//! - `mux.rs`: the one output stream both go into: the sample entry with both parameter-set
//!   pairs, presentation times as given, decoding times rebuilt for the whole output, copied
//!   packets moved across, the re-encoded soundtrack interleaved;
//! - `sink.rs`: where x264's packets go, the muxer or a buffer of one part encoded on a
//!   thread of its own, which the muxer writes in order when the output reaches it;
//! - `compare.rs`: how two decoded pictures differ (`verify`'s measure).

pub(crate) mod compare;
pub(crate) mod mux;
pub(crate) mod sink;
pub(crate) mod source;
pub(crate) mod x264;
