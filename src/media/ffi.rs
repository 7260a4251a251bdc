//! Every raw FFmpeg call vidprep needs that ffmpeg-next does not wrap safely, in one place,
//! each with a `SAFETY:` note. The rest of the crate calls these small safe functions. What
//! differs between FFmpeg versions is in `compat.rs` beside this file.

use ffmpeg::ffi;
use ffmpeg::format::context::{Input, Output};
use ffmpeg_next as ffmpeg;

use crate::vocab::Ratio;

/// The input's start time as ffmpeg uses it for `-ss`/`-t` (the earliest start among its
/// streams), in microseconds; `None` when the container gives none.
pub fn format_start_time_us(context: &Input) -> Option<i64> {
    // SAFETY: `context` owns a valid, opened AVFormatContext for its whole lifetime; reading
    // a plain integer field has no side effects.
    let start = unsafe { (*context.as_ptr()).start_time };
    (start != ffi::AV_NOPTS_VALUE).then_some(start)
}

/// The container's overall bit rate in bits per second (0 when unknown).
pub fn format_bit_rate(context: &Input) -> i64 {
    // SAFETY: as above, a plain field of a valid context.
    unsafe { (*context.as_ptr()).bit_rate }
}

/// Flags of the input format (`AVFMT_*`).
pub fn input_format_flags(context: &Input) -> i32 {
    // SAFETY: an opened input always has a non-null `iformat` that lives as long as the
    // program (demuxer descriptions are static).
    unsafe { (*(*context.as_ptr()).iformat).flags }
}

/// Whether the demuxer can seek to a byte position (raw streams can, most indexed containers
/// say they cannot).
pub fn can_seek_bytes(context: &Input) -> bool {
    input_format_flags(context) & ffi::AVFMT_NO_BYTE_SEEK == 0
}

/// The name of a stream's stored pixel format ("unknown" for a value this FFmpeg does not
/// know, or none). The raw integer is compared with the ids of FFmpeg's pixel-format
/// descriptors, so an unknown value is never turned into the pixel-format enum.
pub fn stream_pixel_format_name(context: &Input, stream: usize) -> String {
    // SAFETY: `stream` is a valid index of this context's streams (callers take it from
    // `context.streams()`) and every demuxed stream has non-null codec parameters.
    let format = unsafe {
        let st = *(*context.as_ptr()).streams.add(stream);
        (*(*st).codecpar).format
    };
    let mut desc: *const ffi::AVPixFmtDescriptor = std::ptr::null();
    loop {
        // SAFETY: `av_pix_fmt_desc_next` walks FFmpeg's static descriptor table, starting
        // from null and returning null after the last; `av_pix_fmt_desc_get_id` reads a
        // descriptor of that table; `name` is a static NUL-terminated string.
        unsafe {
            desc = ffi::av_pix_fmt_desc_next(desc);
            if desc.is_null() {
                return "unknown".into();
            }
            if ffi::av_pix_fmt_desc_get_id(desc) as i32 == format && !(*desc).name.is_null() {
                return std::ffi::CStr::from_ptr((*desc).name)
                    .to_string_lossy()
                    .into_owned();
            }
        }
    }
}

/// Stored size, sample aspect ratio and channel facts of a stream's codec parameters.
pub struct StreamParameters {
    pub width: i32,
    pub height: i32,
    pub sample_aspect_ratio: Ratio,
    pub sample_rate: i32,
    pub channels: i32,
}

pub fn stream_parameters(context: &Input, stream: usize) -> StreamParameters {
    // SAFETY: a valid stream index of a valid context; codecpar is never null for a demuxed
    // stream; only plain fields are read.
    unsafe {
        let st = *(*context.as_ptr()).streams.add(stream);
        let par = (*st).codecpar;
        StreamParameters {
            width: (*par).width,
            height: (*par).height,
            sample_aspect_ratio: Ratio::new(
                (*par).sample_aspect_ratio.num,
                (*par).sample_aspect_ratio.den,
            ),
            sample_rate: (*par).sample_rate,
            channels: crate::media::compat::parameters_channels(par),
        }
    }
}

/// Tells the demuxer to drop (or keep) a stream's packets.
pub fn set_stream_discard(context: &mut Input, stream: usize, discard_all: bool) {
    let value = if discard_all {
        ffi::AVDiscard::AVDISCARD_ALL
    } else {
        ffi::AVDiscard::AVDISCARD_DEFAULT
    };
    // SAFETY: a valid stream index of a valid context we hold mutably; `discard` is a plain
    // field the demuxer reads on the next packet.
    unsafe {
        let st = *(*context.as_mut_ptr()).streams.add(stream);
        (*st).discard = value;
    }
}

/// Whether the demuxer marked a packet for discarding (edit lists: decoded for reference but
/// never shown).
pub fn packet_is_discarded(packet: &ffmpeg::Packet) -> bool {
    use ffmpeg::packet::Ref as _;
    // SAFETY: the packet is valid while borrowed; `flags` is a plain field.
    unsafe { (*packet.as_ptr()).flags & ffi::AV_PKT_FLAG_DISCARD != 0 }
}

/// Seeks `stream` of `context` to the last keyframe at or before `timestamp` (in the stream's
/// time base). `Err` with FFmpeg's code when the demuxer cannot.
pub fn seek_to_timestamp(context: &mut Input, stream: usize, timestamp: i64) -> Result<(), i32> {
    // SAFETY: a valid context held mutably and a valid stream index; av_seek_frame only
    // moves the demuxer's position.
    let ret = unsafe {
        ffi::av_seek_frame(
            context.as_mut_ptr(),
            stream as i32,
            timestamp,
            ffi::AVSEEK_FLAG_BACKWARD,
        )
    };
    if ret < 0 {
        Err(ret)
    } else {
        Ok(())
    }
}

/// Seeks `context` to byte `position` (raw streams).
pub fn seek_to_byte(context: &mut Input, position: i64) -> Result<(), i32> {
    // SAFETY: as above; with AVSEEK_FLAG_BYTE the timestamp is a byte offset in the file.
    let ret =
        unsafe { ffi::av_seek_frame(context.as_mut_ptr(), -1, position, ffi::AVSEEK_FLAG_BYTE) };
    if ret < 0 {
        Err(ret)
    } else {
        Ok(())
    }
}

/// Sets the packet time base of a decoder context, so decoded frames carry timestamps in the
/// stream's time base.
pub fn set_packet_time_base(context: &mut ffmpeg::codec::Context, time_base: ffmpeg::Rational) {
    // SAFETY: the context is valid and not yet opened; `pkt_timebase` is a plain field read
    // when decoding starts.
    unsafe {
        (*context.as_mut_ptr()).pkt_timebase = time_base.into();
    }
}

/// Asks a decoder context to skip the in-loop deblocking filter (a cheaper decode whose
/// frame order and timestamps are unchanged; used when only timestamps are wanted).
pub fn skip_loop_filter(context: &mut ffmpeg::codec::Context) {
    // SAFETY: the context is valid and not yet opened; a plain field.
    unsafe {
        (*context.as_mut_ptr()).skip_loop_filter = ffi::AVDiscard::AVDISCARD_ALL;
    }
}

/// Adds `flags` (`AV_CODEC_FLAG_*`) to a codec context's flags. ffmpeg-next's `set_flags`
/// replaces them, which drops the codec's own defaults: libx264's include closed GOPs (+cgop,
/// as the ffmpeg CLI encodes), and losing them gives open GOPs whose keyframes seek badly.
pub fn add_codec_flags(context: &mut ffmpeg::codec::Context, flags: u32) {
    // SAFETY: the context is valid and not yet opened; `flags` is a plain field.
    unsafe {
        (*context.as_mut_ptr()).flags |= flags as i32;
    }
}

/// Makes a Matroska (or WebM) output the same bytes on every run: without FFmpeg's
/// bit-exact flag its muxer writes a random segment UID. Other muxers are left as they are
/// (the flag would change an MP4's encoder tag, and so its bytes, for nothing: they write
/// nothing random).
pub fn make_output_repeatable(output: &mut Output) {
    let name = output.format().name().to_string();
    if name.split(',').any(|n| n == "matroska" || n == "webm") {
        // SAFETY: the output context is valid and its header not yet written; `flags` is a
        // plain field the muxer reads when it writes the header.
        unsafe {
            (*output.as_mut_ptr()).flags |= ffi::AVFMT_FLAG_BITEXACT as i32;
        }
    }
}

/// Whether the output's muxer can store `codec` without re-encoding.
pub fn muxer_can_hold(output: &Output, codec: ffmpeg::codec::Id) -> bool {
    let id: ffi::AVCodecID = codec.into();
    // SAFETY: an output context always has its muxer description (`oformat`, static);
    // `avformat_query_codec` only reads it.
    unsafe {
        ffi::avformat_query_codec((*output.as_ptr()).oformat, id, ffi::FF_COMPLIANCE_NORMAL) == 1
    }
}

/// Prepares an output stream that copies `input`'s packets: clears the codec tag (the new
/// container picks its own) and copies the display matrix, so players still rotate the
/// picture.
pub fn copy_stream_for_remux(
    input: &ffmpeg::format::stream::Stream,
    output: &mut ffmpeg::format::stream::StreamMut,
) {
    // SAFETY: the output stream is valid for the duration of the call (borrowed from its
    // context) and `codecpar` is non-null for a stream with parameters set; a plain field.
    unsafe {
        (*(*output.as_mut_ptr()).codecpar).codec_tag = 0;
    }
    crate::media::compat::copy_display_matrix(input, output);
}

/// Another reference to the same picture: no pixels are copied (ffmpeg-next's `clone` copies
/// every pixel). Writers must call [`make_writable`] first, which copies only when shared.
pub fn share_frame(frame: &ffmpeg::frame::Video) -> ffmpeg::frame::Video {
    // SAFETY: `frame` is a valid AVFrame; `av_frame_clone` returns a new frame referencing the
    // same reference-counted buffers (or null on allocation failure, checked), which
    // `Video::wrap` takes ownership of and frees on drop.
    unsafe {
        let ptr = ffi::av_frame_clone(frame.as_ptr());
        assert!(!ptr.is_null(), "av_frame_clone failed: out of memory");
        ffmpeg::frame::Video::wrap(ptr)
    }
}

/// Makes a picture's buffers writable (copying them when shared, e.g. with the decoder).
pub fn make_writable(frame: &mut ffmpeg::frame::Video) -> Result<(), ffmpeg::Error> {
    // SAFETY: `frame` is a valid AVFrame we hold mutably; FFmpeg reallocates its buffers only
    // when they are shared.
    let ret = unsafe { ffi::av_frame_make_writable(frame.as_mut_ptr()) };
    if ret < 0 {
        Err(ffmpeg::Error::from(ret))
    } else {
        Ok(())
    }
}

/// Makes a decoder fail on damaged data instead of concealing it (for still images, where a
/// damaged picture is an error naming the file).
pub fn explode_on_errors(context: &mut ffmpeg::codec::Context) {
    // SAFETY: the context is valid and not yet opened; a plain field.
    unsafe {
        (*context.as_mut_ptr()).err_recognition =
            ffi::AV_EF_EXPLODE | ffi::AV_EF_BITSTREAM | ffi::AV_EF_BUFFER | ffi::AV_EF_CRCCHECK;
    }
}

/// Sets an encoder context to full-range (JPEG) colour.
pub fn set_full_range(context: &mut ffmpeg::codec::Context) {
    // SAFETY: the context is valid and not yet opened; a plain field.
    unsafe {
        (*context.as_mut_ptr()).color_range = ffi::AVColorRange::AVCOL_RANGE_JPEG;
    }
}

/// Sets the quality (lambda) a fixed-quality encoder uses for one picture.
pub fn set_frame_quality(frame: &mut ffmpeg::frame::Video, quality: i32) {
    // SAFETY: the frame is valid and held mutably; a plain field the encoder reads.
    unsafe {
        (*frame.as_mut_ptr()).quality = quality;
    }
}

/// Tells a swscale context the colour description of the pictures it will convert, as the
/// ffmpeg CLI's scale filter does for each frame (`in_color_matrix=auto`, `in_range` from the
/// frame): the YCbCr matrix of `colorspace` (BT.601 where it is unspecified, RGB or one
/// swscale has no coefficients for) for input and output alike, and the input's range where the
/// frame states one (otherwise swscale's own guess from the pixel format stays: full for
/// `yuvj*` and grey, limited for other YUV). `sws_getContext` alone assumes BT.601 and, for
/// `yuv*` pixel formats, limited range: a full-range VP9 or HEVC picture (`yuv420p` tagged
/// full range), or one tagged BT.709, then converts to other pixels than ffmpeg's.
pub fn describe_scaler_input(
    scaler: &mut ffmpeg::software::scaling::Context,
    colorspace: ffmpeg::color::Space,
    range: ffmpeg::color::Range,
) -> Result<(), ffmpeg::Error> {
    let mut space = ffi::AVColorSpace::from(colorspace) as i32;
    // The scale filter's parse_yuv_type: the coefficients swscale has are those of
    // AVColorSpace 1 to 10 but 8 (YCgCo); anything else is BT.470BG (= BT.601).
    if !(1..=10).contains(&space) || space == 8 {
        space = ffi::AVColorSpace::AVCOL_SPC_BT470BG as i32;
    }
    // SAFETY: the context is valid and held mutably; sws_getColorspaceDetails writes the
    // context's own table pointers and five ints into the locals given; sws_getCoefficients
    // returns a pointer to a static table (it falls back to BT.601 for unknown values);
    // sws_setColorspaceDetails copies the tables it is given (4 ints each) into the context.
    unsafe {
        let ctx = scaler.as_mut_ptr();
        let (mut inv_table, mut table) = (std::ptr::null_mut(), std::ptr::null_mut());
        let (mut src_range, mut dst_range) = (0, 0);
        let (mut brightness, mut contrast, mut saturation) = (0, 0, 0);
        let ret = ffi::sws_getColorspaceDetails(
            ctx,
            &mut inv_table,
            &mut src_range,
            &mut table,
            &mut dst_range,
            &mut brightness,
            &mut contrast,
            &mut saturation,
        );
        if ret < 0 {
            return Err(ffmpeg::Error::from(ret));
        }
        match range {
            ffmpeg::color::Range::JPEG => src_range = 1,
            ffmpeg::color::Range::MPEG => src_range = 0,
            ffmpeg::color::Range::Unspecified => {}
        }
        let coefficients = ffi::sws_getCoefficients(space);
        let ret = ffi::sws_setColorspaceDetails(
            ctx,
            coefficients,
            src_range,
            coefficients,
            dst_range,
            brightness,
            contrast,
            saturation,
        );
        crate::media::compat::colorspace_details_result(ret)
    }
}

/// A swscale context that can move to another thread with its owner (ffmpeg-next's scaler
/// is not `Send`).
pub struct OwnedScaler(pub ffmpeg::software::scaling::Context);

// SAFETY: a SwsContext has no thread affinity; it is owned by exactly one `OwnedScaler` and
// only used through `&mut`, so moving it between threads cannot create shared access.
unsafe impl Send for OwnedScaler {}

/// Why a network input's interrupt callback gave up (read back from the input's
/// [`Interrupt`] by the error that follows: [`OpenedInput::network_verdict`], or
/// [`OpenFailed::verdict`] for an open that failed).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum NetworkVerdict {
    /// The input's deadline passed.
    Deadline,
    /// The server sent `bytes` over `waited` of waiting, below the minimum rate.
    TooSlow {
        bytes: u64,
        waited: std::time::Duration,
    },
}

/// What an input's interrupt callback reads: the token of the call that opened it, and for a
/// network input its [`Watch`]. Owned by the [`OpenedInput`] (dropped after the input it
/// watches).
pub(crate) struct Interrupt {
    cancel: crate::call::cancel::CancelToken,
    watch: Option<Watch>,
}

impl Interrupt {
    /// The verdict the callback gave, if it gave one (the watch keeps it for good).
    fn verdict(&self) -> Option<NetworkVerdict> {
        let given = self.watch.as_ref()?.given.lock();
        *given.unwrap_or_else(|e| e.into_inner())
    }
}

/// Why [`open_input`] failed: FFmpeg's error, and the verdict of the interrupt callback when
/// it was what stopped the open (the deadline, the minimum rate).
#[derive(Debug)]
pub(crate) struct OpenFailed {
    pub error: ffmpeg::Error,
    pub verdict: Option<NetworkVerdict>,
}

/// What a network input's interrupt callback watches: its deadline and its transfer rate.
/// Held in the input's [`Interrupt`].
pub(crate) struct Watch {
    /// The deadline in milliseconds since [`deadline_epoch`] (0: none).
    deadline_ms: u64,
    /// The watched input (set before it is opened; FFmpeg frees it only with the input).
    context: std::sync::atomic::AtomicPtr<ffi::AVFormatContext>,
    network: crate::call::settings::NetworkSettings,
    /// When the callback was last called (ms since the epoch; 0: never).
    last_call_ms: std::sync::atomic::AtomicU64,
    /// Time spent waiting in this window: the gaps between calls of one wait (FFmpeg calls
    /// the callback every 100 ms while a socket has nothing; a longer gap is time the caller
    /// spent elsewhere, not the server's).
    waited_ms: std::sync::atomic::AtomicU64,
    /// The input's bytes read when this window began.
    window_bytes: std::sync::atomic::AtomicU64,
    /// The verdict once one was given: every later wait gives up too (a demuxer may read on
    /// after one failed read, and the error must be the one that stopped it).
    given: std::sync::Mutex<Option<NetworkVerdict>>,
}

/// The longest gap between two callback calls still counted as one wait on the network.
const ONE_WAIT_MS: u64 = 250;

impl Watch {
    /// Whether the input must give up now (and for good).
    fn verdict(&self) -> Option<NetworkVerdict> {
        let mut given = self.given.lock().unwrap_or_else(|e| e.into_inner());
        if given.is_none() {
            *given = self.judge();
        }
        *given
    }

    /// Whether the deadline passed, or the window now closing was below the minimum rate.
    fn judge(&self) -> Option<NetworkVerdict> {
        use std::sync::atomic::Ordering::Relaxed;
        let now = deadline_epoch().elapsed().as_millis() as u64 + 1;
        if self.deadline_ms != 0 && now > self.deadline_ms {
            return Some(NetworkVerdict::Deadline);
        }
        if self.network.min_rate == 0 {
            return None;
        }
        let last = self.last_call_ms.swap(now, Relaxed);
        let gap = now.saturating_sub(last);
        if last == 0 || gap > ONE_WAIT_MS {
            return None;
        }
        let waited = self.waited_ms.fetch_add(gap, Relaxed) + gap;
        let waited_for = std::time::Duration::from_millis(waited);
        if waited_for < self.network.min_rate_window {
            return None;
        }
        // SAFETY: the context lives as long as this watch's input (see `OpenedInput`), and the
        // callback runs on the thread doing its I/O.
        let bytes = unsafe { crate::media::compat::input_bytes_read(self.context.load(Relaxed)) };
        let got = bytes.saturating_sub(self.window_bytes.swap(bytes, Relaxed));
        self.waited_ms.store(0, Relaxed);
        self.network
            .too_slow(got, waited_for)
            .then_some(NetworkVerdict::TooSlow {
                bytes: got,
                waited: waited_for,
            })
    }
}

/// FFmpeg's interrupt callback for inputs: blocking network waits poll it (every 100 ms) and
/// give up once the call that opened the input is cancelled (Ctrl-C, SIGTERM, a Python
/// `KeyboardInterrupt`), once the input's deadline passed, or once the server sends slower
/// than the minimum rate ([`Watch`], which keeps the verdict for the error that follows).
///
/// `opaque` is the input's [`Interrupt`].
unsafe extern "C" fn interrupted(opaque: *mut std::ffi::c_void) -> std::ffi::c_int {
    if opaque.is_null() {
        return 0;
    }
    // SAFETY: a non-null opaque is the `Interrupt` boxed in the `OpenedInput` that owns this
    // input (or held by `open_input` until it fails), which outlives every call FFmpeg makes
    // for it.
    let interrupt = unsafe { &*(opaque as *const Interrupt) };
    if interrupt.cancel.is_cancelled() {
        return 1;
    }
    match interrupt.watch.as_ref().and_then(Watch::verdict) {
        None => 0,
        Some(_) => 1,
    }
}

/// The origin of the deadlines a [`Watch`] keeps.
fn deadline_epoch() -> std::time::Instant {
    static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(std::time::Instant::now)
}

/// An opened input and the [`Interrupt`] its interrupt callback reads, dropped after it (fields
/// drop in order). It is used as the `Input` it holds.
pub struct OpenedInput {
    input: Input,
    interrupt: Box<Interrupt>,
    /// The errors its demuxer logged (counted by the log callback, which finds this counter
    /// through the context's `opaque`: see `media::compat`); dropped after the input.
    demuxer_errors: Box<std::sync::atomic::AtomicU64>,
}

impl OpenedInput {
    /// Why the interrupt callback made this input's network waits give up, if it did (the
    /// deadline, the minimum rate): read by the error of the read that failed.
    pub(crate) fn network_verdict(&self) -> Option<NetworkVerdict> {
        self.interrupt.verdict()
    }

    /// How many errors the demuxer has logged (FFmpeg's log at error level or worse, whatever
    /// the log level shown) since the input was opened, its probing included. A demuxer
    /// that meets damage often says so only there: Matroska drops a block whose track number
    /// a flipped bit changed, with "Invalid track number", and hands on the next packet.
    pub fn demuxer_errors(&self) -> u64 {
        self.demuxer_errors
            .load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl std::ops::Deref for OpenedInput {
    type Target = Input;
    fn deref(&self) -> &Input {
        &self.input
    }
}

impl std::ops::DerefMut for OpenedInput {
    fn deref_mut(&mut self) -> &mut Input {
        &mut self.input
    }
}

/// Whether the input can seek (a URL whose server honours `Range:` requests, a local file).
pub fn input_seekable(context: &Input) -> bool {
    // SAFETY: an opened input's `pb` is null or a valid AVIOContext owned by the context; a
    // plain field read.
    unsafe {
        let pb = (*context.as_ptr()).pb;
        pb.is_null() || (*pb).seekable != 0
    }
}

/// Opens `url` (a path, a printf pattern or an http(s) URL, as FFmpeg reads it) with the
/// demuxer named `format` (`None`: probed) and `options` (demuxer and protocol options), reads
/// its stream information, and hands back the input. Unlike ffmpeg-next's openers it takes
/// the bytes of any path (no panic on a non-UTF-8 name), forces a demuxer when asked, closes
/// the input when probing fails, and installs an interrupt callback so that work cancelled by
/// `cancel` (the token of the call that opens it) stops waiting on the network.
///
/// With `network` (a URL), every network wait of this input (its opening and all later
/// reads) gives up once `deadline` has passed since it was opened, or once the server sends
/// slower than the settings' minimum rate (the verdict says which:
/// [`OpenedInput::network_verdict`], [`OpenFailed::verdict`]).
pub(crate) fn open_input(
    url: &std::ffi::CStr,
    format: Option<&str>,
    options: ffmpeg::Dictionary,
    cancel: &crate::call::cancel::CancelToken,
    network: Option<(std::time::Duration, crate::call::settings::NetworkSettings)>,
) -> Result<OpenedInput, OpenFailed> {
    let failed = |error| OpenFailed {
        error,
        verdict: None,
    };
    let demuxer: crate::media::compat::InputFormatPtr = match format {
        Some(name) => {
            let name =
                std::ffi::CString::new(name).map_err(|_| failed(ffmpeg::Error::DemuxerNotFound))?;
            let found = crate::media::compat::find_input_format(&name);
            if found.is_null() {
                return Err(failed(ffmpeg::Error::DemuxerNotFound));
            }
            found
        }
        None => std::ptr::null_mut(),
    };
    let watch = network.map(|(deadline, network)| Watch {
        deadline_ms: (deadline_epoch().elapsed() + deadline).as_millis().max(1) as u64,
        context: std::sync::atomic::AtomicPtr::new(std::ptr::null_mut()),
        network,
        last_call_ms: 0.into(),
        waited_ms: 0.into(),
        window_bytes: 0.into(),
        given: std::sync::Mutex::new(None),
    });
    let interrupt = Box::new(Interrupt {
        cancel: cancel.clone(),
        watch,
    });
    // SAFETY: avformat_alloc_context returns a fresh context or null (checked). We set its
    // interrupt callback (a plain `extern "C"` function whose opaque value is the boxed
    // `Interrupt`, which the returned `OpenedInput` keeps until after the input is closed;
    // on failure the context is freed here, before the box) before opening, and its
    // `opaque` to the boxed error counter, kept the same way (the log callback only reads it
    // atomically). The
    // dictionary is handed to avformat_open_input as a raw pointer and taken back
    // (`Dictionary::own`) so what it did not consume is freed. On failure
    // avformat_open_input frees the context itself; after it succeeds, a failed
    // avformat_find_stream_info is followed by avformat_close_input, and a success wraps the
    // context in `Input`, which closes it when dropped.
    unsafe {
        let mut ps = ffi::avformat_alloc_context();
        if ps.is_null() {
            return Err(failed(ffmpeg::Error::Other {
                errno: ffmpeg::util::error::ENOMEM,
            }));
        }
        if let Some(w) = &interrupt.watch {
            w.context.store(ps, std::sync::atomic::Ordering::Relaxed);
        }
        (*ps).interrupt_callback = ffi::AVIOInterruptCB {
            callback: Some(interrupted),
            opaque: &*interrupt as *const Interrupt as *mut std::ffi::c_void,
        };
        // `opaque` is the user's field (libavformat never reads it); the log callback counts
        // the demuxer's errors through it (`media::compat::log_counting_concealment`).
        let demuxer_errors = Box::new(std::sync::atomic::AtomicU64::new(0));
        (*ps).opaque =
            &*demuxer_errors as *const std::sync::atomic::AtomicU64 as *mut std::ffi::c_void;
        let mut opts = options.disown();
        let ret = ffi::avformat_open_input(&mut ps, url.as_ptr(), demuxer, &mut opts);
        drop(ffmpeg::Dictionary::own(opts));
        if ret < 0 {
            return Err(OpenFailed {
                error: ffmpeg::Error::from(ret),
                verdict: interrupt.verdict(),
            });
        }
        let ret = ffi::avformat_find_stream_info(ps, std::ptr::null_mut());
        if ret < 0 {
            ffi::avformat_close_input(&mut ps);
            return Err(OpenFailed {
                error: ffmpeg::Error::from(ret),
                verdict: interrupt.verdict(),
            });
        }
        Ok(OpenedInput {
            input: Input::wrap(ps),
            interrupt,
            demuxer_errors,
        })
    }
}

/// The size in bytes of what an input reads (a file, or a URL whose server says), when known.
pub fn input_byte_size(context: &Input) -> Option<u64> {
    // SAFETY: an opened input's `pb` is either null (demuxers that open their own files, such
    // as image2) or a valid AVIOContext owned by the context; avio_size only queries it.
    let size = unsafe {
        let pb = (*context.as_ptr()).pb;
        if pb.is_null() {
            return None;
        }
        ffi::avio_size(pb)
    };
    u64::try_from(size).ok().filter(|s| *s > 0)
}

/// The codec extradata of stream parameters (for H.264 in MP4/MKV: the avcC record).
pub fn parameters_extradata(parameters: &ffmpeg::codec::Parameters) -> Vec<u8> {
    // SAFETY: `parameters` wraps a valid AVCodecParameters; `extradata` is either null or
    // points to `extradata_size` bytes owned by it, read while it is borrowed.
    unsafe {
        let p = parameters.as_ptr();
        if (*p).extradata.is_null() || (*p).extradata_size <= 0 {
            return Vec::new();
        }
        std::slice::from_raw_parts((*p).extradata, (*p).extradata_size as usize).to_vec()
    }
}

/// The extradata an opened encoder produced (with a global header: H.264's SPS and PPS).
pub fn encoder_extradata(encoder: &ffmpeg::encoder::Video) -> Vec<u8> {
    // SAFETY: the encoder context is valid and opened; `extradata` is null or points to
    // `extradata_size` bytes it owns, read while it is borrowed.
    unsafe {
        let c = encoder.as_ptr();
        if (*c).extradata.is_null() || (*c).extradata_size <= 0 {
            return Vec::new();
        }
        std::slice::from_raw_parts((*c).extradata, (*c).extradata_size as usize).to_vec()
    }
}

/// Replaces an output stream's codec extradata (before the header is written) and clears
/// its codec tag so the muxer picks its own.
pub fn set_stream_extradata(stream: &mut ffmpeg::format::stream::StreamMut, bytes: &[u8]) {
    // SAFETY: the stream and its `codecpar` are valid (parameters were set); the old
    // extradata is freed with `av_freep` (FFmpeg owns it), the new buffer is allocated with
    // `av_mallocz` including the padding FFmpeg requires, then filled with `bytes`.
    unsafe {
        let par = (*stream.as_mut_ptr()).codecpar;
        (*par).codec_tag = 0;
        ffi::av_freep(&mut (*par).extradata as *mut *mut u8 as *mut std::ffi::c_void);
        let pad = ffi::AV_INPUT_BUFFER_PADDING_SIZE as usize;
        let buf = ffi::av_mallocz(bytes.len() + pad) as *mut u8;
        assert!(!buf.is_null(), "av_mallocz failed: out of memory");
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf, bytes.len());
        (*par).extradata = buf;
        (*par).extradata_size = bytes.len() as i32;
    }
}

/// Re-initialises a resampler so that its channel mix is normalised as swresample does for
/// integer output (`rematrix_maxval=1`: a downmix's coefficients scaled so no output channel
/// can exceed full scale), which is what the ffmpeg CLI's mix to 16-bit PCM gives.
pub fn normalise_resampler_mix(
    context: &mut ffmpeg::software::resampling::Context,
) -> Result<(), ffmpeg::Error> {
    // SAFETY: the context is a valid, initialised SwrContext owned by `context`; setting an
    // option and calling swr_init again (which first clears the old state) is how
    // swresample's API changes a context's parameters.
    unsafe {
        let swr = context.as_mut_ptr();
        let r = ffi::av_opt_set_double(swr as *mut _, c"rematrix_maxval".as_ptr(), 1.0, 0);
        if r < 0 {
            return Err(ffmpeg::Error::from(r));
        }
        let r = ffi::swr_init(swr);
        if r < 0 {
            return Err(ffmpeg::Error::from(r));
        }
    }
    Ok(())
}

/// What the FFmpeg this process runs on can do, for messages and `vidprep probe --build`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BuildFacts {
    /// `av_version_info()`: "5.1.6-0+deb12u1", "n7.1", ...
    pub ffmpeg: String,
    /// libavcodec's version, "major.minor.micro".
    pub libavcodec: String,
    /// The names of the video decoders, in FFmpeg's order of preference.
    pub video_decoders: Vec<String>,
    /// The input protocols (file, http, https, ...).
    pub input_protocols: Vec<String>,
}

/// The FFmpeg build in words: "FFmpeg 5.1.6-0+deb12u1 (libavcodec 59.37.100)".
pub fn ffmpeg_build() -> String {
    let facts = build_facts_versions();
    format!("FFmpeg {} (libavcodec {})", facts.0, facts.1)
}

fn build_facts_versions() -> (String, String) {
    // SAFETY: av_version_info returns a pointer to a static NUL-terminated string (checked for
    // null); avcodec_version has no arguments and no side effects.
    let (info, v) = unsafe { (ffi::av_version_info(), ffi::avcodec_version()) };
    let text = if info.is_null() {
        "?".to_string()
    } else {
        // SAFETY: non-null, static and NUL-terminated (above).
        unsafe { std::ffi::CStr::from_ptr(info) }
            .to_string_lossy()
            .into_owned()
    };
    (
        text,
        format!("{}.{}.{}", v >> 16, (v >> 8) & 0xff, v & 0xff),
    )
}

/// Every video decoder and input protocol of this build (see [`BuildFacts`]).
pub fn build_facts() -> BuildFacts {
    let (ffmpeg, libavcodec) = build_facts_versions();
    let mut video_decoders = Vec::new();
    let mut opaque: *mut std::ffi::c_void = std::ptr::null_mut();
    loop {
        // SAFETY: av_codec_iterate walks FFmpeg's static codec list with `opaque` as its
        // cursor (started at null); each AVCodec it returns is static and its `name` a static
        // NUL-terminated string.
        let codec = unsafe { ffi::av_codec_iterate(&mut opaque) };
        if codec.is_null() {
            break;
        }
        // SAFETY: `codec` is non-null and static (above).
        let (is_decoder, kind, name) = unsafe {
            (
                ffi::av_codec_is_decoder(codec) != 0,
                (*codec).type_,
                std::ffi::CStr::from_ptr((*codec).name),
            )
        };
        if is_decoder && kind == ffi::AVMediaType::AVMEDIA_TYPE_VIDEO {
            video_decoders.push(name.to_string_lossy().into_owned());
        }
    }
    BuildFacts {
        ffmpeg,
        libavcodec,
        video_decoders,
        input_protocols: input_protocols(),
    }
}

/// The input protocols of this build (file, http, https, ...), without walking the codecs.
pub fn input_protocols() -> Vec<String> {
    let mut input_protocols = Vec::new();
    let mut opaque: *mut std::ffi::c_void = std::ptr::null_mut();
    loop {
        // SAFETY: avio_enum_protocols walks the static protocol list with `opaque` as its
        // cursor (0: input protocols); each name is a static NUL-terminated string.
        let name = unsafe { ffi::avio_enum_protocols(&mut opaque, 0) };
        if name.is_null() {
            break;
        }
        // SAFETY: non-null and static (above).
        input_protocols.push(
            unsafe { std::ffi::CStr::from_ptr(name) }
                .to_string_lossy()
                .into_owned(),
        );
    }
    input_protocols
}
