//! Building a frame table by decoding, where packets cannot be trusted to be frames (no
//! timestamps, repeated ones, packed B-frames): the decoder's own frames and best-effort
//! timestamps, missing ones filled at the frame rate as ffmpeg does, identity by packet
//! position where positions are distinct; damage found on the way is recorded.

use std::collections::HashMap;

use ffmpeg_next as ffmpeg;

use super::scan::{ticks_per_frame, too_many_frames, MAX_FRAMES};
use super::{Damage, DamagedPacket, FrameEntry, FrameTable, Identity, TimesFrom, UnreadableTail};
use crate::error::{Error, Result};
use crate::media::ffi;
use crate::media::frame::{size_is_damage, SizeChange, MAX_SIZE_CHANGES};
use crate::media::input::{read_error_ends_input, read_packet, VideoInput};

impl FrameTable {
    /// Decodes the whole stream of a freshly opened `input` and records the frames the
    /// decoder returns, with its timestamps. `reason` says why (for probe and sidecars).
    ///
    /// A frame-threaded decoder reports a packet it rejects a few packets late, and conceals
    /// differently from run to run: where the first decode meets damage, the stream is decoded
    /// again with one thread, which places the damage exactly and gives the pictures every
    /// reader of the table then decodes (readers of a damaged stream use one thread too).
    pub fn scan_by_decoding(input: &mut VideoInput, reason: String) -> Result<FrameTable> {
        let table = Self::scan_by_decoding_with(input, reason.clone(), 0)?;
        if !table.damage.decode_depends_on_threads() {
            return Ok(table);
        }
        let mut fresh = VideoInput::open(&input.source, &input.call)?;
        Self::scan_by_decoding_with(&mut fresh, reason, 1)
    }

    /// [`scan_by_decoding`](Self::scan_by_decoding) with this many decoder threads (0: one
    /// per core).
    fn scan_by_decoding_with(
        input: &mut VideoInput,
        reason: String,
        threads: usize,
    ) -> Result<FrameTable> {
        let path = input.path.clone();
        let index = input.video.index;
        input.keep_only_streams(&[index]);
        input.call.count(crate::call::tally::Event::DecodeScan);
        let tb = input.video.time_base;
        let rate = input.video.best_frame_rate();
        let stream_size = (input.video.stored_width, input.video.stored_height);
        // (Declared before the decoder, which points at it: dropped after it.)
        let mut conceal = crate::media::compat::ConcealWatch::default();
        let mut decoder = crate::media::decode::open_decoder(input, threads, true, &conceal)?;
        let _held = input.call.decoder_opened(threads);
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
                        let size = (frame.width(), frame.height());
                        raw_frames.push(RawFrame {
                            size,
                            timestamp: frame.timestamp(),
                            duration: props.duration,
                            pos: crate::media::compat::frame_packet_position(&frame),
                            key: frame.is_key(),
                            // (FFmpeg 4 may conceal without flagging: media::compat.)
                            damaged: frame.is_corrupt()
                                || frame.has_decode_errors()
                                || conceal.concealed_since_last()
                                || size_is_damage(stream_size, size),
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
        let mut corrupt: Vec<(i64, Option<i64>, i64)> = Vec::new();
        let mut after_errors = super::scan::DemuxerErrorMarks::default();
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
            if let (true, Some(pts)) = (packet.is_corrupt(), packet.pts()) {
                corrupt.push((pts, packet.dts(), pos));
            }
            let pts = packet.pts().or(packet.dts()).unwrap_or(i64::MIN);
            after_errors.note(&input.context, pts, packet.dts(), pos);
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
        let mut truncated_images = Vec::new();
        if let Some(seq) = input.sequence.clone() {
            // Frame `i` of a sequence is file `i` whatever decodes: a file that gives no
            // picture is an error naming it, as every reader of the sequence says.
            truncated_images = super::scan::truncated_images(&seq, &input.call)?;
            let missing = (0..seq.count)
                .find(|&i| raw_frames.get(i).map(|f| f.timestamp) != Some(Some(i as i64)));
            if let Some(i) = missing {
                let why = truncated_images
                    .iter()
                    .find(|t| t.frame == i)
                    .map(|t| format!(": {}", t.why))
                    .unwrap_or_default();
                return Err(Error::corrupt(
                    &seq.file_path(i),
                    format!("(frame {i} of {})", path.display()),
                    format!("the image does not decode to a picture{why}"),
                ));
            }
        }
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
        // 0), and always increasing. A lone timestamp far ahead of its neighbours (a flipped
        // bit in a Matroska block's time: 12.342 s between 4.117 s and 4.183 s) is taken as
        // missing, so the frames after it keep their own times instead of following it.
        let outliers = lone_jumps_ahead(&raw_frames);
        let step_of = |duration: i64| -> i64 {
            if duration > 0 {
                duration
            } else {
                rate.map(|r| ticks_per_frame(tb, r)).unwrap_or(1).max(1)
            }
        };
        let mut entries = Vec::with_capacity(raw_frames.len());
        let mut previous: Option<(i64, i64)> = None; // (pts, step)
        for (i, raw) in raw_frames.iter().enumerate() {
            let step = step_of(raw.duration);
            let timestamp = raw.timestamp.filter(|_| !outliers.contains(&i));
            let pts = match (timestamp, previous) {
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
                    // Up to the keyframe after the next picture: a keyframe right after the
                    // damage does not end it for a frame-threaded decoder (FFmpeg 9.0's Theora
                    // decoder carried it into frames 140-141 after keyframe 139).
                    suspect_frames: [
                        decoded_before,
                        table.keyframe_at_or_after(decoded_before + 1),
                    ],
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
            corrupt_packets: Vec::new(),
            demuxer_errors: Vec::new(),
            truncated_images,
        };
        table.size_changes = raw_frames
            .windows(2)
            .enumerate()
            .filter(|(_, w)| w[0].size != w[1].size)
            .take(MAX_SIZE_CHANGES)
            .map(|(i, w)| SizeChange::new(i + 1, w[0].size, w[1].size))
            .collect();
        table.damage.corrupt_packets = table.corrupt_packets(&corrupt);
        table.damage.demuxer_errors = table.demuxer_errors(&after_errors.marks);
        if input.video.codec == "theora" {
            table.damage.lost_packets = table.gaps_in_frame_numbers();
        }
        Ok(table)
    }
}

/// The frames whose timestamp jumps ahead of both neighbours' while the next frame's lies
/// between the previous one's and it: the stream goes on from before the jump, so the jump is
/// the frame's own error (a damaged timestamp), not a step of the stream's clock.
fn lone_jumps_ahead(raw_frames: &[RawFrame]) -> std::collections::HashSet<usize> {
    let mut out = std::collections::HashSet::new();
    for i in 1..raw_frames.len().saturating_sub(1) {
        if let (Some(before), Some(t), Some(after)) = (
            raw_frames[i - 1].timestamp,
            raw_frames[i].timestamp,
            raw_frames[i + 1].timestamp,
        ) {
            if before < after && after < t {
                out.insert(i);
            }
        }
    }
    out
}

/// A decoded frame's facts while a table is built by decoding.
struct RawFrame {
    timestamp: Option<i64>,
    duration: i64,
    pos: i64,
    key: bool,
    damaged: bool,
    /// The picture's width and height.
    size: (u32, u32),
}
