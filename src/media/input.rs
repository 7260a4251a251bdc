//! Opening a media file and describing its video stream: which stream, its time base, stored
//! size, rotation (from the display matrix), frame rates and metadata counts. Everything else in
//! `media` starts from a [`VideoInput`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ffmpeg::ffi;
use ffmpeg::format::context::Input;

pub use crate::media::ffi::OpenedInput;
use ffmpeg::media::Type as MediaType;
use ffmpeg_next as ffmpeg;

use crate::call::context::CallContext;
use crate::error::{Error, Result};
use crate::media::source::{ImageSequence, Resolved, Source, SourceKind};
use crate::vocab::time::Time;
use crate::vocab::{Ratio, Rotation};

// Ratio is the plan's vocabulary (crate::vocab); FFmpeg's rational converts to and from it here.
impl From<ffmpeg::Rational> for Ratio {
    fn from(r: ffmpeg::Rational) -> Ratio {
        Ratio {
            num: r.numerator(),
            den: r.denominator(),
        }
    }
}

impl From<Ratio> for ffmpeg::Rational {
    fn from(r: Ratio) -> ffmpeg::Rational {
        ffmpeg::Rational::new(r.num, r.den)
    }
}

/// What the container says about the chosen video stream (before decoding anything).
#[derive(Clone, Debug)]
pub struct VideoStreamInfo {
    /// The stream's index in the container.
    pub index: usize,
    /// The codec's short name (`h264`, `mpeg4`, ...).
    pub codec: String,
    /// The unit of the stream's timestamps, in seconds.
    pub time_base: Ratio,
    /// Width of the stored pictures in pixels (before rotation and pixel-aspect correction).
    pub stored_width: u32,
    /// Height of the stored pictures in pixels.
    pub stored_height: u32,
    /// The display rotation the file asks for (applied by the readers unless told not to).
    pub rotation: Rotation,
    /// Shape of one stored pixel (`1/1` square; `0/1` when the file does not say).
    pub sample_aspect_ratio: Ratio,
    /// The container's average frame rate (frames per second; `0/0` when unknown).
    pub avg_frame_rate: Ratio,
    /// The container's nominal ("real base") frame rate, ffmpeg's `r_frame_rate`.
    pub nominal_frame_rate: Ratio,
    /// The decoder's pixel format name (`yuv420p`, ...).
    pub pixel_format: String,
    /// The stream's start time in `time_base` ticks, when the container gives one.
    pub start_pts: Option<i64>,
    /// The stream's duration in `time_base` ticks, when the container gives one.
    pub duration_pts: Option<i64>,
    /// The frame count the container claims (often missing or wrong).
    pub metadata_frames: Option<u64>,
    /// The stream's bit rate in bits per second, when the container gives one.
    pub bit_rate: Option<u64>,
}

impl VideoStreamInfo {
    /// The size players show: upright (rotation applied) and with square pixels (the
    /// width stretched or squeezed by the sample aspect ratio, as ffmpeg's
    /// `scale=iw*sar:ih` does), even numbers.
    pub fn displayed_size(&self) -> (u32, u32) {
        let (w, h) = square_pixel_size(
            self.stored_width,
            self.stored_height,
            self.sample_aspect_ratio,
        );
        self.rotation.displayed_size(w, h)
    }

    /// Upright size without correcting the pixel shape.
    pub fn upright_stored_size(&self) -> (u32, u32) {
        self.rotation
            .displayed_size(self.stored_width, self.stored_height)
    }

    /// True when pixels are not square (a sample aspect ratio other than 1:1 is set).
    pub fn has_non_square_pixels(&self) -> bool {
        let sar = self.sample_aspect_ratio;
        sar.is_valid() && sar.num != sar.den
    }

    /// The frame rate to assume when the file gives no better information.
    pub fn best_frame_rate(&self) -> Option<Ratio> {
        [self.avg_frame_rate, self.nominal_frame_rate]
            .into_iter()
            .find(|r| r.is_valid())
    }
}

/// The square-pixel size of a `width x height` picture whose pixels have shape `sar`: the
/// width is scaled by the SAR (rounded to even), the height kept, as players display it.
pub fn square_pixel_size(width: u32, height: u32, sar: Ratio) -> (u32, u32) {
    if !sar.is_valid() || sar.num == sar.den {
        return (width, height);
    }
    let w = (width as f64 * sar.num as f64 / sar.den as f64).round() as u32;
    let w = ((w + 1) & !1).clamp(2, 16384);
    (w, height)
}

/// An opened source with its best video stream chosen.
pub struct VideoInput {
    /// The source as given (it names the source in messages).
    pub path: PathBuf,
    /// The source with its rate, for opening it again.
    pub source: Source,
    /// What kind of source it is.
    pub kind: SourceKind,
    /// For an image sequence: its folder, naming and rate.
    pub sequence: Option<Arc<ImageSequence>>,
    /// The demuxer.
    pub context: OpenedInput,
    /// The chosen video stream.
    pub video: VideoStreamInfo,
    /// The call it was opened for: what reads it counts on its tally and stops when its
    /// token is cancelled.
    pub call: CallContext,
}

/// The largest frame side vidprep accepts (H.264 level 6.2 tops out at 8192 x 4320; some
/// codecs allow 16384).
pub const MAX_FRAME_SIDE: u32 = 16384;

/// The most pixels one frame may have: 8192 x 8192 (67 megapixels, twice 8K UHD). A frame
/// costs about 1.5 bytes a pixel decoded (YUV 4:2:0; 3 as RGB or 4:4:4) and an encode or a
/// threaded decode holds dozens at once, so a larger one (a 16000 x 16000 MJPEG: 256
/// megapixels, over 16 GB of buffers) is refused from its header, before anything is
/// allocated.
pub const MAX_FRAME_PIXELS: u64 = 8192 * 8192;

/// Checks a frame size read from an input's header before anything is allocated from it.
pub fn check_frame_size(path: &Path, width: u32, height: u32) -> Result<()> {
    let pixels = width as u64 * height as u64;
    if pixels > MAX_FRAME_PIXELS && width <= MAX_FRAME_SIDE && height <= MAX_FRAME_SIDE {
        return Err(Error::OverBudget {
            path: path.to_path_buf(),
            what: format!("a frame of {width}x{height}"),
            needed: pixels,
            pixels: true,
            limit: MAX_FRAME_PIXELS,
            advice: format!(
                "vidprep reads frames of at most {MAX_FRAME_PIXELS} pixels (8192x8192); \
                 scale the video down first (ffmpeg -i IN -vf scale=-2:4320 OUT)"
            ),
        });
    }
    if width == 0 || height == 0 {
        return Err(Error::corrupt(
            path,
            "in its header",
            format!("the frames are {width}x{height}, which holds no picture"),
        ));
    }
    if width > MAX_FRAME_SIDE || height > MAX_FRAME_SIDE {
        return Err(Error::corrupt(
            path,
            "in its header",
            format!(
                "the frames are {width}x{height}, larger than {MAX_FRAME_SIDE}x{MAX_FRAME_SIDE} (a damaged or hostile header?)"
            ),
        ));
    }
    Ok(())
}

/// Refuses a header that claims more frames than the file has bytes (an MP4's `stsz` of 50
/// million samples in 2 KB): a frame's packet holds at least one byte, so no file holds more
/// frames than bytes, and nothing of vidprep's is sized by such a claim. (FFmpeg's own index
/// is built from it while the file opens, before this can be asked.)
fn check_frame_claim(path: &Path, claimed: Option<u64>, size: Option<u64>) -> Result<()> {
    match (claimed, size) {
        (Some(n), Some(size)) if n > size => Err(Error::corrupt(
            path,
            "in its header",
            format!(
                "it claims {n} frames, but the file has {size} bytes and a frame holds at least \
                 one, so it can hold at most {size}: a damaged or hostile file"
            ),
        )),
        _ => Ok(()),
    }
}

/// Opens a source (a media file, an image sequence or an http(s) URL) with a clear error for
/// one that is missing, unreadable or unreachable. For an image sequence, also its resolution.
/// The open is counted on the call's tally, and the input stops waiting on the network once
/// the call is cancelled.
pub(crate) fn open_source(source: &Source, ctx: &CallContext) -> Result<(OpenedInput, Resolved)> {
    crate::media::init::init();
    let path = source.path();
    let resolved = crate::media::source::resolve(source, ctx)?;
    if let Some(seq) = &resolved.sequence {
        // FFmpeg decodes the first image while it opens the sequence (its size is in no
        // demuxer's header): its size is checked from its header first, so that a 12000x12000
        // TIFF is refused before 330 MB are decoded. The others are checked against it before
        // any is read (`FrameTable::of_image_sequence`).
        let first = seq.file_path(0);
        if let Some((width, height)) = crate::media::images::header_size(&first)? {
            check_frame_size(&first, width, height)?;
        }
    }
    ctx.count(crate::call::tally::Event::Open);
    let recipe = &resolved.recipe;
    let network = (resolved.kind == SourceKind::Url && !resolved.downloaded)
        .then_some((ctx.settings.network.deadline, ctx.settings.network));
    let context = crate::media::ffi::open_input(
        &recipe.url,
        recipe.format,
        recipe.dictionary(),
        &ctx.cancel,
        network,
    )
    .map_err(|failed| {
        let e = failed.error;
        match resolved.kind {
            SourceKind::File => Error::Open {
                path: path.to_path_buf(),
                source: e.into(),
            },
            SourceKind::Url => crate::media::source::url_error(source, e, failed.verdict, ctx),
            SourceKind::Images => Error::request(
                path,
                format!("cannot open the images with FFmpeg's image2 reader ({e})"),
            ),
        }
    })?;
    if resolved.kind == SourceKind::Url && !crate::media::ffi::input_seekable(&context) {
        // vidprep reads a source more than once and seeks in it; a server that ignores
        // `Range:` (Python's http.server) or a live, endless stream cannot give that.
        let size = crate::media::ffi::input_byte_size(&context);
        return Err(Error::Network {
            url: path.display().to_string(),
            message: match size {
                Some(_) => "the server does not accept range requests (it sent no \
                            `Accept-Ranges: bytes`), and vidprep seeks in its sources: serve it \
                            with a server that supports ranges (nginx, `npx http-server`, \
                            `rclone serve http`), or download the file first"
                    .into(),
                None => "the server gives neither a size nor range requests (a live or \
                         endless stream?); vidprep reads finite files: record a part first \
                         (ffmpeg -i URL -t 60 -c copy part.ts)"
                    .into(),
            },
        });
    }
    if resolved.sequence.is_none() {
        // What the header says beyond the video, for whoever needs it next (the soundtrack's
        // format, the pass-through check), before a packet is read.
        source.learn_header(|| crate::media::source::Header {
            format_name: context.format().name().to_string(),
            audio: audio_format_of(&context),
            audio_codecs: context
                .streams()
                .filter(|s| s.parameters().medium() == MediaType::Audio)
                .map(|s| s.parameters().id())
                .collect(),
        });
    }
    if let Some(seq) = &resolved.sequence {
        // image2 found the files itself: it must have found exactly the ones listed here.
        let found = best_video_stream(&context)
            .and_then(|i| context.stream(i))
            .map(|s| s.duration())
            .unwrap_or(0);
        if found != seq.count as i64 {
            return Err(Error::request(
                path,
                format!(
                    "FFmpeg found {found} images where vidprep listed {} ({} to {}); did the folder change while it was read?",
                    seq.count,
                    seq.file_name(0),
                    seq.file_name(seq.count - 1)
                ),
            ));
        }
    }
    Ok((context, resolved))
}

/// Opens a source as a media container for the call `ctx` (see [`open_source`]).
pub(crate) fn open_media(source: &Source, ctx: &CallContext) -> Result<OpenedInput> {
    open_source(source, ctx).map(|(context, _)| context)
}

impl VideoInput {
    /// The size in bytes of what the input reads (a file, or a URL whose server says), when
    /// known.
    pub fn byte_size(&self) -> Option<u64> {
        crate::media::ffi::input_byte_size(&self.context)
    }

    /// Opens a source (a path, or a [`Source`] with its rate) and picks its best video stream
    /// (ffmpeg's choice, skipping cover art), for the call `ctx`.
    pub fn open(source: impl Into<Source>, ctx: &CallContext) -> Result<VideoInput> {
        let source = source.into();
        let path = source.path().to_path_buf();
        let (context, resolved) = open_source(&source, ctx)?;
        let index =
            best_video_stream(&context).ok_or_else(|| Error::NoVideo { path: path.clone() })?;
        let video = describe_video_stream(&context, index);
        check_frame_size(&path, video.stored_width, video.stored_height)?;
        if resolved.sequence.is_none() {
            let size = match resolved.kind {
                SourceKind::File => std::fs::metadata(&path).ok().map(|m| m.len()),
                _ => crate::media::ffi::input_byte_size(&context),
            };
            check_frame_claim(&path, video.metadata_frames, size)?;
        }
        Ok(VideoInput {
            path,
            source,
            kind: resolved.kind,
            sequence: resolved.sequence,
            context,
            video,
            call: ctx.clone(),
        })
    }

    /// Tells the demuxer to drop every stream but the ones listed (saves reading their data).
    pub fn keep_only_streams(&mut self, keep: &[usize]) {
        for i in 0..self.context.nb_streams() as usize {
            crate::media::ffi::set_stream_discard(&mut self.context, i, !keep.contains(&i));
        }
    }

    /// The input's start as ffmpeg uses it for `-ss`/`-t`: the earliest start among its
    /// streams (exact microseconds), `None` when the container gives none.
    pub fn start_time(&self) -> Option<Time> {
        crate::media::ffi::format_start_time_us(&self.context)
            .map(|us| Time::new(us, i64::from(ffmpeg::ffi::AV_TIME_BASE)))
    }
}

/// Whether a read error ends the input the way the ffmpeg CLI treats it: a demuxer that
/// finds damaged data it cannot resynchronise past (an Ogg page of a stream that does not
/// exist, ...) returns `AVERROR_INVALIDDATA`, and `ffmpeg`/`ffprobe` end the input there, so
/// the frames before it are the video. Other errors (I/O, network) stay errors.
pub fn read_error_ends_input(e: &ffmpeg::Error) -> bool {
    matches!(e, ffmpeg::Error::InvalidData)
}

/// The next packet of `context` in a fresh packet, `Ok(None)` at the end of the file.
/// (`av_read_frame` wants a blank packet: reading into a used one leaks its data.)
pub fn read_packet(context: &mut Input) -> Result<Option<ffmpeg::Packet>, ffmpeg::Error> {
    let mut packet = ffmpeg::Packet::empty();
    match packet.read(context) {
        Ok(()) => Ok(Some(packet)),
        Err(ffmpeg::Error::Eof) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The video stream the ffmpeg CLI picks (`ffmpeg -i SRC OUT` without `-map`): the most
/// pixels, a stream marked default counting as 5 million more, the first of equals; never an
/// attached picture (cover art). (`av_find_best_stream` ranks by frames found and bit rate
/// instead: on an AVIF sequence with an alpha track of the same size it chose the alpha
/// plane, and every frame vidprep read was grey.)
pub fn best_video_stream(context: &Input) -> Option<usize> {
    let mut best: Option<(i64, usize)> = None;
    for s in context.streams() {
        if s.parameters().medium() != MediaType::Video
            || s.disposition()
                .contains(ffmpeg::format::stream::Disposition::ATTACHED_PIC)
        {
            continue;
        }
        let facts = crate::media::ffi::stream_parameters(context, s.index());
        let (width, height) = (facts.width.max(0), facts.height.max(0));
        let default = s
            .disposition()
            .contains(ffmpeg::format::stream::Disposition::DEFAULT);
        let score = width as i64 * height as i64 + if default { 5_000_000 } else { 0 };
        if best.is_none_or(|(b, _)| score > b) {
            best = Some((score, s.index()));
        }
    }
    best.map(|(_, index)| index)
}

/// The best audio stream, if any.
pub fn best_audio_stream(context: &Input) -> Option<usize> {
    context.streams().best(MediaType::Audio).map(|s| s.index())
}

fn describe_video_stream(context: &Input, index: usize) -> VideoStreamInfo {
    let stream = context
        .stream(index)
        .expect("stream index from best_video_stream");
    let params = crate::media::ffi::stream_parameters(context, index);
    let bit_rate = stream.parameters().bit_rate();
    let start = stream.start_time();
    let duration = stream.duration();
    let frames = stream.frames();
    VideoStreamInfo {
        index,
        codec: stream.parameters().id().name().to_string(),
        time_base: stream.time_base().into(),
        stored_width: params.width.max(0) as u32,
        stored_height: params.height.max(0) as u32,
        rotation: stream_rotation(&stream),
        sample_aspect_ratio: params.sample_aspect_ratio,
        avg_frame_rate: stream.avg_frame_rate().into(),
        nominal_frame_rate: stream.rate().into(),
        pixel_format: crate::media::ffi::stream_pixel_format_name(context, index),
        start_pts: (start != ffi::AV_NOPTS_VALUE).then_some(start),
        duration_pts: (duration != ffi::AV_NOPTS_VALUE && duration > 0).then_some(duration),
        metadata_frames: (frames > 0).then_some(frames as u64),
        bit_rate: (bit_rate > 0).then_some(bit_rate as u64),
    }
}

/// The clockwise rotation to apply so the picture is upright, read from the stream's display
/// matrix the way the ffmpeg 5.1 CLI reads it (`theta = -av_display_rotation_get`).
fn stream_rotation(stream: &ffmpeg::format::stream::Stream) -> Rotation {
    let Some(matrix) = stream
        .side_data()
        .find(|d| d.kind() == ffmpeg::codec::packet::side_data::Type::DisplayMatrix)
    else {
        return Rotation::None;
    };
    match display_rotation_degrees(matrix.data()) {
        Some(angle) => Rotation::from_degrees_cw(-angle),
        None => Rotation::None,
    }
}

/// `av_display_rotation_get` on the bytes of a display matrix (nine native-endian 16.16 and
/// 2.30 fixed-point integers): the counter-clockwise rotation in degrees.
pub fn display_rotation_degrees(bytes: &[u8]) -> Option<f64> {
    if bytes.len() < 9 * 4 {
        return None;
    }
    let m = |i: usize| {
        let v = i32::from_ne_bytes(bytes[i * 4..i * 4 + 4].try_into().expect("4 bytes"));
        v as f64 / 65536.0
    };
    let scale0 = m(0).hypot(m(3));
    let scale1 = m(1).hypot(m(4));
    if scale0 == 0.0 || scale1 == 0.0 {
        return None;
    }
    let rotation = (m(1) / scale1).atan2(m(0) / scale0).to_degrees();
    let angle = -rotation;
    angle.is_finite().then_some(angle)
}

/// Sample rate and channels of the best audio stream of an input just opened (before any
/// packet is read), if it has a usable one.
pub(crate) fn audio_format_of(ctx: &ffmpeg::format::context::Input) -> Option<(u32, u16)> {
    let index = best_audio_stream(ctx)?;
    let p = crate::media::ffi::stream_parameters(ctx, index);
    if p.sample_rate <= 0 || p.channels <= 0 || p.sample_rate > 1_000_000 || p.channels > 64 {
        return None;
    }
    Some((p.sample_rate as u32, p.channels as u16))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_from_degrees() {
        assert_eq!(Rotation::from_degrees_cw(90.0), Rotation::Clockwise90);
        assert_eq!(Rotation::from_degrees_cw(-90.0), Rotation::Clockwise270);
        assert_eq!(Rotation::from_degrees_cw(180.0), Rotation::Rotate180);
        assert_eq!(Rotation::from_degrees_cw(-180.0), Rotation::Rotate180);
        assert_eq!(Rotation::from_degrees_cw(359.6), Rotation::None);
        assert_eq!(Rotation::Clockwise90.displayed_size(568, 320), (320, 568));
    }

    #[test]
    fn display_matrix_angles() {
        // [0, -1, 0; 1, 0, 0; 0, 0, 1] in 16.16: av_display_rotation_get gives 90
        let one = 1 << 16;
        let m: [i32; 9] = [0, -one, 0, one, 0, 0, 0, 0, 1 << 30];
        let bytes: Vec<u8> = m.iter().flat_map(|v| v.to_ne_bytes()).collect();
        assert_eq!(display_rotation_degrees(&bytes).map(f64::round), Some(90.0));
        assert_eq!(display_rotation_degrees(&bytes[..8]), None);
    }

    #[test]
    fn square_pixels() {
        assert_eq!(square_pixel_size(720, 576, Ratio::new(64, 45)), (1024, 576));
        assert_eq!(square_pixel_size(720, 576, Ratio::new(16, 15)), (768, 576));
        assert_eq!(square_pixel_size(720, 576, Ratio::new(1, 1)), (720, 576));
        assert_eq!(square_pixel_size(720, 576, Ratio::new(0, 1)), (720, 576));
    }
}
