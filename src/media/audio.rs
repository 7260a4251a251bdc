//! Audio for outputs: an [`AudioPlan`] says which stretches of which files (or silence) make the
//! output's soundtrack, and [`AudioTrack`] decodes, trims to the sample, resamples and encodes
//! them as AAC in step with the video, so memory stays flat and A/V stay aligned.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use ffmpeg::ffi;
use ffmpeg::format::context::Output;
use ffmpeg::util::error::EAGAIN;
use ffmpeg_next as ffmpeg;

use crate::call::context::CallContext;
use crate::error::{Error, Result};
use crate::media::audio_clock::{time_base_is_coarse, AudioClock};
use crate::media::demux::{AudioRead, SharedDemuxer};
use crate::media::input::{best_audio_stream, open_media};
use crate::media::pool::InputPool;
use crate::media::source::Source;
use crate::vocab::time::{Rounding, Time};
use crate::vocab::Ratio;
use std::sync::Arc;

/// One stretch of the output soundtrack.
#[derive(Clone, Debug, PartialEq)]
pub enum AudioSegment {
    /// The audio of `source` from `start` to `end`, in seconds on the file's own timeline
    /// (the same timeline as its packets' timestamps). The video's own [`Source`] (a URL's
    /// carries its validators and download, so audio and video read the same file), read
    /// through its stream's input pool (the call it reads for, and the input a full decode
    /// of the video may share with it).
    Source {
        source: Source,
        start: Time,
        end: Time,
        inputs: Arc<InputPool>,
    },
    /// Silence of this duration.
    Silence { duration: Time },
}

impl AudioSegment {
    pub fn duration(&self) -> Time {
        match self {
            AudioSegment::Source { start, end, .. } => (*end - *start).max(Time::ZERO),
            AudioSegment::Silence { duration } => *duration,
        }
    }
}

/// The soundtrack of one output, segment after segment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AudioPlan {
    pub segments: Vec<AudioSegment>,
}

/// Sample rate and channel count of the encoded soundtrack.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct AudioFormat {
    pub sample_rate: u32,
    pub channels: u16,
}

/// Sample rates the AAC encoder accepts.
const AAC_RATES: [u32; 13] = [
    96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350,
];

impl AudioPlan {
    pub fn duration(&self) -> Time {
        self.segments
            .iter()
            .fold(Time::ZERO, |acc, s| acc + s.duration())
    }

    /// The output format, from the first source segment whose file has audio; `None` when no
    /// segment has audio (then the output has no audio stream).
    pub fn output_format(&self) -> Result<Option<AudioFormat>> {
        for seg in &self.segments {
            if let AudioSegment::Source { source, inputs, .. } = seg {
                if let Some((rate, channels)) = audio_stream_format(source, inputs.call())? {
                    let rate = if AAC_RATES.contains(&rate) {
                        rate
                    } else {
                        48000
                    };
                    return Ok(Some(AudioFormat {
                        sample_rate: rate,
                        channels: channels.clamp(1, 2),
                    }));
                }
            }
        }
        Ok(None)
    }
}

/// Sample rate and channels of the best audio stream of `source`, if it has one: what the
/// source's first open saw (any open of it records that, see [`audio_format_of`]), else
/// what opening it now shows (for the call `call`).
pub(crate) fn audio_stream_format(
    source: &Source,
    call: &CallContext,
) -> Result<Option<(u32, u16)>> {
    if crate::media::source::is_image_sequence(source.path()) {
        return Ok(None);
    }
    if let Some(header) = source.header() {
        return Ok(header.audio);
    }
    let Some(ctx) = open_for_audio(source, call)? else {
        return Ok(None);
    };
    Ok(crate::media::input::audio_format_of(&ctx))
}

/// Opens `source` for its audio; `None` for an image sequence, which has none (and may need a
/// rate only the video side knows). Counted on the call's tally.
fn open_for_audio(
    source: &Source,
    call: &CallContext,
) -> Result<Option<crate::media::input::OpenedInput>> {
    if crate::media::source::is_image_sequence(source.path()) {
        return Ok(None);
    }
    call.count(crate::call::tally::Event::AudioOpen);
    open_media(source, call).map(Some)
}

/// The time base and a decoder of `input`'s audio stream `stream`, and the timestamp to seek
/// to for a segment decoded from `preroll` (`None`: read from the start of the file).
fn describe_stream(
    path: &Path,
    input: &ffmpeg::format::context::Input,
    stream: usize,
    preroll: Time,
) -> Result<(Ratio, ffmpeg::decoder::Audio, Option<i64>)> {
    let st = input.stream(stream).expect("audio stream index");
    let time_base: Ratio = st.time_base().into();
    let stream_start = st.start_time();
    let mut ctx = ffmpeg::codec::context::Context::from_parameters(st.parameters())
        .map_err(|e| audio_failure(path, format!("reading the audio codec parameters: {e}")))?;
    crate::media::ffi::set_packet_time_base(&mut ctx, st.time_base());
    let decoder = ctx
        .decoder()
        .audio()
        .map_err(|e| audio_failure(path, format!("opening the audio decoder: {e}")))?;
    let ts = preroll.to_pts(time_base.num, time_base.den, Rounding::Down);
    // Timestamps coarser than a sample place a frame by the frames before it
    // (media::audio_clock): read from the start.
    if time_base_is_coarse(time_base, decoder.rate()) {
        return Ok((time_base, decoder, None));
    }
    let base = if stream_start == ffi::AV_NOPTS_VALUE {
        0
    } else {
        stream_start.min(ts)
    };
    Ok((time_base, decoder, (ts > base).then_some(ts)))
}

/// What to do when a soundtrack cannot be read: the video can still be written without it.
const NO_AUDIO_HINT: &str = "add --no-audio to write the video without its soundtrack";

/// A failure reading the soundtrack of `path`, with the way around it.
fn audio_failure(path: &Path, detail: impl std::fmt::Display) -> Error {
    Error::corrupt(
        path,
        "in the audio stream",
        format!("{detail}; {NO_AUDIO_HINT}"),
    )
}

fn layout_for(channels: u16) -> ffmpeg::ChannelLayout {
    ffmpeg::ChannelLayout::default(channels as i32)
}

/// Planar f32 at the output rate and layout, through ffmpeg's resampler.
struct Resampler {
    context: ffmpeg::software::resampling::Context,
    in_rate: u32,
    out: AudioFormat,
}

impl Resampler {
    fn new(frame: &ffmpeg::frame::Audio, out: AudioFormat, normalise: bool) -> Option<Resampler> {
        let layout = match frame.channel_layout() {
            l if crate::media::compat::layout_is_known(&l) => l,
            _ => layout_for(frame.channels().max(1)),
        };
        let mut context = ffmpeg::software::resampling::Context::get(
            frame.format(),
            layout,
            frame.rate(),
            ffmpeg::format::Sample::F32(ffmpeg::format::sample::Type::Planar),
            layout_for(out.channels),
            out.sample_rate,
        )
        .ok()?;
        if normalise {
            crate::media::ffi::normalise_resampler_mix(&mut context).ok()?;
        }
        Some(Resampler {
            context,
            in_rate: frame.rate().max(1),
            out,
        })
    }

    /// Room for what `samples` input samples (plus what the resampler holds) become.
    fn capacity(&self, samples: usize) -> usize {
        let held = self.context.delay().map_or(0, |d| d.output.max(0) as usize);
        samples * self.out.sample_rate as usize / self.in_rate as usize + held + 64
    }

    fn planes(&self, frame: &ffmpeg::frame::Audio) -> Vec<Vec<f32>> {
        let n = frame.samples();
        (0..self.out.channels as usize)
            .map(|ch| frame.plane::<f32>(ch)[..n].to_vec())
            .collect()
    }

    fn empty_frame(&self, capacity: usize) -> ffmpeg::frame::Audio {
        ffmpeg::frame::Audio::new(
            ffmpeg::format::Sample::F32(ffmpeg::format::sample::Type::Planar),
            capacity,
            layout_for(self.out.channels),
        )
    }

    /// Converts `frame` into per-channel sample vectors.
    fn convert(&mut self, frame: &ffmpeg::frame::Audio) -> Result<Vec<Vec<f32>>, ffmpeg::Error> {
        let mut out = self.empty_frame(self.capacity(frame.samples()));
        self.context.run(frame, &mut out)?;
        Ok(self.planes(&out))
    }

    /// What the resampler still holds at the end of the input.
    fn flush(&mut self) -> Result<Vec<Vec<f32>>, ffmpeg::Error> {
        let mut all: Vec<Vec<f32>> = vec![Vec::new(); self.out.channels as usize];
        loop {
            let mut out = self.empty_frame(self.capacity(0));
            self.context.flush(&mut out)?;
            if out.samples() == 0 {
                return Ok(all);
            }
            for (a, p) in all.iter_mut().zip(self.planes(&out)) {
                a.extend(p);
            }
        }
    }
}

/// Where a [`SegmentReader`] gets its packets.
enum AudioInput {
    Own(crate::media::input::OpenedInput),
    /// The input of the video's full decode, read from its start
    /// ([`crate::media::demux`]).
    Shared(Arc<SharedDemuxer>),
}

/// Decodes one source segment and hands out its samples, trimmed to `[start, end)`.
pub(crate) struct SegmentReader {
    path: PathBuf,
    source: Source,
    /// The call it reads for (an input of its own is opened for it).
    call: CallContext,
    input: AudioInput,
    stream: usize,
    time_base: Ratio,
    decoder: ffmpeg::decoder::Audio,
    resampler: Option<Resampler>,
    format: AudioFormat,
    start: Time,
    end: Time,
    /// Time of the first sample fed to the resampler, once known.
    first_time: Option<Time>,
    /// Where each decoded frame sits (the ffmpeg CLI's clock), once the first frame is seen.
    clock: Option<AudioClock>,
    /// The time of the stream's first decoded sample, where every resampler run over the
    /// stream (the ffmpeg CLI's) starts: the output's samples lie on a grid from there.
    stream_first: Option<Time>,
    /// Samples decoded so far when the reader started at the file's start (`None` after a
    /// seek): a frame's place in the stream's sample count.
    decoded_from_start: Option<i64>,
    /// Samples the resampler produced so far (at the output rate).
    produced: i64,
    packets_done: bool,
    flushed: bool,
    done: bool,
    /// Mix channels as swresample does for integer output (see [`SegmentReader::for_pcm`]).
    normalise_mix: bool,
}

impl SegmentReader {
    /// A reader of `source`'s audio from `start` to `end`, through its stream's input `pool`.
    pub(crate) fn open(
        source: &Source,
        start: Time,
        end: Time,
        format: AudioFormat,
        pool: &InputPool,
    ) -> Result<Option<SegmentReader>> {
        let path = source.path();
        if crate::media::source::is_image_sequence(path) {
            return Ok(None);
        }
        // Start a little early: decoders need a few packets to settle, and we trim exactly.
        let preroll = (start - Time::from_secs(1)).max(Time::ZERO);
        // The input of the video's full decode, when it is on offer and this segment is
        // read from the start of the file too (a segment read from a seek needs an input of
        // its own: the video side reads elsewhere, and decoding from other packets than the
        // seek's could give other samples: AAC's noise substitution, SBR state).
        if let Some(shared) = pool.take(source) {
            let described = shared.with_audio_stream(|input, stream| {
                describe_stream(path, input, stream, preroll).map(|d| (stream, d))
            });
            match described {
                Ok((stream, (time_base, decoder, None))) => {
                    return Ok(Some(SegmentReader::new(
                        source,
                        pool.call(),
                        AudioInput::Shared(shared),
                        stream,
                        time_base,
                        decoder,
                        format,
                        start,
                        end,
                    )));
                }
                // Not read from the start: left for another reader.
                Ok(_) | Err(_) => pool.offer(source, shared),
            }
        }
        let Some(mut input) = open_for_audio(source, pool.call())? else {
            return Ok(None);
        };
        let Some(stream) = best_audio_stream(&input) else {
            return Ok(None);
        };
        for i in 0..input.nb_streams() as usize {
            crate::media::ffi::set_stream_discard(&mut input, i, i != stream);
        }
        let (time_base, mut decoder, seek) = describe_stream(path, &input, stream, preroll)?;
        let mut stream_first = None;
        if let Some(ts) = seek {
            // The grid the output's samples lie on starts at the stream's first sample: find
            // it (a few packets), then seek. A file that cannot seek is read from its start
            // (slower, same samples).
            stream_first = first_sample_time(&mut input, stream, &mut decoder, time_base);
            decoder.flush();
            let _ = crate::media::ffi::seek_to_timestamp(&mut input, stream, ts);
        }
        let mut reader = SegmentReader::new(
            source,
            pool.call(),
            AudioInput::Own(input),
            stream,
            time_base,
            decoder,
            format,
            start,
            end,
        );
        if seek.is_some() {
            reader.decoded_from_start = None;
            reader.stream_first = stream_first;
        }
        Ok(Some(reader))
    }

    #[allow(clippy::too_many_arguments)]
    fn new(
        source: &Source,
        call: &CallContext,
        input: AudioInput,
        stream: usize,
        time_base: Ratio,
        decoder: ffmpeg::decoder::Audio,
        format: AudioFormat,
        start: Time,
        end: Time,
    ) -> SegmentReader {
        SegmentReader {
            path: source.path().to_path_buf(),
            source: source.clone(),
            call: call.clone(),
            input,
            stream,
            time_base,
            decoder,
            resampler: None,
            format,
            start,
            end,
            first_time: None,
            clock: None,
            stream_first: None,
            decoded_from_start: Some(0),
            produced: 0,
            packets_done: false,
            flushed: false,
            done: false,
            normalise_mix: false,
        }
    }

    /// The next packet of the input (`Ok(None)` at the end of the file), or the demuxer's
    /// error.
    fn read_packet(&mut self) -> Result<Result<Option<ffmpeg::Packet>, ffmpeg::Error>> {
        loop {
            match &mut self.input {
                AudioInput::Own(input) => {
                    let mut packet = ffmpeg::Packet::empty();
                    return Ok(match packet.read(input) {
                        Ok(()) => Ok(Some(packet)),
                        Err(ffmpeg::Error::Eof) => Ok(None),
                        Err(e) => Err(e),
                    });
                }
                AudioInput::Shared(shared) => match shared.read_audio() {
                    AudioRead::Packet(p) => return Ok(Ok(Some(p))),
                    AudioRead::End => return Ok(Ok(None)),
                    AudioRead::OwnInput { skip } => {
                        let input = self.own_input_after(skip)?;
                        self.input = AudioInput::Own(input);
                    }
                },
            }
        }
    }

    /// An input of its own, read from the start (no seek, as the shared one was) past the
    /// first `skip` packets of the audio stream: it goes on with the packets the shared input
    /// would have given next.
    fn own_input_after(&self, skip: usize) -> Result<crate::media::input::OpenedInput> {
        let Some(mut input) = open_for_audio(&self.source, &self.call)? else {
            return Err(Error::internal("an image sequence has no audio to read"));
        };
        for i in 0..input.nb_streams() as usize {
            crate::media::ffi::set_stream_discard(&mut input, i, i != self.stream);
        }
        let mut skipped = 0;
        while skipped < skip {
            let mut packet = ffmpeg::Packet::empty();
            match packet.read(&mut input) {
                Ok(()) if packet.stream() == self.stream => skipped += 1,
                Ok(()) => {}
                Err(e) => {
                    return Err(audio_failure(
                        &self.path,
                        format!("cannot read the file again: {e}"),
                    ))
                }
            }
        }
        Ok(input)
    }

    /// Mixes channels as swresample does when its output is 16-bit (a downmix normalised to
    /// full scale), for samples that are then converted to 16-bit PCM.
    pub(crate) fn for_pcm(mut self) -> SegmentReader {
        self.normalise_mix = true;
        self
    }

    /// The next chunk of kept samples, `None` when the segment is exhausted.
    pub(crate) fn next_chunk(&mut self) -> Result<Option<Vec<Vec<f32>>>> {
        while !self.done {
            let mut frame = ffmpeg::frame::Audio::empty();
            match self.decoder.receive_frame(&mut frame) {
                Ok(()) => {
                    // Containers that state only the channel count (WMA in ASF, PCM in
                    // Matroska): FFmpeg's default layout for it, as the ffmpeg CLI guesses.
                    crate::media::compat::default_layout_if_unknown(&mut frame);
                    let chunk = self.take_frame(&frame)?;
                    if let Some(c) = chunk {
                        return Ok(Some(c));
                    }
                    continue;
                }
                Err(ffmpeg::Error::Eof) => {
                    // Drain what the resampler still holds.
                    if !self.flushed {
                        self.flushed = true;
                        if let Some(r) = self.resampler.as_mut() {
                            let out = r.flush().map_err(|e| {
                                audio_failure(&self.path, format!("resampling audio: {e}"))
                            })?;
                            let kept = self.trim(out);
                            if kept.first().is_some_and(|c| !c.is_empty()) {
                                return Ok(Some(kept));
                            }
                        }
                    }
                    self.done = true;
                    break;
                }
                Err(ffmpeg::Error::Other { errno }) if errno == EAGAIN => {}
                Err(e) => return Err(audio_failure(&self.path, format!("decoding failed: {e}"))),
            }
            if self.packets_done {
                self.decoder.send_eof().map_err(|e| {
                    audio_failure(&self.path, format!("flushing the audio decoder: {e}"))
                })?;
                continue;
            }
            match self.read_packet()? {
                Ok(Some(packet)) => {
                    if packet.stream() != self.stream {
                        continue;
                    }
                    if let Err(e) = self.decoder.send_packet(&packet) {
                        if e != ffmpeg::Error::InvalidData || self.first_time.is_some() {
                            return Err(audio_failure(&self.path, format!("decoding failed: {e}")));
                        }
                    }
                }
                Ok(None) => self.packets_done = true,
                // Damaged data ends the input, as for ffmpeg (and the video's frame table).
                Err(e) if crate::media::input::read_error_ends_input(&e) => {
                    self.packets_done = true
                }
                Err(e) => {
                    return Err(audio_failure(
                        &self.path,
                        format!("cannot read the file: {e}"),
                    ))
                }
            }
        }
        Ok(None)
    }

    fn take_frame(&mut self, frame: &ffmpeg::frame::Audio) -> Result<Option<Vec<Vec<f32>>>> {
        if frame.samples() == 0 {
            return Ok(None);
        }
        let rate = frame.rate().max(1) as i64;
        // Where the frame sits: the ffmpeg CLI's clock, carried from the stream's first frame
        // (where the time base is coarser than a sample the stream is read from its start).
        let pts = crate::media::compat::audio_frame_pts(frame);
        let place = self
            .clock
            .get_or_insert_with(|| AudioClock::new(rate as u32))
            .place(pts, self.time_base, frame.samples() as i64);
        let t = Time::new(place, rate);
        // This frame's first sample in the stream's sample count.
        let count = match self.decoded_from_start.as_mut() {
            Some(decoded) => {
                let c = *decoded;
                *decoded += frame.samples() as i64;
                Some(c)
            }
            None => None,
        };
        if self.decoded_from_start.is_some() && self.stream_first.is_none() {
            self.stream_first = Some(t);
        }
        if self.first_time.is_none() {
            // A frame wholly before the segment does not start the clock yet.
            let frame_end = t + Time::new(frame.samples() as i64, rate);
            // PCM keeps a little before the segment to settle the resampler's filter.
            let keep_from = if self.normalise_mix {
                self.start - Time::new(1, 20)
            } else {
                self.start
            };
            if frame_end <= keep_from {
                return Ok(None);
            }
            if self.normalise_mix {
                // PCM: start resampling at a sample where the source's and the output's sample
                // grids meet (every rate/gcd(rates) samples counted from the stream's first
                // sample), so the output samples are those of a resampler run over the whole
                // stream (the ffmpeg CLI's, with -ss after -i), not shifted by a fraction of a
                // sample to wherever the decoder began; the preroll before the segment
                // settles the filter.
                let grid = gcd(rate, self.format.sample_rate as i64);
                let step = rate / grid;
                let first = self.stream_first.unwrap_or(Time::ZERO);
                let count = count
                    .unwrap_or_else(|| (t - first).scale(rate, 1).to_pts(1, 1, Rounding::Nearest));
                let skip = (step - count.rem_euclid(step)) % step;
                if skip > 0 && (skip as usize) < frame.samples() {
                    if let Some(mut tail) = tail_of(frame, skip as usize) {
                        let t_tail = t + Time::new(skip, rate);
                        tail.set_pts(Some(t_tail.to_pts(
                            self.time_base.num,
                            self.time_base.den,
                            Rounding::Nearest,
                        )));
                        self.first_time = Some(t_tail);
                        return self.start_with(&tail, t_tail);
                    }
                }
            }
            self.first_time = Some(t);
            return self.start_with(frame, t);
        }
        let conv = self.convert(frame)?;
        let kept = self.trim(conv);
        Ok(kept.first().is_some_and(|c| !c.is_empty()).then_some(kept))
    }

    /// The first kept frame (`frame`, at time `t`): makes the resampler and converts it.
    fn start_with(
        &mut self,
        frame: &ffmpeg::frame::Audio,
        t: Time,
    ) -> Result<Option<Vec<Vec<f32>>>> {
        {
            self.resampler = Some(
                Resampler::new(frame, self.format, self.normalise_mix)
                    .ok_or_else(|| audio_failure(&self.path, "unsupported audio sample layout"))?,
            );
            // The source starts after the segment does: lead with silence.
            if t > self.start {
                let lead = ((t - self.start).scale(self.format.sample_rate as i64, 1)).to_pts(
                    1,
                    1,
                    Rounding::Nearest,
                );
                let mut out: Vec<Vec<f32>> = (0..self.format.channels)
                    .map(|_| vec![0.0; lead as usize])
                    .collect();
                let conv = self.convert(frame)?;
                let kept = self.trim(conv);
                for (o, k) in out.iter_mut().zip(kept) {
                    o.extend(k);
                }
                return Ok(Some(out));
            }
        }
        let conv = self.convert(frame)?;
        let kept = self.trim(conv);
        Ok(kept.first().is_some_and(|c| !c.is_empty()).then_some(kept))
    }

    fn convert(&mut self, frame: &ffmpeg::frame::Audio) -> Result<Vec<Vec<f32>>> {
        let r = self
            .resampler
            .as_mut()
            .expect("resampler made with the first frame");
        r.convert(frame)
            .map_err(|e| audio_failure(&self.path, format!("resampling audio: {e}")))
    }

    /// Keeps the samples of `chunk` whose time lies in `[start, end)`.
    fn trim(&mut self, mut chunk: Vec<Vec<f32>>) -> Vec<Vec<f32>> {
        let n = chunk.first().map_or(0, |c| c.len()) as i64;
        let k0 = self.produced;
        self.produced += n;
        let first = self.first_time.unwrap_or(self.start);
        let rate = self.format.sample_rate as i64;
        let lo_abs = if self.start <= first {
            0
        } else if self.normalise_mix {
            // As the ffmpeg CLI's trim counts: each output sample's time rounded to the
            // output rate (the resampler's frames carry the first one's), kept from the
            // start's rounded time on. The first sample is rarely on that grid (the stream's
            // first sample need not be at a multiple of 1/rate).
            self.start.scale(rate, 1).to_pts(1, 1, Rounding::Nearest)
                - first.scale(rate, 1).to_pts(1, 1, Rounding::Nearest)
        } else {
            (self.start - first)
                .scale(rate, 1)
                .to_pts(1, 1, Rounding::Up)
        };
        let hi_abs = (self.end - first).scale(rate, 1).to_pts(1, 1, Rounding::Up);
        if k0 + n >= hi_abs {
            self.done = true;
        }
        let lo = (lo_abs - k0).clamp(0, n) as usize;
        let hi = (hi_abs - k0).clamp(0, n) as usize;
        for c in &mut chunk {
            if hi <= lo {
                c.clear();
            } else {
                c.truncate(hi);
                c.drain(..lo);
            }
        }
        chunk
    }
}

/// The time of the first sample `decoder` makes of `input`'s audio stream `stream`, read from
/// where `input` stands (its start); `None` when none decodes. The caller flushes the decoder.
fn first_sample_time(
    input: &mut ffmpeg::format::context::Input,
    stream: usize,
    decoder: &mut ffmpeg::decoder::Audio,
    time_base: Ratio,
) -> Option<Time> {
    // Enough packets for any decoder's delay; a stream that gives nothing by then is placed
    // from zero, as before.
    for _ in 0..64 {
        let mut packet = ffmpeg::Packet::empty();
        if packet.read(input).is_err() {
            return None;
        }
        if packet.stream() != stream {
            continue;
        }
        if decoder.send_packet(&packet).is_err() {
            continue;
        }
        let mut frame = ffmpeg::frame::Audio::empty();
        while decoder.receive_frame(&mut frame).is_ok() {
            if frame.samples() > 0 {
                let pts = crate::media::compat::audio_frame_pts(&frame);
                let place = AudioClock::new(frame.rate().max(1)).place(
                    pts,
                    time_base,
                    frame.samples() as i64,
                );
                return Some(Time::new(place, frame.rate().max(1) as i64));
            }
        }
    }
    None
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a.max(1)
    } else {
        gcd(b, a % b)
    }
}

/// `frame` without its first `skip` samples (same format, layout and rate); `None` for a
/// sample format whose planes cannot be cut that way.
fn tail_of(frame: &ffmpeg::frame::Audio, skip: usize) -> Option<ffmpeg::frame::Audio> {
    let n = frame.samples().checked_sub(skip)?;
    let bytes = frame.format().bytes();
    let channels = frame.channels() as usize;
    let mut tail = ffmpeg::frame::Audio::new(frame.format(), n, frame.channel_layout());
    tail.set_rate(frame.rate());
    let (planes, per_sample) = if frame.is_planar() {
        (channels, bytes)
    } else {
        (1, bytes * channels)
    };
    for p in 0..planes {
        let src = frame
            .data(p)
            .get(skip * per_sample..(skip + n) * per_sample)?;
        tail.data_mut(p)
            .get_mut(..n * per_sample)?
            .copy_from_slice(src);
    }
    Some(tail)
}

/// The AAC stream of an output file, fed from an [`AudioPlan`].
pub struct AudioTrack {
    encoder: ffmpeg::encoder::Audio,
    stream_index: usize,
    stream_time_base: ffmpeg::Rational,
    format: AudioFormat,
    frame_size: usize,
    fifo: Vec<VecDeque<f32>>,
    /// Samples encoded so far (the pts of the next encoder frame).
    encoded: i64,
    /// Samples queued into the FIFO so far, over all segments.
    queued: i64,
    segments: VecDeque<AudioSegment>,
    /// Output-timeline time at which the current segment ends.
    segment_end: Time,
    reader: Option<SegmentReader>,
    total_samples: i64,
    output_path: PathBuf,
}

impl AudioTrack {
    /// Adds an AAC stream to `output` (before its header is written).
    pub fn add_to(
        output: &mut Output,
        output_path: &Path,
        plan: &AudioPlan,
        format: AudioFormat,
        bit_rate: usize,
    ) -> Result<AudioTrack> {
        let codec = ffmpeg::encoder::find(ffmpeg::codec::Id::AAC)
            .ok_or_else(|| Error::request(output_path, "this ffmpeg build has no AAC encoder"))?;
        let global_header = output
            .format()
            .flags()
            .contains(ffmpeg::format::Flags::GLOBAL_HEADER);
        let mut enc = ffmpeg::codec::context::Context::new_with_codec(codec)
            .encoder()
            .audio()
            .map_err(|e| Error::encode(output_path, "creating the AAC encoder", e))?;
        enc.set_rate(format.sample_rate as i32);
        crate::media::compat::set_encoder_channels(&mut enc, format.channels);
        enc.set_format(ffmpeg::format::Sample::F32(
            ffmpeg::format::sample::Type::Planar,
        ));
        enc.set_bit_rate(bit_rate * format.channels as usize / 2);
        enc.set_time_base(ffmpeg::Rational::new(1, format.sample_rate as i32));
        if global_header {
            crate::media::ffi::add_codec_flags(&mut enc, ffi::AV_CODEC_FLAG_GLOBAL_HEADER);
        }
        let encoder = enc
            .open_as(codec)
            .map_err(|e| Error::encode(output_path, "opening the AAC encoder", e))?;
        let mut stream = output
            .add_stream(codec)
            .map_err(|e| Error::encode(output_path, "adding the audio stream", e))?;
        stream.set_parameters(&encoder);
        stream.set_time_base(ffmpeg::Rational::new(1, format.sample_rate as i32));
        let stream_index = stream.index();
        let frame_size = (encoder.frame_size() as usize).max(1);
        let total_samples =
            plan.duration()
                .scale(format.sample_rate as i64, 1)
                .to_pts(1, 1, Rounding::Nearest);
        Ok(AudioTrack {
            encoder,
            stream_index,
            stream_time_base: ffmpeg::Rational::new(1, format.sample_rate as i32),
            format,
            frame_size,
            fifo: (0..format.channels).map(|_| VecDeque::new()).collect(),
            encoded: 0,
            queued: 0,
            segments: plan.segments.iter().cloned().collect(),
            segment_end: Time::ZERO,
            reader: None,
            total_samples,
            output_path: output_path.to_path_buf(),
        })
    }

    pub fn format(&self) -> AudioFormat {
        self.format
    }

    /// Call after the header is written: the muxer may have changed the stream's time base.
    pub fn header_written(&mut self, output: &Output) {
        if let Some(st) = output.stream(self.stream_index) {
            self.stream_time_base = st.time_base();
        }
    }

    /// Encodes audio up to output time `t` (or the end of the plan, whichever is first).
    pub fn pump_until(&mut self, output: &mut Output, t: Time) -> Result<()> {
        let want = t
            .scale(self.format.sample_rate as i64, 1)
            .to_pts(1, 1, Rounding::Up)
            .min(self.total_samples);
        while self.encoded < want {
            let needed = (self.encoded + self.frame_size as i64).min(self.total_samples);
            self.fill_to(needed)?;
            let available = self.fifo[0].len();
            if available == 0 {
                break;
            }
            let n = available.min(self.frame_size);
            self.encode_samples(output, n)?;
        }
        Ok(())
    }

    /// Encodes everything left in the plan and drains the encoder.
    pub fn finish(&mut self, output: &mut Output) -> Result<()> {
        self.pump_until(
            output,
            Time::new(self.total_samples, self.format.sample_rate as i64),
        )?;
        while !self.fifo[0].is_empty() {
            let n = self.fifo[0].len().min(self.frame_size);
            self.encode_samples(output, n)?;
        }
        self.encoder
            .send_eof()
            .map_err(|e| Error::encode(&self.output_path, "flushing the AAC encoder", e))?;
        self.drain(output)
    }

    /// Queues samples until `target` samples have been queued in total (or the plan ends).
    fn fill_to(&mut self, target: i64) -> Result<()> {
        let rate = self.format.sample_rate as i64;
        while self.queued < target {
            let seg_end_samples = self
                .segment_end
                .scale(rate, 1)
                .to_pts(1, 1, Rounding::Nearest);
            if self.queued >= seg_end_samples {
                // Start the next segment.
                let Some(seg) = self.segments.pop_front() else {
                    return Ok(());
                };
                self.segment_end = self.segment_end + seg.duration();
                self.reader = match &seg {
                    AudioSegment::Source {
                        source,
                        start,
                        end,
                        inputs,
                    } => SegmentReader::open(source, *start, *end, self.format, inputs)?,
                    AudioSegment::Silence { .. } => None,
                };
                continue;
            }
            let room = (seg_end_samples - self.queued) as usize;
            let chunk = match self.reader.as_mut() {
                Some(r) => r.next_chunk()?,
                None => None,
            };
            match chunk {
                Some(mut c) => {
                    for ch in &mut c {
                        ch.truncate(room);
                    }
                    let n = c[0].len();
                    for (q, ch) in self.fifo.iter_mut().zip(c) {
                        q.extend(ch);
                    }
                    self.queued += n as i64;
                }
                None => {
                    // Source exhausted (or silence): pad towards the segment's exact length,
                    // no further than asked (a long silence is made as it is encoded, never
                    // held in memory).
                    self.reader = None;
                    let pad = room.min((target - self.queued).max(1) as usize);
                    for q in &mut self.fifo {
                        q.extend(std::iter::repeat_n(0.0, pad));
                    }
                    self.queued += pad as i64;
                }
            }
        }
        Ok(())
    }

    fn encode_samples(&mut self, output: &mut Output, n: usize) -> Result<()> {
        let layout = layout_for(self.format.channels);
        let mut frame = ffmpeg::frame::Audio::new(
            ffmpeg::format::Sample::F32(ffmpeg::format::sample::Type::Planar),
            n,
            layout,
        );
        frame.set_rate(self.format.sample_rate);
        for (ch, q) in self.fifo.iter_mut().enumerate() {
            let plane = frame.plane_mut::<f32>(ch);
            for (dst, src) in plane.iter_mut().zip(q.drain(..n)) {
                *dst = src;
            }
        }
        frame.set_pts(Some(self.encoded));
        self.encoded += n as i64;
        self.encoder
            .send_frame(&frame)
            .map_err(|e| Error::encode(&self.output_path, "encoding audio", e))?;
        self.drain(output)
    }

    fn drain(&mut self, output: &mut Output) -> Result<()> {
        let mut packet = ffmpeg::Packet::empty();
        loop {
            match self.encoder.receive_packet(&mut packet) {
                Ok(()) => {
                    packet.set_stream(self.stream_index);
                    packet.rescale_ts(
                        ffmpeg::Rational::new(1, self.format.sample_rate as i32),
                        self.stream_time_base,
                    );
                    packet
                        .write_interleaved(output)
                        .map_err(|e| Error::encode(&self.output_path, "writing audio", e))?;
                }
                Err(ffmpeg::Error::Eof) => return Ok(()),
                Err(ffmpeg::Error::Other { errno }) if errno == EAGAIN => return Ok(()),
                Err(e) => return Err(Error::encode(&self.output_path, "encoding audio", e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_audio_failure_names_the_file_and_suggests_no_audio() {
        let e = audio_failure(Path::new("clip.wmv"), "resampling audio: Input changed");
        let text = e.to_string();
        assert!(text.starts_with("clip.wmv: "), "{text}");
        assert!(text.contains("audio stream"), "{text}");
        assert!(text.contains("resampling audio: Input changed"), "{text}");
        assert!(text.ends_with("add --no-audio to write the video without its soundtrack"));
    }

    /// The soundtrack's reader sharing the video's input (`media::demux`): its tests live here,
    /// above both, so that the demuxer's file names no reader.
    mod shared_demuxer {
        use crate::media::audio::{AudioFormat, SegmentReader};
        use crate::media::demux::*;
        use crate::media::input::{read_packet, VideoInput};
        use crate::media::source::Source;
        use crate::vocab::time::Time;
        use ffmpeg_next as ffmpeg;
        use std::sync::Arc;

        /// A 2 s MP4: H.264 with B-frames and AAC of noise (its decoding depends on the packets
        /// decoded before), made by the ffmpeg CLI; `None` without it.
        fn media(dir: &std::path::Path) -> Option<std::path::PathBuf> {
            let path = dir.join("av.mp4");
            let made = std::process::Command::new("ffmpeg")
                .args([
                    "-v",
                    "error",
                    "-f",
                    "lavfi",
                    "-i",
                    "testsrc2=size=64x48:rate=25",
                ])
                .args([
                    "-f",
                    "lavfi",
                    "-i",
                    "anoisesrc=sample_rate=48000:amplitude=0.3",
                ])
                .args([
                    "-t", "2", "-map", "0:v", "-map", "1:a", "-c:v", "libx264", "-g", "10",
                ])
                .args(["-bf", "2", "-c:a", "aac", "-b:a", "32k"])
                .arg(&path)
                .status()
                .ok()?;
            made.success().then_some(path)
        }

        fn samples(mut reader: SegmentReader, mut between: impl FnMut()) -> Vec<f32> {
            let mut all = Vec::new();
            while let Some(chunk) = reader.next_chunk().unwrap() {
                all.extend(chunk.concat());
                between();
            }
            all
        }

        fn video_packets(
            mut next: impl FnMut() -> Option<ffmpeg::Packet>,
        ) -> Vec<(Option<i64>, Vec<u8>)> {
            std::iter::from_fn(|| next().map(|p| (p.pts(), p.data().unwrap_or(&[]).to_vec())))
                .collect()
        }

        /// Whatever the two sides' pace, queue limit or a seek of the video side, the soundtrack
        /// read from the shared input is, sample for sample, the one read from an input of its
        /// own, and the video side gets every packet of its stream an input of its own gives.
        #[test]
        fn each_side_gets_what_an_input_of_its_own_gives() {
            let dir = tempfile::tempdir().unwrap();
            let Some(path) = media(dir.path()) else {
                eprintln!("skipped: no ffmpeg CLI to make the test media");
                return;
            };
            let format = AudioFormat {
                sample_rate: 48000,
                channels: 1,
            };
            let (start, end) = (Time::new(1, 5), Time::new(19, 10));
            let pool = crate::media::pool::InputPool::new(Default::default());
            let alone = samples(
                SegmentReader::open(&Source::from(&path), start, end, format, &pool)
                    .unwrap()
                    .unwrap(),
                || {},
            );
            assert!(alone.len() > 40_000, "{}", alone.len());
            let mut own = VideoInput::open(&path, pool.call()).unwrap();
            let index = own.video.index;
            own.keep_only_streams(&[index]);
            let own_video = video_packets(|| loop {
                match read_packet(&mut own.context).unwrap() {
                    Some(p) if p.stream() == index => return Some(p),
                    Some(_) => {}
                    None => return None,
                }
            });
            // (limit, video packets read between audio chunks, seek the video after a chunk)
            for (limit, pace, seek) in [
                (MAX_QUEUED_BYTES, 1, false),
                (MAX_QUEUED_BYTES, 7, false),
                (MAX_QUEUED_BYTES, 0, false),
                (2000, 3, false),
                (0, 1, false),
                (MAX_QUEUED_BYTES, 2, true),
            ] {
                let source = Source::from(&path);
                let input = VideoInput::open(&source, pool.call()).unwrap();
                let audio = crate::media::input::best_audio_stream(&input.context).unwrap();
                let shared = Arc::new(SharedDemuxer::with_limit(input, audio, limit));
                pool.offer(&source, shared.clone());
                // An offer is for its source only.
                assert!(pool.take(&Source::from("elsewhere.mp4")).is_none());
                let reader = SegmentReader::open(&source, start, end, format, &pool)
                    .unwrap()
                    .unwrap();
                assert!(pool.take(&source).is_none(), "the reader took the input");
                let mut got_video = Vec::new();
                let mut chunks = 0;
                let shared_audio = samples(reader, || {
                    chunks += 1;
                    if seek && chunks == 3 {
                        shared.position_video(|_| ());
                    }
                    for _ in 0..pace {
                        if let Ok(Some(p)) = shared.read_video() {
                            got_video.push((p.pts(), p.data().unwrap_or(&[]).to_vec()));
                        }
                    }
                });
                assert!(
                    shared_audio == alone,
                    "limit {limit}, pace {pace}, seek {seek}: the samples differ"
                );
                if !seek {
                    got_video.extend(video_packets(|| shared.read_video().unwrap()));
                    assert!(
                        got_video == own_video,
                        "limit {limit}, pace {pace}: the video packets differ"
                    );
                }
            }
        }

        /// An input a table's scan read to its end, rewound to its start (`media::rewind`),
        /// shared with the soundtrack: the samples are, bit for bit, those of a reader of its
        /// own, and the video side gets every packet of its stream from the first.
        #[test]
        fn a_rewound_input_gives_what_an_input_of_its_own_gives() {
            let dir = tempfile::tempdir().unwrap();
            let Some(path) = media(dir.path()) else {
                eprintln!("skipped: no ffmpeg CLI to make the test media");
                return;
            };
            let format = AudioFormat {
                sample_rate: 48000,
                channels: 1,
            };
            let (start, end) = (Time::ZERO, Time::new(19, 10));
            let pool = crate::media::pool::InputPool::new(Default::default());
            let alone = samples(
                SegmentReader::open(&Source::from(&path), start, end, format, &pool)
                    .unwrap()
                    .unwrap(),
                || {},
            );
            let mut own = VideoInput::open(&path, pool.call()).unwrap();
            let index = own.video.index;
            own.keep_only_streams(&[index]);
            let own_video = video_packets(|| loop {
                match read_packet(&mut own.context).unwrap() {
                    Some(p) if p.stream() == index => return Some(p),
                    Some(_) => {}
                    None => return None,
                }
            });
            for pace in [0, 1, 5] {
                let source = Source::from(&path);
                let mut input = VideoInput::open(&source, pool.call()).unwrap();
                let table = crate::media::table::FrameTable::scan_input(&mut input).unwrap();
                let audio = crate::media::input::best_audio_stream(&input.context).unwrap();
                let rewound = crate::media::rewind::rewind(input, &table, Some(audio))
                    .expect("an MP4 is rewound");
                assert!(!rewound.video.is_empty() && !rewound.audio.is_empty());
                let shared = Arc::new(SharedDemuxer::with_queued(
                    rewound.input,
                    audio,
                    rewound.video,
                    rewound.audio,
                ));
                pool.offer(&source, shared.clone());
                let reader = SegmentReader::open(&source, start, end, format, &pool)
                    .unwrap()
                    .unwrap();
                assert!(pool.take(&source).is_none(), "the reader took the input");
                let mut got_video = Vec::new();
                let shared_audio = samples(reader, || {
                    for _ in 0..pace {
                        if let Ok(Some(p)) = shared.read_video() {
                            got_video.push((p.pts(), p.data().unwrap_or(&[]).to_vec()));
                        }
                    }
                });
                assert!(shared_audio == alone, "pace {pace}: the samples differ");
                got_video.extend(video_packets(|| shared.read_video().unwrap()));
                assert!(
                    got_video == own_video,
                    "pace {pace}: the video packets differ"
                );
            }
        }
    }
}
