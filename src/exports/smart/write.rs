//! Writing a smart clip as its plan says: the parts in order (copied GOPs moved across,
//! re-encoded stretches decoded from the processed stream, drawn, and given to x264 matched
//! to the source) into one stream (`media::smart_parts`), the provenance and boxes of every
//! output frame recorded, then the sidecar and the boxes file.

use serde_json::json;

use crate::error::{Error, Result};
use crate::exports::clip::{video_sidecar, write_boxes_file, Claimed};
use crate::exports::smart::parts::Part;
use crate::exports::smart::verify::verify_output;
use crate::exports::smart::SmartPlan;
use crate::exports::ExportReport;
use crate::media::encode::{Container, EncodeSettings, WriteReport};
use crate::media::smart_parts::mux::{SpliceMuxer, SpliceTiming};
use crate::media::smart_parts::x264::PartEncoder;
use crate::pipeline::{FrameOrigin, Geometry, Progress};
use crate::plan::ExportSpec;
use crate::sinks::EncodedOutput;
use crate::stages::stream::ProcessedStream;
use crate::time::{Rounding, Time};

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
    let mut smart = plan.describe();
    let copied = plan.copied_frames();
    let matched = plan.matched(stream, settings);
    let ps_id = plan.ps_id;

    // The sample entry: the source's parameter sets and the re-encoded parts'.
    let encoder_sets = plan.encoder_sets.clone();
    let mut avcc = plan.source.avcc.clone();
    if let Some((sps, pps)) = &encoder_sets {
        avcc.compat &= sps.get(2).copied().unwrap_or(0xff);
        avcc.level = avcc.level.max(sps.get(3).copied().unwrap_or(0));
        avcc.sps.push(sps.clone());
        avcc.pps.push(pps.clone());
    }

    // The output: the source's video parameters with both parameter-set pairs, and AAC.
    let time_base = plan.time_base;
    let end_pts = stream
        .duration()
        .to_pts(time_base.num, time_base.den, Rounding::Nearest);
    let audio_plan = stream.audio();
    let mut source = plan.source;
    let mut muxer = SpliceMuxer::create(
        path,
        &claimed.main_temp,
        container,
        &source,
        &avcc,
        SpliceTiming {
            time_base,
            frame_rate: stream.timing().frame_rate,
            pts: &plan.pts,
            end_pts,
            delay: plan.delay,
        },
        settings
            .audio
            .then_some((&audio_plan, settings.audio_bit_rate)),
    )?;
    let index = &plan.index;
    let times = stream.times();
    let mut provenance = stream.provenance();
    let mut recorder = stream.box_recorder();
    let size = stream.size;
    let mut draw = stream.draw_stages();
    for part in &plan.parts {
        match part {
            Part::Copied {
                output,
                source: frames,
            } => {
                let first_dec = index.dec_of_disp[frames.start];
                muxer.copy_packets(
                    &mut source,
                    first_dec..first_dec + frames.len(),
                    frames.start,
                    &|dec| output.start + (index.disp_of_dec[dec] - frames.start),
                )?;
                for (i, s) in frames.clone().enumerate() {
                    let o = output.start + i;
                    let origin = FrameOrigin {
                        source: 0,
                        index: s,
                        pts: stream.table.pts(s),
                    };
                    let shown = muxer.duration(o);
                    let duration = Time::from_pts(shown, time_base.num, time_base.den);
                    provenance.record_parts(o, times[o], origin);
                    if let Some(r) = recorder.as_mut() {
                        r.record_parts(o, times[o], duration, origin, Geometry::IDENTITY, size)?;
                    }
                }
                progress.advance(output.len() as u64);
            }
            Part::Encoded { output } => {
                let mut encoder = PartEncoder::open(&stream.source, &matched, output.start)?;
                // Every part must use the parameter sets the sample entry carries.
                if encoder.parameter_sets().ok() != encoder_sets {
                    return Err(Error::internal(format!(
                        "{}: x264 wrote other parameter sets for output frames {}..{}",
                        path.display(),
                        output.start,
                        output.end
                    )));
                }
                let mut frames = stream.range_source(output.clone())?;
                while let Some(mut frame) = frames.next_frame()? {
                    for stage in draw.iter_mut() {
                        stage.apply(&mut frame)?;
                    }
                    provenance.record(&frame);
                    if let Some(r) = recorder.as_mut() {
                        r.record(&frame, size.0, size.1)?;
                    }
                    encoder.send(&frame.image, frame.index, &mut muxer)?;
                    if !progress.advance(1) {
                        return Err(Error::Cancelled);
                    }
                }
                let next_out = encoder.finish(&mut muxer)?;
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
            }
        }
    }
    if muxer.written() != n {
        return Err(Error::internal(format!(
            "{}: wrote {} video packets for {n} frames",
            path.display(),
            muxer.written()
        )));
    }
    let (video_bytes, audio) = muxer.finish()?;
    drop(source);

    let (runs, damaged_frames) = provenance.into_parts();
    let encoded = EncodedOutput {
        report: WriteReport {
            frames: n,
            width: size.0,
            height: size.1,
            cropped_right: 0,
            cropped_bottom: 0,
            duration: stream.duration(),
            audio,
            video_bytes,
        },
        frames: runs,
        damaged_frames,
        boxes: recorder.map(|r| r.finish()).transpose()?,
    };
    smart["encode"] = json!({"crf": settings.crf, "preset": settings.preset, "bframes": 0,
                            "parameter_set_id": ps_id});
    let mut warnings = Vec::new();
    if verify {
        let report = verify_output(&claimed.main_temp, stream, &plan.parts)?;
        smart["verify"] = serde_json::to_value(&report).expect("serialises");
    }
    let mut extra = serde_json::Map::new();
    extra.insert("smart".into(), smart);
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
