//! Smart encoding of a clip (`"smart": true`, `--smart`): every whole GOP of an H.264 source
//! that the output shows unchanged is copied packet for packet; only the partial GOPs at the
//! edges of the span (and around an inserted needle, and the needle itself, and frames with
//! boxes drawn on them) are decoded and re-encoded. The result is one H.264 stream with
//! exactly the frames a full encode would have, most of them bit-identical to the source.
//!
//! How the pieces fit into one stream:
//! - a copy starts and ends only at *clean cut points*: an IDR picture that is decoded where
//!   it is shown, with nothing before it shown after it (so nothing on either side refers
//!   across);
//! - each re-encoded part is a fresh x264 run with settings matched to the source's SPS
//!   (profile, level, size, SAR, colour, range, chroma location), no B-frames, starting with
//!   an IDR, under its own SPS/PPS id; the MP4 (or Matroska) `avcC` carries both parameter-set
//!   pairs;
//! - presentation times are the stream's; decoding times are rebuilt for the whole output
//!   (each packet decodes `delay` frames before it would otherwise, `delay` being the largest
//!   reordering of any copied part), so they increase across every seam;
//! - audio is re-encoded from the source with sample accuracy, as in a full encode.
//!
//! Where this cannot apply (another codec, an image sequence or URL, a rotated or interlaced
//! source, parameters x264 cannot reproduce, no whole GOP in the span...) the clip is fully
//! encoded instead and its sidecar says why. `verify` decodes the output and checks every
//! frame against the frame it should be (copied: bit-identical; re-encoded: PSNR >= 40 dB).

use std::ops::Range;

use ffmpeg::util::error::EAGAIN;
use ffmpeg_next as ffmpeg;
use serde::Serialize;
use serde_json::json;

use crate::error::{Error, Result};
use crate::exports::clip::{video_sidecar, write_boxes_file, Claimed};
use crate::exports::ExportReport;
use crate::media::decode::{DecodeOptions, FrameReader};
use crate::media::encode::{Container, EncodeSettings, WriteReport, ENCODER_THREADS};
use crate::media::h264::{self, AvcC, Sps};
use crate::media::input::{
    best_audio_stream, read_error_ends_input, read_packet, Ratio, VideoInput,
};
use crate::media::source::SourceKind;
use crate::pipeline::{FrameOrigin, FrameStage, Geometry, PipelineFrame, Progress};
use crate::plan::ExportSpec;
use crate::sinks::EncodedOutput;
use crate::stages::stream::ProcessedStream;
use crate::time::{Rounding, Time};

/// Re-encoded frames must be at least this close to the frames they stand for (`verify`).
pub const MIN_PSNR_DB: f64 = 40.0;

/// One video packet of the source, in decoding order.
#[derive(Clone, Debug)]
struct PacketInfo {
    pts: i64,
    /// Its decoding time (the presentation time when the container stores none).
    dts: i64,
    /// The sample holds an IDR slice.
    idr: bool,
}

/// The source's packets in decoding order, where a copy may start, and its parameter sets.
struct SourceIndex {
    stream: usize,
    packets: Vec<PacketInfo>,
    /// Display index -> decoding position.
    dec_of_disp: Vec<usize>,
    /// Decoding position -> display index.
    disp_of_dec: Vec<usize>,
    /// Display indices where the stream can be split cleanly, increasing, ending with the
    /// frame count.
    cut_points: Vec<usize>,
    avcc: AvcC,
    sps: Sps,
}

/// Reads every video packet of `input` (opened, its other streams discarded) in decoding
/// order, for a table that did not record them. `Ok(Err(why))` when they cannot be cut.
fn read_packets(
    input: &mut VideoInput,
    length_size: usize,
    stream: &ProcessedStream,
) -> Result<std::result::Result<Vec<PacketInfo>, String>> {
    let path = &stream.source;
    let vindex = input.video.index;
    crate::tally::count(crate::tally::Event::PacketScan);
    let mut packets = Vec::with_capacity(stream.table.len());
    loop {
        let packet = match read_packet(&mut input.context) {
            Ok(Some(p)) => p,
            Ok(None) => break,
            Err(e) if read_error_ends_input(&e) => break,
            Err(e) => return Err(Error::corrupt(path, "while indexing", e.to_string())),
        };
        if packet.stream() != vindex || crate::media::ffi::packet_is_discarded(&packet) {
            continue;
        }
        let Some(pts) = packet.pts() else {
            return Ok(Err("a video packet has no presentation timestamp".into()));
        };
        // Matroska stores no decoding times: packets come in decoding order, and the time is
        // only used to seek, where the presentation time does as well.
        let dts = packet.dts().unwrap_or(pts);
        let data = packet.data().unwrap_or(&[]);
        let nals = match h264::split_length_prefixed(data, length_size) {
            Ok(n) => n,
            Err(e) => {
                return Ok(Err(format!(
                    "a video packet is not length-prefixed H.264: {e}"
                )))
            }
        };
        let idr = nals.iter().any(|n| h264::nal_type(n) == h264::NAL_IDR);
        packets.push(PacketInfo { pts, dts, idr });
    }
    Ok(Ok(packets))
}

impl SourceIndex {
    /// The source's packets in decoding order (as the frame table's scan recorded them, or
    /// read now when it did not) and its parameter sets. `Ok(Err(why))` when the source cannot
    /// be smart-encoded.
    fn build(stream: &ProcessedStream) -> Result<std::result::Result<SourceIndex, String>> {
        let mut input = VideoInput::open(&stream.input)?;
        let vindex = input.video.index;
        input.keep_only_streams(&[vindex]);
        let par = input
            .context
            .stream(vindex)
            .expect("the video stream")
            .parameters();
        if par.id() != ffmpeg::codec::Id::H264 {
            return Ok(Err(format!(
                "the source video is {}; smart encoding copies H.264 only",
                input.video.codec
            )));
        }
        let extradata = crate::media::ffi::parameters_extradata(&par);
        let avcc = match AvcC::parse(&extradata) {
            Ok(a) => a,
            Err(_) => {
                return Ok(Err(
                    "the source carries its H.264 parameter sets in the stream, not in an avcC record (a raw or transport stream)".into(),
                ))
            }
        };
        if avcc.sps.len() != 1 || avcc.pps.is_empty() {
            return Ok(Err(format!(
                "the source has {} SPS and {} PPS; smart encoding handles one SPS",
                avcc.sps.len(),
                avcc.pps.len()
            )));
        }
        let sps = match Sps::parse(&avcc.sps[0]) {
            Ok(s) => s,
            Err(e) => return Ok(Err(format!("its SPS could not be read: {e}"))),
        };
        // The table's scan recorded the packets in decoding order with their IDR flags; only
        // a table built otherwise (by decoding) leaves them to be read here.
        let recorded = stream.table.coded_packets().map(|coded| {
            coded.as_ref().map(|list| {
                list.iter()
                    .map(|p| PacketInfo {
                        pts: p.pts,
                        dts: p.dts,
                        idr: p.idr,
                    })
                    .collect::<Vec<_>>()
            })
        });
        let packets = match recorded {
            Some(Ok(packets)) => packets,
            Some(Err(why)) => return Ok(Err(why.clone())),
            None => match read_packets(&mut input, avcc.length_size, stream)? {
                Ok(packets) => packets,
                Err(why) => return Ok(Err(why)),
            },
        };
        if packets.len() != stream.table.len() {
            return Ok(Err(format!(
                "the file has {} video packets for {} frames",
                packets.len(),
                stream.table.len()
            )));
        }
        let mut dec_of_disp: Vec<usize> = (0..packets.len()).collect();
        dec_of_disp.sort_by_key(|&d| packets[d].pts);
        let mut disp_of_dec = vec![0; packets.len()];
        for (disp, &dec) in dec_of_disp.iter().enumerate() {
            if packets[dec].pts != stream.table.pts(disp) {
                return Ok(Err(format!(
                    "packet timestamps do not match the frame table at frame {disp}"
                )));
            }
            disp_of_dec[dec] = disp;
        }
        let mut cut_points = Vec::new();
        let mut shown_before: Option<usize> = None;
        for (dec, p) in packets.iter().enumerate() {
            let disp = disp_of_dec[dec];
            if p.idr && disp == dec && shown_before.is_none_or(|m| m < disp) {
                cut_points.push(disp);
            }
            shown_before = Some(shown_before.map_or(disp, |m| m.max(disp)));
        }
        cut_points.push(packets.len());
        Ok(Ok(SourceIndex {
            stream: vindex,
            packets,
            dec_of_disp,
            disp_of_dec,
            cut_points,
            avcc,
            sps,
        }))
    }

    /// The first cut point after `c`.
    fn next_cut(&self, c: usize) -> Option<usize> {
        let i = self.cut_points.partition_point(|&x| x <= c);
        self.cut_points.get(i).copied()
    }

    fn is_cut(&self, c: usize) -> bool {
        self.cut_points.binary_search(&c).is_ok()
    }
}

/// A stretch of the output: copied packets or re-encoded frames.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    /// Output frames `output` are source frames `source`, copied (whole GOPs).
    Copied {
        output: Range<usize>,
        source: Range<usize>,
    },
    /// Output frames `output` are re-encoded.
    Encoded { output: Range<usize> },
}

impl Part {
    fn output(&self) -> Range<usize> {
        match self {
            Part::Copied { output, .. } | Part::Encoded { output } => output.clone(),
        }
    }
}

/// Splits `n` output frames into copied GOPs and re-encoded stretches. `host_of(o)` is the
/// source frame output frame `o` shows unchanged (None: a needle frame or one with boxes
/// drawn); `cut_points` are the clean cut points (ending with the source's frame count).
pub(crate) fn plan_parts(
    n: usize,
    host_of: &dyn Fn(usize) -> Option<usize>,
    next_cut: &dyn Fn(usize) -> Option<usize>,
    is_cut: &dyn Fn(usize) -> bool,
) -> Vec<Part> {
    // The copyable GOP starting at output frame `o`: source frames [src, c) shown unchanged
    // by outputs [o, o + c - src).
    let gop_at = |o: usize| -> Option<(usize, usize)> {
        let src = host_of(o)?;
        if !is_cut(src) {
            return None;
        }
        let c = next_cut(src)?;
        if o + (c - src) > n {
            return None;
        }
        (1..c - src)
            .all(|i| host_of(o + i) == Some(src + i))
            .then_some((src, c))
    };
    let mut parts: Vec<Part> = Vec::new();
    let mut o = 0;
    while o < n {
        if let Some((src, mut end)) = gop_at(o) {
            // Whole GOPs, as many as follow.
            while let Some((s2, e2)) = gop_at(o + (end - src)) {
                if s2 != end {
                    break;
                }
                end = e2;
            }
            parts.push(Part::Copied {
                output: o..o + (end - src),
                source: src..end,
            });
            o += end - src;
            continue;
        }
        let start = o;
        o += 1;
        while o < n && gop_at(o).is_none() {
            o += 1;
        }
        parts.push(Part::Encoded { output: start..o });
    }
    parts
}

/// A smart plan for one clip: the parts, and what writing them needs.
pub(crate) struct SmartPlan {
    index: SourceIndex,
    parts: Vec<Part>,
    /// The output's time base and each output frame's pts in it.
    time_base: Ratio,
    pts: Vec<i64>,
    /// Decoding delay (frames) of the output.
    delay: usize,
    /// The re-encoded parts' SPS/PPS id, and their SPS and PPS (when there are such parts).
    ps_id: u32,
    encoder_sets: Option<(Vec<u8>, Vec<u8>)>,
}

impl SmartPlan {
    fn copied_frames(&self) -> usize {
        self.parts
            .iter()
            .map(|p| match p {
                Part::Copied { output, .. } => output.len(),
                Part::Encoded { .. } => 0,
            })
            .sum()
    }

    /// What the sidecar records.
    fn describe(&self) -> serde_json::Value {
        let parts: Vec<serde_json::Value> = self
            .parts
            .iter()
            .map(|p| match p {
                Part::Copied { output, source } => json!({
                    "how": "copied", "output_frames": [output.start, output.end],
                    "source_frames": [source.start, source.end]}),
                Part::Encoded { output } => json!({
                    "how": "encoded", "output_frames": [output.start, output.end]}),
            })
            .collect();
        let copied = self.copied_frames();
        json!({
            "applied": true,
            "copied_frames": copied,
            "encoded_frames": self.pts.len() - copied,
            "parts": parts,
            "decoding_delay_frames": self.delay,
            "source_cut_points": self.index.cut_points.len() - 1,
        })
    }
}

/// Plans a smart clip of `stream` into `container`; `Ok(Err(why))` when it cannot be one.
pub(crate) fn plan(
    stream: &ProcessedStream,
    container: Container,
    settings: &EncodeSettings,
) -> Result<std::result::Result<SmartPlan, String>> {
    let why = |s: &str| Ok(Err(s.to_string()));
    if settings.crf == 0.0 {
        return why("lossless x264 (CRF 0) needs the High 4:4:4 Predictive profile, which the source's profile cannot carry");
    }
    match stream.kind {
        SourceKind::File => {}
        SourceKind::Images => {
            return why("the source is an image sequence: it has no packets to copy")
        }
        SourceKind::Url => return why("the source is a URL: smart encoding reads local files"),
    }
    if stream.info.rotation != crate::media::input::Rotation::None {
        return why("the source is rotated by its display matrix; its re-encoded parts would be stored upright while the copied ones are not");
    }
    if stream.table.times_from != crate::media::table::TimesFrom::Packets {
        return why("the source's frame times come from decoding, not from its packets");
    }
    if stream.table.discarded_packets > 0 {
        return why("the source's edit list hides some of its packets");
    }
    if stream.table.damage.first_affected_frame().is_some() {
        return why("the source has damaged packets");
    }
    if stream.info.pixel_format != "yuv420p" {
        return Ok(Err(format!(
            "the source's pixels are {}; re-encoded parts are 8-bit 4:2:0",
            stream.info.pixel_format
        )));
    }
    let (w, h) = stream.size;
    if w % 2 == 1 || h % 2 == 1 {
        return why("the source's size is odd; H.264 4:2:0 re-encoded parts need an even size");
    }
    let index = match SourceIndex::build(stream)? {
        Ok(i) => i,
        Err(e) => return Ok(Err(e)),
    };
    if !index.sps.frame_mbs_only {
        return why("the source is interlaced (field-coded)");
    }
    if index.sps.full_range {
        return why("the source is full range (JPEG levels); vidprep's pictures are limited range");
    }
    if index.sps.width != w || index.sps.height != h {
        return Ok(Err(format!(
            "the SPS says {}x{} but the stream is {w}x{h}",
            index.sps.width, index.sps.height
        )));
    }
    if x264_profile(&index.sps).is_none() {
        return Ok(Err(format!(
            "x264 cannot produce the source's profile (profile_idc {}, chroma {}, {}-bit)",
            index.sps.profile_idc, index.sps.chroma_format_idc, index.sps.bit_depth_luma
        )));
    }
    if let Some((p, t, m)) = index.sps.colour {
        if h264::x264_colour_names(p, t, m).is_none() {
            return Ok(Err(format!(
                "x264 has no name for the colour codes {p}/{t}/{m}"
            )));
        }
    }
    if !matches!(
        container,
        Container::Mp4 | Container::Mov | Container::Matroska
    ) {
        return why("the container cannot carry an avcC record");
    }
    // Which output frames show a source frame unchanged.
    let kept = stream.resolved.kept;
    let (at, k) = stream
        .needle
        .as_ref()
        .map_or((usize::MAX, 0), |n| (n.at, n.prepared.frames));
    let drawn_on_host: Vec<_> = stream
        .draws
        .iter()
        .filter(|(source, _, _)| *source == 0)
        .map(|(_, boxes, _)| boxes.clone())
        .collect();
    let host_of = |o: usize| -> Option<usize> {
        let src = if o < at {
            kept.start + o
        } else if o >= at + k {
            kept.start + o - k
        } else {
            return None;
        };
        drawn_on_host
            .iter()
            .all(|b| b.resolved.boxes_at(src).is_empty())
            .then_some(src)
    };
    let n = stream.frame_count();
    let parts = plan_parts(n, &host_of, &|c| index.next_cut(c), &|c| index.is_cut(c));
    if !parts.iter().any(|p| matches!(p, Part::Copied { .. })) {
        let gop = index
            .cut_points
            .windows(2)
            .map(|w| w[1] - w[0])
            .max()
            .unwrap_or(0);
        return Ok(Err(format!(
            "no whole GOP of the source is shown unchanged (the source's longest GOP is {gop} frames; the clip has {n})"
        )));
    }
    // Output timing: the stream's times in its time base.
    let time_base = stream.timing().time_base;
    let pts: Vec<i64> = stream
        .times()
        .iter()
        .map(|t| t.to_pts(time_base.num, time_base.den, Rounding::Nearest))
        .collect();
    if pts.windows(2).any(|w| w[1] <= w[0]) {
        return why("two output frames would share a timestamp in the stream's time base");
    }
    // The decoding delay: how far any packet is decoded ahead of where it is shown.
    let mut delay = 0usize;
    let mut k_out = 0usize;
    for part in &parts {
        match part {
            Part::Encoded { output } => k_out += output.len(),
            Part::Copied { output, source } => {
                for dec in
                    index.dec_of_disp[source.start]..index.dec_of_disp[source.start] + source.len()
                {
                    let rank = output.start + (index.disp_of_dec[dec] - source.start);
                    delay = delay.max(k_out.saturating_sub(rank));
                    k_out += 1;
                }
            }
        }
    }
    let mut plan = SmartPlan {
        index,
        parts,
        time_base,
        pts,
        delay,
        ps_id: 0,
        encoder_sets: None,
    };
    plan.ps_id = match free_parameter_set_id(&plan.index.avcc) {
        Ok(id) => id,
        Err(e) => return Ok(Err(e)),
    };
    // Open the encoder once now: if x264 refuses the matched settings, fully encode instead.
    if plan.parts.iter().any(|p| matches!(p, Part::Encoded { .. })) {
        let probe = match open_encoder(stream, &plan, plan.ps_id, settings) {
            Ok(e) => e,
            Err(e) => {
                return Ok(Err(format!(
                    "x264 cannot encode parts matched to the source: {e}"
                )))
            }
        };
        match encoder_parameter_sets(&probe) {
            Ok(sets) => plan.encoder_sets = Some(sets),
            Err(e) => return Ok(Err(e)),
        }
    }
    Ok(Ok(plan))
}

/// x264's profile name for the source's SPS.
fn x264_profile(sps: &Sps) -> Option<&'static str> {
    match (sps.profile_idc, sps.chroma_format_idc, sps.bit_depth_luma) {
        (66, 1, 8) => Some("baseline"),
        (77, 1, 8) => Some("main"),
        (100, 1, 8) => Some("high"),
        _ => None,
    }
}

/// A parameter-set id the source uses for neither an SPS nor a PPS.
fn free_parameter_set_id(avcc: &AvcC) -> std::result::Result<u32, String> {
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

/// Opens x264 for a re-encoded part: settings matched to the source's SPS, its own
/// parameter-set id, no B-frames, a global header (SPS/PPS in the extradata, not in-band).
fn open_encoder(
    stream: &ProcessedStream,
    plan: &SmartPlan,
    ps_id: u32,
    settings: &EncodeSettings,
) -> Result<ffmpeg::encoder::Video> {
    let path = &stream.source;
    let sps = &plan.index.sps;
    let codec = ffmpeg::encoder::find_by_name("libx264")
        .ok_or_else(|| Error::request(path, "this ffmpeg build has no libx264 encoder"))?;
    let mut enc = ffmpeg::codec::context::Context::new_with_codec(codec)
        .encoder()
        .video()
        .map_err(|e| Error::encode(path, "creating the H.264 encoder", e))?;
    enc.set_width(sps.width);
    enc.set_height(sps.height);
    enc.set_format(crate::media::frame::PIPELINE_FORMAT);
    enc.set_time_base(ffmpeg::Rational::from(plan.time_base));
    if let Some(fps) = stream.timing().frame_rate.filter(|r| r.is_valid()) {
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
    let longest = plan
        .parts
        .iter()
        .map(|p| p.output().len())
        .max()
        .unwrap_or(1)
        .max(250) as u32;
    enc.set_gop(longest.min(100_000));
    enc.set_max_b_frames(0);
    crate::media::ffi::add_codec_flags(&mut enc, ffmpeg::ffi::AV_CODEC_FLAG_GLOBAL_HEADER);
    enc.set_threading(ffmpeg::codec::threading::Config {
        count: ENCODER_THREADS,
        ..Default::default()
    });
    // No more reference frames than the source's SPS allows (the sample entry's first SPS
    // sizes a decoder's picture buffer).
    let refs = sps.max_num_ref_frames.clamp(1, 3);
    let mut x264 = vec![format!("sps-id={ps_id}"), format!("ref={refs}")];
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
    if let Some((p, t, m)) = sps
        .colour
        .and_then(|(p, t, m)| h264::x264_colour_names(p, t, m))
    {
        x264.push(format!("colorprim={p}:transfer={t}:colormatrix={m}"));
    }
    if let Some((top, _)) = sps.chroma_loc {
        x264.push(format!("chromaloc={top}"));
    }
    if let Some(o) = sps.overscan {
        x264.push(format!("overscan={}", if o { "show" } else { "crop" }));
    }
    let mut options = ffmpeg::Dictionary::new();
    options.set("preset", &settings.preset);
    options.set("crf", &format!("{}", settings.crf));
    options.set("profile", x264_profile(sps).unwrap_or("high"));
    options.set(
        "level",
        &format!("{}.{}", sps.level_idc / 10, sps.level_idc % 10),
    );
    x264.extend(crate::media::encode::x264_cpu_param());
    options.set("x264-params", &x264.join(":"));
    enc.open_as_with(codec, options)
        .map_err(|e| Error::encode(path, "opening the H.264 encoder matched to the source", e))
}

/// The SPS and PPS of an opened encoder.
fn encoder_parameter_sets(
    encoder: &ffmpeg::encoder::Video,
) -> std::result::Result<(Vec<u8>, Vec<u8>), String> {
    let extradata = crate::media::ffi::encoder_extradata(encoder);
    let nals = h264::split_annexb(&extradata);
    let sps = nals.iter().find(|n| h264::nal_type(n) == h264::NAL_SPS);
    let pps = nals.iter().find(|n| h264::nal_type(n) == h264::NAL_PPS);
    match (sps, pps) {
        (Some(s), Some(p)) => Ok((s.to_vec(), p.to_vec())),
        _ => Err("the encoder's header has no SPS/PPS".into()),
    }
}

/// Writes packets in output decoding order with the output's timestamps.
struct Muxer<'a> {
    out: &'a mut ffmpeg::format::context::Output,
    path: &'a std::path::Path,
    stream_index: usize,
    out_tb: ffmpeg::Rational,
    plan: &'a SmartPlan,
    durations: Vec<i64>,
    /// Packets written (the output decoding position).
    written: usize,
    video_bytes: u64,
    audio: Option<crate::media::audio::AudioTrack>,
}

impl Muxer<'_> {
    /// The decoding timestamp of the packet at output decoding position `k`.
    fn dts(&self, k: usize) -> i64 {
        let pts = &self.plan.pts;
        let d = self.plan.delay;
        if k >= d {
            pts[k - d]
        } else {
            let step = if pts.len() > 1 { pts[1] - pts[0] } else { 1 };
            pts[0] - (d - k) as i64 * step
        }
    }

    /// Writes the packet of output frame `o`.
    fn write(&mut self, mut packet: ffmpeg::Packet, o: usize, key: bool) -> Result<()> {
        if let Some(a) = self.audio.as_mut() {
            let t = Time::from_pts(
                self.plan.pts[o],
                self.plan.time_base.num,
                self.plan.time_base.den,
            );
            a.pump_until(self.out, t + Time::new(1, 2))?;
        }
        packet.set_stream(self.stream_index);
        packet.set_pts(Some(self.plan.pts[o]));
        packet.set_dts(Some(self.dts(self.written)));
        packet.set_duration(self.durations[o]);
        packet.set_position(-1);
        packet.set_flags(if key {
            ffmpeg::packet::Flags::KEY
        } else {
            ffmpeg::packet::Flags::empty()
        });
        packet.rescale_ts(ffmpeg::Rational::from(self.plan.time_base), self.out_tb);
        self.video_bytes += packet.size() as u64;
        packet
            .write_interleaved(self.out)
            .map_err(|e| Error::encode(self.path, "writing video", e))?;
        self.written += 1;
        Ok(())
    }
}

/// Writes a smart clip of `stream` as `plan` says; returns its report (the sidecar and
/// boxes file written at their temporary paths).
pub(crate) fn write(
    stream: &ProcessedStream,
    spec: &ExportSpec,
    claimed: &Claimed,
    plan: SmartPlan,
    settings: &EncodeSettings,
    verify: bool,
    progress: &mut dyn Progress,
) -> Result<ExportReport> {
    let path = claimed.main.as_path();
    let container = Container::for_output(path)?;
    let n = plan.pts.len();
    progress.set_length(n as u64);

    // The sample entry: the source's parameter sets and the re-encoded parts'.
    let ps_id = plan.ps_id;
    let encoder_sets = plan.encoder_sets.clone();
    let mut avcc = plan.index.avcc.clone();
    if let Some((sps, pps)) = &encoder_sets {
        avcc.compat &= sps.get(2).copied().unwrap_or(0xff);
        avcc.level = avcc.level.max(sps.get(3).copied().unwrap_or(0));
        avcc.sps.push(sps.clone());
        avcc.pps.push(pps.clone());
    }

    // The output: the source's video parameters with both parameter-set pairs, and AAC.
    let mut src = VideoInput::open(&stream.input)?;
    let vindex = plan.index.stream;
    src.keep_only_streams(&[vindex]);
    let mut out = ffmpeg::format::output_as(&claimed.main_temp, container.muxer())
        .map_err(|e| Error::encode(path, "creating the output", e))?;
    let in_par = src.context.stream(vindex).expect("video").parameters();
    let stream_index = {
        let mut ost = out
            .add_stream(ffmpeg::encoder::find(ffmpeg::codec::Id::None))
            .map_err(|e| Error::encode(path, "adding the video stream", e))?;
        ost.set_parameters(in_par);
        crate::media::ffi::set_stream_extradata(&mut ost, &avcc.to_bytes());
        ost.set_time_base(ffmpeg::Rational::from(plan.time_base));
        if let Some(fps) = stream.timing().frame_rate.filter(|r| r.is_valid()) {
            ost.set_avg_frame_rate(ffmpeg::Rational::from(fps));
        }
        ost.index()
    };
    let audio_plan = stream.audio();
    let mut audio = match settings.audio && best_audio_stream(&src.context).is_some() {
        true => match audio_plan.output_format()? {
            Some(format) => Some(crate::media::audio::AudioTrack::add_to(
                &mut out,
                path,
                &audio_plan,
                format,
                settings.audio_bit_rate as usize,
            )?),
            None => None,
        },
        false => None,
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
    let end_pts =
        stream
            .duration()
            .to_pts(plan.time_base.num, plan.time_base.den, Rounding::Nearest);
    let durations: Vec<i64> = (0..n)
        .map(|o| {
            let next = plan.pts.get(o + 1).copied().unwrap_or(end_pts);
            (next - plan.pts[o]).max(1)
        })
        .collect();
    let times = stream.times();
    let mut provenance = stream.provenance();
    let mut recorder = stream.box_recorder();
    let size = stream.size;
    let mut muxer = Muxer {
        out: &mut out,
        path,
        stream_index,
        out_tb,
        plan: &plan,
        durations,
        written: 0,
        video_bytes: 0,
        audio: audio.take(),
    };
    let mut draw = stream.draw_stages();
    // With two cores and nothing drawn or recorded per frame, the last re-encoded part (the
    // tail) is decoded and encoded on a second thread meanwhile, its packets kept until the
    // muxer gets there (the same packets in the same order: each part is its own x264 run).
    let encoded_parts: Vec<usize> = (0..plan.parts.len())
        .filter(|&k| matches!(plan.parts[k], Part::Encoded { .. }))
        .collect();
    let side_part = encoded_parts.last().copied().filter(|_| {
        encoded_parts.len() >= 2
            && draw.is_empty()
            && recorder.is_none()
            && crate::host::worker_count(stream.threads) >= 2
    });
    std::thread::scope(|scope| -> Result<()> {
        let mut side = side_part.map(|k| {
            let output = plan.parts[k].output();
            let (plan, cancel, tally) = (
                &plan,
                crate::CancelToken::current(),
                crate::tally::Tally::current(),
            );
            scope.spawn(move || {
                let _cancel = cancel.enter();
                let _tally = crate::tally::enter(tally.as_ref());
                let mut frames = Vec::new();
                let mut packets = Vec::new();
                encode_part(
                    stream,
                    plan,
                    settings,
                    &output,
                    path,
                    &mut |frame| {
                        let mut record = frame.clone();
                        record.image = ffmpeg::frame::Video::empty();
                        record.rgb = None;
                        frames.push(record);
                        Ok(!crate::cancel::cancelled())
                    },
                    &mut |packet, o, key| {
                        packets.push((packet, o, key));
                        Ok(())
                    },
                )?;
                Ok::<_, Error>((frames, packets))
            })
        });
        for (k, part) in plan.parts.iter().enumerate() {
            match part {
                Part::Copied { output, source } => {
                    copy_part(&mut src, &plan.index, output, source, &mut muxer, path)?;
                    for (i, s) in source.clone().enumerate() {
                        let o = output.start + i;
                        let origin = FrameOrigin {
                            source: 0,
                            index: s,
                            pts: stream.table.pts(s),
                        };
                        let shown = muxer.durations[o];
                        let duration =
                            Time::from_pts(shown, plan.time_base.num, plan.time_base.den);
                        provenance.record_parts(o, times[o], origin);
                        if let Some(r) = recorder.as_mut() {
                            r.record_parts(
                                o,
                                times[o],
                                duration,
                                origin,
                                Geometry::IDENTITY,
                                size,
                            )?;
                        }
                    }
                    progress.advance(output.len() as u64);
                }
                Part::Encoded { output } if Some(k) == side_part => {
                    let handle = side.take().expect("the side part's thread");
                    let (frames, packets) = handle.join().map_err(|_| {
                        Error::internal(format!(
                            "{}: the thread encoding output frames {}..{} panicked",
                            path.display(),
                            output.start,
                            output.end
                        ))
                    })??;
                    for frame in &frames {
                        provenance.record(frame);
                    }
                    for (packet, o, key) in packets {
                        muxer.write(packet, o, key)?;
                    }
                    if !progress.advance(output.len() as u64) {
                        return Err(Error::Cancelled);
                    }
                }
                Part::Encoded { output } => {
                    encode_part(
                        stream,
                        &plan,
                        settings,
                        output,
                        path,
                        &mut |frame| {
                            for stage in draw.iter_mut() {
                                stage.apply(frame)?;
                            }
                            provenance.record(frame);
                            if let Some(r) = recorder.as_mut() {
                                r.record(frame, size.0, size.1)?;
                            }
                            Ok(progress.advance(1))
                        },
                        &mut |packet, o, key| muxer.write(packet, o, key),
                    )?;
                }
            }
        }
        Ok(())
    })?;
    if muxer.written != n {
        return Err(Error::internal(format!(
            "{}: wrote {} video packets for {n} frames",
            path.display(),
            muxer.written
        )));
    }
    let video_bytes = muxer.video_bytes;
    let mut audio = muxer.audio.take();
    drop(muxer);
    if let Some(a) = audio.as_mut() {
        a.finish(&mut out)?;
    }
    out.write_trailer()
        .map_err(|e| Error::encode(path, "finishing the output", e))?;
    drop(out);

    let (runs, damaged_frames) = provenance.into_parts();
    let encoded = EncodedOutput {
        report: WriteReport {
            frames: n,
            width: size.0,
            height: size.1,
            cropped_right: 0,
            cropped_bottom: 0,
            duration: stream.duration(),
            audio: audio.as_ref().map(|a| a.format()),
            video_bytes,
        },
        frames: runs,
        damaged_frames,
        boxes: recorder.map(|r| r.finish()).transpose()?,
    };
    let mut smart = plan.describe();
    smart["encode"] = json!({"crf": settings.crf, "preset": settings.preset, "bframes": 0,
                            "parameter_set_id": ps_id});
    let mut warnings = Vec::new();
    if verify {
        let report = verify_output(&claimed.main_temp, stream, &plan.parts)?;
        smart["verify"] = serde_json::to_value(&report).expect("serialises");
    }
    let mut extra = serde_json::Map::new();
    extra.insert("smart".into(), smart);
    let copied = plan.copied_frames();
    if copied * 2 < n {
        warnings.push(format!(
            "smart encoding copied only {copied} of {n} frames (the source's GOPs are long for this clip)"
        ));
    }
    let sidecar = video_sidecar(
        "clip",
        stream,
        spec,
        claimed,
        &encoded,
        Some(settings),
        extra,
        warnings,
    )?;
    write_boxes_file(claimed, &encoded, stream)?;
    Ok(ExportReport {
        name: spec.name().to_string(),
        kind: "clip",
        files: claimed.files(),
        summary: format!(
            "{}; smart: {copied} frames copied, {} re-encoded",
            crate::exports::clip::clip_summary(&claimed.main, stream, n),
            n - copied
        ),
        frames: n,
        warnings: sidecar.warnings,
    })
}

/// Re-encodes output frames `output` with a fresh x264 run matched to the source: `each` sees
/// every frame before it is encoded (it may draw on it; false: cancelled), `sink` gets each
/// packet (length-prefixed) with its output frame and key flag, in output order.
fn encode_part(
    stream: &ProcessedStream,
    plan: &SmartPlan,
    settings: &EncodeSettings,
    output: &Range<usize>,
    path: &std::path::Path,
    each: &mut dyn FnMut(&mut PipelineFrame) -> Result<bool>,
    sink: &mut dyn FnMut(ffmpeg::Packet, usize, bool) -> Result<()>,
) -> Result<()> {
    let mut encoder = open_encoder(stream, plan, plan.ps_id, settings)?;
    // Every part must use the parameter sets the sample entry carries.
    if encoder_parameter_sets(&encoder).ok() != plan.encoder_sets {
        return Err(Error::internal(format!(
            "{}: x264 wrote other parameter sets for output frames {}..{}",
            path.display(),
            output.start,
            output.end
        )));
    }
    let mut frames = stream.range_source(output.clone())?;
    let mut next_out = output.start;
    while let Some(mut frame) = frames.next_frame()? {
        if !each(&mut frame)? {
            return Err(Error::Cancelled);
        }
        let mut image = crate::media::frame::share(&frame.image);
        image.set_pts(Some(plan.pts[frame.index]));
        image.set_kind(ffmpeg::picture::Type::None);
        encoder
            .send_frame(&image)
            .map_err(|e| Error::encode(path, format!("encoding frame {}", frame.index), e))?;
        drain(&mut encoder, plan, path, &mut next_out, sink)?;
    }
    encoder
        .send_eof()
        .map_err(|e| Error::encode(path, "flushing the H.264 encoder", e))?;
    drain(&mut encoder, plan, path, &mut next_out, sink)?;
    if next_out != output.end {
        return Err(Error::internal(format!(
            "{}: encoded {} of the {} frames of output frames {}..{}",
            path.display(),
            next_out - output.start,
            output.len(),
            output.start,
            output.end
        )));
    }
    Ok(())
}

/// Moves the encoder's packets to `sink` (Annex B to length-prefixed; the parameter sets live
/// in the avcC).
fn drain(
    encoder: &mut ffmpeg::encoder::Video,
    plan: &SmartPlan,
    path: &std::path::Path,
    next_out: &mut usize,
    sink: &mut dyn FnMut(ffmpeg::Packet, usize, bool) -> Result<()>,
) -> Result<()> {
    let mut packet = ffmpeg::Packet::empty();
    loop {
        match encoder.receive_packet(&mut packet) {
            Ok(()) => {
                let data = packet.data().unwrap_or(&[]);
                let nals = h264::split_annexb(data).into_iter().filter(|n| {
                    !matches!(
                        h264::nal_type(n),
                        h264::NAL_SPS | h264::NAL_PPS | h264::NAL_AUD
                    )
                });
                let sample = h264::to_length_prefixed(nals, plan.index.avcc.length_size)
                    .map_err(|e| Error::internal(format!("{}: {e}", path.display())))?;
                let o = *next_out;
                if packet.pts() != Some(plan.pts[o]) {
                    return Err(Error::internal(format!(
                        "{}: the encoder returned pts {:?} for output frame {o} (expected {})",
                        path.display(),
                        packet.pts(),
                        plan.pts[o]
                    )));
                }
                sink(ffmpeg::Packet::copy(&sample), o, packet.is_key())?;
                *next_out += 1;
            }
            Err(ffmpeg::Error::Eof) => return Ok(()),
            Err(ffmpeg::Error::Other { errno }) if errno == EAGAIN => return Ok(()),
            Err(e) => return Err(Error::encode(path, "encoding video", e)),
        }
    }
}

/// Copies the packets of source frames `source` (whole GOPs: their decoding positions are
/// the same range) as output frames `output`.
fn copy_part(
    src: &mut VideoInput,
    index: &SourceIndex,
    output: &Range<usize>,
    source: &Range<usize>,
    muxer: &mut Muxer,
    path: &std::path::Path,
) -> Result<()> {
    let first = &index.packets[index.dec_of_disp[source.start]];
    let _ = crate::media::ffi::seek_to_timestamp(
        &mut src.context,
        index.stream,
        first.dts.min(first.pts),
    );
    let mut dec: Option<usize> = None;
    let end_dec = index.dec_of_disp[source.start] + source.len();
    while dec.is_none_or(|d| d + 1 < end_dec) {
        let packet = match read_packet(&mut src.context) {
            Ok(Some(p)) => p,
            Ok(None) => break,
            Err(e) if read_error_ends_input(&e) => break,
            Err(e) => return Err(Error::corrupt(path, "while copying", e.to_string())),
        };
        if packet.stream() != index.stream || crate::media::ffi::packet_is_discarded(&packet) {
            continue;
        }
        let pts = packet.pts().unwrap_or(i64::MIN);
        let pos = match dec {
            Some(d) => d + 1,
            None if pts == first.pts => index.dec_of_disp[source.start],
            None => continue,
        };
        if index.packets[pos].pts != pts {
            return Err(Error::corrupt(
                path,
                format!("at packet {pos}"),
                "the packets came back in another order while copying",
            ));
        }
        dec = Some(pos);
        let disp = index.disp_of_dec[pos];
        let o = output.start + (disp - source.start);
        let key = packet.is_key();
        muxer.write(packet, o, key)?;
    }
    if dec != Some(end_dec - 1) {
        return Err(Error::corrupt(
            path,
            format!("at frame {}", source.start),
            "the file ended before the copied GOPs did",
        ));
    }
    Ok(())
}

/// What `verify` found.
#[derive(Clone, Debug, Serialize)]
pub struct VerifyReport {
    /// Frames decoded from the output (and compared).
    pub frames: usize,
    /// Copied frames, all bit-identical to the source's.
    pub copied_identical: usize,
    /// Re-encoded frames compared.
    pub encoded: usize,
    /// The lowest PSNR of a re-encoded frame (dB; `null` when none, or all identical).
    pub encoded_min_psnr_db: Option<f64>,
    /// The output frame with that PSNR.
    pub encoded_worst_frame: Option<usize>,
}

/// Squared error and sample count of two YUV 4:2:0 pictures (all planes), and whether they
/// are identical.
fn compare(a: &ffmpeg::frame::Video, b: &ffmpeg::frame::Video) -> Option<(u64, u64, bool)> {
    if a.width() != b.width() || a.height() != b.height() {
        return None;
    }
    let (w, h) = (a.width() as usize, a.height() as usize);
    let mut sse = 0u64;
    let mut count = 0u64;
    for plane in 0..3 {
        let (pw, ph) = if plane == 0 {
            (w, h)
        } else {
            (w.div_ceil(2), h.div_ceil(2))
        };
        let (da, sa) = (a.data(plane), a.stride(plane));
        let (db, sb) = (b.data(plane), b.stride(plane));
        for y in 0..ph {
            let ra = &da[y * sa..y * sa + pw];
            let rb = &db[y * sb..y * sb + pw];
            for (x, z) in ra.iter().zip(rb) {
                let d = *x as i64 - *z as i64;
                sse += (d * d) as u64;
            }
        }
        count += (pw * ph) as u64;
    }
    Some((sse, count, sse == 0))
}

/// Decodes the output at `path` and the frames it should hold (the processed stream, drawn as
/// the clip draws) side by side: copied frames must be bit-identical, re-encoded ones at
/// least [`MIN_PSNR_DB`]; the frame count must match.
pub(crate) fn verify_output(
    path: &std::path::Path,
    stream: &ProcessedStream,
    parts: &[Part],
) -> Result<VerifyReport> {
    let copied_at = |o: usize| {
        parts
            .iter()
            .any(|p| matches!(p, Part::Copied { output, .. } if output.contains(&o)))
    };
    let mut got = FrameReader::open_with(
        path,
        DecodeOptions {
            upright: false,
            ..DecodeOptions::default()
        },
    )?;
    let n = stream.frame_count();
    let mut want = stream.range_source(0..n)?;
    let mut draw: Vec<Box<dyn FrameStage + Send>> = stream.draw_stages();
    let mut report = VerifyReport {
        frames: 0,
        copied_identical: 0,
        encoded: 0,
        encoded_min_psnr_db: None,
        encoded_worst_frame: None,
    };
    let fail = |o: usize, what: String| {
        Error::encode(
            path,
            format!("verifying output frame {o}: {what}"),
            ffmpeg::Error::InvalidData,
        )
    };
    loop {
        let w: Option<PipelineFrame> = want.next_frame()?;
        let g = got.next_frame()?;
        let (mut w, g) = match (w, g) {
            (None, None) => break,
            (Some(_), None) => {
                return Err(fail(
                    report.frames,
                    format!(
                        "the output ends after {} frames; it should have {n}",
                        report.frames
                    ),
                ))
            }
            (None, Some(_)) => {
                return Err(fail(
                    report.frames,
                    format!("the output has more than the {n} frames it should have"),
                ))
            }
            (Some(w), Some(g)) => (w, g),
        };
        for stage in draw.iter_mut() {
            stage.apply(&mut w)?;
        }
        let o = report.frames;
        let Some((sse, count, identical)) = compare(&w.image, &g.image) else {
            return Err(fail(
                o,
                format!(
                    "it is {}x{}, expected {}x{}",
                    g.image.width(),
                    g.image.height(),
                    w.image.width(),
                    w.image.height()
                ),
            ));
        };
        if copied_at(o) {
            if !identical {
                return Err(fail(o, "a copied frame differs from the source's".into()));
            }
            report.copied_identical += 1;
        } else {
            report.encoded += 1;
            let psnr = if sse == 0 {
                f64::INFINITY
            } else {
                10.0 * (255.0f64 * 255.0 / (sse as f64 / count as f64)).log10()
            };
            if psnr < MIN_PSNR_DB {
                return Err(fail(
                    o,
                    format!("a re-encoded frame is at {psnr:.1} dB PSNR, below {MIN_PSNR_DB} dB"),
                ));
            }
            if psnr.is_finite() && report.encoded_min_psnr_db.is_none_or(|m| psnr < m) {
                report.encoded_min_psnr_db = Some((psnr * 100.0).round() / 100.0);
                report.encoded_worst_frame = Some(o);
            }
        }
        report.frames += 1;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(n: usize, host_of: impl Fn(usize) -> Option<usize>, cuts: &[usize]) -> Vec<Part> {
        let cuts = cuts.to_vec();
        let c2 = cuts.clone();
        plan_parts(
            n,
            &host_of,
            &move |c| cuts.iter().copied().find(|&x| x > c),
            &move |c| c2.contains(&c),
        )
    }

    #[test]
    fn whole_gops_are_copied_and_the_edges_encoded() {
        // GOPs of 10 frames; a cut of source frames 13..47.
        let cuts = [0, 10, 20, 30, 40, 50, 60];
        let p = parts(34, |o| Some(13 + o), &cuts);
        assert_eq!(
            p,
            vec![
                Part::Encoded { output: 0..7 },
                Part::Copied {
                    output: 7..27,
                    source: 20..40
                },
                Part::Encoded { output: 27..34 },
            ]
        );
        // Aligned on both sides: nothing to encode.
        assert_eq!(
            parts(20, |o| Some(10 + o), &cuts),
            vec![Part::Copied {
                output: 0..20,
                source: 10..30
            }]
        );
        // Shorter than a GOP: all encoded.
        assert_eq!(
            parts(8, |o| Some(11 + o), &cuts),
            vec![Part::Encoded { output: 0..8 }]
        );
    }

    #[test]
    fn a_needle_and_drawn_frames_are_encoded_and_the_host_around_them_copied() {
        let cuts = [0, 10, 20, 30, 40];
        // Host 0..40 with a 5-frame needle before host frame 15 (output 15..20).
        let host_of = |o: usize| {
            if o < 15 {
                Some(o)
            } else if o < 20 {
                None
            } else {
                Some(o - 5)
            }
        };
        assert_eq!(
            parts(45, host_of, &cuts),
            vec![
                Part::Copied {
                    output: 0..10,
                    source: 0..10
                },
                Part::Encoded { output: 10..25 },
                Part::Copied {
                    output: 25..45,
                    source: 20..40
                },
            ]
        );
        // Boxes drawn on source frame 33: its GOP is re-encoded.
        let drawn = |o: usize| (o != 33).then_some(o);
        assert_eq!(
            parts(40, drawn, &cuts),
            vec![
                Part::Copied {
                    output: 0..30,
                    source: 0..30
                },
                Part::Encoded { output: 30..40 },
            ]
        );
    }
}
