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

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ffmpeg_next as ffmpeg;

use crate::error::{Error, Result};
use crate::media::ffi;
use crate::media::input::{read_error_ends_input, read_packet, Ratio, VideoInput};
use crate::media::source::{ImageSequence, Source, SourceKind};
use crate::time::Time;

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
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TimesFrom {
    /// The packets' presentation timestamps.
    Packets,
    /// A full decode (the decoder's best-effort timestamps).
    Decoder,
}

/// A packet that could not be decoded, found while building a table by decoding.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct DamagedPacket {
    /// Its time relative to the table's origin (from its pts or dts), when known.
    pub time_s: Option<f64>,
    /// The last frame decoded before it (`None` when it came before every frame).
    pub after_frame: Option<usize>,
    /// Byte position in the file.
    pub pos: i64,
}

/// Where a file stops being readable (see [`read_error_ends_input`]): the video ends there,
/// as it does for the ffmpeg CLI and `ffprobe -count_frames`.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct UnreadableTail {
    /// Frames read before the error: the video's frames.
    pub after_frame: usize,
    /// Byte position of the last packet read before it (-1 when unknown).
    pub last_packet_pos: i64,
    /// What the demuxer said.
    pub error: String,
}

/// Packets the container lost, told by a jump in timestamps where the format has none: Ogg
/// Theora stamps every frame with its frame number (a dropped frame is an empty packet), so a
/// gap means pages that failed their checksum were skipped. The frames after the gap, up to
/// the next keyframe, are decoded from incomplete references (ffmpeg shows the same pictures;
/// it only warns about the checksum).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LostPackets {
    /// The last frame before the gap.
    pub after_frame: usize,
    /// How many frames' packets are missing.
    pub missing: i64,
    /// The frames that may show the damage (half-open `[start, end)`): from the frame before
    /// the gap (its packet may have lost its end) up to the next keyframe.
    pub suspect_frames: [usize; 2],
}

/// What is known to be damaged in a stream.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Damage {
    /// Packets the decoder rejected (their pictures are not among the frames).
    pub undecodable_packets: Vec<DamagedPacket>,
    /// Frames the decoder returned but marked as damaged (errors concealed).
    pub concealed_frames: Vec<usize>,
    /// The file cannot be read past this point: the rest is not part of the video.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<UnreadableTail>,
    /// Runs of packets the container lost (Ogg Theora only: see [`LostPackets`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lost_packets: Vec<LostPackets>,
}

impl Damage {
    /// True when no damage is known (which, for a table built from packets, does not mean
    /// there is none).
    pub fn is_empty(&self) -> bool {
        self.undecodable_packets.is_empty()
            && self.concealed_frames.is_empty()
            && self.unreadable.is_none()
            && self.lost_packets.is_empty()
    }

    /// Whether frame `index` may show damage from packets the container lost.
    pub fn suspect(&self, index: usize) -> bool {
        self.lost_packets
            .iter()
            .any(|l| (l.suspect_frames[0]..l.suspect_frames[1]).contains(&index))
    }

    /// The first frame the damage can touch: the first concealed frame, or the first frame
    /// decoded after a packet that failed.
    pub fn first_affected_frame(&self) -> Option<usize> {
        let packets = self
            .undecodable_packets
            .iter()
            .map(|p| p.after_frame.map_or(0, |a| a + 1));
        self.concealed_frames.iter().copied().chain(packets).min()
    }

    /// One line for people: "3 damaged packets near 12.4 s; 2 frames decoded with errors
    /// concealed (first: 310)".
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        let n = self.undecodable_packets.len();
        if n > 0 {
            let near = self
                .undecodable_packets
                .iter()
                .find_map(|p| p.time_s)
                .map(|t| format!(" near {t:.2} s"))
                .unwrap_or_default();
            parts.push(format!(
                "{n} damaged packet{} could not be decoded{near}",
                if n == 1 { "" } else { "s" }
            ));
        }
        let c = self.concealed_frames.len();
        if c > 0 {
            parts.push(format!(
                "{c} frame{} decoded with errors concealed (first: frame {})",
                if c == 1 { "" } else { "s" },
                self.concealed_frames[0]
            ));
        }
        if !self.lost_packets.is_empty() {
            let missing: i64 = self.lost_packets.iter().map(|l| l.missing).sum();
            let suspect: usize = self
                .lost_packets
                .iter()
                .map(|l| l.suspect_frames[1] - l.suspect_frames[0])
                .sum();
            parts.push(format!(
                "the container lost the packets of {missing} frame{} (first after frame {}); {suspect} frames up to the next keyframes may show it",
                if missing == 1 { "" } else { "s" },
                self.lost_packets[0].after_frame
            ));
        }
        if let Some(u) = &self.unreadable {
            parts.push(format!(
                "the file cannot be read after frame {} ({}): the video ends there, as in ffmpeg",
                u.after_frame, u.error
            ));
        }
        parts.join("; ")
    }
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
    fallback_frame_duration: i64,
    /// (pos, index) sorted by pos, for [`Identity::Position`] look-ups.
    by_position: Vec<(i64, usize)>,
    /// For H.264 with an avcC record, built from packets: every video packet in decoding
    /// order, with its IDR flag (see [`CodedPackets`]).
    coded: Option<Arc<CodedPackets>>,
    /// For H.264 with an avcC record, built from packets: which frames each frame may be
    /// predicted from (`media::h264_refs`), so that sparse reading decodes only what its
    /// targets depend on; `None` where the analysis gave up.
    refs: Option<Arc<crate::media::h264_refs::RefGraph>>,
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
/// too), recorded by the table's one scan so that smart encoding (`exports/smart.rs`), which
/// copies whole GOPs, need not read every packet again; or why they cannot be cut (a packet
/// without a timestamp or not length-prefixed: the words smart encoding gives when it falls
/// back to a full encode).
pub(crate) type CodedPackets = std::result::Result<Vec<CodedPacket>, String>;

/// The facts of `packet` for [`CodedPackets`] (`length_size`: the avcC record's NAL length
/// size).
fn coded_packet(
    packet: &ffmpeg::Packet,
    length_size: usize,
) -> std::result::Result<CodedPacket, String> {
    let Some(pts) = packet.pts() else {
        return Err("a video packet has no presentation timestamp".into());
    };
    let data = packet.data().unwrap_or(&[]);
    let nals = crate::media::h264::split_length_prefixed(data, length_size)
        .map_err(|e| format!("a video packet is not length-prefixed H.264: {e}"))?;
    Ok(CodedPacket {
        pts,
        dts: packet.dts().unwrap_or(pts),
        idr: nals
            .iter()
            .any(|n| crate::media::h264::nal_type(n) == crate::media::h264::NAL_IDR),
    })
}

/// Frames at most a table built by decoding may hold before giving up (a 24-hour video at
/// 240 fps); bounds memory for hostile input.
const MAX_FRAMES: usize = 24 * 3600 * 240;

impl FrameTable {
    /// The table of `path`, built now (from packets, or by decoding where they cannot be
    /// trusted). To build it once and share it, ask a [`TableCache`].
    pub fn for_file(path: &Path) -> Result<Arc<FrameTable>> {
        Self::for_source(&Source::from(path))
    }

    /// The table of a source with the rate the request gives it (see
    /// [`FrameTable::for_file`]).
    pub fn for_source(source: &Source) -> Result<Arc<FrameTable>> {
        TableCache::new().table(source)
    }

    /// Builds the table of `path` without the cache.
    pub fn scan(path: &Path) -> Result<FrameTable> {
        let mut input = VideoInput::open(path)?;
        Self::scan_input(&mut input)
    }

    /// Builds the table from `input`'s packets, or by decoding when the packets cannot be
    /// trusted (see the module comment). `input` must be freshly opened. An image sequence's
    /// table is its file list (see [`FrameTable::of_image_sequence`]).
    pub fn scan_input(input: &mut VideoInput) -> Result<FrameTable> {
        if let Some(seq) = input.sequence.clone() {
            return Self::of_image_sequence(input, &seq);
        }
        let index = input.video.index;
        input.keep_only_streams(&[index]);
        crate::tally::count(crate::tally::Event::PacketScan);
        // H.264 in avcC form: its packets in decoding order with their IDR flags, for smart
        // encoding.
        let avcc = if input.video.codec == "h264" {
            input.context.stream(index).and_then(|s| {
                let extradata = ffi::parameters_extradata(&s.parameters());
                crate::media::h264::AvcC::parse(&extradata).ok()
            })
        } else {
            None
        };
        let length_size = avcc.as_ref().map(|a| a.length_size);
        let mut analyser = avcc.as_ref().map(crate::media::h264_refs::Analyser::new);
        let mut coded: Option<CodedPackets> = length_size.map(|_| Ok(Vec::new()));
        let mut entries = Vec::new();
        let mut discarded = 0usize;
        let mut untrusted: Option<String> = None;
        let mut unreadable: Option<UnreadableTail> = None;
        loop {
            let packet = match read_packet(&mut input.context) {
                Ok(Some(p)) => p,
                Ok(None) => break,
                Err(ffmpeg::Error::Exit)
                    if crate::media::source::is_url(&input.path) && !crate::cancel::cancelled() =>
                {
                    return Err(crate::media::source::network_error(
                        &input.path,
                        ffmpeg::Error::Exit,
                    ))
                }
                Err(e) if read_error_ends_input(&e) => {
                    unreadable = Some(UnreadableTail {
                        after_frame: entries.len(),
                        last_packet_pos: entries.last().map_or(-1, |e: &FrameEntry| e.pos),
                        error: e.to_string(),
                    });
                    break;
                }
                Err(e) => {
                    return Err(Error::corrupt(
                        &input.path,
                        format!("after frame {}", entries.len()),
                        format!("cannot read packets: {e}"),
                    ))
                }
            };
            if packet.stream() != index {
                continue;
            }
            if ffi::packet_is_discarded(&packet) {
                discarded += 1;
                continue;
            }
            if let (Some(Ok(list)), Some(size)) = (&mut coded, length_size) {
                match coded_packet(&packet, size) {
                    Ok(p) => list.push(p),
                    Err(why) => coded = Some(Err(why)),
                }
            }
            if let (Some(a), Some(size), Some(pts)) = (&mut analyser, length_size, packet.pts()) {
                if packet.size() > 0 {
                    let data = packet.data().unwrap_or(&[]);
                    match crate::media::h264::split_length_prefixed(data, size) {
                        Ok(nals) => a.packet(pts, &nals),
                        Err(_) => analyser = None,
                    }
                }
            }
            if packet.size() == 0 {
                // Empty chunks (AVI "drop frames") hold no picture.
                continue;
            }
            let Some(pts) = packet.pts() else {
                untrusted = Some("some packets carry no presentation timestamp".into());
                break;
            };
            if entries.len() >= MAX_FRAMES {
                return Err(too_many_frames(&input.path));
            }
            entries.push(FrameEntry {
                pts,
                dts: packet.dts(),
                duration: packet.duration().max(0),
                key: packet.is_key(),
                pos: packet.position() as i64,
            });
        }
        if untrusted.is_none() {
            let mut sorted: Vec<i64> = entries.iter().map(|e| e.pts).collect();
            sorted.sort_unstable();
            if sorted.windows(2).any(|w| w[0] == w[1]) {
                untrusted = Some("two packets share a presentation timestamp".into());
            }
        }
        if let Some(reason) = untrusted {
            let mut fresh = VideoInput::open(&input.source)?;
            return Self::scan_by_decoding(&mut fresh, reason);
        }
        if entries.is_empty() {
            return Err(Error::corrupt(
                &input.path,
                "at the start",
                "the video stream has no frames",
            ));
        }
        let origin = input.start_time();
        let mut table = Self::from_entries(
            input.video.time_base,
            entries,
            discarded,
            input.video.best_frame_rate(),
            origin,
        );
        table.damage.unreadable = unreadable;
        table.coded = coded.map(Arc::new);
        table.refs = analyser
            .and_then(|a| a.finish().ok())
            .filter(|g| g.len() == table.len())
            .map(Arc::new);
        if input.video.codec == "theora" {
            table.damage.lost_packets = table.gaps_in_frame_numbers();
        }
        Ok(table)
    }

    /// Gaps in a stream of a codec with a constant frame rate by design (Theora: a dropped
    /// frame is an empty packet, still stamped): a step longer than the typical one is
    /// missing frames. See [`LostPackets`].
    fn gaps_in_frame_numbers(&self) -> Vec<LostPackets> {
        let typical = self.fallback_frame_duration;
        let mut lost = Vec::new();
        if typical <= 0 {
            return lost;
        }
        for i in 1..self.entries.len() {
            let step = self.entries[i].pts - self.entries[i - 1].pts;
            if step > typical {
                let before = i - 1;
                lost.push(LostPackets {
                    after_frame: before,
                    missing: (step + typical / 2) / typical - 1,
                    suspect_frames: [before, self.keyframe_at_or_after(i)],
                });
            }
        }
        lost
    }

    /// The table of an image sequence, from its file list: frame `i` is file `i`, at pts `i`
    /// in the time base `1 / rate` (as FFmpeg's image2 demuxer stamps and seeks it), every
    /// frame a keyframe. No file is read in full; the size in every JPEG and PNG header is
    /// checked against the first frame's, since the frames of one video share a size (other
    /// image types are checked as they decode).
    pub fn of_image_sequence(input: &VideoInput, seq: &ImageSequence) -> Result<FrameTable> {
        let tb = input.video.time_base;
        if !tb.is_valid() {
            return Err(Error::internal(format!(
                "{}: image2 gave the time base {tb}",
                input.path.display()
            )));
        }
        if seq.count > MAX_FRAMES {
            return Err(too_many_frames(&input.path));
        }
        let size = (input.video.stored_width, input.video.stored_height);
        check_image_sizes(seq, size)?;
        let entries = (0..seq.count as i64)
            .map(|i| FrameEntry {
                pts: i,
                dts: Some(i),
                duration: 1,
                key: true,
                pos: -1,
            })
            .collect();
        Ok(Self::from_entries(
            tb,
            entries,
            0,
            Some(seq.rate.as_ratio()),
            Some(Time::ZERO),
        ))
    }

    /// Builds a table from packet entries in any order (sorted here by pts). `nominal_rate`
    /// gives the last frame a duration when the file has none; `origin` is the absolute time
    /// of time 0 (`None`: the first frame).
    pub fn from_entries(
        time_base: Ratio,
        mut entries: Vec<FrameEntry>,
        discarded: usize,
        nominal_rate: Option<Ratio>,
        origin: Option<Time>,
    ) -> FrameTable {
        entries.sort_by_key(|e| e.pts);
        Self::assemble(
            time_base,
            entries,
            Identity::Pts,
            TimesFrom::Packets,
            discarded,
            nominal_rate,
            origin,
        )
    }

    fn assemble(
        time_base: Ratio,
        entries: Vec<FrameEntry>,
        identity: Identity,
        times_from: TimesFrom,
        discarded: usize,
        nominal_rate: Option<Ratio>,
        origin: Option<Time>,
    ) -> FrameTable {
        let fallback_frame_duration = fallback_duration(&entries, time_base, nominal_rate);
        let first = entries
            .first()
            .map(|e| Time::from_pts(e.pts, time_base.num, time_base.den))
            .unwrap_or(Time::ZERO);
        // Time 0 is the input's start, but never after the first frame.
        let origin = origin.map_or(first, |o| o.min(first));
        let mut by_position: Vec<(i64, usize)> = entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.pos >= 0)
            .map(|(i, e)| (e.pos, i))
            .collect();
        by_position.sort_unstable();
        FrameTable {
            time_base,
            entries,
            identity,
            times_from,
            origin,
            discarded_packets: discarded,
            damage: Damage::default(),
            decoded_because: None,
            fallback_frame_duration,
            by_position,
            coded: None,
            refs: None,
        }
    }

    /// Decodes the whole stream of a freshly opened `input` and records the frames the
    /// decoder returns, with its timestamps. `reason` says why (for probe and sidecars).
    pub fn scan_by_decoding(input: &mut VideoInput, reason: String) -> Result<FrameTable> {
        let path = input.path.clone();
        let index = input.video.index;
        input.keep_only_streams(&[index]);
        crate::tally::count(crate::tally::Event::DecodeScan);
        let tb = input.video.time_base;
        let rate = input.video.best_frame_rate();
        let mut decoder = crate::media::decode::open_decoder(input, 0, true)?;
        let _held = crate::tally::decoder_opened(0);
        // Facts of every packet by position: (dts, key).
        let mut packets: HashMap<i64, (Option<i64>, bool)> = HashMap::new();
        let mut raw_frames: Vec<RawFrame> = Vec::new();
        let mut damaged_packets: Vec<(Option<i64>, usize, i64)> = Vec::new();
        let mut discarded = 0usize;
        let mut unreadable: Option<(i64, String)> = None; // (last packet's position, error)
        let mut last_pos = -1i64;
        let mut frame = ffmpeg::frame::Video::empty();
        let mut receive = |decoder: &mut ffmpeg::decoder::Video,
                           raw_frames: &mut Vec<RawFrame>|
         -> Result<()> {
            loop {
                match decoder.receive_frame(&mut frame) {
                    Ok(()) => {
                        if raw_frames.len() >= MAX_FRAMES {
                            return Err(too_many_frames(&path));
                        }
                        let props = frame.packet();
                        raw_frames.push(RawFrame {
                            timestamp: frame.timestamp(),
                            duration: props.duration,
                            pos: crate::media::compat::frame_packet_position(&frame),
                            key: frame.is_key(),
                            damaged: frame.is_corrupt() || frame.has_decode_errors(),
                        });
                    }
                    Err(ffmpeg::Error::Eof) => return Ok(()),
                    Err(ffmpeg::Error::Other { errno }) if errno == ffmpeg::util::error::EAGAIN => {
                        return Ok(())
                    }
                    // A picture that fails after its packet was accepted: nothing comes out.
                    Err(_) => return Ok(()),
                }
            }
        };
        loop {
            let mut packet = match read_packet(&mut input.context) {
                Ok(Some(p)) => p,
                Ok(None) => break,
                Err(e) if read_error_ends_input(&e) => {
                    unreadable = Some((last_pos, e.to_string()));
                    break;
                }
                Err(e) => {
                    return Err(Error::corrupt(
                        &path,
                        format!("after frame {}", raw_frames.len()),
                        format!("cannot read packets: {e}"),
                    ))
                }
            };
            if packet.stream() != index || packet.size() == 0 {
                continue;
            }
            if ffi::packet_is_discarded(&packet) {
                discarded += 1;
            }
            let pos = packet.position() as i64;
            if pos >= 0 {
                packets.insert(pos, (packet.dts(), packet.is_key()));
                last_pos = pos;
            }
            crate::media::compat::tag_packet_position(&mut packet);
            if decoder.send_packet(&packet).is_err() {
                damaged_packets.push((packet.pts().or(packet.dts()), raw_frames.len(), pos));
            }
            receive(&mut decoder, &mut raw_frames)?;
        }
        let _ = decoder.send_eof();
        receive(&mut decoder, &mut raw_frames)?;
        if raw_frames.is_empty() {
            let why = if damaged_packets.is_empty() {
                "the video stream has no frames".to_string()
            } else {
                format!(
                    "no frame could be decoded ({} damaged packets)",
                    damaged_packets.len()
                )
            };
            return Err(Error::corrupt(&path, "at the start", why));
        }

        // Timestamps: the decoder's, missing ones one frame after the previous (the first at
        // 0), and always increasing.
        let step_of = |duration: i64| -> i64 {
            if duration > 0 {
                duration
            } else {
                rate.map(|r| ticks_per_frame(tb, r)).unwrap_or(1).max(1)
            }
        };
        let mut entries = Vec::with_capacity(raw_frames.len());
        let mut previous: Option<(i64, i64)> = None; // (pts, step)
        for raw in &raw_frames {
            let step = step_of(raw.duration);
            let pts = match (raw.timestamp, previous) {
                (Some(t), Some((p, s))) if t <= p => p + s.max(1),
                (Some(t), _) => t,
                (None, Some((p, s))) => p + s,
                (None, None) => 0,
            };
            let (dts, packet_key) = packets.get(&raw.pos).copied().unwrap_or((None, raw.key));
            entries.push(FrameEntry {
                pts,
                dts,
                duration: raw.duration.max(0),
                key: packet_key,
                pos: raw.pos,
            });
            previous = Some((pts, step));
        }
        let positions_unique = {
            let mut pos: Vec<i64> = entries.iter().map(|e| e.pos).collect();
            pos.sort_unstable();
            pos.iter().all(|&p| p >= 0) && pos.windows(2).all(|w| w[0] != w[1])
        };
        let identity = if positions_unique {
            Identity::Position
        } else {
            Identity::Sequential
        };
        let origin = input.start_time();
        let mut table = Self::assemble(
            tb,
            entries,
            identity,
            TimesFrom::Decoder,
            discarded,
            rate,
            origin,
        );
        table.decoded_because = Some(reason);
        table.damage = Damage {
            undecodable_packets: damaged_packets
                .into_iter()
                .map(|(ts, decoded_before, pos)| DamagedPacket {
                    time_s: ts.map(|t| table.time_of_pts(t).as_secs_f64()),
                    after_frame: decoded_before.checked_sub(1),
                    pos,
                })
                .collect(),
            concealed_frames: raw_frames
                .iter()
                .enumerate()
                .filter(|(_, f)| f.damaged)
                .map(|(i, _)| i)
                .collect(),
            // (Frames still in the decoder when reading stopped came out at the flush.)
            unreadable: unreadable.map(|(pos, error)| UnreadableTail {
                after_frame: raw_frames.len(),
                last_packet_pos: pos,
                error,
            }),
            lost_packets: Vec::new(),
        };
        if input.video.codec == "theora" {
            table.damage.lost_packets = table.gaps_in_frame_numbers();
        }
        Ok(table)
    }

    /// For H.264 in avcC form with a table built from packets: every video packet in decoding
    /// order with its IDR flag, as the scan read them (`None`: not recorded; read them).
    /// Which frames each frame may be predicted from (H.264 from packets; see
    /// [`crate::media::h264_refs`]).
    pub(crate) fn ref_graph(&self) -> Option<&crate::media::h264_refs::RefGraph> {
        self.refs.as_deref()
    }

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

    /// The first frame whose time is `>= t` (`len()` when there is none).
    pub fn first_at_or_after(&self, t: Time) -> usize {
        self.entries
            .partition_point(|e| self.time_of_pts(e.pts) < t)
    }

    /// The frame shown at time `t`: the one with the largest time `<= t`; `None` before the
    /// first frame or at/after the end of the video.
    pub fn shown_at(&self, t: Time) -> Option<usize> {
        if t >= self.end_time() {
            return None;
        }
        let after = self
            .entries
            .partition_point(|e| self.time_of_pts(e.pts) <= t);
        after.checked_sub(1)
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

/// Runs `job` with the table of `source` from `cache`, and once more with a table built by
/// decoding if a decoder disagreed with the one from packets. Jobs write their outputs only
/// when complete, so running again is safe. It must run again, not carry on: the table says
/// how many frames there are and when each is shown, and everything a job planned (spans,
/// samples, claims, sizes) was planned from it.
pub fn retry_on_table_mismatch<T>(
    cache: &TableCache,
    source: &Source,
    mut job: impl FnMut() -> Result<T>,
) -> Result<T> {
    match job() {
        Err(Error::TableMismatch { .. }) => {
            cache.distrust(source);
            job()
        }
        other => other,
    }
}

/// A decoded frame's facts while a table is built by decoding.
struct RawFrame {
    timestamp: Option<i64>,
    duration: i64,
    pos: i64,
    key: bool,
    damaged: bool,
}

/// Checks that every JPEG and PNG image of `seq` has the size `size` (the first frame's, as
/// FFmpeg read it), reading only headers; a file whose header is unreadable is an error
/// naming it. Other image types are left to the decoder (see `FrameReader`).
fn check_image_sizes(seq: &ImageSequence, size: (u32, u32)) -> Result<()> {
    for i in 0..seq.count {
        let path = seq.file_path(i);
        let reader = image::ImageReader::open(&path)
            .and_then(|r| r.with_guessed_format())
            .map_err(|e| Error::read(&path, e))?;
        if !reader.format().is_some_and(|f| f.reading_enabled()) {
            continue;
        }
        let found = reader
            .into_dimensions()
            .map_err(|e| Error::corrupt(&path, "in the image header", e.to_string()))?;
        if found != size {
            return Err(Error::request(
                &path,
                format!(
                    "is {}x{} but frame 0 of the sequence ({}) is {}x{}; the images of one sequence must all have one size",
                    found.0,
                    found.1,
                    seq.file_name(0),
                    size.0,
                    size.1
                ),
            ));
        }
    }
    Ok(())
}

fn too_many_frames(path: &Path) -> Error {
    Error::corrupt(
        path,
        "while reading packets",
        format!("the video has more than {MAX_FRAMES} frames, more than vidprep handles"),
    )
}

/// Ticks of `tb` per frame at `rate` (at least 1).
fn ticks_per_frame(tb: Ratio, rate: Ratio) -> i64 {
    let ticks = (rate.den as i128 * tb.den as i128) / (rate.num as i128 * tb.num.max(1) as i128);
    (ticks.clamp(1, i64::MAX as i128)) as i64
}

fn fallback_duration(entries: &[FrameEntry], tb: Ratio, nominal_rate: Option<Ratio>) -> i64 {
    if entries.len() >= 2 {
        let mut gaps: Vec<i64> = entries
            .windows(2)
            .map(|w| w[1].pts - w[0].pts)
            .filter(|&g| g > 0)
            .collect();
        if !gaps.is_empty() {
            gaps.sort_unstable();
            return gaps[gaps.len() / 2];
        }
    }
    if let Some(fps) = nominal_rate.filter(|r| r.is_valid()) {
        if tb.is_valid() {
            return ticks_per_frame(tb, fps);
        }
    }
    1
}

/// Identifies one version of a file: a rewritten or replaced file gets a new table.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct FileKey {
    path: PathBuf,
    len: u64,
    modified: Option<std::time::SystemTime>,
    inode: u64,
    /// The rate a request gave (image sequences).
    fps: Option<crate::media::source::FrameRate>,
    /// A URL's ETag, Last-Modified and size.
    validators: Option<crate::media::remote::Validators>,
}

impl FileKey {
    /// A file by its identity and version; an image sequence by its folder's (adding or
    /// removing images changes the folder) and the pattern; a URL by its text and validators.
    fn of(source: &Source) -> Result<FileKey> {
        let path = source.path();
        let fps = source.fps();
        let stat_path = match source.kind()? {
            SourceKind::Url => {
                // A URL by its text and the validators its first open saw: a changed
                // resource gets a new table.
                let validators = match source.remote() {
                    Some(r) => Some(r.validators(path)?),
                    None => None,
                };
                return Ok(FileKey {
                    path: path.to_path_buf(),
                    len: 0,
                    modified: None,
                    inode: 0,
                    fps,
                    validators,
                });
            }
            SourceKind::Images if !path.is_dir() => match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            },
            _ => path.to_path_buf(),
        };
        let meta = std::fs::metadata(&stat_path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::NotFound {
                path: stat_path.clone(),
            },
            _ => Error::read(&stat_path, e),
        })?;
        #[cfg(unix)]
        let inode = {
            use std::os::unix::fs::MetadataExt;
            meta.ino() ^ meta.dev().rotate_left(32)
        };
        #[cfg(not(unix))]
        let inode = 0;
        let canonical = std::fs::canonicalize(&stat_path).unwrap_or_else(|_| stat_path.clone());
        Ok(FileKey {
            path: if stat_path == path {
                canonical
            } else {
                canonical.join(path.file_name().unwrap_or_default())
            },
            len: meta.len(),
            modified: meta.modified().ok(),
            inode,
            fps,
            validators: None,
        })
    }
}

/// Frame tables of sources, built once per file version (a rewritten or replaced file gets a
/// new one) and shared by everything that holds this cache: a batch's items (a batch opens
/// the same source many times), one Python call. It is the caller's: it travels in
/// [`ExecOptions::tables`](crate::ExecOptions), clones share it, and nothing outside it
/// remembers a table. A table the decoder found wrong is [`distrust`](Self::distrust)ed by
/// whoever met the [`Error::TableMismatch`] and rebuilt by decoding when next asked for.
#[derive(Clone, Debug, Default)]
pub struct TableCache(Arc<Mutex<CacheState>>);

#[derive(Debug)]
struct CachedTable {
    table: Arc<FrameTable>,
    serial: u64,
}

#[derive(Debug, Default)]
struct CacheState {
    tables: HashMap<FileKey, CachedTable>,
    distrusted: HashMap<FileKey, ()>,
    serial: u64,
}

const CACHE_CAPACITY: usize = 64;

impl TableCache {
    /// An empty cache.
    pub fn new() -> TableCache {
        TableCache::default()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, CacheState> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The table of `source`: the cached one, or one built now (from packets, or by decoding
    /// when this cache was told the packets lie) and kept.
    pub fn table(&self, source: &Source) -> Result<Arc<FrameTable>> {
        self.table_or_scan(source, |_| Ok(None))
    }

    /// The table of `source` (see [`table`](Self::table)); when it must be built, `open`
    /// opens the source to build it from (`Ok(None)`: it is opened here). The executor opens
    /// the source once, takes the stream's description from that input, and the table is
    /// scanned from the same input.
    pub(crate) fn table_or_scan(
        &self,
        source: &Source,
        open: impl FnOnce(&Source) -> Result<Option<VideoInput>>,
    ) -> Result<Arc<FrameTable>> {
        let key = FileKey::of(source)?;
        let force_decode = {
            let cache = self.state();
            if let Some(entry) = cache.tables.get(&key) {
                return Ok(entry.table.clone());
            }
            cache.distrusted.contains_key(&key)
        };
        let mut input = match open(source)? {
            Some(input) => input,
            None => VideoInput::open(source)?,
        };
        let table = Arc::new(if force_decode {
            FrameTable::scan_by_decoding(&mut input, "a decoder disagreed with the packets".into())?
        } else {
            FrameTable::scan_input(&mut input)?
        });
        let mut cache = self.state();
        if cache.tables.len() >= CACHE_CAPACITY {
            // Forget the oldest half; tables are cheap to rebuild from packets.
            let mut keys: Vec<(u64, FileKey)> = cache
                .tables
                .iter()
                .map(|(k, v)| (v.serial, k.clone()))
                .collect();
            keys.sort_by_key(|(serial, _)| *serial);
            for (_, k) in keys.into_iter().take(CACHE_CAPACITY / 2) {
                cache.tables.remove(&k);
            }
        }
        cache.serial += 1;
        let serial = cache.serial;
        cache.tables.insert(
            key,
            CachedTable {
                table: table.clone(),
                serial,
            },
        );
        Ok(table)
    }

    /// Forgets the table of `source` and remembers that its packets lie: the next
    /// [`table`](Self::table) builds it by decoding.
    pub fn distrust(&self, source: &Source) {
        if let Ok(key) = FileKey::of(source) {
            let mut cache = self.state();
            cache.tables.remove(&key);
            cache.distrusted.insert(key, ());
        }
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
    fn damage_summary_reads_well() {
        let d = Damage {
            undecodable_packets: vec![
                DamagedPacket {
                    time_s: Some(12.4),
                    after_frame: Some(309),
                    pos: 100,
                },
                DamagedPacket {
                    time_s: None,
                    after_frame: Some(309),
                    pos: 200,
                },
            ],
            concealed_frames: vec![310, 311],
            unreadable: None,
            lost_packets: Vec::new(),
        };
        assert_eq!(
            d.summary(),
            "2 damaged packets could not be decoded near 12.40 s; 2 frames decoded with errors concealed (first: frame 310)"
        );
        let tail = Damage {
            unreadable: Some(UnreadableTail {
                after_frame: 366,
                last_packet_pos: 1000,
                error: "Invalid data found when processing input".into(),
            }),
            ..Damage::default()
        };
        assert!(!tail.is_empty());
        assert_eq!(
            tail.summary(),
            "the file cannot be read after frame 366 (Invalid data found when processing input): the video ends there, as in ffmpeg"
        );
    }
}
