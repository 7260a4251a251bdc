//! Building a frame table from packets (no decoding): one scan of the video packets records
//! each frame's timestamps, keyframe flag and position, and for H.264 in avcC form each
//! packet's decoding order and IDR flag ([`CodedPackets`]) and the reference graph
//! (`bitstream::h264_refs`); an image sequence's table from its files. The helpers the table
//! built by decoding shares (frame limits, fallback durations) are here too.

use std::path::Path;
use std::sync::Arc;

use ffmpeg_next as ffmpeg;

use super::{
    CodedPacket, CodedPackets, CorruptPacket, Damage, DemuxerErrors, FirstPacket, FrameEntry,
    FrameTable, Identity, LostPackets, TableCache, TimesFrom, TruncatedImage, UnreadableTail,
};
use crate::call::context::CallContext;
use crate::error::{Error, Result};
use crate::media::ffi;
use crate::media::input::{read_error_ends_input, read_packet, VideoInput};
use crate::media::source::{ImageSequence, Source};
use crate::vocab::time::Time;
use crate::vocab::Ratio;

/// The indices of `input`'s audio streams.
fn audio_streams(input: &VideoInput) -> Vec<usize> {
    input
        .context
        .streams()
        .filter(|s| s.parameters().medium() == ffmpeg::media::Type::Audio)
        .map(|s| s.index())
        .collect()
}

/// The facts of `packet` for [`CodedPackets`] (`length_size`: the avcC record's NAL length
/// size).
pub(crate) fn coded_packet(
    packet: &ffmpeg::Packet,
    length_size: usize,
) -> std::result::Result<CodedPacket, String> {
    let Some(pts) = packet.pts() else {
        return Err("a video packet has no presentation timestamp".into());
    };
    let data = packet.data().unwrap_or(&[]);
    let nals = crate::media::bitstream::h264::split_length_prefixed(data, length_size)
        .map_err(|e| format!("a video packet is not length-prefixed H.264: {e}"))?;
    Ok(CodedPacket {
        pts,
        dts: packet.dts().unwrap_or(pts),
        idr: nals.iter().any(|n| {
            crate::media::bitstream::h264::nal_type(n) == crate::media::bitstream::h264::NAL_IDR
        }),
    })
}

/// Frames at most a table built by decoding may hold before giving up (a 24-hour video at
/// 240 fps); bounds memory for hostile input.
pub(crate) use crate::vocab::MAX_FRAMES;

/// The video packets a scan read after the demuxer logged errors (see [`DemuxerErrors`]):
/// `(pts, dts, pos, errors)` each, the errors logged since the video packet before (those
/// logged while the input was opened and probed count before the first).
#[derive(Default)]
pub(super) struct DemuxerErrorMarks {
    pub(super) marks: Vec<(i64, Option<i64>, i64, u64)>,
    seen: u64,
}

impl DemuxerErrorMarks {
    /// Called for each video packet read from `input`: marks it when the demuxer logged
    /// errors since the last call.
    pub(super) fn note(
        &mut self,
        input: &crate::media::ffi::OpenedInput,
        pts: i64,
        dts: Option<i64>,
        pos: i64,
    ) {
        let now = input.demuxer_errors();
        if now > self.seen {
            self.marks.push((pts, dts, pos, now - self.seen));
            self.seen = now;
        }
    }
}

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
        let mut input = VideoInput::open(path, &CallContext::new())?;
        Self::scan_input(&mut input)
    }

    /// Builds the table from `input`'s packets, or by decoding when the packets cannot be
    /// trusted (see the module comment). `input` must be freshly opened. An image sequence's
    /// table is its file list (see [`FrameTable::of_image_sequence`]). The scan is counted on
    /// the tally of the call the input was opened for, and stops when that call is cancelled.
    pub fn scan_input(input: &mut VideoInput) -> Result<FrameTable> {
        if let Some(seq) = input.sequence.clone() {
            return Self::of_image_sequence(input, &seq);
        }
        let index = input.video.index;
        // Each audio stream is read up to its first packet where a rewind of this input
        // needs that packet as proof (`media::rewind`), then discarded as the others are.
        let mut audio_to_record: Vec<usize> =
            if crate::media::demuxer_kind::needs_first_audio_packets(input) {
                audio_streams(input)
            } else {
                Vec::new()
            };
        let mut first_audio_packets = Vec::new();
        let keep: Vec<usize> = std::iter::once(index)
            .chain(audio_to_record.iter().copied())
            .collect();
        input.keep_only_streams(&keep);
        input.call.count(crate::call::tally::Event::PacketScan);
        // H.264 in avcC form: its packets in decoding order with their IDR flags, for smart
        // encoding.
        let avcc = if input.video.codec == "h264" {
            input.context.stream(index).and_then(|s| {
                let extradata = ffi::parameters_extradata(&s.parameters());
                crate::media::bitstream::h264::AvcC::parse(&extradata).ok()
            })
        } else {
            None
        };
        let length_size = avcc.as_ref().map(|a| a.length_size);
        let mut analyser = avcc
            .as_ref()
            .map(crate::media::bitstream::h264_refs::Analyser::new);
        let mut coded: Option<CodedPackets> = length_size.map(|_| Ok(Vec::new()));
        let mut entries = Vec::new();
        let mut discarded = 0usize;
        let mut untrusted: Option<String> = None;
        let mut unreadable: Option<UnreadableTail> = None;
        let mut corrupt: Vec<(i64, Option<i64>, i64)> = Vec::new();
        let mut after_errors = DemuxerErrorMarks::default();
        loop {
            let packet = match read_packet(&mut input.context) {
                Ok(Some(p)) => p,
                Ok(None) => break,
                Err(ffmpeg::Error::Exit)
                    if crate::media::source::is_url(&input.path) && !input.call.cancelled() =>
                {
                    return Err(crate::media::source::network_error(
                        &input.path,
                        ffmpeg::Error::Exit,
                        input.context.network_verdict(),
                        &input.call,
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
                if let Some(at) = audio_to_record.iter().position(|&a| a == packet.stream()) {
                    first_audio_packets.push(FirstPacket {
                        stream: packet.stream(),
                        pos: packet.position() as i64,
                        size: packet.size(),
                        pts: packet.pts(),
                        dts: packet.dts(),
                    });
                    audio_to_record.swap_remove(at);
                    ffi::set_stream_discard(&mut input.context, packet.stream(), true);
                }
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
                    match crate::media::bitstream::h264::split_length_prefixed(data, size) {
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
            if packet.is_corrupt() {
                corrupt.push((pts, packet.dts(), packet.position() as i64));
            }
            after_errors.note(&input.context, pts, packet.dts(), packet.position() as i64);
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
            let mut fresh = VideoInput::open(&input.source, &input.call)?;
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
        table.damage.corrupt_packets = table.corrupt_packets(&corrupt);
        table.damage.demuxer_errors = table.demuxer_errors(&after_errors.marks);
        table.first_audio_packets = first_audio_packets;
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

    /// The table's view of the packets the demuxer marked corrupt (`(pts, dts, pos)` each):
    /// the frame each holds and the frames decoded from it on up to the next keyframe (in
    /// presentation order those start at the first frame after the previous keyframe that is
    /// decoded no earlier than it: B-frames shown before a damaged P-frame refer to it).
    pub(super) fn corrupt_packets(
        &self,
        packets: &[(i64, Option<i64>, i64)],
    ) -> Vec<CorruptPacket> {
        let mut out = Vec::new();
        for &(pts, dts, pos) in packets {
            let Some(frame) = self.index_of_pts(pts) else {
                continue;
            };
            out.push(CorruptPacket {
                frame,
                pos,
                suspect_frames: self.decoded_from(frame, dts.unwrap_or(pts)),
            });
        }
        out
    }

    /// The table's view of the video packets read after the demuxer logged errors
    /// (`(pts, dts, pos, errors)` each; see [`DemuxerErrors`]): the frame each holds (found by
    /// its position, else its pts) and the frames decoded from it on up to the next keyframe.
    pub(super) fn demuxer_errors(
        &self,
        marks: &[(i64, Option<i64>, i64, u64)],
    ) -> Vec<DemuxerErrors> {
        let mut out = Vec::new();
        for &(pts, dts, pos, errors) in marks {
            let frame = (pos >= 0)
                .then(|| self.index_of_pos(pos))
                .flatten()
                .or_else(|| self.index_of_pts(pts));
            let Some(frame) = frame else {
                continue;
            };
            out.push(DemuxerErrors {
                frame,
                pos,
                errors,
                suspect_frames: self.decoded_from(frame, dts.unwrap_or(pts)),
            });
        }
        out
    }

    /// The frames decoded from frame `frame` (decoded at `decoded_at`) on, up to the next
    /// keyframe, in presentation order (half-open): they start at the first frame after the
    /// previous keyframe that is decoded no earlier than it (B-frames shown before a damaged
    /// P-frame refer to it).
    fn decoded_from(&self, frame: usize, decoded_at: i64) -> [usize; 2] {
        let key = self.keyframe_at_or_before(frame);
        let start = (key..=frame)
            .find(|&i| {
                let e = &self.entries[i];
                i == frame || e.dts.unwrap_or(e.pts) >= decoded_at
            })
            .unwrap_or(frame);
        [start, self.keyframe_at_or_after(frame + 1)]
    }

    /// Gaps in a stream of a codec with a constant frame rate by design (Theora: a dropped
    /// frame is an empty packet, still stamped): a step longer than the typical one is
    /// missing frames. See [`LostPackets`].
    pub(super) fn gaps_in_frame_numbers(&self) -> Vec<LostPackets> {
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
    /// frame a keyframe. No file is read in full; the size in every image's header is checked
    /// against the first frame's, since the frames of one video share a size (types whose
    /// header is not read here are checked as they decode), and a JPEG or PNG cut short is
    /// damage (`TruncatedImage`: its last bytes are read, the whole file only where they are
    /// not the image's end).
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
        let truncated = truncated_images(seq, &input.call)?;
        let entries = (0..seq.count as i64)
            .map(|i| FrameEntry {
                pts: i,
                dts: Some(i),
                duration: 1,
                key: true,
                pos: -1,
            })
            .collect();
        let mut table =
            Self::from_entries(tb, entries, 0, Some(seq.rate.as_ratio()), Some(Time::ZERO));
        table.damage.truncated_images = truncated;
        Ok(table)
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

    pub(super) fn assemble(
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
            size_changes: Vec::new(),
            fallback_frame_duration,
            by_position,
            coded: None,
            refs: None,
            first_audio_packets: Vec::new(),
        }
    }
}

/// Checks that every image of `seq` has the size `size` (the first frame's, as FFmpeg read
/// it), reading only headers (JPEG, PNG, TIFF, BMP, WebP); a file whose header is unreadable
/// is an error naming it. Other image types are left to the decoder (see `FrameReader`).
fn check_image_sizes(seq: &ImageSequence, size: (u32, u32)) -> Result<()> {
    for i in 0..seq.count {
        let path = seq.file_path(i);
        let Some(found) = crate::media::images::header_size(&path)? else {
            continue;
        };
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

/// The images of `seq` whose files are cut short (`media::images::whole`).
pub(super) fn truncated_images(
    seq: &ImageSequence,
    ctx: &CallContext,
) -> Result<Vec<TruncatedImage>> {
    let mut out = Vec::new();
    for i in 0..seq.count {
        if ctx.cancelled() {
            return Err(Error::Cancelled);
        }
        if let Some(why) = crate::media::images::whole::file_truncation(&seq.file_path(i))? {
            out.push(TruncatedImage {
                frame: i,
                file: seq.file_name(i),
                why: why.to_string(),
            });
        }
    }
    Ok(out)
}

pub(super) fn too_many_frames(path: &Path) -> Error {
    Error::corrupt(
        path,
        "while reading packets",
        format!("the video has more than {MAX_FRAMES} frames, more than vidprep handles"),
    )
}

/// Ticks of `tb` per frame at `rate` (at least 1).
pub(super) fn ticks_per_frame(tb: Ratio, rate: Ratio) -> i64 {
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
