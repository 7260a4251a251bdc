//! Still images (GOT-10k sequence JPEGs): decoding one picture with ffmpeg's image decoders,
//! strictly (damaged data is an error naming the file, not a concealed picture), and reading
//! image sizes from headers without decoding.

use std::path::Path;

use ffmpeg::ffi;
use ffmpeg::frame::Video as VideoFrame;
use ffmpeg::util::error::EAGAIN;
use ffmpeg_next as ffmpeg;

use crate::error::{Error, Result};
use crate::media::input::{read_packet, VideoInput};

/// Decodes the single picture in `path` (JPEG, PNG, ...) in its own pixel format, for the
/// call `ctx` (its open counts on the call's tally).
pub fn decode_still(
    path: &Path,
    ctx: &crate::call::context::CallContext,
) -> Result<crate::media::Picture> {
    let mut input = VideoInput::open(path, ctx)?;
    let index = input.video.index;
    let stream = input.context.stream(index).expect("video stream");
    let mut ctx = ffmpeg::codec::context::Context::from_parameters(stream.parameters())
        .map_err(|e| Error::ffmpeg(path, "reading the image codec parameters", e))?;
    // Fail on damaged data instead of concealing it.
    crate::media::ffi::explode_on_errors(&mut ctx);
    let mut decoder = ctx
        .decoder()
        .video()
        .map_err(|e| Error::ffmpeg(path, "opening the image decoder", e))?;
    let corrupt = |detail: String| Error::corrupt(path, "in the image", detail);
    let mut frame = VideoFrame::empty();
    let mut sent_eof = false;
    loop {
        match decoder.receive_frame(&mut frame) {
            Ok(()) => {
                if frame.is_corrupt() || frame.has_decode_errors() {
                    return Err(corrupt("the picture is damaged".into()));
                }
                return Ok(crate::media::Picture(frame));
            }
            Err(ffmpeg::Error::Other { errno }) if errno == EAGAIN => {}
            Err(ffmpeg::Error::Eof) => return Err(corrupt("no picture could be decoded".into())),
            Err(e) => return Err(corrupt(format!("decoding failed: {e}"))),
        }
        if sent_eof {
            return Err(corrupt("no picture could be decoded".into()));
        }
        match read_packet(&mut input.context) {
            Ok(Some(packet)) if packet.stream() == index => {
                decoder
                    .send_packet(&packet)
                    .map_err(|e| corrupt(format!("decoding failed: {e}")))?;
            }
            Ok(Some(_)) => {}
            Ok(None) => {
                decoder
                    .send_eof()
                    .map_err(|e| corrupt(format!("decoding failed: {e}")))?;
                sent_eof = true;
            }
            Err(e) => return Err(corrupt(format!("cannot read the file: {e}"))),
        }
    }
}

/// Width and height of an image from its header (no decoding). JPEG files must also end with
/// their end-of-image marker, which catches truncated files before any work starts.
pub fn still_size(path: &Path) -> Result<(u32, u32)> {
    crate::media::source::check_input_file(path)?;
    let size = image::image_dimensions(path).map_err(|e| match e {
        image::ImageError::IoError(io) if io.kind() == std::io::ErrorKind::NotFound => {
            Error::NotFound {
                path: path.to_path_buf(),
            }
        }
        other => Error::corrupt(path, "in the image header", other.to_string()),
    })?;
    let is_jpeg = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("jpg") || e.eq_ignore_ascii_case("jpeg"));
    if is_jpeg {
        let bytes = std::fs::read(path).map_err(|e| Error::read(path, e))?;
        let trimmed = bytes
            .iter()
            .rposition(|&b| b != 0)
            .map(|i| &bytes[..=i])
            .unwrap_or(&bytes[..]);
        if !trimmed.ends_with(&[0xFF, 0xD9]) {
            return Err(Error::corrupt(
                path,
                "at the end of the image",
                "the JPEG is truncated (no end-of-image marker)",
            ));
        }
    }
    crate::media::input::check_frame_size(path, size.0, size.1)?;
    Ok(size)
}

/// Encodes pictures as baseline JPEG (JFIF, 4:2:0) with libavcodec's MJPEG encoder, which is
/// several times faster than a pure-Rust encoder. Quality 1-100 maps to the encoder's
/// quantiser scale (`qscale = 1 + (100 - quality) / 4`, so 90 is qscale 3, the ffmpeg CLI's
/// high-quality range).
pub struct JpegWriter {
    converter: crate::media::frame::Converter,
    encoder: Option<(u32, u32, ffmpeg::encoder::Video)>,
    qscale: i32,
    /// Timestamps must increase from picture to picture.
    next_pts: i64,
}

impl JpegWriter {
    pub fn new(quality: u8) -> JpegWriter {
        let qscale = (1 + (100 - quality.clamp(1, 100) as i32) / 4).clamp(1, 31);
        JpegWriter {
            converter: crate::media::frame::Converter::to_format(ffmpeg::format::Pixel::YUVJ420P),
            encoder: None,
            qscale,
            next_pts: 0,
        }
    }

    /// The JPEG file of `picture` (any pixel format swscale can read).
    pub fn encode(
        &mut self,
        picture: &crate::media::Picture,
    ) -> std::result::Result<Vec<u8>, crate::error::FfmpegError> {
        Ok(self.encode_frame(&picture.0)?)
    }

    fn encode_frame(&mut self, frame: &VideoFrame) -> std::result::Result<Vec<u8>, ffmpeg::Error> {
        let (w, h) = (frame.width(), frame.height());
        let mut yuvj = self.converter.convert_frame(frame)?;
        if self.encoder.as_ref().map(|(ew, eh, _)| (*ew, *eh)) != Some((w, h)) {
            let codec = ffmpeg::encoder::find(ffmpeg::codec::Id::MJPEG)
                .ok_or(ffmpeg::Error::EncoderNotFound)?;
            let mut enc = ffmpeg::codec::context::Context::new_with_codec(codec)
                .encoder()
                .video()?;
            enc.set_width(w);
            enc.set_height(h);
            enc.set_format(ffmpeg::format::Pixel::YUVJ420P);
            enc.set_time_base(ffmpeg::Rational::new(1, 25));
            crate::media::encode::add_codec_flags(&mut enc, ffi::AV_CODEC_FLAG_QSCALE);
            enc.set_global_quality(self.qscale * ffi::FF_QP2LAMBDA);
            crate::media::ffi::set_full_range(&mut enc);
            self.encoder = Some((w, h, enc.open_as(codec)?));
        }
        let (_, _, encoder) = self.encoder.as_mut().expect("opened above");
        crate::media::ffi::set_frame_quality(&mut yuvj, self.qscale * ffi::FF_QP2LAMBDA);
        yuvj.set_pts(Some(self.next_pts));
        self.next_pts += 1;
        encoder.send_frame(&yuvj)?;
        let mut packet = ffmpeg::Packet::empty();
        encoder.receive_packet(&mut packet)?;
        Ok(packet.data().map(|d| d.to_vec()).unwrap_or_default())
    }
}
