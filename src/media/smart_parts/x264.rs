//! x264 runs for the re-encoded parts of a smart clip: settings matched to the source's SPS
//! (profile, level, size, SAR, colour, range, chroma location, reference count), no
//! B-frames, a global header under a parameter-set id the source does not use, so that both
//! pairs of parameter sets can sit in one avcC record. The encoder's packets go to the
//! [`SpliceMuxer`] as length-prefixed samples (the parameter sets live in the avcC).

use std::path::Path;

use ffmpeg::util::error::EAGAIN;
use ffmpeg_next as ffmpeg;

use crate::error::{Error, Result};
use crate::media::bitstream::h264::{self, AvcC, Sps};
use crate::media::encode::ENCODER_THREADS;
use crate::media::smart_parts::sink::PacketSink;
use crate::vocab::EncodeSettings;
use crate::vocab::Ratio;

/// x264's profile name for the source's SPS (`None`: one x264 cannot produce).
pub(crate) fn x264_profile(sps: &Sps) -> Option<&'static str> {
    match (sps.profile_idc, sps.chroma_format_idc, sps.bit_depth_luma) {
        (66, 1, 8) => Some("baseline"),
        (77, 1, 8) => Some("main"),
        (100, 1, 8) => Some("high"),
        _ => None,
    }
}

/// A parameter-set id the source uses for neither an SPS nor a PPS.
pub(crate) fn free_parameter_set_id(avcc: &AvcC) -> std::result::Result<u32, String> {
    let mut used = Vec::new();
    for s in &avcc.sps {
        used.push(Sps::parse(s)?.id);
    }
    for p in &avcc.pps {
        used.push(h264::pps_ids(p)?.0);
    }
    (0..32)
        .find(|i| !used.contains(i))
        .ok_or_else(|| "no free parameter-set id".to_string())
}

/// What an x264 run matched to the source is told.
pub(crate) struct Matched<'a> {
    /// The source's SPS.
    pub sps: Sps,
    /// The output's time base (frames are given their pts in it).
    pub time_base: Ratio,
    pub frame_rate: Option<Ratio>,
    /// x264's keyframe interval.
    pub gop: u32,
    /// The parameter-set id of the re-encoded parts.
    pub ps_id: u32,
    pub settings: &'a EncodeSettings,
}

/// One x264 run: a re-encoded part, whose packets are output frames `next..` in order.
pub(crate) struct PartEncoder {
    encoder: ffmpeg::encoder::Video,
    /// The output frame its next packet is.
    next: usize,
}

impl PartEncoder {
    /// Opens x264 as `m` says for a part starting at output frame `first` (`path`: the output,
    /// for messages).
    pub(crate) fn open(path: &Path, m: &Matched, first: usize) -> Result<PartEncoder> {
        let sps = &m.sps;
        let codec = ffmpeg::encoder::find_by_name("libx264")
            .ok_or_else(|| Error::request(path, "this ffmpeg build has no libx264 encoder"))?;
        let mut enc = ffmpeg::codec::context::Context::new_with_codec(codec)
            .encoder()
            .video()
            .map_err(|e| Error::encode(path, "creating the H.264 encoder", e))?;
        enc.set_width(sps.width);
        enc.set_height(sps.height);
        enc.set_format(crate::media::frame::PIPELINE_FORMAT);
        enc.set_time_base(ffmpeg::Rational::from(m.time_base));
        if let Some(fps) = m.frame_rate.filter(|r| r.is_valid()) {
            enc.set_frame_rate(Some(ffmpeg::Rational::from(fps)));
        }
        if let Some((w, h)) = sps.sar {
            enc.set_aspect_ratio(ffmpeg::Rational::new(w as i32, h as i32));
        }
        enc.set_color_range(if sps.full_range {
            ffmpeg::color::Range::JPEG
        } else {
            ffmpeg::color::Range::MPEG
        });
        enc.set_gop(m.gop);
        enc.set_max_b_frames(0);
        crate::media::ffi::add_codec_flags(&mut enc, ffmpeg::ffi::AV_CODEC_FLAG_GLOBAL_HEADER);
        enc.set_threading(ffmpeg::codec::threading::Config {
            count: ENCODER_THREADS,
            ..Default::default()
        });
        // No more reference frames than the source's SPS allows (the sample entry's first SPS
        // sizes a decoder's picture buffer).
        let refs = sps.max_num_ref_frames.clamp(1, 3);
        let mut x264 = vec![format!("sps-id={}", m.ps_id), format!("ref={refs}")];
        if let Some(v) = sps.video_format {
            const NAMES: [&str; 6] = ["component", "pal", "ntsc", "secam", "mac", "undef"];
            if let Some(n) = NAMES.get(v as usize) {
                x264.push(format!("videoformat={n}"));
            }
        }
        x264.push(format!(
            "range={}",
            if sps.full_range { "pc" } else { "tv" }
        ));
        if let Some((p, t, mx)) = sps
            .colour
            .and_then(|(p, t, mx)| h264::x264_colour_names(p, t, mx))
        {
            x264.push(format!("colorprim={p}:transfer={t}:colormatrix={mx}"));
        }
        if let Some((top, _)) = sps.chroma_loc {
            x264.push(format!("chromaloc={top}"));
        }
        if let Some(o) = sps.overscan {
            x264.push(format!("overscan={}", if o { "show" } else { "crop" }));
        }
        let mut options = ffmpeg::Dictionary::new();
        options.set("preset", &m.settings.preset);
        options.set("crf", &format!("{}", m.settings.crf));
        options.set("profile", x264_profile(sps).unwrap_or("high"));
        options.set(
            "level",
            &format!("{}.{}", sps.level_idc / 10, sps.level_idc % 10),
        );
        x264.extend(crate::media::encode::x264_cpu_param());
        options.set("x264-params", &x264.join(":"));
        let encoder = enc.open_as_with(codec, options).map_err(|e| {
            Error::encode(path, "opening the H.264 encoder matched to the source", e)
        })?;
        Ok(PartEncoder {
            encoder,
            next: first,
        })
    }

    /// This encoder, not yet used, for a part starting at output frame `first` instead.
    pub(crate) fn starting_at(self, first: usize) -> PartEncoder {
        debug_assert!(self.next == 0 || self.next == first, "a used encoder");
        PartEncoder {
            encoder: self.encoder,
            next: first,
        }
    }

    /// The SPS and PPS the encoder wrote in its header.
    pub(crate) fn parameter_sets(&self) -> std::result::Result<(Vec<u8>, Vec<u8>), String> {
        let extradata = crate::media::ffi::encoder_extradata(&self.encoder);
        let nals = h264::split_annexb(&extradata);
        let sps = nals.iter().find(|n| h264::nal_type(n) == h264::NAL_SPS);
        let pps = nals.iter().find(|n| h264::nal_type(n) == h264::NAL_PPS);
        match (sps, pps) {
            (Some(s), Some(p)) => Ok((s.to_vec(), p.to_vec())),
            _ => Err("the encoder's header has no SPS/PPS".into()),
        }
    }

    /// Encodes `image` as output frame `index` and moves what x264 has ready into `sink`.
    pub(crate) fn send(
        &mut self,
        image: &crate::media::Picture,
        index: usize,
        sink: &mut dyn PacketSink,
    ) -> Result<()> {
        let mut image = crate::media::frame::share(&image.0);
        image.set_pts(Some(sink.pts(index)));
        image.set_kind(ffmpeg::picture::Type::None);
        self.encoder
            .send_frame(&image)
            .map_err(|e| Error::encode(sink.path(), format!("encoding frame {index}"), e))?;
        self.drain(sink)
    }

    /// Flushes x264 into `sink`; returns the output frame after the part's last packet.
    pub(crate) fn finish(mut self, sink: &mut dyn PacketSink) -> Result<usize> {
        self.encoder
            .send_eof()
            .map_err(|e| Error::encode(sink.path(), "flushing the H.264 encoder", e))?;
        self.drain(sink)?;
        Ok(self.next)
    }

    /// Moves the encoder's packets into `sink` (Annex B to length-prefixed; the parameter
    /// sets live in the avcC).
    fn drain(&mut self, sink: &mut dyn PacketSink) -> Result<()> {
        let mut packet = ffmpeg::Packet::empty();
        loop {
            match self.encoder.receive_packet(&mut packet) {
                Ok(()) => {
                    let data = packet.data().unwrap_or(&[]);
                    let nals = h264::split_annexb(data).into_iter().filter(|n| {
                        !matches!(
                            h264::nal_type(n),
                            h264::NAL_SPS | h264::NAL_PPS | h264::NAL_AUD
                        )
                    });
                    let sample = h264::to_length_prefixed(nals, sink.length_size())
                        .map_err(|e| Error::internal(format!("{}: {e}", sink.path().display())))?;
                    let o = self.next;
                    if packet.pts() != Some(sink.pts(o)) {
                        return Err(Error::internal(format!(
                            "{}: the encoder returned pts {:?} for output frame {o} (expected {})",
                            sink.path().display(),
                            packet.pts(),
                            sink.pts(o)
                        )));
                    }
                    sink.write(ffmpeg::Packet::copy(&sample), o, packet.is_key())?;
                    self.next += 1;
                }
                Err(ffmpeg::Error::Eof) => return Ok(()),
                Err(ffmpeg::Error::Other { errno }) if errno == EAGAIN => return Ok(()),
                Err(e) => return Err(Error::encode(sink.path(), "encoding video", e)),
            }
        }
    }
}
