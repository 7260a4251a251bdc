//! `verify` of a smart clip: the output decoded beside the frames it should hold (the
//! processed stream, drawn as the clip draws), copied frames bit-identical, re-encoded ones at
//! least [`MIN_PSNR_DB`] (PSNR pooled over Y, U and V samples; the worst frame's luma PSNR is
//! reported beside it), the frame count the same.

use serde::Serialize;

use crate::error::{Error, Result};
use crate::exports::smart::parts::Part;
use crate::frames::pipeline::{FrameStage, PipelineFrame};
use crate::frames::stages::stream::ProcessedStream;
use crate::media::decode::{DecodeOptions, FrameReader};
use crate::media::smart_parts::compare::{compare, psnr};

/// Re-encoded frames must be at least this close to the frames they stand for (`verify`).
pub const MIN_PSNR_DB: f64 = 40.0;

/// What `verify` found.
#[derive(Clone, Debug, Serialize)]
pub struct VerifyReport {
    /// Frames decoded from the output (and compared).
    pub frames: usize,
    /// Copied frames, all bit-identical to the source's.
    pub copied_identical: usize,
    /// Re-encoded frames compared.
    pub encoded: usize,
    /// The lowest PSNR of a re-encoded frame (dB; `null` when none, or all identical), pooled
    /// over the frame's Y, U and V samples (the figure held to [`MIN_PSNR_DB`]).
    pub encoded_min_psnr_db: Option<f64>,
    /// The output frame with that PSNR.
    pub encoded_worst_frame: Option<usize>,
    /// The lowest luma (Y) PSNR of a re-encoded frame (dB; `null` as above): what most
    /// comparisons quote (it differs from the pooled figure with the frame's chroma).
    pub encoded_min_luma_psnr_db: Option<f64>,
    /// The output frame with that luma PSNR.
    pub encoded_worst_luma_frame: Option<usize>,
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
    let call = stream.inputs.call();
    let written = crate::media::Source::from(path);
    let table = crate::media::table::TableCache::new().table_in(&written, call)?;
    let mut got = FrameReader::open_with_table_in(
        written,
        DecodeOptions {
            upright: false,
            ..DecodeOptions::default()
        },
        table,
        call,
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
        encoded_min_luma_psnr_db: None,
        encoded_worst_luma_frame: None,
    };
    let fail = |o: usize, what: String| {
        Error::bad_output(path, format!("verifying output frame {o}: {what}"))
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
        let Some(diff) = compare(&w.image, &g.image) else {
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
            if !diff.identical() {
                return Err(fail(o, "a copied frame differs from the source's".into()));
            }
            report.copied_identical += 1;
        } else {
            report.encoded += 1;
            let psnr = psnr(diff.sse, diff.count);
            if psnr < MIN_PSNR_DB {
                return Err(fail(
                    o,
                    format!(
                        "a re-encoded frame is at {psnr:.1} dB PSNR (pooled over its Y, U and V \
                         samples), below {MIN_PSNR_DB} dB"
                    ),
                ));
            }
            if psnr.is_finite() && report.encoded_min_psnr_db.is_none_or(|m| psnr < m) {
                report.encoded_min_psnr_db = Some((psnr * 100.0).round() / 100.0);
                report.encoded_worst_frame = Some(o);
            }
            let luma = crate::media::smart_parts::compare::psnr(diff.luma_sse, diff.luma_count);
            if luma.is_finite() && report.encoded_min_luma_psnr_db.is_none_or(|m| luma < m) {
                report.encoded_min_luma_psnr_db = Some((luma * 100.0).round() / 100.0);
                report.encoded_worst_luma_frame = Some(o);
            }
        }
        report.frames += 1;
    }
    Ok(report)
}
