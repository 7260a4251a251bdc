//! Every difference between the FFmpeg versions vidprep builds against, in one place. The rest
//! of the crate (and `ffi.rs`) calls these functions and never tests a version itself.
//!
//! The cfgs are the version names ffmpeg-next keys its own code on: `build.rs` sets
//! `ffmpeg_5_0` when the FFmpeg found is 5.0 or newer, `ffmpeg_7_0` for 7.0 or newer, and so on
//! (derived from libavcodec's version by ffmpeg-sys-next). Each item says which FFmpeg changed
//! what. Tested: FFmpeg 4.3 (Debian 11), 5.1 (Debian 12), 7.1 (Debian 13) and 9.0 (Debian
//! testing), with `scripts/clean-root.sh`.

use ffmpeg::ffi;
use ffmpeg_next as ffmpeg;

/// The demuxer description pointer `avformat_open_input` takes: FFmpeg 5.0 made demuxer
/// descriptions `const` (`av_find_input_format` returns, and `avformat_open_input` takes, a
/// `const AVInputFormat *`); before, both used `AVInputFormat *`.
#[cfg(ffmpeg_5_0)]
pub(crate) type InputFormatPtr = *const ffi::AVInputFormat;
#[cfg(not(ffmpeg_5_0))]
pub(crate) type InputFormatPtr = *mut ffi::AVInputFormat;

/// The demuxer named `name`, or null.
pub(crate) fn find_input_format(name: &std::ffi::CStr) -> InputFormatPtr {
    // SAFETY: `name` is a valid NUL-terminated string; av_find_input_format returns a pointer
    // to a static demuxer description, or null, on every version (only its constness changed).
    unsafe { ffi::av_find_input_format(name.as_ptr()) as InputFormatPtr }
}

/// The channel count of codec parameters. FFmpeg 5.1 added `ch_layout` (an `AVChannelLayout`
/// with `nb_channels`) and deprecated `channels`; FFmpeg 7.0 removed `channels`.
///
/// # Safety
/// `par` must point to valid codec parameters.
pub(crate) unsafe fn parameters_channels(par: *const ffi::AVCodecParameters) -> i32 {
    #[cfg(ffmpeg_5_1)]
    {
        // SAFETY: the caller guarantees `par` is valid; a plain field.
        unsafe { (*par).ch_layout.nb_channels }
    }
    #[cfg(not(ffmpeg_5_1))]
    {
        // SAFETY: as above.
        unsafe { (*par).channels }
    }
}

/// Sets an audio encoder to `channels` channels in FFmpeg's default layout for that count.
/// Before FFmpeg 7.0 the count (`channels`) and the layout mask (`channel_layout`) were two
/// fields to set; FFmpeg 7.0 removed both for `ch_layout`, which carries the count.
pub(crate) fn set_encoder_channels(encoder: &mut ffmpeg::encoder::audio::Audio, channels: u16) {
    encoder.set_channel_layout(ffmpeg::ChannelLayout::default(i32::from(channels)));
    #[cfg(not(ffmpeg_7_0))]
    encoder.set_channels(i32::from(channels));
}

/// Whether a layout names its channels (a mask of speaker positions). Demuxers that know only
/// the count (WMA in ASF, PCM in Matroska, ...) leave it unknown: before FFmpeg 7.0 ffmpeg-next
/// shows that as an empty mask, from 7.0 as a layout of unspecified order, whose mask also
/// reads as 0.
pub(crate) fn layout_is_known(layout: &ffmpeg::ChannelLayout) -> bool {
    layout.bits() != 0
}

/// Gives a decoded audio frame of unknown layout FFmpeg's default layout for its channel count,
/// as the ffmpeg CLI does ("Guessed Channel Layout"); the resampler refuses a frame whose
/// layout differs from the one it was made with ("Input changed"). ffmpeg-next writes the
/// field each FFmpeg reads: the mask before 7.0 (from 5.1 on the resampler turns the mask into
/// its `ch_layout`), `ch_layout` from 7.0.
pub(crate) fn default_layout_if_unknown(frame: &mut ffmpeg::frame::Audio) {
    if !layout_is_known(&frame.channel_layout()) && frame.channels() > 0 {
        let layout = ffmpeg::ChannelLayout::default(i32::from(frame.channels()));
        frame.set_channel_layout(layout);
    }
}

/// Asks a decoder to hand each packet's byte position on to the frames it decodes (read back
/// with [`frame_packet_position`]). FFmpeg 8.0 removed `AVFrame.pkt_pos` (deprecated in 6.1);
/// its replacement is `AV_CODEC_FLAG_COPY_OPAQUE` (FFmpeg 6.0), which copies each packet's
/// `opaque` to its frames, set by [`tag_packet_position`]. Before 8.0 `pkt_pos` is used and
/// this does nothing.
pub(crate) fn keep_packet_positions(context: &mut ffmpeg::codec::Context) {
    #[cfg(ffmpeg_8_0)]
    // SAFETY: the context is valid and not yet opened; `flags` is a plain field.
    unsafe {
        (*context.as_mut_ptr()).flags |= ffi::AV_CODEC_FLAG_COPY_OPAQUE as i32;
    }
    #[cfg(not(ffmpeg_8_0))]
    let _ = context;
}

/// Stores a packet's byte position where [`keep_packet_positions`] makes the decoder pass it
/// on (FFmpeg 8.0 and newer; nothing to do before, where frames carry `pkt_pos`).
pub(crate) fn tag_packet_position(packet: &mut ffmpeg::Packet) {
    #[cfg(ffmpeg_8_0)]
    {
        use ffmpeg::packet::Mut as _;
        let pos = packet.position() as i64;
        // A position is stored as pos + 1, so that an unknown one (-1) is the null pointer
        // that an untagged frame also has.
        let tag = if pos >= 0 {
            (pos as usize).wrapping_add(1)
        } else {
            0
        };
        // SAFETY: the packet is valid and held mutably; `opaque` is a user field FFmpeg never
        // dereferences (it only copies it to frames with AV_CODEC_FLAG_COPY_OPAQUE).
        unsafe {
            (*packet.as_mut_ptr()).opaque = tag as *mut std::ffi::c_void;
        }
    }
    #[cfg(not(ffmpeg_8_0))]
    let _ = packet;
}

/// The byte position in the file of the packet a decoded picture came from (-1 when
/// unknown). Before FFmpeg 8.0 the decoder sets `pkt_pos`; from 8.0 it is the tag
/// [`tag_packet_position`] stored (see [`keep_packet_positions`]).
pub(crate) fn frame_packet_position(frame: &ffmpeg::frame::Video) -> i64 {
    #[cfg(not(ffmpeg_8_0))]
    {
        frame.packet().position
    }
    #[cfg(ffmpeg_8_0)]
    {
        // SAFETY: the frame is valid while borrowed; `opaque` is a plain field holding what
        // tag_packet_position stored (or null).
        let tag = unsafe { (*frame.as_ptr()).opaque } as usize;
        if tag == 0 {
            -1
        } else {
            (tag - 1) as i64
        }
    }
}

/// Copies the display matrix (rotation) of an input stream to an output stream. Up to FFmpeg
/// 6.0 it is stream side data (`av_stream_get_side_data`, whose size argument was an `int *`
/// before 5.0 and a `size_t *` from 5.0); FFmpeg 6.1 moved it to the codec parameters'
/// `coded_side_data` (and 8.0 removed the stream functions), where copying the parameters
/// already brings it along.
pub(crate) fn copy_display_matrix(
    input: &ffmpeg::format::stream::Stream,
    output: &mut ffmpeg::format::stream::StreamMut,
) {
    let kind = ffi::AVPacketSideDataType::AV_PKT_DATA_DISPLAYMATRIX;
    #[cfg(ffmpeg_6_1)]
    // SAFETY: both streams are valid for the call and their `codecpar` is non-null (parameters
    // were set); av_packet_side_data_get only reads the array it is given (length included);
    // av_packet_side_data_new grows the output's array (FFmpeg owns it) and returns an entry
    // with `size` bytes of its own, or null on failure (checked).
    unsafe {
        let ipar = (*input.as_ptr()).codecpar;
        let opar = (*output.as_mut_ptr()).codecpar;
        let src =
            ffi::av_packet_side_data_get((*ipar).coded_side_data, (*ipar).nb_coded_side_data, kind);
        if src.is_null() || (*src).size == 0 {
            return;
        }
        let have =
            ffi::av_packet_side_data_get((*opar).coded_side_data, (*opar).nb_coded_side_data, kind);
        if !have.is_null() {
            return;
        }
        let dst = ffi::av_packet_side_data_new(
            &mut (*opar).coded_side_data,
            &mut (*opar).nb_coded_side_data,
            kind,
            (*src).size,
            0,
        );
        if !dst.is_null() {
            std::ptr::copy_nonoverlapping((*src).data, (*dst).data, (*src).size);
        }
    }
    #[cfg(not(ffmpeg_6_1))]
    // SAFETY: both streams are valid for the call; the side data is read with its own size
    // and copied into a buffer of that size FFmpeg allocates for the output stream (or null,
    // checked).
    unsafe {
        #[cfg(ffmpeg_5_0)]
        let mut size: usize = 0;
        #[cfg(not(ffmpeg_5_0))]
        let mut size: i32 = 0;
        let matrix = ffi::av_stream_get_side_data(input.as_ptr(), kind, &mut size);
        if !matrix.is_null() && size > 0 {
            let dst = ffi::av_stream_new_side_data(output.as_mut_ptr(), kind, size as _);
            if !dst.is_null() {
                std::ptr::copy_nonoverlapping(matrix, dst, size as usize);
            }
        }
    }
}

/// The result of `sws_setColorspaceDetails`. Before FFmpeg 6.0 (libswscale 7) it returns -1
/// for conversions between two YUV (or grey) formats although it has set the ranges up (the
/// ffmpeg CLI's scale filter ignores that value); from 6.0 a negative value is an error.
pub(crate) fn colorspace_details_result(ret: i32) -> Result<(), ffmpeg::Error> {
    #[cfg(ffmpeg_6_0)]
    if ret < 0 {
        return Err(ffmpeg::Error::from(ret));
    }
    #[cfg(not(ffmpeg_6_0))]
    let _ = ret;
    Ok(())
}

/// The presentation time of a decoded audio frame, in the stream's time base.
///
/// FFmpeg 4.3's decoder, when it drops an encoder's priming samples (the `skip_samples` an
/// MP4 edit list or a LAME header asks for: 1105 of an MP3's first 1152), moves the frame's
/// `pts` past them but leaves `best_effort_timestamp` at the packet's (`chaplin.mp4`: pts 0,
/// best effort -1105 at 44.1 kHz), so the kept samples would land 25 ms early; 5.1 and later
/// move both. Where the best-effort time lies behind the pts the pts is taken; otherwise the
/// best-effort time (it mends pts that jump), or the pts where there is no best effort.
pub(crate) fn audio_frame_pts(frame: &ffmpeg::frame::Audio) -> Option<i64> {
    match (frame.timestamp(), frame.pts()) {
        (Some(best), Some(pts)) if best < pts => Some(pts),
        (Some(best), _) => Some(best),
        (None, pts) => pts,
    }
}

/// Counts, for one video decoder, the pictures it damaged without the picture saying so.
///
/// - FFmpeg before 5.0 marks a picture whose errors error resilience concealed
///   (`AV_FRAME_FLAG_CORRUPT`) only when it decodes without frame threads, and its parsers drop
///   the demuxer's `AV_PKT_FLAG_CORRUPT` (MPEG-TS continuity or CRC failures): on FFmpeg 4.3 a
///   damaged H.264 TS decoded with frame threads looked clean, and a seek into it gave pictures
///   concealed differently from ffmpeg's decode from the start (24 dB). The one word left is
///   the log line error resilience writes for every such picture ("concealing N DC, N AC, N MV
///   errors in P frame").
/// - An intra-only decoder (`AV_CODEC_PROP_INTRA_ONLY`: MJPEG, ProRes, ...) that meets damage
///   in a picture logs an error and returns the picture, unflagged, on every FFmpeg: MJPEG
///   with a zeroed block logs "error y=10 x=5" and leaves the rows it could not decode as the
///   reused buffer held them, so ffmpeg's decode from the start, its decode after a seek and
///   vidprep's read differ there (20 dB). Each error it logs marks the picture it is decoding.
///
/// [`init_logging`] installs a log callback that counts both for the decoder whose context
/// (`opaque`, copied into each frame thread's context) points at the watch's counter, then
/// logs as FFmpeg's default callback does (which applies the log level: the callback sees
/// every message).
///
/// The watch must outlive the decoders attached to it: hold it in a field declared after the
/// decoder's (fields drop in order), or as a local declared before it.
#[derive(Default)]
pub(crate) struct ConcealWatch {
    count: Box<std::sync::atomic::AtomicU64>,
    seen: u64,
}

impl ConcealWatch {
    /// Points `context` (a decoder's, before it is opened) at this watch.
    pub(crate) fn attach(&self, context: &mut ffmpeg::codec::Context) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the context is valid and held mutably and not yet opened; `opaque` is a user
        // field libavcodec never reads (it copies it into frame threads' contexts). It points
        // at the boxed counter, whose address is stable and which outlives the decoder (see
        // the type's comment); the log callback only reads it atomically.
        unsafe {
            (*context.as_mut_ptr()).opaque =
                &*self.count as *const std::sync::atomic::AtomicU64 as *mut std::ffi::c_void;
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = context;
    }

    /// Whether the decoder concealed errors in a picture since the last call.
    pub(crate) fn concealed_since_last(&mut self) -> bool {
        let now = self.count.load(std::sync::atomic::Ordering::Relaxed);
        let new = now != self.seen;
        self.seen = now;
        new
    }
}

/// Installs the log callback [`ConcealWatch`] needs (on x86-64, whose `va_list` FFmpeg's
/// bindings name; elsewhere nothing): called once, from `media::input::init`.
pub(crate) fn init_logging() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `log_counting_concealment` has the signature av_log_set_callback expects and
    // is safe to call from any thread.
    unsafe {
        ffi::av_log_set_callback(Some(log_counting_concealment));
    }
}

/// FFmpeg's default logging, counting concealment and intra-only decoders' errors for
/// watched decoders ([`ConcealWatch`]), and each input's demuxer errors
/// (`ffi::OpenedInput::demuxer_errors`).
#[cfg(target_arch = "x86_64")]
unsafe extern "C" fn log_counting_concealment(
    avcl: *mut std::ffi::c_void,
    level: std::ffi::c_int,
    fmt: *const std::ffi::c_char,
    vl: *mut ffi::__va_list_tag,
) {
    // SAFETY: FFmpeg passes a NUL-terminated format string (or null) and, as `avcl`, null or
    // a struct whose first field is its `AVClass` pointer; a class named "AVCodecContext" is
    // an `AVCodecContext`, whose `opaque` is null or, set by `ConcealWatch::attach`, a live
    // counter; `avcodec_descriptor_get` returns null or a static descriptor. A class named
    // "AVFormatContext" is an `AVFormatContext`, whose `opaque` is null (outputs, nested
    // demuxers) or, set by `ffi::open_input`, the live counter of its `OpenedInput`.
    unsafe {
        if !avcl.is_null() && !fmt.is_null() {
            let class = *(avcl as *const *const ffi::AVClass);
            let name = if !class.is_null() && !(*class).class_name.is_null() {
                std::ffi::CStr::from_ptr((*class).class_name).to_bytes()
            } else {
                b""
            };
            if name == b"AVFormatContext" && level <= ffi::AV_LOG_ERROR {
                let context = avcl as *const ffi::AVFormatContext;
                let counter = (*context).opaque as *const std::sync::atomic::AtomicU64;
                if !counter.is_null() && !(*context).iformat.is_null() {
                    (*counter).fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            }
            if name == b"AVCodecContext" {
                let context = avcl as *const ffi::AVCodecContext;
                let counter = (*context).opaque as *const std::sync::atomic::AtomicU64;
                if !counter.is_null() {
                    let concealing = std::ffi::CStr::from_ptr(fmt)
                        .to_bytes()
                        .starts_with(b"concealing ");
                    let intra_error = level <= ffi::AV_LOG_ERROR && {
                        let descriptor = ffi::avcodec_descriptor_get((*context).codec_id);
                        !descriptor.is_null()
                            && (*descriptor).props & ffi::AV_CODEC_PROP_INTRA_ONLY != 0
                    };
                    if concealing || intra_error {
                        (*counter).fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            }
        }
        ffi::av_log_default_callback(avcl, level, fmt, vl);
    }
}

/// One entry of a stream's index: where a sample lies in the file, its timestamp and size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IndexEntry {
    pub pos: i64,
    pub timestamp: i64,
    pub size: i64,
}

/// The first entry of stream `stream`'s index (for MP4, built from the header: the stream's
/// first sample, the one a read from the start gives first), copied out; `None` when the
/// index is empty. FFmpeg 4.4 added `avformat_index_get_entries_count` and
/// `avformat_index_get_entry`; FFmpeg 5.0 moved `AVStream.index_entries` and
/// `nb_index_entries`, which 4.3 reads directly, into its internal stream context.
pub(crate) fn first_index_entry(
    context: &ffmpeg::format::context::Input,
    stream: usize,
) -> Option<IndexEntry> {
    if stream >= context.nb_streams() as usize {
        return None;
    }
    // SAFETY: `stream` is a valid index of this context's streams (checked above), so the
    // stream pointer is valid while `context` is borrowed.
    let st = unsafe { *(*context.as_ptr()).streams.add(stream) };
    #[cfg(ffmpeg_4_4)]
    // SAFETY: `st` is a valid stream; the entry pointer (checked for null) is read at once,
    // before any other call on the stream or its context, as the API requires.
    let entry = unsafe {
        if ffi::avformat_index_get_entries_count(st) < 1 {
            return None;
        }
        let e = ffi::avformat_index_get_entry(st, 0);
        if e.is_null() {
            return None;
        }
        IndexEntry {
            pos: (*e).pos,
            timestamp: (*e).timestamp,
            size: i64::from((*e).size()),
        }
    };
    #[cfg(not(ffmpeg_4_4))]
    // SAFETY: `st` is a valid stream; `index_entries` holds `nb_index_entries` entries (null
    // when there are none), read at once.
    let entry = unsafe {
        if (*st).nb_index_entries < 1 || (*st).index_entries.is_null() {
            return None;
        }
        let e = (*st).index_entries;
        IndexEntry {
            pos: (*e).pos,
            timestamp: (*e).timestamp,
            size: i64::from((*e).size()),
        }
    };
    Some(entry)
}

/// The bytes an input has read so far through its I/O context (`AVIOContext.bytes_read`, its
/// own statistic; 0 before the context exists, as while an http input still waits for its
/// headers). The field is public and the same from FFmpeg 4.3 through 9.0: this is its one
/// reader, so that a version that moves it changes one place.
///
/// # Safety
/// `context` is null or a valid `AVFormatContext` (its `pb` null or valid), read on the thread
/// that does its I/O.
pub(crate) unsafe fn input_bytes_read(context: *const ffi::AVFormatContext) -> u64 {
    if context.is_null() {
        return 0;
    }
    // SAFETY: the caller passes a valid context; its `pb` is null or a valid AVIOContext.
    let pb = unsafe { (*context).pb };
    if pb.is_null() {
        return 0;
    }
    // SAFETY: `pb` is valid (checked non-null above); a plain field read.
    u64::try_from(unsafe { (*pb).bytes_read }).unwrap_or(0)
}
