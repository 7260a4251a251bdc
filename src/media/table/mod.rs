//! The frame table: every frame of a video stream in presentation order with its exact
//! timestamp, keyframe flag and packet position. "Frame i" means the i-th picture a full
//! decode of the stream returns (what `ffmpeg`/`ffprobe -count_frames` count), and the table
//! is what makes frame indices, time lookups and exact seeking possible without decoding a
//! whole video each time.
//!
//! Two ways to build it:
//! - **from packets** (fast, no decoding): when every packet carries a presentation
//!   timestamp, each packet is one frame and the decoder hands that timestamp back with the
//!   picture, so a decoded frame proves its identity by its pts ([`Identity::Pts`]);
//! - **by decoding** (a full decode that skips the costly filters): when packets lack
//!   timestamps (AVI with B-frames, packed MPEG-4, raw elementary streams) or repeat them. The
//!   frames and their times are the decoder's own (best-effort timestamps, missing ones filled
//!   at the frame rate, as ffmpeg does); a decoded frame proves its identity by the byte
//!   position of its packet ([`Identity::Position`]), or, where positions are unknown or
//!   shared, only by counting from the start ([`Identity::Sequential`]).
//!
//! A packet table is a prediction: if a decoder disagrees with it (a packet that does not
//! decode, a frame the packets never listed), the reader reports
//! [`crate::Error::TableMismatch`]; whoever holds the [`TableCache`] then
//! [`distrust`](TableCache::distrust)s it and the next table is built by decoding (the
//! executor does, and runs the plan again: [`retry_on_table_mismatch`]).
//!
//! Times are relative to the input's start as ffmpeg uses it for `-ss`/`-t` (the earliest
//! start among its streams), so a time read off ffmpeg or a player means the same frame here.
//!
//! One job per file: this one holds what a table is and answers questions about it (frame
//! times, look-ups by time, pts and position, keyframes); `scan.rs` builds it from packets
//! (and for image sequences), `decode_scan.rs` by decoding, `damage.rs` says what is known to
//! be damaged, `cache.rs` keeps the tables of one caller (`TableCache`) and reruns a job whose
//! table a decoder proved wrong.

mod cache;
mod damage;
mod decode_scan;
mod scan;

pub(crate) use cache::UsedInput;
pub use cache::{retry_on_table_mismatch, TableCache};
pub use damage::{
    CorruptPacket, Damage, DamagedPacket, DemuxerErrors, LostPackets, TruncatedImage,
    UnreadableTail,
};
pub(crate) use scan::coded_packet;

use std::sync::Arc;

use crate::vocab::time::{FrameTimeline, Time};
use crate::vocab::Ratio;

/// One frame as the table knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameEntry {
    /// Presentation timestamp in the stream's time base.
    pub pts: i64,
    /// The decoding timestamp of the frame's packet as the container gives it, when it does
    /// (seeking by timestamp uses it).
    pub dts: Option<i64>,
    /// How long the frame is shown, in the stream's time base (0 when unknown).
    pub duration: i64,
    /// Decoding can start at this frame (its packet is a keyframe).
    pub key: bool,
    /// Byte position of the frame's packet in the file (-1 when unknown).
    pub pos: i64,
}

/// How a decoded frame is recognised after a seek.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Identity {
    /// By its presentation timestamp (every packet has a distinct one).
    Pts,
    /// By the byte position of its packet (timestamps cannot be trusted).
    Position,
    /// Only by counting frames from the start of the stream.
    Sequential,
}

/// Where the frame times come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TimesFrom {
    /// The packets' presentation timestamps.
    Packets,
    /// A full decode (the decoder's best-effort timestamps).
    Decoder,
}

/// All frames of one video stream in presentation order. Never empty: building a table for a
/// stream with no frames is an error.
#[derive(Clone, Debug)]
pub struct FrameTable {
    /// Seconds per timestamp tick of the stream: `pts` values count these.
    pub time_base: Ratio,
    entries: Vec<FrameEntry>,
    /// How a decoded frame proves which frame it is.
    pub identity: Identity,
    /// Whether the table was built from packets or by decoding.
    pub times_from: TimesFrom,
    /// The absolute time (pts x time base) that time 0 stands for.
    origin: Time,
    /// Packets left out because the container marks them for discarding (edit lists).
    pub discarded_packets: usize,
    /// Damage found while building the table (only a table built by decoding knows).
    pub damage: Damage,
    /// Why the table was built by decoding, if it was.
    pub decoded_because: Option<String>,
    /// Where the picture size changes (only a table built by decoding knows; at most
    /// `MAX_SIZE_CHANGES`, 16).
    pub size_changes: Vec<crate::media::frame::SizeChange>,
    fallback_frame_duration: i64,
    /// (pos, index) sorted by pos, for [`Identity::Position`] look-ups.
    by_position: Vec<(i64, usize)>,
    /// For H.264 with an avcC record, built from packets: every video packet in decoding
    /// order, with its IDR flag (see [`CodedPackets`]).
    coded: Option<Arc<CodedPackets>>,
    /// For H.264 with an avcC record, built from packets: which frames each frame may be
    /// predicted from (`bitstream::h264_refs`), so that sparse reading decodes only what its
    /// targets depend on; `None` where the analysis gave up.
    refs: Option<Arc<crate::media::bitstream::h264_refs::RefGraph>>,
    /// The first packet of each audio stream, as the scan read it from a fresh input, where
    /// the demuxer's rewind needs it as proof (`media::rewind`: Matroska, MPEG-TS).
    first_audio_packets: Vec<FirstPacket>,
}

/// The first packet of a stream as a table's scan read it from a fresh input: an input
/// rewound to its start proves it reads that stream from its start by giving this packet
/// first (`media::rewind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FirstPacket {
    /// The stream's index in the input.
    pub stream: usize,
    /// Byte position in the file (-1 when unknown).
    pub pos: i64,
    /// Size in bytes.
    pub size: usize,
    /// Presentation timestamp.
    pub pts: Option<i64>,
    /// Decoding timestamp.
    pub dts: Option<i64>,
}

/// One video packet of an H.264 stream as the table's scan read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CodedPacket {
    /// Presentation timestamp.
    pub pts: i64,
    /// Decoding timestamp (the presentation time when the container stores none: Matroska).
    pub dts: i64,
    /// The packet holds an IDR slice.
    pub idr: bool,
}

/// The video packets of an H.264 stream with an avcC record, in decoding order (empty ones
/// too), recorded by the table's one scan so that smart encoding (`exports/smart/`), which
/// copies whole GOPs, need not read every packet again; or why they cannot be cut (a packet
/// without a timestamp or not length-prefixed: the words smart encoding gives when it falls
/// back to a full encode).
pub(crate) type CodedPackets = std::result::Result<Vec<CodedPacket>, String>;

impl FrameTable {
    /// Which frames each frame may be predicted from (H.264 from packets; see
    /// [`crate::media::bitstream::h264_refs`]).
    pub(crate) fn ref_graph(&self) -> Option<&crate::media::bitstream::h264_refs::RefGraph> {
        self.refs.as_deref()
    }

    /// The first packet of audio stream `stream` as the scan read it, where it was recorded
    /// (see [`FirstPacket`]).
    pub(crate) fn first_audio_packet(&self, stream: usize) -> Option<&FirstPacket> {
        self.first_audio_packets.iter().find(|p| p.stream == stream)
    }

    /// Whether frame 0 is the video stream's first packet in the file (the least byte
    /// position, every position known): what an input read from its start gives first.
    pub(crate) fn frame0_is_first_in_file(&self) -> bool {
        let known = self.by_position.len() == self.entries.len();
        known && self.by_position.first().map(|&(_, i)| i) == Some(0)
    }

    /// For H.264 in avcC form with a table built from packets: every video packet in decoding
    /// order with its IDR flag, as the scan read them (`None`: not recorded; read them).
    pub(crate) fn coded_packets(&self) -> Option<&CodedPackets> {
        self.coded.as_deref()
    }

    /// The number of frames; valid indices are `0..len()`.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the stream has no frame.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Frame `index` (0-based). Panics when `index >= len()`.
    pub fn entry(&self, index: usize) -> &FrameEntry {
        &self.entries[index]
    }

    /// Whether decoding from a seek to the first keyframe gives what decoding from the start
    /// of the file gives: the first frame shown is a keyframe, the stream's first packet in
    /// decoding order, and nothing is known to be damaged.
    pub(crate) fn starts_at_first_keyframe(&self) -> bool {
        if self.is_empty() || !self.damage.is_empty() || self.identity == Identity::Sequential {
            return false;
        }
        let first = self.entry(0);
        let first_dts = self.entries.iter().filter_map(|e| e.dts).min();
        first.key && (first.dts.is_none() || first.dts == first_dts)
    }

    /// Every frame, in presentation order (`entries()[i]` is frame `i`).
    pub fn entries(&self) -> &[FrameEntry] {
        &self.entries
    }

    /// The absolute time (pts x time base) of time 0: the input's start.
    pub fn origin(&self) -> Time {
        self.origin
    }

    /// The presentation timestamp of frame `index`, in `time_base` ticks (absolute, not
    /// relative to the origin). Panics when `index >= len()`.
    pub fn pts(&self, index: usize) -> i64 {
        self.entries[index].pts
    }

    /// Time of `pts` relative to the origin.
    pub fn time_of_pts(&self, pts: i64) -> Time {
        Time::from_pts(pts, self.time_base.num, self.time_base.den) - self.origin
    }

    /// Presentation time of frame `index`, relative to the origin.
    pub fn time(&self, index: usize) -> Time {
        self.time_of_pts(self.entries[index].pts)
    }

    /// How long frame `index` is shown, in time-base ticks: up to the next frame, or for the
    /// last frame its packet duration (or the typical frame duration when the packet has
    /// none).
    pub fn duration_pts(&self, index: usize) -> i64 {
        if index + 1 < self.entries.len() {
            self.entries[index + 1].pts - self.entries[index].pts
        } else if self.entries[index].duration > 0 {
            self.entries[index].duration
        } else {
            self.fallback_frame_duration
        }
    }

    /// How long frame `index` is shown, in seconds ([`FrameTable::duration_pts`] as a time).
    pub fn duration_of(&self, index: usize) -> Time {
        Time::from_pts(
            self.duration_pts(index),
            self.time_base.num,
            self.time_base.den,
        )
    }

    /// When the last frame stops being shown: the video's end, from the origin.
    pub fn end_time(&self) -> Time {
        let last = self.entries.len() - 1;
        self.time(last) + self.duration_of(last)
    }

    /// The frames' times as the one time-to-frame rule sees them ([`FrameTimeline`]: a time
    /// within a hundredth of a frame of a frame's time is that frame's time).
    pub fn timeline(&self) -> FrameTimeline<impl Fn(usize) -> Time + '_> {
        FrameTimeline::new(self.len(), |i| self.time(i), self.end_time())
    }

    /// The first frame whose time is `>= t`, by the tolerance rule ([`FrameTimeline`]): where
    /// a span starting at `t` starts (`len()` when there is none).
    pub fn first_at_or_after(&self, t: Time) -> usize {
        self.timeline().first_at_or_after(t)
    }

    /// The frame shown at time `t`, by the tolerance rule ([`FrameTimeline`]): the one with the
    /// largest time `<= t`; `None` before the first frame or at/after the end of the video.
    pub fn shown_at(&self, t: Time) -> Option<usize> {
        self.timeline().shown_at(t)
    }

    /// The frame with exactly this pts, if any.
    pub fn index_of_pts(&self, pts: i64) -> Option<usize> {
        self.entries.binary_search_by_key(&pts, |e| e.pts).ok()
    }

    /// The frame whose packet starts at byte `pos`, if any.
    pub fn index_of_pos(&self, pos: i64) -> Option<usize> {
        self.by_position
            .binary_search_by_key(&pos, |&(p, _)| p)
            .ok()
            .map(|k| self.by_position[k].1)
    }

    /// The last keyframe at or before frame `index` in presentation order: decoding from it
    /// reaches frame `index`. Frame 0 when the stream marks no earlier keyframe.
    pub fn keyframe_at_or_before(&self, index: usize) -> usize {
        (0..=index.min(self.entries.len() - 1))
            .rev()
            .find(|&i| self.entries[i].key)
            .unwrap_or(0)
    }

    /// A keyframe at or before frame `index` from which decoding reaches frame `index` the
    /// way a full decode does. In a damaged stream the decoder conceals errors with what it
    /// decoded before, so a frame at or after the first damage is reached from the last
    /// keyframe before that damage (the same decoding history as a full decode).
    pub fn clean_keyframe_at_or_before(&self, index: usize) -> usize {
        match self.damage.first_affected_frame() {
            Some(first) if index >= first => self.keyframe_at_or_before(first.saturating_sub(1)),
            _ => self.keyframe_at_or_before(index),
        }
    }

    /// The first keyframe at or after frame `index` (`len()` when there is none).
    pub fn keyframe_at_or_after(&self, index: usize) -> usize {
        (index..self.entries.len())
            .find(|&i| self.entries[i].key)
            .unwrap_or(self.entries.len())
    }

    /// The number of frames whose packet is a keyframe.
    pub fn keyframe_count(&self) -> usize {
        self.entries.iter().filter(|e| e.key).count()
    }

    /// The typical frame duration in ticks (median spacing).
    pub fn typical_frame_duration(&self) -> i64 {
        self.fallback_frame_duration
    }

    /// The frame rate the spacing of the frames shows (median spacing), when it is regular.
    pub fn typical_frame_rate(&self) -> Option<Ratio> {
        let ticks = self.fallback_frame_duration;
        if ticks <= 0 {
            return None;
        }
        let num = self.time_base.den as i64;
        let den = self.time_base.num as i64 * ticks;
        let t = Time::new(num, den);
        Some(Ratio::new(
            i32::try_from(t.numer()).ok()?,
            i32::try_from(t.denom()).ok()?,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn entry(pts: i64, key: bool) -> FrameEntry {
        FrameEntry {
            pts,
            dts: Some(pts),
            duration: 0,
            key,
            pos: -1,
        }
    }

    fn table(pts: &[i64], keys: &[usize]) -> FrameTable {
        let entries = pts
            .iter()
            .enumerate()
            .map(|(i, &p)| entry(p, keys.contains(&i)))
            .collect();
        FrameTable::from_entries(
            Ratio::new(1, 1000),
            entries,
            0,
            Some(Ratio::new(25, 1)),
            None,
        )
    }

    #[test]
    fn lookups_on_a_variable_rate_table() {
        // frames at 100, 140, 200, 210, 300 ms (origin 100)
        let t = table(&[200, 100, 300, 140, 210], &[0, 3]);
        assert_eq!(t.pts(0), 100);
        assert_eq!(t.time(2), Time::new(1, 10));
        assert_eq!(t.first_at_or_after(Time::new(1, 10)), 2);
        assert_eq!(t.first_at_or_after(Time::new(101, 1000)), 3);
        assert_eq!(t.shown_at(Time::new(109, 1000)), Some(2));
        assert_eq!(t.shown_at(Time::new(110, 1000)), Some(3));
        assert_eq!(t.shown_at(Time::new(-1, 1000)), None);
        // last frame lasts the median gap (60 ms): end at 200 + 60 = 260 ms after origin
        assert_eq!(t.end_time(), Time::new(260, 1000));
        assert_eq!(t.shown_at(Time::new(259, 1000)), Some(4));
        assert_eq!(t.shown_at(Time::new(260, 1000)), None);
        assert_eq!(t.index_of_pts(210), Some(3));
        assert_eq!(t.index_of_pts(211), None);
    }

    #[test]
    fn times_count_from_the_input_start_not_the_first_frame() {
        let entries = (1..=4).map(|i| entry(i, i == 1)).collect();
        // a 25 fps stream whose first frame is stamped one frame after the input's start
        let t = FrameTable::from_entries(
            Ratio::new(1, 25),
            entries,
            0,
            Some(Ratio::new(25, 1)),
            Some(Time::ZERO),
        );
        assert_eq!(t.time(0), Time::new(1, 25));
        assert_eq!(t.shown_at(Time::new(1, 50)), None);
        assert_eq!(t.first_at_or_after(Time::ZERO), 0);
        // an origin after the first frame is never used
        let entries = (1..=4).map(|i| entry(i, i == 1)).collect();
        let t = FrameTable::from_entries(
            Ratio::new(1, 25),
            entries,
            0,
            None,
            Some(Time::from_secs(5)),
        );
        assert_eq!(t.time(0), Time::ZERO);
    }

    #[test]
    fn keyframe_lookup() {
        let t = table(&[0, 40, 80, 120, 160, 200], &[0, 3]);
        assert_eq!(t.keyframe_at_or_before(2), 0);
        assert_eq!(t.keyframe_at_or_before(3), 3);
        assert_eq!(t.keyframe_at_or_before(5), 3);
        assert_eq!(t.keyframe_at_or_after(1), 3);
        assert_eq!(t.keyframe_at_or_after(4), 6);
    }

    #[test]
    fn a_corrupt_packet_taints_the_frames_decoded_from_it_up_to_the_next_keyframe() {
        // Decoding order I0 P3 B1 B2 P6 B4 B5 I7: frame 3 is decoded before 1 and 2, which
        // refer to it.
        let dts = [0, 2, 3, 1, 5, 6, 4, 7];
        let entries = (0..8)
            .map(|i| FrameEntry {
                pts: i,
                dts: Some(dts[i as usize]),
                duration: 1,
                key: i == 0 || i == 7,
                pos: -1,
            })
            .collect();
        let t = FrameTable::from_entries(Ratio::new(1, 25), entries, 0, None, None);
        let c = t.corrupt_packets(&[(3, Some(1), 900)]);
        assert_eq!(c.len(), 1);
        assert_eq!(
            (c[0].frame, c[0].pos, c[0].suspect_frames),
            (3, 900, [1, 7])
        );
        // An unknown timestamp is no frame of the table.
        assert!(t.corrupt_packets(&[(99, None, 1)]).is_empty());
        let damage = Damage {
            corrupt_packets: c,
            ..Damage::default()
        };
        assert!(damage.suspect(1) && damage.suspect(6) && !damage.suspect(0) && !damage.suspect(7));
        assert_eq!(damage.first_affected_frame(), Some(1));
        assert_eq!(t.keyframe_at_or_before(0), 0);
    }
}
