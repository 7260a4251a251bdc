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
//!
//! One job per file: this one plans (what applies, the parts, the output's times and decoding
//! delay); `index.rs` finds the clean cut points, `parts.rs` splits the output into copied and
//! re-encoded parts, `write.rs` writes them (the last re-encoded part on a second thread
//! beside the others where the item's budget has two threads and nothing is drawn: the same
//! bytes), `verify.rs` checks the result. Everything that touches FFmpeg (the source's
//! packets and parameter sets, x264 matched to the SPS, the muxer and the buffer a part's
//! packets wait in, the picture comparison) is in `media::smart_parts`.

mod index;
mod parts;
mod verify;
mod write;

pub(crate) use parts::Part;
pub(crate) use verify::verify_output;
pub(crate) use write::write;

use serde_json::json;

use crate::error::Result;
use crate::frames::stages::stream::ProcessedStream;
use crate::media::bitstream::h264;
use crate::media::encode::Container;
use crate::media::smart_parts::source::H264Source;
use crate::media::smart_parts::x264::{free_parameter_set_id, x264_profile, Matched, PartEncoder};
use crate::media::source::SourceKind;
use crate::vocab::time::Rounding;
use crate::vocab::EncodeSettings;
use crate::vocab::Ratio;
use index::SourceIndex;
use parts::plan_parts;

/// A smart plan for one clip: the parts, and what writing them needs.
pub(crate) struct SmartPlan {
    /// The source opened for copying, its parameter sets and packets.
    source: H264Source,
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
    /// The encoder opened to learn those sets, not yet used: the first part written on the
    /// calling thread encodes with it instead of opening x264 again (the same settings, so
    /// the same bytes).
    opened: Option<PartEncoder>,
}

impl SmartPlan {
    /// What x264 is told for the re-encoded parts.
    fn matched<'a>(&self, stream: &ProcessedStream, settings: &'a EncodeSettings) -> Matched<'a> {
        let longest = self
            .parts
            .iter()
            .map(|p| p.output().len())
            .max()
            .unwrap_or(1)
            .max(250) as u32;
        Matched {
            sps: self.source.sps.clone(),
            time_base: self.time_base,
            frame_rate: stream.timing().frame_rate,
            gop: longest.min(100_000),
            ps_id: self.ps_id,
            settings,
        }
    }

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
    if stream.info.rotation != crate::vocab::Rotation::None {
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
    // The table's scanned input, where the stream still has it and its demuxer's seek to a
    // keyframe lands at or before it (MP4, MOV, Matroska: `media::rewind`): the parameter
    // sets, the first re-encoded part written on this thread and the copied GOPs are read
    // from it (each positions it by a seek, the copies checking every packet's order)
    // instead of opening the source again.
    let used = stream.take_used_input().filter(|u| {
        u.input.kind == SourceKind::File
            && u.input.sequence.is_none()
            && crate::media::demuxer_kind::seeks_to_keyframes(&u.input)
    });
    let source = match H264Source::open(&stream.input, &stream.table, used, stream.inputs.call())? {
        Ok(s) => s,
        Err(e) => return Ok(Err(e)),
    };
    let index = match SourceIndex::of(&source.packets, &stream.table) {
        Ok(i) => i,
        Err(e) => return Ok(Err(e)),
    };
    if !source.sps.frame_mbs_only {
        return why("the source is interlaced (field-coded)");
    }
    if source.sps.full_range {
        return why("the source is full range (JPEG levels); vidprep's pictures are limited range");
    }
    if source.sps.width != w || source.sps.height != h {
        return Ok(Err(format!(
            "the SPS says {}x{} but the stream is {w}x{h}",
            source.sps.width, source.sps.height
        )));
    }
    if x264_profile(&source.sps).is_none() {
        return Ok(Err(format!(
            "x264 cannot produce the source's profile (profile_idc {}, chroma {}, {}-bit)",
            source.sps.profile_idc, source.sps.chroma_format_idc, source.sps.bit_depth_luma
        )));
    }
    if let Some((p, t, m)) = source.sps.colour {
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
        source,
        index,
        parts,
        time_base,
        pts,
        delay,
        ps_id: 0,
        encoder_sets: None,
        opened: None,
    };
    plan.ps_id = match free_parameter_set_id(&plan.source.avcc) {
        Ok(id) => id,
        Err(e) => return Ok(Err(e)),
    };
    // Open the encoder once now: if x264 refuses the matched settings, fully encode instead.
    if plan.parts.iter().any(|p| matches!(p, Part::Encoded { .. })) {
        let probe = match PartEncoder::open(&stream.source, &plan.matched(stream, settings), 0) {
            Ok(e) => e,
            Err(e) => {
                return Ok(Err(format!(
                    "x264 cannot encode parts matched to the source: {e}"
                )))
            }
        };
        match probe.parameter_sets() {
            Ok(sets) => plan.encoder_sets = Some(sets),
            Err(e) => return Ok(Err(e)),
        }
        plan.opened = Some(probe);
    }
    Ok(Ok(plan))
}
