//! The one H.264 stream of a smart clip: copied packets of the source and x264's packets of
//! the re-encoded parts, written in output decoding order. Presentation times are the ones
//! given (one per output frame); decoding times are rebuilt for the whole output (each
//! packet decodes `delay` frames before it would otherwise), so they increase across every
//! seam. The sample entry is the source's video parameters with an avcC record holding both
//! parameter-set pairs; the soundtrack (AAC, re-encoded from an [`AudioPlan`]) is interleaved
//! as the video goes.

use std::ops::Range;
use std::path::Path;

use ffmpeg_next as ffmpeg;

use crate::error::{Error, Result};
use crate::media::audio::{AudioFormat, AudioPlan, AudioTrack};
use crate::media::bitstream::h264::AvcC;
use crate::media::encode::Container;
use crate::media::input::{read_error_ends_input, read_packet};
use crate::media::smart_parts::source::H264Source;
use crate::vocab::time::Time;
use crate::vocab::Ratio;

/// The output's video timing.
pub(crate) struct SpliceTiming<'a> {
    /// The time base of `pts`.
    pub time_base: Ratio,
    pub frame_rate: Option<Ratio>,
    /// Each output frame's presentation time, increasing.
    pub pts: &'a [i64],
    /// Where the last frame ends.
    pub end_pts: i64,
    /// Decoding delay of the output (frames).
    pub delay: usize,
}

/// Writes packets in output decoding order with the output's timestamps.
pub(crate) struct SpliceMuxer<'a> {
    out: ffmpeg::format::context::Output,
    /// The output as named (for messages).
    path: &'a Path,
    stream_index: usize,
    out_tb: ffmpeg::Rational,
    timing: SpliceTiming<'a>,
    length_size: usize,
    durations: Vec<i64>,
    /// Packets written (the output decoding position).
    written: usize,
    video_bytes: u64,
    audio: Option<AudioTrack>,
}

impl<'a> SpliceMuxer<'a> {
    /// Creates the output at `temp` (`path`: its name in messages) with the video parameters
    /// of `source` and the sample entry `avcc`, and the soundtrack `audio` (a plan and its
    /// stereo bit rate) when the source has audio; writes the header.
    pub(crate) fn create(
        path: &'a Path,
        temp: &Path,
        container: Container,
        source: &H264Source,
        avcc: &AvcC,
        timing: SpliceTiming<'a>,
        audio: Option<(&AudioPlan, u64)>,
    ) -> Result<SpliceMuxer<'a>> {
        let mut out = ffmpeg::format::output_as(temp, container.muxer())
            .map_err(|e| Error::encode(path, "creating the output", e))?;
        crate::media::ffi::make_output_repeatable(&mut out);
        let in_par = source.parameters.clone();
        let stream_index = {
            let mut ost = out
                .add_stream(ffmpeg::encoder::find(ffmpeg::codec::Id::None))
                .map_err(|e| Error::encode(path, "adding the video stream", e))?;
            ost.set_parameters(in_par);
            crate::media::ffi::set_stream_extradata(&mut ost, &avcc.to_bytes());
            ost.set_time_base(ffmpeg::Rational::from(timing.time_base));
            if let Some(fps) = timing.frame_rate.filter(|r| r.is_valid()) {
                ost.set_avg_frame_rate(ffmpeg::Rational::from(fps));
            }
            ost.index()
        };
        let mut audio = match audio {
            Some((plan, bit_rate)) if source.has_audio => match plan.output_format()? {
                Some(format) => Some(AudioTrack::add_to(
                    &mut out,
                    path,
                    plan,
                    format,
                    bit_rate as usize,
                )?),
                None => None,
            },
            _ => None,
        };
        let mut header = ffmpeg::Dictionary::new();
        if container != Container::Matroska {
            header.set("movflags", "+faststart");
        }
        out.write_header_with(header)
            .map_err(|e| Error::encode(path, "writing the file header", e))?;
        if let Some(a) = audio.as_mut() {
            a.header_written(&out);
        }
        let out_tb = out.stream(stream_index).expect("video").time_base();
        let pts = timing.pts;
        let durations: Vec<i64> = (0..pts.len())
            .map(|o| {
                let next = pts.get(o + 1).copied().unwrap_or(timing.end_pts);
                (next - pts[o]).max(1)
            })
            .collect();
        Ok(SpliceMuxer {
            out,
            path,
            stream_index,
            out_tb,
            timing,
            length_size: avcc.length_size,
            durations,
            written: 0,
            video_bytes: 0,
            audio,
        })
    }

    /// The output as named.
    pub(crate) fn path(&self) -> &'a Path {
        self.path
    }

    /// The presentation time of output frame `o`.
    pub(crate) fn pts(&self, o: usize) -> i64 {
        self.timing.pts[o]
    }

    /// How long output frame `o` is shown (in the output's time base).
    pub(crate) fn duration(&self, o: usize) -> i64 {
        self.durations[o]
    }

    /// The NAL length size of the samples.
    pub(crate) fn length_size(&self) -> usize {
        self.length_size
    }

    /// Video packets written so far.
    pub(crate) fn written(&self) -> usize {
        self.written
    }

    /// The decoding timestamp of the packet at output decoding position `k`.
    fn dts(&self, k: usize) -> i64 {
        let pts = self.timing.pts;
        let d = self.timing.delay;
        if k >= d {
            pts[k - d]
        } else {
            let step = if pts.len() > 1 { pts[1] - pts[0] } else { 1 };
            pts[0] - (d - k) as i64 * step
        }
    }

    /// Writes the packet of output frame `o`.
    pub(crate) fn write(&mut self, mut packet: ffmpeg::Packet, o: usize, key: bool) -> Result<()> {
        let tb = self.timing.time_base;
        if let Some(a) = self.audio.as_mut() {
            let t = Time::from_pts(self.timing.pts[o], tb.num, tb.den);
            a.pump_until(&mut self.out, t + Time::new(1, 2))?;
        }
        packet.set_stream(self.stream_index);
        packet.set_pts(Some(self.timing.pts[o]));
        packet.set_dts(Some(self.dts(self.written)));
        packet.set_duration(self.durations[o]);
        packet.set_position(-1);
        packet.set_flags(if key {
            ffmpeg::packet::Flags::KEY
        } else {
            ffmpeg::packet::Flags::empty()
        });
        packet.rescale_ts(ffmpeg::Rational::from(tb), self.out_tb);
        self.video_bytes += packet.size() as u64;
        packet
            .write_interleaved(&mut self.out)
            .map_err(|e| Error::encode(self.path, "writing video", e))?;
        self.written += 1;
        Ok(())
    }

    /// Copies the source packets at decoding positions `decs` (whole GOPs, from source frame
    /// `first_frame` on), each as output frame `output_of(its decoding position)`.
    pub(crate) fn copy_packets(
        &mut self,
        source: &mut H264Source,
        decs: Range<usize>,
        first_frame: usize,
        output_of: &dyn Fn(usize) -> usize,
    ) -> Result<()> {
        // Named as before the split: the output being written.
        let path = self.path;
        let first = source.packets[decs.start];
        let stream = source.stream;
        let (input, packets) = source.input_for_copies(first.dts.min(first.pts))?;
        let mut dec: Option<usize> = None;
        while dec.is_none_or(|d| d + 1 < decs.end) {
            let packet = match read_packet(&mut input.context) {
                Ok(Some(p)) => p,
                Ok(None) => break,
                Err(e) if read_error_ends_input(&e) => break,
                Err(e) => return Err(Error::corrupt(path, "while copying", e.to_string())),
            };
            if packet.stream() != stream || crate::media::ffi::packet_is_discarded(&packet) {
                continue;
            }
            let pts = packet.pts().unwrap_or(i64::MIN);
            let pos = match dec {
                Some(d) => d + 1,
                None if pts == first.pts => decs.start,
                None => continue,
            };
            if packets[pos].pts != pts {
                return Err(Error::corrupt(
                    path,
                    format!("at packet {pos}"),
                    "the packets came back in another order while copying",
                ));
            }
            dec = Some(pos);
            let key = packet.is_key();
            self.write(packet, output_of(pos), key)?;
        }
        if dec != Some(decs.end - 1) {
            return Err(Error::corrupt(
                path,
                format!("at frame {first_frame}"),
                "the file ended before the copied GOPs did",
            ));
        }
        Ok(())
    }

    /// Finishes the soundtrack and writes the trailer; returns the video bytes written and
    /// the soundtrack's format.
    pub(crate) fn finish(mut self) -> Result<(u64, Option<AudioFormat>)> {
        let mut audio = self.audio.take();
        if let Some(a) = audio.as_mut() {
            a.finish(&mut self.out)?;
        }
        self.out
            .write_trailer()
            .map_err(|e| Error::encode(self.path, "finishing the output", e))?;
        Ok((self.video_bytes, audio.as_ref().map(|a| a.format())))
    }
}
