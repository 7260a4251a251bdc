//! Which demuxer an input has, as far as rewinding it to its start and seeking it by its
//! own index go (`media::rewind` has the why of each): read by the frame table's scan (which
//! records the first audio packets a rewind checks) and by the rewind itself.

use crate::media::input::VideoInput;
use crate::media::source::SourceKind;

/// How an input's demuxer is rewound to its start (see the module's notes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RewindBy {
    /// `mov`: a seek below the first sample, checked against the index's first entries.
    MovIndex,
    /// Matroska / WebM: a seek of the video stream below its first timestamp.
    VideoSeek,
    /// MPEG-TS: a byte seek to the start of the data.
    Bytes,
}

pub(crate) fn rewind_by(input: &VideoInput) -> Option<RewindBy> {
    let format = input.context.format();
    let names: Vec<&str> = format.name().split(',').collect();
    if names.iter().any(|&n| n == "mov" || n == "mp4") {
        Some(RewindBy::MovIndex)
    } else if names.iter().any(|&n| n == "matroska" || n == "webm") {
        Some(RewindBy::VideoSeek)
    } else if names.contains(&"mpegts") {
        Some(RewindBy::Bytes)
    } else {
        None
    }
}

/// Whether `input`'s demuxer seeks to a keyframe by an index the file carries, landing at or
/// before it (`mov`, exactly; Matroska, on the cue's cluster at or before it), so that an
/// input its table's scan read to the end can be positioned again by a seek: smart
/// encoding's copies from it, which check each packet's order, rely on it.
pub(crate) fn seeks_to_keyframes(input: &VideoInput) -> bool {
    matches!(
        rewind_by(input),
        Some(RewindBy::MovIndex | RewindBy::VideoSeek)
    )
}

/// Whether a table's scan of `input` (a file, freshly opened) records each audio stream's
/// first packet ([`FirstPacket`]): the proof a rewind of this demuxer checks, which has no
/// index to take it from.
pub(crate) fn needs_first_audio_packets(input: &VideoInput) -> bool {
    input.kind == SourceKind::File
        && input.sequence.is_none()
        && matches!(
            rewind_by(input),
            Some(RewindBy::VideoSeek | RewindBy::Bytes)
        )
}
