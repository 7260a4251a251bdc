//! Decoding: [`FrameReader`] yields a video's frames in presentation order with exact
//! timestamps and 0-based indices (as its [`FrameTable`] numbers them), upright and in the
//! pipeline's pixel layout. It seeks to a frame index or to the frame shown at a time by
//! seeking to the keyframe before it and decoding forward.
//!
//! Every frame it returns is proven to be the frame it says: after a seek, a decoded picture
//! is recognised by its presentation timestamp or by the byte position of its packet (see
//! [`Identity`]), never by assuming where the seek landed; while decoding on, each picture
//! must be the next frame of the table. When a seek cannot be proven, the reader decodes from
//! an earlier keyframe, then from the start of the file counting frames. When the decoder
//! disagrees with a table built from packets (a packet that does not decode, a frame the
//! packets never listed), it reports [`Error::TableMismatch`]; the caller then tells its
//! [`TableCache`](crate::media::table::TableCache) to rebuild the table by decoding (the
//! executor does, and runs the plan again once).
//!
//! Damaged input is decoded as ffmpeg does: pictures the decoder marks as damaged (errors
//! concealed) are returned with [`Frame::damaged`] set and counted, unless
//! [`DecodeOptions::strict`] asks for an error instead.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ffmpeg::codec::discard::Discard;
use ffmpeg::frame::Video as VideoFrame;
use ffmpeg::util::error::EAGAIN;
use ffmpeg_next as ffmpeg;

use crate::call::context::CallContext;
use crate::error::{Error, Result};
use crate::media::demux::SharedDemuxer;
use crate::media::ffi;
use crate::media::frame::{
    is_full_range_yuv, keeps_own_rgb, rotate_rgb24, rotate_yuv420, share, Converter, Frame,
    PIPELINE_FORMAT,
};
use crate::media::input::{VideoInput, VideoStreamInfo};
use crate::media::pool::InputPool;
use crate::media::source::Source;
use crate::media::table::{FrameTable, Identity};
use crate::vocab::time::Time;
use crate::vocab::Rotation;

/// How a [`FrameReader`] decodes.
#[derive(Clone, Debug)]
pub struct DecodeOptions {
    /// Rotate frames upright as players show them (the display matrix). Default true.
    pub upright: bool,
    /// Decoder threads; 0 lets ffmpeg choose (one per core).
    pub threads: usize,
    /// Treat a picture the decoder marks as damaged as an error instead of returning it.
    pub strict: bool,
    /// Skip H.264's in-loop deblocking filter: a cheaper decode whose pictures differ
    /// slightly from the true ones (blockier). For analysis only, never for outputs.
    pub skip_loop_filter: bool,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            upright: true,
            threads: 0,
            strict: false,
            skip_loop_filter: false,
        }
    }
}

/// Where the reader must get to before it returns frames again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    /// Drop frames until the one recognised as frame `index`; `retries` counts seeks to
    /// earlier keyframes so far.
    Identified { index: usize, retries: u8 },
    /// Drop frames until `index` frames have been decoded since the start of the file.
    Count { index: usize },
}

/// Decoded pictures that cannot be recognised before the reader gives up on a seek and
/// decodes from the start instead.
const MAX_UNRECOGNISED: usize = 64;

/// The demuxer a [`FrameReader`] reads: its own, or one whose audio packets go to the
/// soundtrack's reader ([`crate::media::demux`]).
enum ReaderInput {
    Own(VideoInput),
    /// Shared with the soundtrack's reader of this source (offered on it until taken).
    Shared(SharedInput),
}

/// The video side of an input shared with the soundtrack's reader, offered on the stream's
/// input pool.
struct SharedInput(Arc<SharedDemuxer>, Arc<InputPool>);

impl Drop for SharedInput {
    fn drop(&mut self) {
        // The video side is done: its packets are no longer kept, and a reader that did not
        // take the input by now opens its own.
        self.0.video_done();
        self.1.withdraw(&self.0);
    }
}

/// Decodes one video stream frame by frame.
pub struct FrameReader {
    path: PathBuf,
    source: Source,
    /// The call the reader works for: its decoding counts on the call's tally, and its
    /// reopens are the call's.
    call: CallContext,
    input: ReaderInput,
    /// The video stream's description (as the input gave it).
    video: VideoStreamInfo,
    /// For an image sequence: its folder, naming and rate.
    sequence: Option<Arc<crate::media::source::ImageSequence>>,
    decoder: ffmpeg::decoder::Video,
    options: DecodeOptions,
    table: Arc<FrameTable>,
    converter: Converter,
    /// RGB-coded pictures to RGB24, for rotating them.
    rgb_converter: Converter,
    /// Index the next frame decoded in sequence will have (known once positioned).
    next_index: Option<usize>,
    target: Option<Target>,
    /// True while decoding from the start of the file without a seek in between.
    from_start: bool,
    /// The input was read before this reader got it ([`FrameReader::from_used_input`]) and
    /// has not been positioned since: its next packet is not the first.
    unpositioned: bool,
    /// Packets read before this reader got its input, to be decoded before reading on: the
    /// first packets of an input rewound to its start ([`crate::media::rewind`]).
    pending: std::collections::VecDeque<ffmpeg::Packet>,
    /// After a seek, packets are skipped until the first keyframe.
    need_keyframe: bool,
    packets_done: bool,
    eof_sent: bool,
    decoded: usize,
    unrecognised: usize,
    /// When set, only frames with these identity keys (pts or packet positions) are wanted:
    /// the decoder may skip non-reference frames that are not among them.
    wanted: Option<Arc<HashSet<i64>>>,
    /// With `wanted`: packets (by pts) that are not sent to the decoder at all, since no
    /// wanted frame depends on them (H.264, `bitstream::h264_refs`).
    left_out: Option<Arc<HashSet<i64>>>,
    /// With `wanted`: targets (by pts) after whose packet the decoder is drained, since no
    /// other wanted frame comes before the next keyframe: the target comes out without
    /// decoding the frames its reordering delay would otherwise wait for.
    drain_after: Option<Arc<HashSet<i64>>>,
    /// The decoder was drained after a target: the next frame needs a seek.
    drained: bool,
    /// Packets left out so far (see `left_out`).
    packets_left_out: usize,
    damaged_frames: Vec<usize>,
    failed_packets: usize,
    /// Where the reader was positioned since it last returned a frame (or was asked for one):
    /// each keyframe sought (with `cautious`), and `None` for the start of the file. Reading
    /// from a place it read from before decodes the same packets again, so it is refused
    /// instead: every read loop makes progress or stops ([`FrameReader::no_progress`]).
    positioned_since_frame: Vec<Option<(usize, bool)>>,
    /// Counts the decoder and its threads on the call's tally while it is open.
    _held: crate::call::tally::DecoderHeld,
    /// Pictures the decoder concealed without saying so (FFmpeg 4); declared after the
    /// decoder, which points at it, so that it is dropped after it.
    conceal: crate::media::compat::ConcealWatch,
    /// A picture decoded since the last keyframe was damaged: the pictures decoded from it up
    /// to the next keyframe refer to it, and are damaged too (a concealed P frame's errors
    /// show in every frame after it; after a seek they may differ from a full decode's).
    tainted: bool,
}

impl FrameReader {
    /// Opens `path` (a video file, an image folder or pattern with a rate of its own, or an
    /// http(s) URL) with its frame table, built now (see [`FrameReader::open_in`] for one
    /// built once and shared).
    pub fn open(path: &Path) -> Result<FrameReader> {
        Self::open_source(&Source::from(path), DecodeOptions::default())
    }

    /// Opens `path` with its frame table, built now, decoding as `options` say.
    pub fn open_with(path: &Path, options: DecodeOptions) -> Result<FrameReader> {
        Self::open_source(&Source::from(path), options)
    }

    /// Opens a source with the rate the request gives it (an image folder or pattern needs
    /// one), with its frame table, built now, decoding as `options` say.
    pub fn open_source(source: &Source, options: DecodeOptions) -> Result<FrameReader> {
        let table = FrameTable::for_source(source)?;
        Self::open_with_table(source, options, table)
    }

    /// Opens a source with its table from `tables` (built now unless it is there), decoding as
    /// `options` say.
    pub fn open_in(
        tables: &crate::media::table::TableCache,
        source: &Source,
        options: DecodeOptions,
    ) -> Result<FrameReader> {
        let table = tables.table(source)?;
        Self::open_with_table(source, options, table)
    }

    /// Opens a source with a table already built for it.
    pub fn open_with_table(
        source: impl Into<Source>,
        options: DecodeOptions,
        table: Arc<FrameTable>,
    ) -> Result<FrameReader> {
        Self::open_with_table_in(source, options, table, &CallContext::new())
    }

    /// Opens a source with a table already built for it (as [`open_with_table`]) for the
    /// call `ctx`: its opens and decoding count on the call's tally, and its network waits
    /// stop when the call is cancelled.
    ///
    /// [`open_with_table`]: FrameReader::open_with_table
    pub fn open_with_table_in(
        source: impl Into<Source>,
        options: DecodeOptions,
        table: Arc<FrameTable>,
        ctx: &CallContext,
    ) -> Result<FrameReader> {
        let source = source.into();
        let input = VideoInput::open(&source, ctx)?;
        Self::with_input(source, input, false, options, table, None, None)
    }

    /// Opens a source for a full decode from its start (as [`open_with_table`]), offering
    /// its input on `pool` to the soundtrack's reader of the same source ([`InputPool`]), so
    /// that the audio packets come from the same reading of the file instead of a second
    /// open. Only a local file whose table found no damage is shared (a URL's reads and a
    /// damaged file's read errors stay each reader's own).
    ///
    /// [`open_with_table`]: FrameReader::open_with_table
    pub(crate) fn open_sharing_audio(
        source: &Source,
        options: DecodeOptions,
        table: Arc<FrameTable>,
        pool: &Arc<InputPool>,
    ) -> Result<FrameReader> {
        let input = VideoInput::open(source, pool.call())?;
        let share = may_share_audio(&input, &table).then_some(pool);
        Self::with_input(source.clone(), input, false, options, table, share, None)
    }

    /// A reader for a full decode from the start of the file, as [`open_with_table_in`] (or,
    /// with `share_audio`, the pool to share on, [`open_sharing_audio`]) opens, on the input `table` was scanned
    /// from when it is given and that is proven exact: an input whose packets were not read
    /// is as a fresh one; one the scan read is rewound to its start where the demuxer's seek
    /// there is proven to read on as a fresh input ([`crate::media::rewind`]). Elsewhere the
    /// used input is let go and the source opened again.
    ///
    /// [`open_with_table_in`]: FrameReader::open_with_table_in
    /// [`open_sharing_audio`]: FrameReader::open_sharing_audio
    pub(crate) fn for_full_decode(
        source: &Source,
        used: Option<crate::media::table::UsedInput>,
        options: DecodeOptions,
        table: Arc<FrameTable>,
        share_audio: Option<&Arc<InputPool>>,
        ctx: &CallContext,
    ) -> Result<FrameReader> {
        if let Some(used) = used {
            let share = share_audio.filter(|_| may_share_audio(&used.input, &table));
            // (A URL's unread input is not kept waiting for the decode: a fresh one is opened.)
            if !used.read && used.input.kind == crate::media::source::SourceKind::File {
                return Self::with_input(
                    source.clone(),
                    used.input,
                    false,
                    options,
                    table,
                    share,
                    None,
                );
            }
            let audio =
                share.and_then(|_| crate::media::input::best_audio_stream(&used.input.context));
            if let Some(rewound) = crate::media::rewind::rewind(used.input, &table, audio) {
                let crate::media::rewind::Rewound {
                    input,
                    video,
                    audio: audio_packets,
                } = rewound;
                return Self::with_input(
                    source.clone(),
                    input,
                    false,
                    options,
                    table,
                    audio.and(share),
                    Some((video, audio_packets)),
                );
            }
        }
        match share_audio {
            Some(pool) => Self::open_sharing_audio(source, options, table, pool),
            None => Self::open_with_table_in(source, options, table, ctx),
        }
    }

    /// A reader of the input `table` was built from (the executor's one open of an item's
    /// source), instead of opening the source again. An input whose packets were read is
    /// positioned by the first seek; where a reader opened now would decode from the start
    /// of the file (the target is before the second keyframe) and a seek to the first
    /// keyframe could decode otherwise (the stream does not start on a keyframe that comes
    /// first in decoding order), or where the input cannot seek, the source is opened again
    /// then: the frames are the same as a fresh reader's, proven by the same identity checks.
    pub(crate) fn from_used_input(
        used: crate::media::table::UsedInput,
        options: DecodeOptions,
        table: Arc<FrameTable>,
    ) -> Result<FrameReader> {
        let source = used.input.source.clone();
        Self::with_input(source, used.input, used.read, options, table, None, None)
    }

    /// The reader's input when it is its own (not shared with a soundtrack's reader), for
    /// whatever reads the same source next on this thread (smart encoding's copied GOPs,
    /// which position it by a seek): the source is then opened once for both.
    pub(crate) fn into_input(self) -> Option<VideoInput> {
        match self.input {
            ReaderInput::Own(input) => Some(input),
            ReaderInput::Shared(_) => None,
        }
    }

    /// A reader of `input`; `read`: its packets were read before (see
    /// [`from_used_input`](Self::from_used_input)); `share_audio`: the pool on which to offer
    /// it to the soundtrack's reader; `rewound`: it was rewound to its start, and these are
    /// the video and audio packets read since ([`crate::media::rewind`]).
    fn with_input(
        source: Source,
        mut input: VideoInput,
        read: bool,
        options: DecodeOptions,
        table: Arc<FrameTable>,
        share_audio: Option<&Arc<InputPool>>,
        rewound: Option<Queued>,
    ) -> Result<FrameReader> {
        let path = source.path().to_path_buf();
        let index = input.video.index;
        input.keep_only_streams(&[index]);
        let conceal = crate::media::compat::ConcealWatch::default();
        let threads = decoder_threads(&options, &table);
        let decoder = open_decoder(&input, threads, options.skip_loop_filter, &conceal)?;
        let _held = input.call.decoder_opened(threads);
        let (video, sequence, call) = (
            input.video.clone(),
            input.sequence.clone(),
            input.call.clone(),
        );
        let audio = share_audio.and_then(|pool| {
            crate::media::input::best_audio_stream(&input.context).map(|audio| (audio, pool))
        });
        let (video_packets, audio_packets) = rewound.unwrap_or_default();
        let mut pending = std::collections::VecDeque::new();
        let input = match audio {
            Some((audio, pool)) if !read => {
                let shared = Arc::new(SharedDemuxer::with_queued(
                    input,
                    audio,
                    video_packets,
                    audio_packets,
                ));
                pool.offer(&source, shared.clone());
                ReaderInput::Shared(SharedInput(shared, pool.clone()))
            }
            _ => {
                // (Audio packets read along are no one's: this reader reads the video alone.)
                pending = video_packets;
                ReaderInput::Own(input)
            }
        };
        Ok(FrameReader {
            path,
            source,
            call,
            input,
            video,
            sequence,
            decoder,
            options,
            table,
            converter: Converter::to_format(PIPELINE_FORMAT),
            rgb_converter: Converter::to_format(ffmpeg::format::Pixel::RGB24),
            next_index: (!read).then_some(0),
            target: None,
            from_start: !read,
            unpositioned: read,
            pending,
            need_keyframe: false,
            packets_done: false,
            eof_sent: false,
            decoded: 0,
            unrecognised: 0,
            wanted: None,
            left_out: None,
            drain_after: None,
            drained: false,
            packets_left_out: 0,
            damaged_frames: Vec::new(),
            failed_packets: 0,
            positioned_since_frame: Vec::new(),
            _held,
            conceal,
            tainted: false,
        })
    }

    /// Declares that only the frames with these indices will be read (by seeking to each in
    /// increasing order), so the decoder decodes only what they depend on: non-reference
    /// frames that are not wanted are skipped (`AVDISCARD_NONREF`); for H.264 whose
    /// references the table could follow, packets of reference frames no wanted frame depends
    /// on are not sent at all (`bitstream::h264_refs`); and after the packet of the last wanted
    /// frame before a keyframe the decoder is drained, so that frame comes out at once. Only
    /// where frames are recognised by their timestamps: elsewhere a packet may carry a frame
    /// that comes out with a later packet (packed B-frames), so nothing is skipped; nor in a
    /// damaged stream, which is read as the decode from the start reads it: a damaged
    /// picture's header may say nothing refers to it while the decoder carries what it read
    /// on (a VP8 WebM with flipped bits gave other pixels with its unwanted frames skipped).
    pub fn want_only(&mut self, indices: &[usize]) {
        let table = self.table.clone();
        if table.identity != Identity::Pts || table.damage.first_affected_frame().is_some() {
            return;
        }
        let mut sorted: Vec<usize> = indices
            .iter()
            .copied()
            .filter(|&i| i < table.len())
            .collect();
        sorted.sort_unstable();
        sorted.dedup();
        let set: HashSet<i64> = sorted.iter().map(|&i| table.pts(i)).collect();
        // A target with no other target before the next keyframe: drain after it.
        let mut drain = HashSet::new();
        for (n, &i) in sorted.iter().enumerate() {
            let next_key = (i + 1..table.len()).find(|&j| table.entry(j).key);
            let alone = match (sorted.get(n + 1), next_key) {
                (None, _) => true,
                (Some(&next), Some(k)) => next >= k,
                (Some(_), None) => false,
            };
            if alone {
                drain.insert(table.pts(i));
            }
        }
        self.left_out = table
            .ref_graph()
            .map(|g| Arc::new(g.droppable_for(&set)))
            .filter(|s| !s.is_empty());
        self.drain_after = Some(Arc::new(drain));
        self.wanted = Some(Arc::new(set));
    }

    /// Packets not sent to the decoder so far because no wanted frame depends on them.
    pub fn packets_left_out(&self) -> usize {
        self.packets_left_out
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The video stream's description (stored size, rotation, time base, rates).
    pub fn info(&self) -> &VideoStreamInfo {
        &self.video
    }

    /// The rotation applied to frames (none when `upright` is off).
    pub fn applied_rotation(&self) -> Rotation {
        if self.options.upright {
            self.video.rotation
        } else {
            Rotation::None
        }
    }

    /// Size of the frames this reader returns (stored pixels, upright).
    pub fn output_size(&self) -> (u32, u32) {
        self.applied_rotation()
            .displayed_size(self.video.stored_width, self.video.stored_height)
    }

    /// The frame table.
    pub fn table(&self) -> Arc<FrameTable> {
        self.table.clone()
    }

    /// Frames decoded so far, including ones dropped while seeking (a measure of work).
    pub fn frames_decoded(&self) -> usize {
        self.decoded
    }

    /// Frames returned so far that the decoder marked as damaged.
    pub fn damaged_frames(&self) -> &[usize] {
        &self.damaged_frames
    }

    /// Positions the reader so that the next frame returned is frame `index`.
    pub fn seek_to_index(&mut self, index: usize) -> Result<()> {
        // A new request: the places read from for the previous one may be read again.
        self.positioned_since_frame.clear();
        let table = self.table.clone();
        if index >= table.len() {
            return Err(Error::request(
                &self.path,
                format!(
                    "frame {index} is past the end of the video ({} frames)",
                    table.len()
                ),
            ));
        }
        if self.unpositioned {
            self.unpositioned = false;
            // A reader opened now would decode from the start to reach `index`: a seek to
            // the first keyframe does the same only when decoding starts there.
            if table.clean_keyframe_at_or_before(index) == 0 && !self.starts_at_first_keyframe() {
                self.reopen()?;
            }
        }
        // Decoding forward from here is no more work than seeking: do that.
        if let (Some(next), None, false) = (self.next_index, self.target, self.drained) {
            if next <= index && table.clean_keyframe_at_or_before(index) <= next {
                if next < index {
                    self.target = Some(match table.identity {
                        Identity::Sequential if self.from_start => Target::Count { index },
                        _ => Target::Identified { index, retries: 0 },
                    });
                }
                return Ok(());
            }
        }
        if table.identity == Identity::Sequential {
            return self.restart_and_count_to(index);
        }
        let keyframe = table.clean_keyframe_at_or_before(index);
        self.seek_to_keyframe(keyframe, false)?;
        self.target = Some(Target::Identified { index, retries: 0 });
        Ok(())
    }

    /// Positions the reader at the frame shown at time `t` (the one with the largest
    /// presentation time `<= t`).
    pub fn seek_to_time(&mut self, t: Time) -> Result<usize> {
        let table = self.table.clone();
        let index = table.shown_at(t).ok_or_else(|| {
            Error::request(
                &self.path,
                format!(
                    "no frame is shown at {}s: the video's frames run from {}s to {}s",
                    t.as_secs_f64(),
                    table.time(0).as_secs_f64(),
                    table.end_time().as_secs_f64()
                ),
            )
        })?;
        self.seek_to_index(index)?;
        Ok(index)
    }

    /// Seeks the demuxer to `keyframe`. For timestamp identity it seeks to the keyframe's pts
    /// (exact for indexed containers such as MP4 and Matroska); `cautious` seeks to its dts
    /// when lower, which lands no later on containers that search by decoding timestamps
    /// (MPEG-TS). For position identity it seeks by the packet's container timestamp where
    /// there is one, else by its byte position. A demuxer that cannot seek makes the reader
    /// start over from the beginning of the file.
    fn seek_to_keyframe(&mut self, keyframe: usize, cautious: bool) -> Result<()> {
        self.positioning(Some((keyframe, cautious)))?;
        let entry = *self.table.entry(keyframe);
        let stream = self.video.index;
        let identity = self.table.identity;
        let seek = move |input: &mut VideoInput| match identity {
            Identity::Pts => {
                let ts = match entry.dts {
                    Some(d) if cautious => entry.pts.min(d),
                    _ => entry.pts,
                };
                ffi::seek_to_timestamp(&mut input.context, stream, ts)
            }
            Identity::Position => match entry.dts {
                Some(dts) => ffi::seek_to_timestamp(&mut input.context, stream, dts),
                None if entry.pos >= 0 && ffi::can_seek_bytes(&input.context) => {
                    ffi::seek_to_byte(&mut input.context, entry.pos)
                }
                None => Err(-1),
            },
            Identity::Sequential => Err(-1),
        };
        let sought = match &mut self.input {
            ReaderInput::Own(input) => seek(input),
            // The soundtrack goes on by itself from here (it was read from the start).
            ReaderInput::Shared(SharedInput(shared, _)) => shared.position_video(seek),
        };
        self.pending.clear();
        if sought.is_err() {
            return self.reopen_unguarded();
        }
        self.decoder.flush();
        self.drained = false;
        self.need_keyframe = true;
        self.packets_done = false;
        self.eof_sent = false;
        self.next_index = None;
        self.from_start = false;
        self.unrecognised = 0;
        Ok(())
    }

    /// Whether decoding from a seek to the first keyframe gives what decoding from the start
    /// of the file gives (see [`FrameTable::starts_at_first_keyframe`]).
    fn starts_at_first_keyframe(&self) -> bool {
        self.table.starts_at_first_keyframe()
    }

    /// Records that the reader is positioned at `place` (a keyframe sought, `None` the start
    /// of the file) before it returns its next frame; the second time at one place is the
    /// error [`FrameReader::no_progress`] says.
    fn positioning(&mut self, place: Option<(usize, bool)>) -> Result<()> {
        if self.positioned_since_frame.contains(&place) {
            return Err(self.no_progress(place));
        }
        // Decoding starts again at a keyframe (or the start).
        self.tainted = false;
        self.positioned_since_frame.push(place);
        Ok(())
    }

    /// Whether the reader was positioned at `place` since it last returned a frame.
    fn was_positioned_at(&self, place: Option<(usize, bool)>) -> bool {
        self.positioned_since_frame.contains(&place)
    }

    /// The reader would read from `place` a second time without a frame in between: the same
    /// packets would decode the same way, so the frame it is after does not come out of
    /// them. In an image sequence that is the file's fault (named); where the table came from
    /// packets, the table's (rebuilt by decoding); in a table built by decoding, the stream's
    /// damage.
    fn no_progress(&self, place: Option<(usize, bool)>) -> Error {
        let at = self.wanted_index();
        if self.sequence.is_some()
            || self.table.times_from == crate::media::table::TimesFrom::Packets
        {
            return self.mismatch_at(at);
        }
        let from = match place {
            Some((k, _)) => format!("keyframe {k}"),
            None => "the start of the file".into(),
        };
        Error::corrupt(
            &self.path,
            format!("at frame {at}"),
            format!(
                "frame {at} does not decode: reading again from {from}, where the reader read from before, would not reach it (the stream is damaged there{})",
                if self.table.damage.is_empty() {
                    String::new()
                } else {
                    format!(": {}", self.table.damage.summary())
                }
            ),
        )
    }

    /// The frame the reader is after: its target, or the next frame in order.
    fn wanted_index(&self) -> usize {
        match self.target {
            Some(Target::Identified { index, .. } | Target::Count { index }) => index,
            None => self.next_index.unwrap_or(0),
        }
    }

    /// Reopens the file and decoder at the start (once per frame: see
    /// [`FrameReader::positioning`]).
    fn reopen(&mut self) -> Result<()> {
        self.positioning(None)?;
        self.reopen_unguarded()
    }

    /// Reopens the file and decoder at the start, where a seek failed (the seek was counted).
    fn reopen_unguarded(&mut self) -> Result<()> {
        self.unpositioned = false;
        self.tainted = false;
        self.pending.clear();
        let mut input = VideoInput::open(&self.source, &self.call)?;
        let index = input.video.index;
        input.keep_only_streams(&[index]);
        self.decoder = open_decoder(
            &input,
            decoder_threads(&self.options, &self.table),
            self.options.skip_loop_filter,
            &self.conceal,
        )?;
        // (A shared input is let go: the soundtrack may read on in it alone.)
        self.input = ReaderInput::Own(input);
        self.drained = false;
        self.need_keyframe = false;
        self.packets_done = false;
        self.eof_sent = false;
        self.next_index = Some(0);
        self.target = None;
        self.from_start = true;
        self.unrecognised = 0;
        Ok(())
    }

    fn restart_and_count_to(&mut self, index: usize) -> Result<()> {
        self.reopen()?;
        if index > 0 {
            self.target = Some(match self.table.identity {
                Identity::Sequential => Target::Count { index },
                _ => Target::Identified {
                    index,
                    retries: u8::MAX,
                },
            });
        }
        Ok(())
    }

    /// Which frame of the table a decoded picture is, where the table can tell.
    fn recognise(&self, raw: &VideoFrame) -> Option<usize> {
        match self.table.identity {
            Identity::Pts => raw
                .pts()
                .or(raw.timestamp())
                .and_then(|p| self.table.index_of_pts(p)),
            Identity::Position => {
                let pos = crate::media::compat::frame_packet_position(raw);
                (pos >= 0).then(|| self.table.index_of_pos(pos)).flatten()
            }
            Identity::Sequential => None,
        }
    }

    /// Whether `raw`'s size is damage in this stream (see
    /// [`size_is_damage`](crate::media::frame::size_is_damage)).
    fn size_is_damage(&self, raw: &ffmpeg::frame::Video) -> bool {
        crate::media::frame::size_is_damage(
            (self.video.stored_width, self.video.stored_height),
            (raw.width(), raw.height()),
        )
    }

    /// The next frame in presentation order, or `None` at the end of the video.
    pub fn next_frame(&mut self) -> Result<Option<Frame>> {
        if self.unpositioned {
            // Read in order without a seek: from the start, as a reader opened now.
            self.reopen()?;
        }
        loop {
            let raw = self.next_decoded()?;
            // (FFmpeg 4 may conceal errors without flagging the picture: media::compat.)
            let concealed = raw.is_some() && self.conceal.concealed_since_last();
            if let Some(raw) = &raw {
                let damaged = raw.is_corrupt()
                    || raw.has_decode_errors()
                    || concealed
                    || self.size_is_damage(raw);
                // (Every picture decoded counts, those dropped on the way to a target too.)
                self.tainted = damaged || (self.tainted && !raw.is_key());
                // (An image sequence's pictures are independent: no history to differ.)
                if damaged
                    && self.sequence.is_none()
                    && !self.from_start
                    && self.table.times_from == crate::media::table::TimesFrom::Packets
                {
                    // Concealment depends on what was decoded before: after a seek this
                    // picture (and those that refer to it) may differ from a full decode.
                    // Rebuild the table by decoding, which records the damage so that seeks
                    // start before it.
                    let at = match self.target {
                        Some(Target::Identified { index, .. } | Target::Count { index }) => index,
                        None => self.next_index.unwrap_or(0),
                    };
                    return Err(self.mismatch_at(at));
                }
            }
            let Some(raw) = raw else {
                if self.drained {
                    // Drained after the target's packet without the target coming out: as a
                    // seek that missed it (the same seek again would drain the same way).
                    if let Some(Target::Identified { index, retries }) = self.target {
                        self.target = None;
                        self.retry_from_earlier(index, retries)?;
                        continue;
                    }
                    // Drained after a target: go on from a seek.
                    let next = match self.target.take() {
                        Some(Target::Identified { index, .. } | Target::Count { index }) => index,
                        None => match self.next_index {
                            Some(n) if n < self.table.len() => n,
                            _ => return Ok(None),
                        },
                    };
                    let keyframe = self.table.clean_keyframe_at_or_before(next);
                    self.seek_to_keyframe(keyframe, false)?;
                    self.target = Some(Target::Identified {
                        index: next,
                        retries: 0,
                    });
                    continue;
                }
                match self.target.take() {
                    // The seek landed past the target, or the target never decoded.
                    Some(Target::Identified { index, retries }) => {
                        self.retry_from_earlier(index, retries)?;
                        continue;
                    }
                    Some(Target::Count { index }) => return Err(self.mismatch_at(index)),
                    None => {
                        if let Some(next) = self.next_index {
                            if next < self.table.len() {
                                return Err(self.mismatch_at(next));
                            }
                        }
                        return Ok(None);
                    }
                }
            };
            let index = match self.target {
                Some(Target::Count { index }) => {
                    let i = self.next_index.unwrap_or(0);
                    self.next_index = Some(i + 1);
                    if i < index {
                        continue;
                    }
                    self.target = None;
                    i
                }
                Some(Target::Identified { index, retries }) => match self.recognise(&raw) {
                    None => {
                        self.unrecognised += 1;
                        if self.unrecognised > MAX_UNRECOGNISED {
                            self.retry_from_earlier(index, u8::MAX)?;
                        }
                        continue;
                    }
                    Some(j) if j < index => {
                        self.next_index = Some(j + 1);
                        continue;
                    }
                    Some(j) if j == index => {
                        self.target = None;
                        j
                    }
                    Some(_) => {
                        // Landed after the target.
                        self.retry_from_earlier(index, retries)?;
                        continue;
                    }
                },
                None => {
                    let Some(expected) = self.next_index else {
                        return Err(Error::internal(format!(
                            "{}: lost track of the frame position",
                            self.path.display()
                        )));
                    };
                    if self.table.identity != Identity::Sequential {
                        let seen = self.recognise(&raw);
                        if seen != Some(expected) {
                            if self.from_start {
                                return Err(self.mismatch_at(expected));
                            }
                            // After a seek the decoder may lack what it needs: decode this
                            // stretch again from the start of the file.
                            self.restart_and_count_to(expected)?;
                            continue;
                        }
                    }
                    expected
                }
            };
            if index >= self.table.len() {
                return Err(self.mismatch_at(index));
            }
            self.next_index = Some(index + 1);
            if let Some(seq) = &self.sequence {
                let (w, h) = (self.video.stored_width, self.video.stored_height);
                if (raw.width(), raw.height()) != (w, h) {
                    return Err(Error::request(
                        &seq.file_path(index),
                        format!(
                            "is {}x{} but frame 0 of the sequence ({}) is {w}x{h}; the images of one sequence must all have one size",
                            raw.width(),
                            raw.height(),
                            seq.file_name(0)
                        ),
                    ));
                }
            }
            // (A frame after packets the container lost is decoded from incomplete
            // references: damaged, though the decoder cannot tell.)
            let damaged = raw.is_corrupt()
                || raw.has_decode_errors()
                || concealed
                || self.size_is_damage(&raw)
                || self.tainted
                || self.table.damage.suspect(index);
            if damaged {
                if let (true, Some(seq), Some(t)) = (
                    self.options.strict,
                    &self.sequence,
                    self.table.damage.truncated_image(index),
                ) {
                    return Err(Error::corrupt(
                        &seq.file_path(index),
                        format!("(frame {index} of {}, strict)", self.path.display()),
                        format!("the image is damaged: {}", t.why),
                    ));
                }
                if self.options.strict {
                    return Err(Error::corrupt(
                        &self.path,
                        format!("at frame {index}"),
                        "the decoder reports a damaged picture (errors concealed)",
                    ));
                }
                self.damaged_frames.push(index);
            }
            self.positioned_since_frame.clear();
            let rgb = self.rgb_of(&raw)?;
            let image = self.pipeline_image_of(raw)?;
            return Ok(Some(Frame {
                index,
                pts: self.table.pts(index),
                time: self.table.time(index),
                image: crate::media::Picture(image),
                damaged,
                rgb: rgb.map(crate::media::Picture),
            }));
        }
    }

    /// The decoder and the table disagree at frame `index`: whoever holds the table's cache
    /// [`distrust`](crate::media::table::TableCache::distrust)s it. In an image sequence frame `i` is file `i` whatever
    /// decodes, so a file that gives no picture is an error naming it. A URL whose file
    /// changed since the table read it disagrees too: that is the change, reported as one
    /// (a rerun would quietly read the new version).
    fn mismatch_at(&self, index: usize) -> Error {
        if let Some(changed) = self
            .source
            .remote()
            .and_then(|r| r.change_behind_failure(self.source.path(), &self.call))
        {
            return changed;
        }
        if let Some(seq) = &self.sequence {
            let i = index.min(seq.count.saturating_sub(1));
            let why = self
                .table
                .damage
                .truncated_image(i)
                .map(|t| format!(": {}", t.why))
                .unwrap_or_default();
            return Error::corrupt(
                &seq.file_path(i),
                format!("(frame {index} of {})", self.path.display()),
                format!("the image does not decode to a picture{why}"),
            );
        }
        Error::TableMismatch {
            path: self.path.clone(),
            frame: index,
        }
    }

    /// After a seek missed frame `index`: seek to an earlier keyframe, then to the start,
    /// then decode from the start of the file (slow but exact).
    fn retry_from_earlier(&mut self, index: usize, retries: u8) -> Result<()> {
        if retries == u8::MAX {
            // Already decoding from the start: the frame is not in the stream as the table
            // says.
            return Err(self.mismatch_at(index));
        }
        let k = self.table.clean_keyframe_at_or_before(index);
        let mut retries = retries;
        while retries < 2 && self.table.identity != Identity::Sequential {
            let earlier = if retries == 0 {
                self.table.keyframe_at_or_before(k.saturating_sub(1))
            } else {
                0
            };
            // (A rung that reads from where the reader read before is skipped: it would
            // decode the same packets the same way.)
            if !self.was_positioned_at(Some((earlier, true))) {
                self.seek_to_keyframe(earlier, true)?;
                self.target = Some(Target::Identified {
                    index,
                    retries: retries + 1,
                });
                return Ok(());
            }
            retries += 1;
        }
        self.restart_and_count_to(index)
    }

    /// A picture whose RGB must come from itself ([`keeps_own_rgb`], or full-range YUV) as it
    /// came out of the decoder (no pixels copied), upright: kept beside its limited-range YUV
    /// 4:2:0 conversion for exact RGB outputs. `None` for limited-range 8-bit 4:2:0 pictures.
    fn rgb_of(&mut self, raw: &VideoFrame) -> Result<Option<VideoFrame>> {
        let full_range = is_full_range_yuv(raw);
        if !keeps_own_rgb(raw.format()) && !full_range {
            return Ok(None);
        }
        Ok(Some(match self.applied_rotation() {
            // A damaged source's picture is copied, as its pipeline picture is (see
            // pipeline_image_of): what the decoder did not write must not depend on how long
            // a door keeps its frames.
            Rotation::None if full_range && self.table.damage.first_affected_frame().is_some() => {
                raw.clone()
            }
            Rotation::None => share(raw),
            r => {
                let rgb = self.rgb_converter.convert_frame(raw).map_err(|e| {
                    Error::ffmpeg(
                        &self.path,
                        format!("converting {:?} to rgb24", raw.format()),
                        e,
                    )
                })?;
                rotate_rgb24(&rgb, r)
                    .map_err(|e| Error::ffmpeg(&self.path, "rotating the picture", e))?
            }
        }))
    }

    fn pipeline_image_of(&mut self, raw: VideoFrame) -> Result<VideoFrame> {
        // The pipeline holds limited-range 4:2:0 (what the encoders tag their output as): a
        // `yuv420p` picture tagged full range (VP9, AV1; FFmpeg's `yuvj420p` for H.264,
        // HEVC and JPEG is converted anyway) goes through swscale like any other format.
        let converted = if raw.format() == PIPELINE_FORMAT
            && raw.color_range() != ffmpeg::util::color::Range::JPEG
        {
            if self.table.damage.first_affected_frame().is_some() {
                // A damaged picture may hold what the decoder did not write: whatever its
                // pooled buffer held before, so it would depend on how long the caller keeps
                // earlier frames (a VP8 WebM with flipped bits gave other pixels through the
                // sparse reader, whose frames wait in a queue; ffmpeg's own decode differs with
                // and without a select filter). A copy hands the decoder's buffer back at
                // once, so every door reads the picture the sequential read gives.
                raw.clone()
            } else {
                raw
            }
        } else {
            self.converter.convert_frame(&raw).map_err(|e| {
                Error::ffmpeg(
                    &self.path,
                    format!("converting {:?} to yuv420p", raw.format()),
                    e,
                )
            })?
        };
        Ok(match self.applied_rotation() {
            Rotation::None => converted,
            r => rotate_yuv420(&converted, r)
                .map_err(|e| Error::ffmpeg(&self.path, "rotating the picture", e))?,
        })
    }

    /// The next picture out of the decoder, feeding it packets as needed. Packets the decoder
    /// rejects are skipped, as ffmpeg does (the frame checks above notice a missing frame).
    fn next_decoded(&mut self) -> Result<Option<VideoFrame>> {
        let mut frame = VideoFrame::empty();
        loop {
            match self.decoder.receive_frame(&mut frame) {
                Ok(()) => {
                    self.decoded += 1;
                    self.call.count(crate::call::tally::Event::FrameDecoded);
                    return Ok(Some(frame));
                }
                Err(ffmpeg::Error::Eof) => return Ok(None),
                Err(ffmpeg::Error::Other { errno }) if errno == EAGAIN => {}
                // A picture that fails after its packet was accepted: nothing comes out.
                Err(_) => self.packet_failed()?,
            }
            if self.packets_done || self.drained {
                if self.eof_sent {
                    return Ok(None);
                }
                self.eof_sent = true;
                // (With frame threads a picture that failed is reported here, late.)
                if self.decoder.send_eof().is_err() {
                    self.packet_failed()?;
                }
                continue;
            }
            let mut packet = ffmpeg::Packet::empty();
            let read = match &mut self.input {
                ReaderInput::Own(_) if !self.pending.is_empty() => {
                    packet = self.pending.pop_front().expect("a pending packet");
                    Ok(())
                }
                ReaderInput::Own(input) => packet.read(&mut input.context),
                ReaderInput::Shared(SharedInput(shared, _)) => match shared.read_video() {
                    Ok(Some(p)) => {
                        packet = p;
                        Ok(())
                    }
                    Ok(None) => Err(ffmpeg::Error::Eof),
                    Err(crate::media::demux::Parted) => {
                        // A read failed: decode again from the start on an input of its
                        // own, which meets the failure (or not) as it would alone.
                        let next = match self.target {
                            Some(Target::Identified { index, .. } | Target::Count { index }) => {
                                index
                            }
                            None => self.next_index.unwrap_or(0),
                        };
                        self.restart_and_count_to(next)?;
                        continue;
                    }
                },
            };
            match read {
                Ok(()) => {}
                Err(ffmpeg::Error::Eof) => {
                    self.packets_done = true;
                    continue;
                }
                // Damaged data that ends the input for ffmpeg ends it here (the table ends
                // there too).
                Err(e) if crate::media::input::read_error_ends_input(&e) => {
                    self.packets_done = true;
                    continue;
                }
                Err(e) => {
                    return Err(Error::corrupt(
                        &self.path,
                        self.position_text(),
                        format!("cannot read the file: {e}"),
                    ))
                }
            }
            if packet.stream() != self.video.index || packet.size() == 0 {
                continue;
            }
            if self.need_keyframe {
                if !packet.is_key() {
                    continue;
                }
                self.need_keyframe = false;
            }
            let mut drain = false;
            if let Some(wanted) = &self.wanted {
                let pts = packet.pts();
                let want = pts.is_some_and(|k| wanted.contains(&k));
                if !want && !packet.is_key() {
                    if let (Some(out), Some(k)) = (&self.left_out, pts) {
                        if out.contains(&k) {
                            self.packets_left_out += 1;
                            self.call.count(crate::call::tally::Event::PacketLeftOut);
                            continue;
                        }
                    }
                }
                self.decoder.skip_frame(if want {
                    Discard::Default
                } else {
                    Discard::NonReference
                });
                // The current target's packet, with no other target before the next keyframe.
                drain = match (self.target, pts, &self.drain_after) {
                    (Some(Target::Identified { index, .. }), Some(k), Some(d)) => {
                        self.table.pts(index) == k && d.contains(&k)
                    }
                    _ => false,
                };
            }
            crate::media::compat::tag_packet_position(&mut packet);
            if self.decoder.send_packet(&packet).is_err() {
                self.packet_failed()?;
            }
            if drain {
                self.eof_sent = true;
                self.drained = true;
                if self.decoder.send_eof().is_err() {
                    self.packet_failed()?;
                }
            }
        }
    }

    /// A packet did not decode. Right after a seek, before the target, that can be the
    /// seek's doing (a frame whose references come before the keyframe) and is ignored.
    /// Anywhere else the picture is missing from the stream, so a table from packets lists a
    /// frame that ffmpeg does not decode: the table is rebuilt by decoding.
    fn packet_failed(&mut self) -> Result<()> {
        self.failed_packets += 1;
        let approaching_target = self.target.is_some() && !self.from_start;
        if !approaching_target && self.table.times_from == crate::media::table::TimesFrom::Packets {
            let at = match self.target {
                Some(Target::Identified { index, .. } | Target::Count { index }) => index,
                None => self.next_index.unwrap_or(0),
            };
            return Err(self.mismatch_at(at));
        }
        Ok(())
    }

    fn position_text(&self) -> String {
        match (self.target, self.next_index) {
            (Some(Target::Identified { index, .. }) | Some(Target::Count { index }), _) => {
                format!("while seeking to frame {index}")
            }
            (None, Some(i)) => format!("at frame {i}"),
            (None, None) => "after a seek".into(),
        }
    }
}

impl Iterator for FrameReader {
    type Item = Result<Frame>;
    fn next(&mut self) -> Option<Result<Frame>> {
        self.next_frame().transpose()
    }
}

/// Video and audio packets read from an input before its reader got it.
type Queued = (
    std::collections::VecDeque<ffmpeg::Packet>,
    std::collections::VecDeque<ffmpeg::Packet>,
);

/// Whether a full decode of `input` may offer it to the soundtrack's reader: a local file
/// (not an image sequence) with an audio stream, whose table found no damage (a URL's reads
/// and a damaged file's read errors stay each reader's own).
fn may_share_audio(input: &VideoInput, table: &FrameTable) -> bool {
    input.kind == crate::media::source::SourceKind::File
        && input.sequence.is_none()
        && table.damage.is_empty()
        && crate::media::input::best_audio_stream(&input.context).is_some()
}

/// The decoder threads for reading a stream with `table`: those the options ask for, or one
/// where the stream is damaged, because how a frame-threaded decoder conceals differs from run
/// to run (see [`Damage::decode_depends_on_threads`](crate::media::table::Damage)): the same
/// request then gives the same pictures every time.
fn decoder_threads(options: &DecodeOptions, table: &FrameTable) -> usize {
    if table.damage.decode_depends_on_threads() {
        1
    } else {
        options.threads
    }
}

/// Opens a decoder for `input`'s video stream. `timestamps_only` makes it cheaper (no
/// deblocking) for a decode whose pictures are not looked at.
/// Why this build cannot decode a video of codec `id` (`name` as vidprep names it), in words
/// with what to do; `None` when it can. FFmpeg 4.4 and later have a native AV1 decoder that
/// only works with hardware acceleration: alone, it is no decoder (every packet fails).
fn missing_decoder(id: ffmpeg::codec::Id, name: &str) -> Option<String> {
    let build = || ffi::ffmpeg_build();
    match ffmpeg::decoder::find(id) {
        None => Some(format!(
            "its video is {name}, which this build's FFmpeg ({}) has no decoder for (`vidprep \
             probe --build` lists what it decodes): use an FFmpeg that decodes {name}, or convert \
             the video first (ffmpeg -i IN -c:v libx264 OUT.mp4)",
            build()
        )),
        Some(decoder) if id == ffmpeg::codec::Id::AV1 && decoder.name() == "av1" => Some(format!(
            "its video is AV1, which this build's FFmpeg ({}) decodes only with hardware \
             acceleration (it has neither libdav1d nor libaom; `vidprep probe --build` lists \
             what it decodes): use an FFmpeg built with libdav1d (Debian's and Ubuntu's are), \
             or convert the video first (ffmpeg -i IN -c:v libx264 OUT.mp4)",
            build()
        )),
        Some(_) => None,
    }
}

pub(crate) fn open_decoder(
    input: &VideoInput,
    threads: usize,
    timestamps_only: bool,
    conceal: &crate::media::compat::ConcealWatch,
) -> Result<ffmpeg::decoder::Video> {
    let stream = input
        .context
        .stream(input.video.index)
        .expect("video stream exists");
    let mut context = ffmpeg::codec::context::Context::from_parameters(stream.parameters())
        .map_err(|e| Error::ffmpeg(&input.path, "reading the video codec parameters", e))?;
    context.set_threading(ffmpeg::codec::threading::Config {
        kind: ffmpeg::codec::threading::Type::Frame,
        count: threads,
        ..Default::default()
    });
    // Timestamps of decoded frames in the stream's time base.
    ffi::set_packet_time_base(&mut context, stream.time_base());
    // Frames say which packet they came from (the byte position: Identity::Position).
    crate::media::compat::keep_packet_positions(&mut context);
    if timestamps_only {
        ffi::skip_loop_filter(&mut context);
    }
    conceal.attach(&mut context);
    if let Some(missing) = missing_decoder(stream.parameters().id(), &input.video.codec) {
        return Err(Error::request(&input.path, missing));
    }
    context.decoder().video().map_err(|e| {
        Error::ffmpeg(
            &input.path,
            format!("opening a decoder for {}", input.video.codec),
            e,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A codec this build has no decoder for is named, with the build and what to do
    /// (AVS3 and VVC: no decoder in Debian 12's FFmpeg 5.1; 9.0 decodes VVC).
    #[cfg(ffmpeg_4_4)]
    #[test]
    fn a_codec_without_a_decoder_is_named_with_the_build() {
        let candidates = [ffmpeg::codec::Id::AVS3, ffmpeg::codec::Id::VVC];
        let Some(id) = candidates
            .into_iter()
            .find(|id| ffmpeg::decoder::find(*id).is_none())
        else {
            eprintln!("skipping: this FFmpeg decodes AVS3 and VVC");
            return;
        };
        let message = missing_decoder(id, "VVC-or-AVS3").expect("no decoder");
        assert!(
            message.contains("VVC-or-AVS3") && message.contains("FFmpeg "),
            "{message}"
        );
        assert!(
            message.contains("probe --build") && message.contains("convert"),
            "{message}"
        );
        // H.264 is always decodable.
        assert_eq!(missing_decoder(ffmpeg::codec::Id::H264, "H.264"), None);
    }
}
