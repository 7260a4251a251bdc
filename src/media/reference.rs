//! The reference decode of `vidprep check`: every frame of a source's video stream, decoded in
//! order by a plain FFmpeg loop (read a packet, send it, take what comes out; at the end, drain),
//! as the ffmpeg CLI decodes a file. No frame table, no seek, no identity check: this is the
//! oracle inside the tool that vidprep's own reading ([`crate::media::FrameReader`], the frame
//! table, sparse reading) is compared against, so it shares nothing with them but the opening
//! of the source ([`VideoInput::open`]) and of its decoder ([`open_decoder`], FFmpeg's own
//! thread count, as the CLI's `-threads auto`; one thread for a damaged stream, see
//! [`decode`]).
//!
//! Each frame is kept as its best-effort timestamp, an MD5 of its pixels in the pipeline's
//! layout (YUV 4:2:0, converted as [`crate::media::FrameReader`] converts, not rotated; for a
//! `yuv420p` source the bytes `ffmpeg -f framemd5` hashes) and whether the decoder marked it
//! damaged: 25 bytes a frame, never the pictures.

use ffmpeg::util::error::EAGAIN;
use ffmpeg_next as ffmpeg;
use md5::{Digest, Md5};

use crate::call::context::CallContext;
use crate::error::{Error, Result};
use crate::media::decode::open_decoder;
use crate::media::frame::{
    size_is_damage, yuv420_plane_sizes, Converter, VideoFrame, PIPELINE_FORMAT,
};
use crate::media::input::{read_error_ends_input, read_packet, VideoInput};
use crate::media::source::Source;
use crate::vocab::time::Time;
use crate::vocab::Ratio;

/// One frame of the reference decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RefFrame {
    /// The decoder's best-effort presentation timestamp, in the stream's time base.
    pub pts: Option<i64>,
    /// MD5 of the picture's YUV 4:2:0 planes, packed (Y, U, V; no padding).
    pub md5: [u8; 16],
    /// The decoder marked the picture as damaged (errors concealed).
    pub damaged: bool,
}

/// What the reference decode found.
#[derive(Clone, Debug)]
pub(crate) struct Reference {
    /// Every frame, in the order the decoder gave them.
    pub frames: Vec<RefFrame>,
    /// Seconds per timestamp tick of the video stream.
    pub time_base: Ratio,
    /// The input's start as ffmpeg uses it for `-ss` (the container's start time).
    pub start: Option<Time>,
    /// Packets the decoder refused, and pictures that failed after their packet was taken.
    pub rejected_packets: usize,
    /// Errors the demuxer logged while the input was opened and read (see
    /// `media::table::DemuxerErrors`).
    pub demuxer_errors: u64,
    /// Where the demuxer stopped on damaged data it could not read past (as ffmpeg ends the
    /// input there), as its words.
    pub read_error: Option<String>,
    /// Where the picture size changes (recordings joined together): the frame (in the
    /// decoder's order) and the sizes before and after it, the first few.
    pub size_changes: Vec<(usize, (u32, u32), (u32, u32))>,
}

/// MD5 of a YUV 4:2:0 picture's planes, packed.
pub(crate) fn yuv420_md5(image: &crate::media::Picture) -> [u8; 16] {
    frame_md5(&image.0)
}

/// [`yuv420_md5`] of FFmpeg's frame.
fn frame_md5(image: &VideoFrame) -> [u8; 16] {
    let mut hasher = Md5::new();
    for (plane, &(w, h)) in yuv420_plane_sizes(image.width(), image.height())
        .iter()
        .enumerate()
    {
        let stride = image.stride(plane);
        let bytes = image.data(plane);
        for y in 0..h {
            hasher.update(&bytes[y * stride..y * stride + w]);
        }
    }
    hasher.finalize().into()
}

/// Decodes every frame of `source`'s video stream in order; `each` is told the count so far
/// after every frame and may stop the decode with an error (a time limit, cancellation).
///
/// Where the decoder rejects packets or conceals errors, or the demuxer logs errors, the
/// stream is decoded again with one thread (`ffmpeg -threads 1`): a frame-threaded decoder
/// conceals such damage differently from run to run, so only the single-threaded decode is
/// one reference (and it is how vidprep reads a damaged stream).
pub(crate) fn decode(
    source: &Source,
    mut each: impl FnMut(usize) -> Result<()>,
    ctx: &CallContext,
) -> Result<Reference> {
    let reference = decode_with(source, 0, &mut each, &mut |_, _| Ok(()), ctx)?;
    let damaged = reference.rejected_packets > 0
        || reference.demuxer_errors > 0
        || reference.frames.iter().any(|f| f.damaged);
    if !damaged {
        return Ok(reference);
    }
    decode_with(source, 1, &mut each, &mut |_, _| Ok(()), ctx)
}

/// The frames at `positions` (0-based, in the reference's order) of the plain sequential
/// decode, as RGB scaled to `width` x `height` (bicubic, FFmpeg's scaler): for telling which
/// source frame a picture shows (`vidprep parity`), not for pixel equality. Positions past
/// the end are left out.
pub fn rgb_frames_at(
    source: &Source,
    positions: &std::collections::BTreeSet<usize>,
    width: u32,
    height: u32,
    ctx: &CallContext,
) -> Result<std::collections::BTreeMap<usize, Vec<u8>>> {
    use ffmpeg::software::scaling::Flags;
    let mut converter = Converter::new(
        ffmpeg::format::Pixel::RGB24,
        Some((width, height)),
        Flags::BICUBIC,
    );
    let mut out = std::collections::BTreeMap::new();
    let path = source.path().to_path_buf();
    let last = positions.iter().next_back().copied();
    let mut visit = |position: usize, frame: &VideoFrame| -> Result<()> {
        if positions.contains(&position) {
            let rgb = converter
                .convert_frame(frame)
                .map_err(|e| Error::ffmpeg(&path, "converting a frame to RGB", e))?;
            let stride = rgb.stride(0);
            let row = width as usize * 3;
            let mut bytes = Vec::with_capacity(row * height as usize);
            for y in 0..height as usize {
                bytes.extend_from_slice(&rgb.data(0)[y * stride..y * stride + row]);
            }
            out.insert(position, bytes);
        }
        Ok(())
    };
    // Stop once the last wanted frame is in: an error of our own that ends the decode early.
    let mut stopped_early = false;
    let mut each = |count: usize| -> Result<()> {
        if last.is_some_and(|l| count > l) {
            stopped_early = true;
            Err(Error::Cancelled)
        } else {
            Ok(())
        }
    };
    match decode_with(source, 0, &mut each, &mut visit, ctx) {
        Ok(_) => {}
        Err(Error::Cancelled) if stopped_early => {}
        Err(e) => return Err(e),
    }
    Ok(out)
}

/// [`decode`] with this many decoder threads (0: FFmpeg's own count), for the call `ctx`
/// (it stops when the call is cancelled).
fn decode_with(
    source: &Source,
    threads: usize,
    each: &mut impl FnMut(usize) -> Result<()>,
    visit: &mut dyn FnMut(usize, &VideoFrame) -> Result<()>,
    ctx: &CallContext,
) -> Result<Reference> {
    let mut input = VideoInput::open(source, ctx)?;
    let path = input.path.clone();
    let stream = input.video.index;
    input.keep_only_streams(&[stream]);
    let time_base = input.video.time_base;
    let stream_size = (input.video.stored_width, input.video.stored_height);
    let start = input.start_time();
    // Declared before the decoder, which points at it: dropped after it.
    let mut conceal = crate::media::compat::ConcealWatch::default();
    let mut decoder = open_decoder(&input, threads, false, &conceal)?;
    let mut converter = Converter::to_format(PIPELINE_FORMAT);
    let mut reference = Reference {
        frames: Vec::new(),
        time_base,
        start,
        rejected_packets: 0,
        demuxer_errors: 0,
        read_error: None,
        size_changes: Vec::new(),
    };
    let mut size: Option<(u32, u32)> = None;
    let mut frame = VideoFrame::empty();
    let mut take = |decoder: &mut ffmpeg::decoder::Video,
                    reference: &mut Reference,
                    conceal: &mut crate::media::compat::ConcealWatch|
     -> Result<bool> {
        loop {
            match decoder.receive_frame(&mut frame) {
                Ok(()) => {
                    let concealed = conceal.concealed_since_last();
                    let plain = frame.format() == PIPELINE_FORMAT
                        && frame.color_range() != ffmpeg::util::color::Range::JPEG;
                    let md5 = if plain {
                        frame_md5(&frame)
                    } else {
                        let converted = converter.convert_frame(&frame).map_err(|e| {
                            Error::ffmpeg(
                                &path,
                                format!("converting {:?} to yuv420p", frame.format()),
                                e,
                            )
                        })?;
                        frame_md5(&converted)
                    };
                    let here = (frame.width(), frame.height());
                    if let Some(before) = size.filter(|before| *before != here) {
                        if reference.size_changes.len() < crate::media::frame::MAX_SIZE_CHANGES {
                            reference
                                .size_changes
                                .push((reference.frames.len(), before, here));
                        }
                    }
                    size = Some(here);
                    visit(reference.frames.len(), &frame)?;
                    reference.frames.push(RefFrame {
                        pts: frame.timestamp(),
                        md5,
                        damaged: frame.is_corrupt()
                            || frame.has_decode_errors()
                            || concealed
                            || size_is_damage(stream_size, here),
                    });
                    each(reference.frames.len())?;
                }
                Err(ffmpeg::Error::Eof) => return Ok(true),
                Err(ffmpeg::Error::Other { errno }) if errno == EAGAIN => return Ok(false),
                Err(_) => reference.rejected_packets += 1,
            }
        }
    };
    loop {
        if ctx.cancelled() {
            return Err(Error::Cancelled);
        }
        match read_packet(&mut input.context) {
            Ok(Some(packet)) => {
                if packet.stream() != stream {
                    continue;
                }
                if decoder.send_packet(&packet).is_err() {
                    reference.rejected_packets += 1;
                }
                take(&mut decoder, &mut reference, &mut conceal)?;
            }
            Ok(None) => break,
            Err(e) if read_error_ends_input(&e) => {
                reference.read_error = Some(e.to_string());
                break;
            }
            Err(e) => return Err(Error::ffmpeg(&path, "reading a packet", e)),
        }
    }
    // Drain: the frames the decoder still holds.
    let _ = decoder.send_eof();
    take(&mut decoder, &mut reference, &mut conceal)?;
    reference.demuxer_errors = input.context.demuxer_errors();
    Ok(reference)
}
