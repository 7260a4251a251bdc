//! The input a frame table was scanned from, rewound to its start for a full decode, where
//! that is proven to read what an input opened afresh reads (issue 25): an item that decodes
//! its whole stream then opens its source once.
//!
//! Only the `mov` demuxer (MP4, MOV, M4V, 3GP) is rewound. Its seek (`mov_read_seek`) sets
//! every stream's next sample from the stream's index, which the header built: a seek of one
//! stream to a timestamp below its first sets that stream to its first sample
//! (`mov_seek_stream`), each other stream to the sample at or before the found sample's
//! time, and an audio stream's start padding to what its header set (`mov_get_skip_samples`
//! is `start_pad` at the first sample), so its decoder skips the same priming samples; the
//! generic layer drops its buffered packets and parsers first (`ff_read_frame_flush`). That
//! is not taken on trust: after the seek, the first packet of each stream that is read must
//! be that stream's first sample (the position and size of its index's first entry) and,
//! for the video, the table's frame 0 (pts, dts, position, a keyframe), which must be the
//! first packet in decoding order. The packets the check read are handed on to the readers
//! ([`Rewound`]), so nothing is read twice and nothing is lost.
//!
//! Anything else gives `None` and the caller opens the source afresh, as before: another
//! demuxer (Matroska, MPEG-TS, ... whose seeks land by their own rules), a URL (another
//! request to the server), an image sequence, a table built by decoding or one that found
//! damage, a stream that does not start on a keyframe that is first in decoding order, a
//! seek or read that fails, a packet that differs.

use std::collections::VecDeque;

use ffmpeg_next as ffmpeg;

use crate::media::compat::{first_index_entry, IndexEntry};
use crate::media::input::{read_packet, VideoInput};
use crate::media::source::SourceKind;
use crate::media::table::{FrameTable, TimesFrom};

/// The most bytes the check reads before it gives up (the first packets of the two streams
/// lie far apart in the file).
const MAX_CHECK_BYTES: usize = 8 << 20;

/// A seek this far below a stream's first timestamp lands on its first sample.
const BELOW_FIRST: i64 = 1 << 40;

/// An input rewound to its start, proven to read on as a fresh one would.
pub(crate) struct Rewound {
    /// The input, its video stream (and the audio stream asked for) kept, the others
    /// discarded, as a fresh input for the same readers would be.
    pub input: VideoInput,
    /// The video packets the check read, the first of them the table's frame 0.
    pub video: VecDeque<ffmpeg::Packet>,
    /// The audio packets the check read (none unless an audio stream was asked for).
    pub audio: VecDeque<ffmpeg::Packet>,
}

/// Whether `input`'s demuxer is the `mov` one, whose seek to the start is exact (see the
/// module's notes); its seek to any sample is as exact (`mov_read_seek` sets each stream's
/// next sample from the index the header built, whatever was read before), which smart
/// encoding's copies from the scanned input rely on.
pub(crate) fn demuxer_rewinds_exactly(input: &VideoInput) -> bool {
    let format = input.context.format();
    let any = format.name().split(',').any(|n| n == "mov" || n == "mp4");
    any
}

/// Rewinds `input` (which a table's scan read) to its start for a full decode of its video
/// stream, with the packets of `audio` read along when given (the soundtrack's reader of the
/// same input, `media::demux`); `None` where that cannot be proven exact (see the module's
/// notes): the input is then let go.
pub(crate) fn rewind(
    mut input: VideoInput,
    table: &FrameTable,
    audio: Option<usize>,
) -> Option<Rewound> {
    if input.kind != SourceKind::File
        || input.sequence.is_some()
        || table.times_from != TimesFrom::Packets
        || !table.damage.is_empty()
        || !table.starts_at_first_keyframe()
        || !demuxer_rewinds_exactly(&input)
    {
        return None;
    }
    let video = input.video.index;
    let first_video = first_index_entry(&input.context, video)?;
    let first_audio = match audio {
        Some(a) if a != video => Some((a, first_index_entry(&input.context, a)?)),
        Some(_) => return None,
        None => None,
    };
    let keep: Vec<usize> = std::iter::once(video).chain(audio).collect();
    input.keep_only_streams(&keep);
    // Seek by the audio stream when there is one: it lands on its first sample by the rule
    // above, and the video on the sample at or before the audio's first time (its first,
    // where the video starts no later than the second video keyframe's time; else the check
    // below refuses).
    let (by, entry) = first_audio.unwrap_or((video, first_video));
    let below = entry.timestamp.checked_sub(BELOW_FIRST)?;
    crate::media::ffi::seek_to_timestamp(&mut input.context, by, below).ok()?;
    let mut video_packets = VecDeque::new();
    let mut audio_packets = VecDeque::new();
    let mut bytes = 0usize;
    while video_packets.is_empty() || (first_audio.is_some() && audio_packets.is_empty()) {
        let packet = read_packet(&mut input.context).ok()??;
        bytes += packet.size();
        if bytes > MAX_CHECK_BYTES {
            return None;
        }
        if packet.stream() == video {
            video_packets.push_back(packet);
        } else if Some(packet.stream()) == audio {
            audio_packets.push_back(packet);
        }
    }
    let frame0 = table.entry(0);
    let first = &video_packets[0];
    let is_first_sample = |p: &ffmpeg::Packet, e: &IndexEntry| {
        p.position() as i64 == e.pos && p.size() as i64 == e.size && p.size() > 0
    };
    let video_ok = is_first_sample(first, &first_video)
        && first.pts() == Some(frame0.pts)
        && first.dts() == frame0.dts
        && first.position() as i64 == frame0.pos
        && first.is_key()
        && frame0.key
        && !crate::media::ffi::packet_is_discarded(first);
    let audio_ok = match (&first_audio, audio_packets.front()) {
        (Some((_, e)), Some(p)) => is_first_sample(p, e),
        (None, _) => true,
        (Some(_), None) => false,
    };
    (video_ok && audio_ok).then_some(Rewound {
        input,
        video: video_packets,
        audio: audio_packets,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    /// A 2 s H.264 video with two B-frames and AAC in `name`'s container, made by the ffmpeg
    /// CLI (`None` without it); `cut` copies it from 0.5 s, so that the first packets are
    /// marked for discarding (an edit list: the first frame shown is not the first decoded).
    fn media(dir: &Path, name: &str, cut: bool) -> Option<PathBuf> {
        let whole = dir.join(format!("whole-{name}"));
        let ok = std::process::Command::new("ffmpeg")
            .args([
                "-v",
                "error",
                "-y",
                "-f",
                "lavfi",
                "-i",
                "testsrc2=size=64x48:rate=25",
            ])
            .args([
                "-f",
                "lavfi",
                "-i",
                "sine=f=440:sample_rate=48000",
                "-t",
                "2",
            ])
            .args(["-c:v", "libx264", "-g", "10", "-bf", "2", "-c:a", "aac"])
            .arg(&whole)
            .status()
            .ok()?
            .success();
        if !ok {
            return None;
        }
        if !cut {
            return Some(whole);
        }
        let path = dir.join(name);
        let ok = std::process::Command::new("ffmpeg")
            .args(["-v", "error", "-y", "-ss", "0.5", "-i"])
            .arg(&whole)
            .args(["-c", "copy"])
            .arg(&path)
            .status()
            .ok()?
            .success();
        ok.then_some(path)
    }

    fn rewound(path: &Path, with_audio: bool) -> Option<Rewound> {
        let mut input = VideoInput::open(path).unwrap();
        let table = FrameTable::scan_input(&mut input).unwrap();
        let audio = with_audio
            .then(|| crate::media::input::best_audio_stream(&input.context))
            .flatten();
        rewind(input, &table, audio)
    }

    /// MP4 is rewound, with or without its soundtrack, its first video packet the table's
    /// frame 0; Matroska and MPEG-TS (whose seeks land by their own rules) and an MP4 whose
    /// first packets are marked for discarding are not.
    #[test]
    fn only_an_mp4_that_starts_cleanly_is_rewound() {
        let dir = tempfile::tempdir().unwrap();
        let Some(mp4) = media(dir.path(), "a.mp4", false) else {
            eprintln!("skipped: no ffmpeg CLI to make the test media");
            return;
        };
        for with_audio in [false, true] {
            let r = rewound(&mp4, with_audio).expect("an MP4 is rewound");
            assert_eq!(r.video[0].pts(), Some(0), "{:?}", r.video[0].pts());
            assert_eq!(r.audio.is_empty(), !with_audio);
        }
        for name in ["a.mkv", "a.ts"] {
            let path = media(dir.path(), name, false).unwrap();
            assert!(rewound(&path, true).is_none(), "{name} is not rewound");
        }
        let cut = media(dir.path(), "cut.mp4", true).unwrap();
        assert!(
            rewound(&cut, false).is_none(),
            "an edit list's discarded start"
        );
    }
}
