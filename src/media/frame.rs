//! Decoded pictures as the pipeline handles them: [`Frame`] (a YUV 4:2:0 picture plus where it
//! came from), pixel-format conversion into that layout, rotation to upright, cropping to even
//! sizes, and conversion to and from RGB images. Pictures of RGB-coded sources (GIF, PNG,
//! QTRLE, Cinepak, FFV1 RGB, ...) also travel in their own pixel format ([`Frame::rgb`]), so
//! RGB outputs are made from them as the ffmpeg CLI's `-pix_fmt rgb24` does, without a
//! detour through YUV 4:2:0.

use ffmpeg::format::Pixel;
pub(in crate::media) use ffmpeg::frame::Video as VideoFrame;
use ffmpeg::software::scaling::{Context as Scaler, Flags};
use ffmpeg::util::color::{Range as ColorRange, Space as ColorSpace};
use ffmpeg_next as ffmpeg;

use crate::error::FfmpegError;
use crate::vocab::time::Time;
use crate::vocab::Rotation;

/// The pixel layout every stage of the pipeline works on.
pub(in crate::media) const PIPELINE_FORMAT: Pixel = Pixel::YUV420P;

/// A picture as vidprep's layers hand it on: FFmpeg's frame behind vidprep's own type, so
/// that no file outside `media/` names the binding. Its planes are read and written in
/// place ([`Picture::data`], [`Picture::data_mut`], [`Picture::stride`]); a picture may
/// share its buffers with others ([`Picture::share`]), so a writer calls
/// [`Picture::make_writable`] first.
pub struct Picture(pub(in crate::media) VideoFrame);

impl std::fmt::Debug for Picture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Picture({}x{} {:?})",
            self.width(),
            self.height(),
            self.0.format()
        )
    }
}

impl Picture {
    /// A new picture of `format` and size (its pixels unset), or FFmpeg's `ENOMEM` when its
    /// buffer cannot be had.
    pub fn new(format: PixelFormat, width: u32, height: u32) -> Result<Picture, FfmpegError> {
        crate::media::init::init();
        Ok(Picture(new_frame(format.0, width, height)?))
    }

    /// Width in pixels.
    pub fn width(&self) -> u32 {
        self.0.width()
    }

    /// Height in pixels.
    pub fn height(&self) -> u32 {
        self.0.height()
    }

    /// Its pixel format.
    pub fn format(&self) -> PixelFormat {
        PixelFormat(self.0.format())
    }

    /// The bytes from one row of `plane` to the next.
    pub fn stride(&self, plane: usize) -> usize {
        self.0.stride(plane)
    }

    /// The bytes of `plane`, row after row ([`Picture::stride`] apart).
    pub fn data(&self, plane: usize) -> &[u8] {
        self.0.data(plane)
    }

    /// The bytes of `plane`, to write (after [`Picture::make_writable`]).
    pub fn data_mut(&mut self, plane: usize) -> &mut [u8] {
        self.0.data_mut(plane)
    }

    /// Another reference to the same pixels: nothing is copied.
    pub fn share(&self) -> Picture {
        Picture(share(&self.0))
    }

    /// Makes the buffers this picture's own (copying them when shared, e.g. with the decoder).
    pub fn make_writable(&mut self) -> Result<(), FfmpegError> {
        Ok(crate::media::ffi::make_writable(&mut self.0)?)
    }

    /// Takes the colour description (matrix, primaries, transfer, range) of `src`, as a
    /// conversion does.
    pub fn copy_colour_description_from(&mut self, src: &Picture) {
        copy_color_props(&src.0, &mut self.0);
    }

    /// The RGB -> YUV matrix the picture is tagged with, if it is BT.709 or BT.601.
    pub fn tagged_matrix(&self) -> TaggedMatrix {
        match self.0.color_space() {
            ColorSpace::BT709 => TaggedMatrix::Bt709,
            ColorSpace::BT470BG | ColorSpace::SMPTE170M | ColorSpace::FCC => TaggedMatrix::Bt601,
            _ => TaggedMatrix::Other,
        }
    }

    /// Whether the picture is tagged full range or is `yuvj420p` (FFmpeg's full-range 4:2:0).
    pub fn has_full_range_levels(&self) -> bool {
        self.0.color_range() == ColorRange::JPEG || self.0.format() == Pixel::YUVJ420P
    }

    /// Whether the picture is full-range YUV (see [`is_full_range_yuv`]).
    pub fn is_full_range_yuv(&self) -> bool {
        is_full_range_yuv(&self.0)
    }

    /// The picture as packed 8-bit RGB through `converter` (see [`to_rgb_image`]).
    pub fn to_rgb_image(&self, converter: &mut Converter) -> Result<image::RgbImage, FfmpegError> {
        Ok(to_rgb_image(&self.0, converter)?)
    }
}

/// The matrix a picture's colour description names (see [`Picture::tagged_matrix`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaggedMatrix {
    /// ITU-R BT.709.
    Bt709,
    /// ITU-R BT.601 (also BT.470BG, SMPTE 170M, FCC).
    Bt601,
    /// Another, or none.
    Other,
}

/// A pixel format, by FFmpeg's name for it, as vidprep's layers ask for one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PixelFormat(pub(in crate::media) Pixel);

impl PixelFormat {
    /// Planar YUV 4:2:0, 8 bits: the layout every stage of the pipeline works on.
    pub const PIPELINE: PixelFormat = PixelFormat(Pixel::YUV420P);
    /// Planar YUV 4:2:0, 8 bits, limited range unless tagged.
    pub const YUV420P: PixelFormat = PixelFormat(Pixel::YUV420P);
    /// Planar YUV 4:2:0, 8 bits, full range (FFmpeg's `yuvj420p`).
    pub const YUVJ420P: PixelFormat = PixelFormat(Pixel::YUVJ420P);
    /// Packed 8-bit RGB.
    pub const RGB24: PixelFormat = PixelFormat(Pixel::RGB24);
    /// Packed 8-bit BGR (OpenCV's order).
    pub const BGR24: PixelFormat = PixelFormat(Pixel::BGR24);
}

impl From<Pixel> for PixelFormat {
    fn from(p: Pixel) -> PixelFormat {
        PixelFormat(p)
    }
}

/// How a [`Converter`] resamples when it changes the size: swscale's kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scaling(pub(in crate::media) Flags);

impl Scaling {
    /// Bicubic: the ffmpeg CLI's default.
    pub const BICUBIC: Scaling = Scaling(Flags::BICUBIC);
    /// Area averaging: for shrinking a lot.
    pub const AREA: Scaling = Scaling(Flags::AREA);
}

impl From<Flags> for Scaling {
    fn from(f: Flags) -> Scaling {
        Scaling(f)
    }
}

/// One decoded picture in presentation order.
pub struct Frame {
    /// 0-based presentation index in its source.
    pub index: usize,
    /// Presentation timestamp in the source stream's time base.
    pub pts: i64,
    /// Presentation time relative to the source's frame 0.
    pub time: Time,
    /// The picture: YUV 4:2:0, upright (unless the reader was asked otherwise). FFmpeg's own
    /// type stays inside the library: a caller reads [`Frame::yuv420p`] or [`Frame::to_rgb`].
    pub(crate) image: Picture,
    /// The decoder marked the picture as damaged (errors concealed).
    pub damaged: bool,
    /// For a source whose RGB must come from its own picture (`keeps_own_rgb`: RGB-coded,
    /// grey, YUV other than 8-bit 4:2:0; and full-range YUV, `is_full_range_yuv`): the
    /// decoder's own picture, upright, in its own pixel format (or RGB24 where it was
    /// rotated), for exact RGB outputs. `None` for limited-range 8-bit 4:2:0 sources, whose
    /// RGB is made from `image`.
    pub(crate) rgb: Option<Picture>,
}

impl std::fmt::Debug for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Frame(#{} pts {} at {}s, {}x{})",
            self.index,
            self.pts,
            self.time.as_secs_f64(),
            self.width(),
            self.height()
        )
    }
}

impl Frame {
    /// Width of the picture in pixels.
    pub fn width(&self) -> u32 {
        self.image.width()
    }

    /// Height of the picture in pixels.
    pub fn height(&self) -> u32 {
        self.image.height()
    }

    /// The picture as packed 8-bit RGB, converted as a frames export converts it: an
    /// RGB-coded, grey or high-bit-depth source from its own picture, any other from the YUV
    /// 4:2:0 picture, with swscale's bicubic flags, as `ffmpeg -i SRC -pix_fmt rgb24` converts.
    /// A buffer the system refuses is an error.
    pub fn to_rgb(&self) -> crate::error::Result<image::RgbImage> {
        let source = self
            .rgb
            .as_ref()
            .filter(|r| (r.width(), r.height()) == (self.width(), self.height()))
            .unwrap_or(&self.image);
        let mut converter = Converter::to_format(Pixel::RGB24);
        to_rgb_image(&source.0, &mut converter).map_err(|e| {
            if is_out_of_memory(&e) {
                crate::error::Error::OutOfMemory {
                    path: std::path::PathBuf::new(),
                    what: format!("frame {} to RGB", self.index),
                    needed: self.width() as u64 * self.height() as u64 * 3,
                    advice: "free memory, or read smaller frames".into(),
                }
            } else {
                crate::error::Error::internal(format!(
                    "cannot convert frame {} to RGB: {e}",
                    self.index
                ))
            }
        })
    }

    /// The picture as packed planar YUV 4:2:0 bytes (Y, then U, then V, no padding).
    pub fn yuv420p(&self) -> Vec<u8> {
        let (w, h) = (self.width(), self.height());
        let mut data = Vec::with_capacity((w * h * 3 / 2) as usize + 2 * (w + h) as usize);
        for (plane, &(pw, ph)) in yuv420_plane_sizes(w, h).iter().enumerate() {
            let stride = self.image.stride(plane);
            let bytes = self.image.data(plane);
            for y in 0..ph {
                data.extend_from_slice(&bytes[y * stride..y * stride + pw]);
            }
        }
        data
    }
}

/// Converts pictures to another pixel format and/or size, caching the swscale context for
/// the last input geometry seen.
pub struct Converter {
    scaler: Option<crate::media::ffi::OwnedScaler>,
    /// The input the context was made for: pixel format, size, and the colour description
    /// it was told (see [`crate::media::ffi::describe_scaler_input`]).
    key: (Pixel, u32, u32, ColorSpace, ColorRange),
    dst: (Pixel, u32, u32),
    flags: Flags,
}

impl Converter {
    /// A converter to `format` at the input's own size (`dst_size == None`) or a fixed size.
    pub fn new(
        format: impl Into<PixelFormat>,
        dst_size: Option<(u32, u32)>,
        scaling: impl Into<Scaling>,
    ) -> Converter {
        let (format, flags) = (format.into().0, scaling.into().0);
        let (w, h) = dst_size.unwrap_or((0, 0));
        Converter {
            scaler: None,
            key: (
                Pixel::None,
                0,
                0,
                ColorSpace::Unspecified,
                ColorRange::Unspecified,
            ),
            dst: (format, w, h),
            flags,
        }
    }

    /// Same-size conversion with the ffmpeg CLI's default scaler flags (bicubic), so results
    /// match what `ffmpeg -pix_fmt ...` produces.
    pub fn to_format(format: impl Into<PixelFormat>) -> Converter {
        Converter::new(format, None, Flags::BICUBIC)
    }

    /// Same-size conversion with swscale's bilinear flags: libavfilter's default for a
    /// `scale` filter given no flags, which decord's filter graph is (so VLMEvalKit's frames).
    /// It differs from [`Converter::to_format`] only where swscale has no unscaled path for
    /// the conversion (an odd width or height: every chroma sample is then interpolated).
    pub fn to_format_bilinear(format: impl Into<PixelFormat>) -> Converter {
        Converter::new(format, None, Flags::BILINEAR)
    }

    /// `src` converted (a new picture).
    pub fn convert(&mut self, src: &Picture) -> Result<Picture, FfmpegError> {
        Ok(Picture(self.convert_frame(&src.0)?))
    }

    /// [`Converter::convert`] on FFmpeg's frame, for `media/`'s own readers.
    pub(in crate::media) fn convert_frame(
        &mut self,
        src: &VideoFrame,
    ) -> Result<VideoFrame, ffmpeg::Error> {
        let key = (
            src.format(),
            src.width(),
            src.height(),
            src.color_space(),
            src.color_range(),
        );
        let (dw, dh) = if self.dst.1 == 0 {
            (src.width(), src.height())
        } else {
            (self.dst.1, self.dst.2)
        };
        if self.scaler.is_none()
            || self.key != key
            || self
                .scaler
                .as_ref()
                .map(|s| (s.0.output().width, s.0.output().height))
                != Some((dw, dh))
        {
            let mut scaler = Scaler::get(
                swscale_format(key.0, key.4),
                key.1,
                key.2,
                self.dst.0,
                dw,
                dh,
                self.flags,
            )?;
            // The source's matrix and range, as the ffmpeg CLI's scale filter passes them.
            crate::media::ffi::describe_scaler_input(&mut scaler, key.3, key.4)?;
            self.scaler = Some(crate::media::ffi::OwnedScaler(scaler));
            self.key = key;
        }
        // Allocated here, so that a refused buffer is ENOMEM (swscale's own allocation would
        // report it as "output changed").
        let mut out = new_frame(self.dst.0, dw, dh)?;
        let scaler = &mut self.scaler.as_mut().expect("scaler set above").0;
        if scaler.input().format == src.format() {
            scaler.run(src, &mut out)?;
        } else {
            // The same pixels, named by their full-range twin (see swscale_format).
            let mut view = share(src);
            view.set_format(scaler.input().format);
            scaler.run(&view, &mut out)?;
        }
        copy_color_props(src, &mut out);
        Ok(out)
    }
}

/// The pixel format to give swscale for pictures in `format` at `range`. swscale chooses its
/// conversion when the context is made, from the formats' ranges as it knows them then (a
/// `yuvj*` format is full range, other YUV limited); a range set afterwards
/// (`sws_setColorspaceDetails`) does not undo a plain copy chosen between two formats of equal
/// layout and range. So a full-range `yuv420p` picture (VP9, AV1) is named `yuvj420p`, its
/// full-range twin with the same memory layout, as FFmpeg's own decoders name full-range
/// H.264, HEVC and JPEG pictures.
fn swscale_format(format: Pixel, range: ColorRange) -> Pixel {
    if range != ColorRange::JPEG {
        return format;
    }
    match format {
        Pixel::YUV420P => Pixel::YUVJ420P,
        Pixel::YUV422P => Pixel::YUVJ422P,
        Pixel::YUV444P => Pixel::YUVJ444P,
        Pixel::YUV440P => Pixel::YUVJ440P,
        Pixel::YUV411P => Pixel::YUVJ411P,
        other => other,
    }
}

/// Another reference to the same picture: no pixels are copied (ffmpeg-next's `clone` copies
/// every pixel). Writers must call `draw::make_writable` first, which copies only when shared.
pub(in crate::media) fn share(frame: &VideoFrame) -> VideoFrame {
    crate::media::ffi::share_frame(frame)
}

/// Carries colour description from one picture to another (the encoder tags its output with it).
pub(in crate::media) fn copy_color_props(src: &VideoFrame, dst: &mut VideoFrame) {
    dst.set_color_space(src.color_space());
    dst.set_color_primaries(src.color_primaries());
    dst.set_color_transfer_characteristic(src.color_transfer_characteristic());
    // Conversion to YUV420P yields limited range.
    if dst.format() == Pixel::YUV420P {
        dst.set_color_range(ffmpeg::util::color::Range::MPEG);
    } else {
        dst.set_color_range(src.color_range());
    }
}

/// The sizes of the three planes of a `width x height` YUV 4:2:0 picture.
pub fn yuv420_plane_sizes(width: u32, height: u32) -> [(usize, usize); 3] {
    let (cw, ch) = (width.div_ceil(2) as usize, height.div_ceil(2) as usize);
    [(width as usize, height as usize), (cw, ch), (cw, ch)]
}

/// Whether pictures in `format` are coded as RGB (packed or planar), a palette or grey
/// levels rather than YUV: their RGB must come from them directly, as the ffmpeg CLI converts,
/// not through YUV 4:2:0 (which loses colour). Told by FFmpeg's format name, which is stable
/// across versions (`rgb24`, `bgra`, `0rgb`, `gbrp10le`, `pal8`, `gray16be`, `ya8`, ...).
pub(in crate::media) fn is_rgb_coded(format: Pixel) -> bool {
    let Some(desc) = format.descriptor() else {
        return false;
    };
    let name = desc.name();
    [
        "rgb", "bgr", "argb", "abgr", "0rgb", "0bgr", "gbr", "x2rgb", "x2bgr", "pal8", "gray",
        "ya", "monow", "monob",
    ]
    .iter()
    .any(|p| name.starts_with(p))
}

/// Whether a picture in `format` must give its RGB from itself, as the ffmpeg CLI converts
/// it: RGB-coded pictures ([`is_rgb_coded`]) and YUV whose chroma is not 4:2:0 (4:1:0, 4:1:1,
/// 4:2:2, 4:4:4, 4:4:0) or whose samples are more than 8 bits. Through the pipeline's 8-bit
/// 4:2:0 their colour would be resampled twice (a 4:4:4 picture's PNG came out 29.6 dB from
/// `ffmpeg -pix_fmt rgb24`'s, values off by up to 83; Indeo 3's 4:1:0 37.8 dB, MJPEG's 4:2:2
/// 44.6 dB).
pub(in crate::media) fn keeps_own_rgb(format: Pixel) -> bool {
    if is_rgb_coded(format) {
        return true;
    }
    let Some(desc) = format.descriptor() else {
        return false;
    };
    let subsampled_420 = desc.log2_chroma_w() == 1 && desc.log2_chroma_h() == 1;
    let name = desc.name();
    // More than 8 bits: FFmpeg's names end in the depth and the byte order (`yuv420p10le`).
    let deep = name.ends_with("le") || name.ends_with("be");
    desc.nb_components() >= 3 && (!subsampled_420 || deep)
}

/// Whether `picture` is full-range YUV: a `yuvj*` format (FFmpeg's H.264, HEVC and JPEG
/// decoders name full range so) or a YUV format tagged full range (VP9, AV1, MPEG-4 with
/// `color_range pc`). The pipeline's limited-range 4:2:0 would move its levels (values off by
/// up to 3 from `ffmpeg -pix_fmt rgb24`, issue 52), so its RGB comes from the picture itself.
pub(in crate::media) fn is_full_range_yuv(picture: &VideoFrame) -> bool {
    let Some(desc) = picture.format().descriptor() else {
        return false;
    };
    if desc.nb_components() < 3 || is_rgb_coded(picture.format()) {
        return false;
    }
    desc.name().starts_with("yuvj") || picture.color_range() == ColorRange::JPEG
}

/// How many size changes a decode records (a damaged stream may change at every frame).
pub(crate) const MAX_SIZE_CHANGES: usize = 16;

/// A frame where the picture size changes (the decoder's order).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct SizeChange {
    /// The first frame of the new size.
    pub frame: usize,
    /// The size before it, `WxH`.
    pub from: String,
    /// Its size, `WxH`.
    pub to: String,
    /// A change no recording makes (the shape changing more than 4 times, the area more than
    /// 16 times): likely a damaged frame header, not recordings joined together.
    pub likely_damage: bool,
}

impl SizeChange {
    /// The change at `frame` from the size `from` to `to` (width, height).
    pub(crate) fn new(frame: usize, from: (u32, u32), to: (u32, u32)) -> Self {
        Self {
            frame,
            from: format!("{}x{}", from.0, from.1),
            to: format!("{}x{}", to.0, to.1),
            likely_damage: implausible_size_change(from, to),
        }
    }
}

/// Whether a decoded picture of `picture` size is damage in a stream whose parameters give
/// `stream`: a size no recording changes to ([`implausible_size_change`]) is a damaged frame
/// header (a VP8 keyframe's size field read 320x8944 in a 320x240 stream, libvpx flagging
/// nothing), and the pictures decoded at that size are whatever the decoder made of too little
/// data, differing with its threads: damage, as a concealed picture is.
pub(crate) fn size_is_damage(stream: (u32, u32), picture: (u32, u32)) -> bool {
    stream.0 > 0 && stream.1 > 0 && implausible_size_change(stream, picture)
}

/// Whether a picture size change from `from` to `to` is one no recording makes: the shape
/// (width / height) changing by more than 4 times, or the area by more than 16 times.
pub(crate) fn implausible_size_change(from: (u32, u32), to: (u32, u32)) -> bool {
    let aspect = |(w, h): (u32, u32)| w.max(1) as f64 / h.max(1) as f64;
    let area = |(w, h): (u32, u32)| w.max(1) as f64 * h.max(1) as f64;
    let shape = aspect(to) / aspect(from);
    let scale = area(to) / area(from);
    !(0.25..=4.0).contains(&shape) || !(1.0 / 16.0..=16.0).contains(&scale)
}

/// Rotates a packed RGB24 picture clockwise by `rotation` into a new picture.
pub(in crate::media) fn rotate_rgb24(
    src: &VideoFrame,
    rotation: Rotation,
) -> Result<VideoFrame, ffmpeg::Error> {
    if rotation == Rotation::None {
        return Ok(share(src));
    }
    let (w, h) = (src.width() as usize, src.height() as usize);
    let (dw, dh) = rotation.displayed_size(w as u32, h as u32);
    let mut dst = new_frame(Pixel::RGB24, dw, dh)?;
    let s_stride = src.stride(0);
    let d_stride = dst.stride(0);
    let s = src.data(0);
    let d = dst.data_mut(0);
    for y in 0..h {
        for x in 0..w {
            let (dx, dy) = match rotation {
                Rotation::Rotate180 => (w - 1 - x, h - 1 - y),
                Rotation::Clockwise90 => (h - 1 - y, x),
                Rotation::Clockwise270 => (y, w - 1 - x),
                Rotation::None => unreachable!(),
            };
            let si = y * s_stride + 3 * x;
            let di = dy * d_stride + 3 * dx;
            d[di..di + 3].copy_from_slice(&s[si..si + 3]);
        }
    }
    copy_color_props(src, &mut dst);
    Ok(dst)
}

/// Rotates a YUV 4:2:0 picture clockwise by `rotation` into a new picture.
pub(in crate::media) fn rotate_yuv420(
    src: &VideoFrame,
    rotation: Rotation,
) -> Result<VideoFrame, ffmpeg::Error> {
    if rotation == Rotation::None {
        return Ok(share(src));
    }
    let (w, h) = (src.width(), src.height());
    let (dw, dh) = rotation.displayed_size(w, h);
    let mut dst = new_frame(PIPELINE_FORMAT, dw, dh)?;
    let sizes = yuv420_plane_sizes(w, h);
    for (plane, &(pw, ph)) in sizes.iter().enumerate() {
        let s_stride = src.stride(plane);
        let d_stride = dst.stride(plane);
        let s = src.data(plane);
        let d = dst.data_mut(plane);
        match rotation {
            Rotation::Rotate180 => {
                for y in 0..ph {
                    let srow = &s[y * s_stride..y * s_stride + pw];
                    let dy = ph - 1 - y;
                    let drow = &mut d[dy * d_stride..dy * d_stride + pw];
                    for (x, &v) in srow.iter().enumerate() {
                        drow[pw - 1 - x] = v;
                    }
                }
            }
            Rotation::Clockwise90 => {
                // dst(x', y') = src(x = y', y = ph - 1 - x'); dst is ph wide and pw tall.
                for y in 0..ph {
                    let srow = &s[y * s_stride..y * s_stride + pw];
                    let dx = ph - 1 - y;
                    for (x, &v) in srow.iter().enumerate() {
                        d[x * d_stride + dx] = v;
                    }
                }
            }
            Rotation::Clockwise270 => {
                // dst(x', y') = src(x = pw - 1 - y', y = x')
                for y in 0..ph {
                    let srow = &s[y * s_stride..y * s_stride + pw];
                    for (x, &v) in srow.iter().enumerate() {
                        d[(pw - 1 - x) * d_stride + y] = v;
                    }
                }
            }
            Rotation::None => unreachable!(),
        }
    }
    copy_color_props(src, &mut dst);
    Ok(dst)
}

/// A view of `src` cropped to an even width and height (dropping the last column/row when
/// odd), without copying pixels: planes start top-left, so only the size changes.
pub(in crate::media) fn crop_to_even(src: &VideoFrame) -> VideoFrame {
    let (w, h) = (src.width() & !1, src.height() & !1);
    let mut out = share(src);
    if (w, h) != (src.width(), src.height()) {
        out.set_width(w);
        out.set_height(h);
    }
    out
}

/// An empty byte buffer with room for `len` bytes, or `None` when the system refuses that
/// much memory (for buffers sized by an input: an error to report, never an abort).
pub fn try_buffer(len: usize) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    buf.try_reserve_exact(len).ok()?;
    Some(buf)
}

/// A new picture of `format` and size, or FFmpeg's `ENOMEM` when its buffer cannot be had
/// (ffmpeg-next's `Video::new` leaves an empty frame then, which would fault when written).
pub(in crate::media) fn new_frame(
    format: Pixel,
    width: u32,
    height: u32,
) -> Result<VideoFrame, ffmpeg::Error> {
    let frame = VideoFrame::new(format, width, height);
    // SAFETY: `frame` owns a valid AVFrame just made by `Video::new`; `is_empty` only reads
    // its first data pointer (null when `av_frame_get_buffer` failed and unset the frame).
    let empty = unsafe { frame.is_empty() };
    if empty && width > 0 && height > 0 {
        return Err(ffmpeg::Error::Other {
            errno: ffmpeg::util::error::ENOMEM,
        });
    }
    Ok(frame)
}

/// Whether an FFmpeg error is its out-of-memory error (`ENOMEM`).
pub(in crate::media) fn is_out_of_memory(e: &ffmpeg::Error) -> bool {
    matches!(e, ffmpeg::Error::Other { errno } if *errno == ffmpeg::util::error::ENOMEM)
}

/// The picture as packed 8-bit RGB (via swscale, ffmpeg's default bicubic flags). A buffer
/// the system refuses is FFmpeg's `ENOMEM` ([`is_out_of_memory`]).
pub(in crate::media) fn to_rgb_image(
    src: &VideoFrame,
    converter: &mut Converter,
) -> Result<image::RgbImage, ffmpeg::Error> {
    let rgb = converter.convert_frame(src)?;
    let (w, h) = (rgb.width() as usize, rgb.height() as usize);
    let stride = rgb.stride(0);
    let data = rgb.data(0);
    let mut buf = try_buffer(w * h * 3).ok_or(ffmpeg::Error::Other {
        errno: ffmpeg::util::error::ENOMEM,
    })?;
    for y in 0..h {
        buf.extend_from_slice(&data[y * stride..y * stride + w * 3]);
    }
    Ok(image::RgbImage::from_raw(w as u32, h as u32, buf).expect("buffer sized from the frame"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_size_change_no_recording_makes_is_told_apart() {
        // Recordings joined: another size of a like shape.
        assert!(!super::implausible_size_change((320, 240), (480, 360)));
        assert!(!super::implausible_size_change((1920, 1080), (1280, 720)));
        assert!(!super::implausible_size_change((640, 480), (1920, 1080)));
        // A damaged VP8 size field, and other shapes no recording takes.
        assert!(super::implausible_size_change((320, 240), (320, 8944)));
        assert!(super::implausible_size_change((320, 240), (16, 240)));
        assert!(super::implausible_size_change((160, 120), (3840, 2160)));
    }

    use super::*;

    fn numbered(w: u32, h: u32) -> VideoFrame {
        crate::media::init::init();
        let mut f = VideoFrame::new(PIPELINE_FORMAT, w, h);
        for (plane, &(pw, ph)) in yuv420_plane_sizes(w, h).iter().enumerate() {
            let stride = f.stride(plane);
            let d = f.data_mut(plane);
            for y in 0..ph {
                for x in 0..pw {
                    d[y * stride + x] = ((y * pw + x) % 251) as u8 + plane as u8;
                }
            }
        }
        f
    }

    fn px(f: &VideoFrame, plane: usize, x: usize, y: usize) -> u8 {
        f.data(plane)[y * f.stride(plane) + x]
    }

    #[test]
    fn rotations_move_pixels_like_transpose_filters() {
        let src = numbered(5, 3); // odd sizes on purpose
        let r90 = rotate_yuv420(&src, Rotation::Clockwise90).unwrap();
        assert_eq!((r90.width(), r90.height()), (3, 5));
        // clockwise: top-left of the result is the bottom-left of the source
        assert_eq!(px(&r90, 0, 0, 0), px(&src, 0, 0, 2));
        assert_eq!(px(&r90, 0, 2, 0), px(&src, 0, 0, 0));
        assert_eq!(px(&r90, 0, 2, 4), px(&src, 0, 4, 0));
        let r270 = rotate_yuv420(&src, Rotation::Clockwise270).unwrap();
        assert_eq!(px(&r270, 0, 0, 0), px(&src, 0, 4, 0));
        assert_eq!(px(&r270, 0, 0, 4), px(&src, 0, 0, 0));
        let r180 = rotate_yuv420(&src, Rotation::Rotate180).unwrap();
        assert_eq!(px(&r180, 0, 0, 0), px(&src, 0, 4, 2));
        assert_eq!(px(&r180, 1, 0, 0), px(&src, 1, 2, 1));
        // four quarter turns are the identity
        let mut back = src.clone();
        for _ in 0..4 {
            back = rotate_yuv420(&back, Rotation::Clockwise90).unwrap();
        }
        for plane in 0..3 {
            let (pw, ph) = yuv420_plane_sizes(5, 3)[plane];
            for y in 0..ph {
                for x in 0..pw {
                    assert_eq!(px(&back, plane, x, y), px(&src, plane, x, y));
                }
            }
        }
    }

    #[test]
    fn crop_to_even_keeps_pixels() {
        let src = numbered(5, 3);
        let c = crop_to_even(&src);
        assert_eq!((c.width(), c.height()), (4, 2));
        assert_eq!(px(&c, 0, 3, 1), px(&src, 0, 3, 1));
    }
}
