//! The input a frame table was scanned from, rewound to its start for a full decode, where
//! that is proven to read what an input opened afresh reads (issue 25): an item that decodes
//! its whole stream then opens its source once.
//!
//! Three demuxers are rewound, each by the seek that lands on its start:
//! - `mov` (MP4, MOV, M4V, 3GP): its seek (`mov_read_seek`) sets every stream's next sample
//!   from the stream's index, which the header built: a seek of one stream to a timestamp
//!   below its first sets that stream to its first sample (`mov_seek_stream`), each other
//!   stream to the sample at or before the found sample's time, and an audio stream's start
//!   padding to what its header set (`mov_get_skip_samples` is `start_pad` at the first
//!   sample), so its decoder skips the same priming samples. The first sample of each
//!   stream is its index's first entry.
//! - `matroska` (MKV, WebM): a seek of the video stream below its first timestamp lands on
//!   the first cue point's cluster and drops the blocks before the first cue's time (audio
//!   that starts earlier than the video would be lost: the check below refuses it).
//! - `mpegts`: a byte seek to the start of the data; the demuxer sees the moved position and
//!   drops its half-assembled PES packets, the parsers start afresh.
//!
//! The generic layer drops its buffered packets and parsers first (`ff_read_frame_flush`).
//! None of that is taken on trust: after the seek, the first packet read of the video must
//! be the table's frame 0 (pts, dts, position, a keyframe), which must be the video's first
//! packet in decoding order and in the file; and the first packet of the audio stream read
//! along must be that stream's first packet in the file (for `mov` its index's first entry,
//! elsewhere the one the table's scan recorded from the fresh input: position, size,
//! timestamps). The packets the check read are handed on to the readers ([`Rewound`]), so
//! nothing is read twice and nothing is lost.
//!
//! Anything else gives `None` and the caller opens the source afresh, as before: another
//! demuxer (AVI, Ogg, ... whose seeks land by their own rules), a URL (another request to
//! the server), an image sequence, a table built by decoding or one that found damage, a
//! stream that does not start on a keyframe that is first in decoding order, a seek or read
//! that fails, a packet that differs.

use std::collections::VecDeque;

use ffmpeg_next as ffmpeg;

use crate::media::compat::{first_index_entry, IndexEntry};
use crate::media::demuxer_kind::{rewind_by, RewindBy};
use crate::media::input::{read_packet, VideoInput};
use crate::media::source::SourceKind;
use crate::media::table::{FirstPacket, FrameTable, TimesFrom};

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

/// What a stream's first packet after the rewind must be.
enum FirstOf {
    /// The `mov` index's first entry (position and size).
    Index(IndexEntry),
    /// The packet the table's scan read first (position, size, timestamps).
    Scanned(FirstPacket),
}

impl FirstOf {
    fn is(&self, p: &ffmpeg::Packet) -> bool {
        match self {
            FirstOf::Index(e) => {
                p.position() as i64 == e.pos && p.size() as i64 == e.size && p.size() > 0
            }
            FirstOf::Scanned(f) => {
                p.position() as i64 == f.pos
                    && p.size() == f.size
                    && p.pts() == f.pts
                    && p.dts() == f.dts
                    && p.size() > 0
            }
        }
    }
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
    {
        return None;
    }
    let by = rewind_by(&input)?;
    // (`mov` checks the index's first entry instead.)
    if by != RewindBy::MovIndex && !table.frame0_is_first_in_file() {
        return None;
    }
    let video = input.video.index;
    let first_video = match by {
        RewindBy::MovIndex => Some(first_index_entry(&input.context, video)?),
        _ => None,
    };
    let first_audio = match audio {
        Some(a) if a == video => return None,
        Some(a) => Some((
            a,
            match by {
                RewindBy::MovIndex => FirstOf::Index(first_index_entry(&input.context, a)?),
                _ => FirstOf::Scanned(*table.first_audio_packet(a)?),
            },
        )),
        None => None,
    };
    let keep: Vec<usize> = std::iter::once(video).chain(audio).collect();
    input.keep_only_streams(&keep);
    let frame0 = *table.entry(0);
    let sought = match (by, &first_audio) {
        // Seek by the audio stream when there is one: it lands on its first sample by the
        // rule above, and the video on the sample at or before the audio's first time (its
        // first, where the video starts no later than the second video keyframe's time; else
        // the check below refuses).
        (RewindBy::MovIndex, Some((a, FirstOf::Index(e)))) => {
            seek_below(&mut input, *a, e.timestamp)
        }
        (RewindBy::MovIndex, _) => seek_below(&mut input, video, first_video?.timestamp),
        (RewindBy::VideoSeek, _) => seek_below(&mut input, video, frame0.pts),
        (RewindBy::Bytes, _) => crate::media::ffi::seek_to_byte(&mut input.context, 0).ok(),
    };
    sought?;
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
    let first = &video_packets[0];
    let video_ok = first_video.is_none_or(|e| FirstOf::Index(e).is(first))
        && first.pts() == Some(frame0.pts)
        && first.dts() == frame0.dts
        && first.position() as i64 == frame0.pos
        && first.is_key()
        && frame0.key
        && !crate::media::ffi::packet_is_discarded(first);
    let audio_ok = match (&first_audio, audio_packets.front()) {
        (Some((_, expected)), Some(p)) => expected.is(p),
        (None, _) => true,
        (Some(_), None) => false,
    };
    (video_ok && audio_ok).then_some(Rewound {
        input,
        video: video_packets,
        audio: audio_packets,
    })
}

/// Seeks `stream` of `input` far below `first` (a timestamp of the stream), so that it
/// lands on the stream's start.
fn seek_below(input: &mut VideoInput, stream: usize, first: i64) -> Option<()> {
    let below = first.checked_sub(BELOW_FIRST)?;
    crate::media::ffi::seek_to_timestamp(&mut input.context, stream, below).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    /// A 2 s H.264 video with two B-frames and AAC in `name`'s container, made by the ffmpeg
    /// CLI (`None` without it), with `extra` arguments before the output (a copy from 0.5 s
    /// gives an MP4 whose first packets are marked for discarding, an edit list; a delayed
    /// video gives audio that starts before it).
    fn media(dir: &Path, name: &str, extra: &[&str]) -> Option<PathBuf> {
        let path = dir.join(name);
        let ok = std::process::Command::new("ffmpeg")
            .args(["-v", "error", "-y", "-f", "lavfi"])
            .args(["-i", "testsrc2=size=64x48:rate=25"])
            .args(["-f", "lavfi", "-i", "sine=f=440:sample_rate=48000"])
            .args([
                "-t", "2", "-c:v", "libx264", "-g", "10", "-bf", "2", "-c:a", "aac",
            ])
            .args(extra)
            .arg(&path)
            .status()
            .ok()?
            .success();
        ok.then_some(path)
    }

    fn rewound(path: &Path, with_audio: bool) -> Option<Rewound> {
        let mut input = VideoInput::open(path, &Default::default()).unwrap();
        let table = FrameTable::scan_input(&mut input).unwrap();
        let audio = with_audio
            .then(|| crate::media::input::best_audio_stream(&input.context))
            .flatten();
        rewind(input, &table, audio)
    }

    /// (stream, pts, dts, position, data) of every packet of the video and the best audio
    /// stream, in the order they are read.
    type Packets = Vec<(usize, Option<i64>, Option<i64>, isize, Vec<u8>)>;

    fn facts(p: &ffmpeg::Packet) -> (usize, Option<i64>, Option<i64>, isize, Vec<u8>) {
        let data = p.data().unwrap_or(&[]).to_vec();
        (p.stream(), p.pts(), p.dts(), p.position(), data)
    }

    /// What a fresh input gives of its video and best audio stream.
    fn fresh_packets(path: &Path) -> Packets {
        let mut input = VideoInput::open(path, &Default::default()).unwrap();
        let audio = crate::media::input::best_audio_stream(&input.context).unwrap();
        input.keep_only_streams(&[input.video.index, audio]);
        std::iter::from_fn(|| read_packet(&mut input.context).unwrap())
            .map(|p| facts(&p))
            .collect()
    }

    /// The rewound input's packets: the check's video and audio queues, each followed by
    /// the rest of its stream as read on (each reader takes only its own stream's packets,
    /// so each stream's order is what must match).
    fn rewound_packets(r: Rewound) -> Packets {
        let Rewound {
            mut input,
            video,
            audio,
        } = r;
        let mut got: Packets = video.iter().chain(audio.iter()).map(facts).collect();
        got.extend(
            std::iter::from_fn(|| read_packet(&mut input.context).unwrap()).map(|p| facts(&p)),
        );
        by_stream(got)
    }

    /// `packets` in stream order (stable: each stream's own order kept).
    fn by_stream(mut packets: Packets) -> Packets {
        packets.sort_by_key(|f| f.0);
        packets
    }

    /// MP4, MOV, Matroska and MPEG-TS are rewound, with or without their soundtrack, and
    /// then give exactly the packets a fresh input gives (video and audio, timestamps,
    /// positions, bytes), the first video packet the table's frame 0.
    #[test]
    fn a_rewound_input_reads_what_a_fresh_one_reads() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a.mp4", "a.mov", "a.mkv", "a.ts"] {
            let Some(path) = media(dir.path(), name, &[]) else {
                eprintln!("skipped {name}: the ffmpeg CLI could not make it");
                continue;
            };
            let fresh = fresh_packets(&path);
            for with_audio in [false, true] {
                let r = rewound(&path, with_audio)
                    .unwrap_or_else(|| panic!("{name} (audio {with_audio}) is rewound"));
                assert_eq!(r.audio.is_empty(), !with_audio, "{name}");
                let mut input = VideoInput::open(&path, &Default::default()).unwrap();
                let table = FrameTable::scan_input(&mut input).unwrap();
                assert_eq!(r.video[0].pts(), Some(table.entry(0).pts), "{name}");
                if with_audio {
                    assert!(
                        rewound_packets(r) == by_stream(fresh.clone()),
                        "{name}: the packets differ"
                    );
                }
            }
        }
    }

    /// Not rewound: an MP4 whose first packets are marked for discarding (an edit list), and
    /// a Matroska file whose audio starts before its video (a seek to the first cue drops
    /// those audio blocks: the first audio packet is not the scanned one), also WebM with
    /// Opus (its codec delay puts the audio first); without the audio, the video alone is.
    /// MPEG-TS, rewound by bytes, reads its early audio too: rewound, the same packets.
    #[test]
    fn a_start_that_differs_is_not_rewound() {
        let dir = tempfile::tempdir().unwrap();
        let Some(whole) = media(dir.path(), "whole.mp4", &[]) else {
            eprintln!("skipped: no ffmpeg CLI to make the test media");
            return;
        };
        let cut = dir.path().join("cut.mp4");
        let ok = std::process::Command::new("ffmpeg")
            .args(["-v", "error", "-y", "-ss", "0.5", "-i"])
            .arg(&whole)
            .args(["-c", "copy"])
            .arg(&cut)
            .status()
            .unwrap()
            .success();
        assert!(ok);
        assert!(
            rewound(&cut, false).is_none(),
            "an edit list's discarded start"
        );
        for name in ["late.mkv", "late.ts"] {
            let late = dir.path().join(name);
            let ok = std::process::Command::new("ffmpeg")
                .args(["-v", "error", "-y", "-itsoffset", "0.4", "-i"])
                .arg(&whole)
                .args(["-i"])
                .arg(&whole)
                .args(["-map", "0:v", "-map", "1:a", "-c", "copy"])
                .arg(&late)
                .status()
                .unwrap()
                .success();
            assert!(ok);
            let fresh = fresh_packets(&late);
            let first_audio = fresh.iter().find(|f| f.0 == 1).unwrap().1.unwrap();
            let first_video = fresh.iter().find(|f| f.0 == 0).unwrap().1.unwrap();
            eprintln!("{name}: first audio pts {first_audio}, first video pts {first_video}");
            match rewound(&late, true) {
                // MPEG-TS rewinds by bytes, so its early audio is read too.
                Some(r) => {
                    assert!(name.ends_with(".ts"), "{name} is rewound with its audio");
                    assert!(
                        rewound_packets(r) == by_stream(fresh),
                        "{name}: the packets differ"
                    );
                }
                None => assert!(name.ends_with(".mkv"), "{name} is not rewound"),
            }
            assert!(rewound(&late, false).is_some(), "{name}: the video alone");
        }
        // Matroska written to a pipe has no cues to seek by: if it is rewound (the generic
        // seek's fallback), it must read as a fresh one.
        let piped = dir.path().join("piped.mkv");
        let ok = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "ffmpeg -v error -i '{}' -c copy -f matroska - > '{}'",
                whole.display(),
                piped.display()
            ))
            .status()
            .unwrap()
            .success();
        assert!(ok);
        let fresh = fresh_packets(&piped);
        match rewound(&piped, true) {
            Some(r) => assert!(rewound_packets(r) == by_stream(fresh), "piped.mkv"),
            None => eprintln!("piped.mkv (no cues) is not rewound"),
        }
        // WebM's Opus starts before the video (its codec delay: pts -7 ms against 7 ms).
        let vp9 = [
            "-c:v",
            "libvpx-vp9",
            "-c:a",
            "libopus",
            "-deadline",
            "realtime",
        ];
        if let Some(webm) = media(dir.path(), "a.webm", &vp9) {
            assert!(rewound(&webm, true).is_none(), "webm with its Opus");
            assert!(rewound(&webm, false).is_some(), "webm's video alone");
        }
    }
}
