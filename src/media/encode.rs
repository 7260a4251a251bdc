//! Encoding: [`Mp4Writer`] turns pipeline frames into H.264 (libx264, yuv420p) in an MP4 with
//! faststart, carrying each frame's presentation time and duration from the source (so variable
//! frame rate survives), with an optional AAC soundtrack from an [`AudioPlan`].
//!
//! The writer writes to the path it is given; callers write to a temporary path and rename it
//! into place when the writer has finished (see `crate::call::output`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ffmpeg::format::context::Output;
use ffmpeg::util::error::EAGAIN;
use ffmpeg_next as ffmpeg;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::media::audio::{AudioFormat, AudioPlan, AudioTrack};
use crate::media::frame::{crop_to_even, PIPELINE_FORMAT};
use crate::vocab::time::{Rounding, Time};
use crate::vocab::EncodeSettings;
use crate::vocab::Ratio;

pub(crate) use crate::media::ffi::add_codec_flags;

/// The container of an output file, chosen by its extension: `.mp4`/`.m4v`, `.mov` or
/// `.mkv`. Anything else is refused rather than written as MP4 bytes under another name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Container {
    Mp4,
    Mov,
    Matroska,
}

impl Container {
    /// The container for `path`'s extension, or a clear error.
    pub fn for_output(path: &Path) -> Result<Container> {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "mp4" | "m4v" => Ok(Container::Mp4),
            "mov" => Ok(Container::Mov),
            "mkv" => Ok(Container::Matroska),
            "webm" => Err(Error::Usage(format!(
                "{}: WebM holds only VP8/VP9/AV1 video, and vidprep encodes H.264; name the output .mp4, .mov or .mkv",
                path.display()
            ))),
            "" => Err(Error::Usage(format!(
                "{}: the output needs an extension that names its container: .mp4, .mov or .mkv",
                path.display()
            ))),
            other => Err(Error::Usage(format!(
                "{}: vidprep writes .mp4, .m4v, .mov or .mkv video, not .{other}",
                path.display()
            ))),
        }
    }

    /// FFmpeg's muxer name.
    pub fn muxer(self) -> &'static str {
        match self {
            Container::Mp4 => "mp4",
            Container::Mov => "mov",
            Container::Matroska => "matroska",
        }
    }

    fn is_quicktime(self) -> bool {
        matches!(self, Container::Mp4 | Container::Mov)
    }
}

/// x264's frame threads. Its output depends on its thread count (each frame thread limits
/// the motion search to rows already encoded), so the count is fixed rather than taken from
/// the machine: the same request gives the same bytes on any machine, through any door and
/// at any `--jobs`. Four keeps two cores busy from one worker and, measured on 2 cores
/// (`docs/benchmarks.md`), beat 2 and 8 on a two-worker batch with single encodes at
/// ffmpeg's speed.
pub const ENCODER_THREADS: usize = 4;

/// The instruction sets x264 may use, as an `x264-params` entry, when the CPU offers AVX-512.
///
/// x264's AVX-512 code (0.164, the mb-tree analysis of rate control and constant quality
/// alike; off with `no-mbtree`, `bframes=0` or a lookahead of 10 frames or fewer) reads heap
/// memory it never wrote, so its output depends on what the process's allocator hands it:
/// the same frames gave other bytes under `MALLOC_PERTURB_` (one thread, the ffmpeg CLI too),
/// and a second encode in one process (a capped export's retry, a batch's next item) varied
/// from run to run with the order other threads had freed memory in. Its AVX2 code is
/// deterministic (and gives the bytes SSE4.2 gives, as fast on this work), so on a CPU with
/// AVX-512 x264 is held to AVX2 (or to SSE2 on a CPU with AVX-512 but not the whole AVX2
/// set x264's AVX2 level needs). Elsewhere x264 picks its own level.
pub(crate) fn x264_cpu_param() -> Option<String> {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            let avx2 = std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
                && std::arch::is_x86_feature_detected!("bmi1")
                && std::arch::is_x86_feature_detected!("bmi2")
                && std::arch::is_x86_feature_detected!("lzcnt");
            return Some(format!("asm={}", if avx2 { "avx2" } else { "sse2" }));
        }
    }
    None
}

/// The video stream an [`Mp4Writer`] produces.
#[derive(Clone, Copy, Debug)]
pub struct VideoFormat {
    /// Size of the frames that will be written (odd sizes are cropped to even).
    pub width: u32,
    pub height: u32,
    /// Time base of the encoded timestamps; it should represent every frame time exactly
    /// (the source stream's time base does).
    pub time_base: Ratio,
    /// Typical frame rate (a hint for rate control and the container).
    pub frame_rate: Option<Ratio>,
    pub sample_aspect_ratio: Ratio,
    /// The pictures' colour description (the encoder tags the stream with it).
    pub colour: Colour,
}

/// A picture's colour description: YCbCr matrix, primaries, transfer and range, as FFmpeg
/// names them. An encoded output carries its source's (every reader then converts its pixels
/// as the source's: a BT.709 or PQ source's clip is not read as BT.601), with the range of
/// the pictures written (vidprep's 4:2:0 pipeline is limited range).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Colour {
    pub matrix: ffmpeg::color::Space,
    pub primaries: ffmpeg::color::Primaries,
    pub transfer: ffmpeg::color::TransferCharacteristic,
    pub range: ffmpeg::color::Range,
}

/// The colour description of the video stream of the file at `path` as its parameters say
/// it (what a reader will use); the default (nothing said) where it cannot be read.
pub fn file_colour(path: &Path) -> ColourRecord {
    let Ok(input) = ffmpeg::format::input(&path) else {
        return ColourRecord::default();
    };
    let Some(stream) = input.streams().best(ffmpeg::media::Type::Video) else {
        return ColourRecord::default();
    };
    let Ok(video) = ffmpeg::codec::context::Context::from_parameters(stream.parameters())
        .and_then(|c| c.decoder().video())
    else {
        return ColourRecord::default();
    };
    Colour {
        matrix: video.color_space(),
        primaries: video.color_primaries(),
        transfer: video.color_transfer_characteristic(),
        range: video.color_range(),
    }
    .record()
}

impl Colour {
    /// The description `picture` carries.
    pub fn of(picture: &crate::media::Picture) -> Colour {
        let picture = &picture.0;
        Colour {
            matrix: picture.color_space(),
            primaries: picture.color_primaries(),
            transfer: picture.color_transfer_characteristic(),
            range: picture.color_range(),
        }
    }

    /// The record of it in a sidecar: each part FFmpeg's name, absent where unspecified.
    pub fn record(&self) -> ColourRecord {
        let name = |n: Option<&'static str>| n.map(str::to_string);
        ColourRecord {
            matrix: name(self.matrix.name())
                .filter(|_| self.matrix != ffmpeg::color::Space::Unspecified),
            primaries: name(self.primaries.name())
                .filter(|_| self.primaries != ffmpeg::color::Primaries::Unspecified),
            transfer: name(self.transfer.name())
                .filter(|_| self.transfer != ffmpeg::color::TransferCharacteristic::Unspecified),
            range: name(self.range.name())
                .filter(|_| self.range != ffmpeg::color::Range::Unspecified),
        }
    }
}

/// An output's colour description as its sidecar records it (FFmpeg's names: `bt709`,
/// `smpte2084`, `tv`...; a part the source does not say is absent).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ColourRecord {
    /// YCbCr matrix (`colorspace`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matrix: Option<String>,
    /// Colour primaries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub primaries: Option<String>,
    /// Transfer characteristic (`smpte2084` is PQ, `arib-std-b67` HLG: HDR).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transfer: Option<String>,
    /// `tv` (limited) or `pc` (full).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<String>,
}

/// What a finished [`Mp4Writer`] wrote.
#[derive(Clone, Debug, Serialize)]
pub struct WriteReport {
    pub frames: usize,
    pub width: u32,
    pub height: u32,
    /// Columns/rows cropped away to make the size even.
    pub cropped_right: u32,
    pub cropped_bottom: u32,
    pub duration: Time,
    pub audio: Option<AudioFormat>,
    pub video_bytes: u64,
    /// The colour description the video stream carries.
    pub colour: ColourRecord,
}

/// An H.264/AAC MP4 file being written.
pub struct Mp4Writer {
    path: PathBuf,
    output: Output,
    encoder: ffmpeg::encoder::Video,
    stream_index: usize,
    encoder_time_base: ffmpeg::Rational,
    stream_time_base: ffmpeg::Rational,
    /// Frame durations by pts, to give packets their durations (x264 does not).
    durations: HashMap<i64, i64>,
    audio: Option<AudioTrack>,
    width: u32,
    height: u32,
    cropped: (u32, u32),
    frames: usize,
    last_pts: Option<i64>,
    end_time: Time,
    video_bytes: u64,
    finished: bool,
    colour: Colour,
}

impl Mp4Writer {
    /// Creates `write_to` (overwriting it) and prepares the streams, in the container
    /// `final_path`'s extension asks for (errors name `final_path`, the file the user asked
    /// for, not the temporary file being written).
    pub fn create(
        write_to: &Path,
        final_path: &Path,
        video: VideoFormat,
        settings: &EncodeSettings,
        audio: Option<&AudioPlan>,
    ) -> Result<Mp4Writer> {
        crate::media::init::init();
        let container = Container::for_output(final_path)?;
        let path = final_path;
        settings.validate()?;
        let (width, height) = (video.width & !1, video.height & !1);
        if width == 0 || height == 0 {
            return Err(Error::request(
                path,
                format!("cannot encode a {}x{} picture", video.width, video.height),
            ));
        }
        let mut output = ffmpeg::format::output_as(&write_to, container.muxer())
            .map_err(|e| Error::encode(path, "creating the output file", e))?;
        crate::media::ffi::make_output_repeatable(&mut output);
        let codec = ffmpeg::encoder::find_by_name("libx264")
            .ok_or_else(|| Error::request(path, "this ffmpeg build has no libx264 encoder"))?;
        let global_header = output
            .format()
            .flags()
            .contains(ffmpeg::format::Flags::GLOBAL_HEADER);
        let mut enc = ffmpeg::codec::context::Context::new_with_codec(codec)
            .encoder()
            .video()
            .map_err(|e| Error::encode(path, "creating the H.264 encoder", e))?;
        let tb: ffmpeg::Rational = video.time_base.into();
        enc.set_width(width);
        enc.set_height(height);
        enc.set_format(PIPELINE_FORMAT);
        enc.set_time_base(tb);
        if let Some(fps) = video.frame_rate.filter(|r| r.is_valid()) {
            enc.set_frame_rate(Some(ffmpeg::Rational::from(fps)));
        }
        if video.sample_aspect_ratio.is_valid() {
            enc.set_aspect_ratio(ffmpeg::Rational::from(video.sample_aspect_ratio));
        }
        // The stream says how its pixels are to be read (x264 writes it in the VUI).
        enc.set_colorspace(video.colour.matrix);
        enc.set_color_primaries(video.colour.primaries);
        enc.set_color_transfer_characteristic(video.colour.transfer);
        enc.set_color_range(video.colour.range);
        if global_header {
            add_codec_flags(&mut enc, ffmpeg::ffi::AV_CODEC_FLAG_GLOBAL_HEADER);
        }
        enc.set_threading(ffmpeg::codec::threading::Config {
            count: ENCODER_THREADS,
            ..Default::default()
        });
        if let Some(gop) = settings.gop {
            enc.set_gop(gop);
        }
        if let Some(b) = settings.bframes {
            enc.set_max_b_frames(b as usize);
        }
        let mut options = ffmpeg::Dictionary::new();
        options.set("preset", &settings.preset);
        let mut x264: Vec<String> = Vec::new();
        match settings.bit_rate {
            // Average bit rate without a VBV (no maxrate, no buffer), on sliced threads: x264's
            // rate control with frame threads depends on thread timing (measured with the
            // ffmpeg CLI under load: VBV gave three sizes in three runs, plain ABR one file in
            // six that differed), while sliced threads encode one frame at a time, so the rate
            // control sees the same history on every run (8 of 8 identical). The budget is on
            // the whole file's size, which ABR aims at.
            Some(rate) => {
                enc.set_bit_rate(rate as usize);
                x264.push("sliced-threads=1".into());
            }
            None => options.set("crf", &format!("{}", settings.crf)),
        }
        x264.extend(x264_cpu_param());
        if !x264.is_empty() {
            options.set("x264-params", &x264.join(":"));
        }
        let encoder = enc
            .open_as_with(codec, options)
            .map_err(|e| Error::encode(path, "opening the H.264 encoder", e))?;
        let mut stream = output
            .add_stream(codec)
            .map_err(|e| Error::encode(path, "adding the video stream", e))?;
        stream.set_parameters(&encoder);
        stream.set_time_base(tb);
        if let Some(fps) = video.frame_rate.filter(|r| r.is_valid()) {
            stream.set_avg_frame_rate(ffmpeg::Rational::from(fps));
        }
        let stream_index = stream.index();

        let mut audio_track = match (settings.audio, audio) {
            (true, Some(plan)) if !plan.segments.is_empty() => match plan.output_format()? {
                Some(format) => Some(AudioTrack::add_to(
                    &mut output,
                    path,
                    plan,
                    format,
                    settings.audio_bit_rate as usize,
                )?),
                None => None,
            },
            _ => None,
        };

        let mut header_options = ffmpeg::Dictionary::new();
        if container.is_quicktime() {
            header_options.set("movflags", "+faststart");
        }
        output
            .write_header_with(header_options)
            .map_err(|e| Error::encode(path, "writing the file header", e))?;
        let stream_time_base = output
            .stream(stream_index)
            .map(|s| s.time_base())
            .unwrap_or(tb);
        if let Some(a) = audio_track.as_mut() {
            a.header_written(&output);
        }
        Ok(Mp4Writer {
            path: path.to_path_buf(),
            output,
            encoder,
            stream_index,
            encoder_time_base: tb,
            stream_time_base,
            durations: HashMap::new(),
            audio: audio_track,
            width,
            height,
            cropped: (video.width - width, video.height - height),
            frames: 0,
            last_pts: None,
            end_time: Time::ZERO,
            video_bytes: 0,
            finished: false,
            colour: video.colour,
        })
    }

    /// Encodes one picture shown from `time` (seconds from the start of the output) for
    /// `duration`. Times must increase from frame to frame.
    pub fn write(
        &mut self,
        image: &crate::media::Picture,
        time: Time,
        duration: Time,
    ) -> Result<()> {
        let image = &image.0;
        let tb = self.encoder_time_base;
        let pts = time.to_pts(tb.numerator(), tb.denominator(), Rounding::Nearest);
        if self.last_pts.is_some_and(|last| pts <= last) {
            return Err(Error::request(
                &self.path,
                format!("frame {} has time {}s, not after the previous frame (the time base {} cannot separate them)", self.frames, time.as_secs_f64(), Ratio::from(tb)),
            ));
        }
        let mut frame = if image.width() != self.width || image.height() != self.height {
            let cropped = crop_to_even(image);
            if cropped.width() != self.width || cropped.height() != self.height {
                return Err(Error::request(
                    &self.path,
                    format!(
                        "frame {} is {}x{}, the output is {}x{}",
                        self.frames,
                        image.width(),
                        image.height(),
                        self.width,
                        self.height
                    ),
                ));
            }
            cropped
        } else {
            crate::media::frame::share(image)
        };
        frame.set_pts(Some(pts));
        frame.set_kind(ffmpeg::picture::Type::None);
        let dur = duration
            .to_pts(tb.numerator(), tb.denominator(), Rounding::Nearest)
            .max(1);
        self.durations.insert(pts, dur);
        self.last_pts = Some(pts);
        self.end_time = time + duration;
        self.encoder
            .send_frame(&frame)
            .map_err(|e| Error::encode(&self.path, format!("encoding frame {}", self.frames), e))?;
        self.frames += 1;
        self.drain_video()?;
        if let Some(a) = self.audio.as_mut() {
            // Keep audio about half a second ahead so the muxer interleaves closely.
            a.pump_until(&mut self.output, time + Time::new(1, 2))?;
        }
        Ok(())
    }

    fn drain_video(&mut self) -> Result<()> {
        let mut packet = ffmpeg::Packet::empty();
        loop {
            match self.encoder.receive_packet(&mut packet) {
                Ok(()) => {
                    if let Some(d) = packet.pts().and_then(|p| self.durations.remove(&p)) {
                        packet.set_duration(d);
                    }
                    self.video_bytes += packet.size() as u64;
                    packet.set_stream(self.stream_index);
                    packet.rescale_ts(self.encoder_time_base, self.stream_time_base);
                    packet
                        .write_interleaved(&mut self.output)
                        .map_err(|e| Error::encode(&self.path, "writing video", e))?;
                }
                Err(ffmpeg::Error::Eof) => return Ok(()),
                Err(ffmpeg::Error::Other { errno }) if errno == EAGAIN => return Ok(()),
                Err(e) => return Err(Error::encode(&self.path, "encoding video", e)),
            }
        }
    }

    /// Flushes the encoders and writes the trailer (moving the index to the front). Safe to
    /// call twice; the second call does nothing.
    pub fn finish(&mut self) -> Result<WriteReport> {
        if !self.finished {
            self.finished = true;
            if self.frames == 0 {
                return Err(Error::request(&self.path, "no frames to write"));
            }
            self.encoder
                .send_eof()
                .map_err(|e| Error::encode(&self.path, "flushing the H.264 encoder", e))?;
            self.drain_video()?;
            if let Some(a) = self.audio.as_mut() {
                a.finish(&mut self.output)?;
            }
            self.output
                .write_trailer()
                .map_err(|e| Error::encode(&self.path, "finishing the MP4 file", e))?;
        }
        Ok(WriteReport {
            frames: self.frames,
            width: self.width,
            height: self.height,
            cropped_right: self.cropped.0,
            cropped_bottom: self.cropped.1,
            duration: self.end_time,
            audio: self.audio.as_ref().map(|a| a.format()),
            video_bytes: self.video_bytes,
            colour: self.colour.record(),
        })
    }

    /// The encoded size (even).
    pub fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }
}

/// A time base in which every tick of `base` and the time `extra` are whole numbers of
/// ticks (so an output can end exactly at a decision point that falls between frames); `base`
/// itself when no such time base fits FFmpeg's 32-bit rationals.
pub fn time_base_including(base: Ratio, extra: Time) -> Ratio {
    if !base.is_valid() {
        return base;
    }
    let tick = base.as_time();
    if fits_in(extra, base) {
        return base;
    }
    let lcm = |a: i64, b: i64| -> Option<i64> {
        let g = gcd(a, b);
        (a / g).checked_mul(b)
    };
    // 1/D with D a multiple of both denominators represents both exactly.
    match lcm(tick.denom(), extra.denom()) {
        Some(d) if d <= i32::MAX as i64 => {
            let candidate = Ratio::new(1, d as i32);
            if fits_in(tick, candidate) && fits_in(extra, candidate) {
                candidate
            } else {
                base
            }
        }
        _ => base,
    }
}

fn gcd(mut a: i64, mut b: i64) -> i64 {
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a.abs().max(1)
}

/// Whether `t` is a whole number of ticks of `tb`.
fn fits_in(t: Time, tb: Ratio) -> bool {
    (t / tb.as_time()).denom() == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_bases_that_hold_a_decision_point() {
        // 10 fps AVI ticks cannot hold 11.25 s; 1/20 s ticks hold both.
        let tb = time_base_including(Ratio::new(1, 10), Time::new(45, 4));
        assert_eq!(tb, Ratio::new(1, 20));
        // already representable: unchanged
        assert_eq!(
            time_base_including(Ratio::new(1, 12800), Time::new(15, 4)),
            Ratio::new(1, 12800)
        );
        // NTSC ticks and a quarter second
        let tb = time_base_including(Ratio::new(1001, 30000), Time::new(1, 4));
        assert!(fits_in(Time::new(1001, 30000), tb) && fits_in(Time::new(1, 4), tb));
    }
}
