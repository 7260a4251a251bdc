//! Spans from annotations: where a track (or any track) has a box on the video's frames,
//! after the same resolution `overlay` uses (keys on frames or times, gaps filled as asked),
//! or the temporal span a V-STaR item gives (`timestamps: [start_s, end_s]`: seconds from the
//! first frame, half-open as V-STaR's evaluation reads them, the frames shown from `start_s`
//! until `end_s`; each end is taken to the nearest frame boundary, so rounded times land on
//! the frames they name). Needs the frame table, never a decode.

use std::path::PathBuf;

use serde::Serialize;

use super::spans::Span;
use crate::annotations::{Fill, Format, ReadOptions};
use crate::error::{Error, Result};
use crate::frames::overlay::{BoxesRequest, SourceBoxes};
use crate::media::table::FrameTable;
use crate::vocab::time::Time;

/// Which annotations to read and what to take from them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AnnotationSpans {
    /// The annotation file or GOT-10k folder.
    pub path: PathBuf,
    /// Its format (detected when `Auto`).
    #[serde(skip)]
    pub format: Format,
    /// How frames between keys count: `linear`/`hold` fill gaps, `none` only keyed frames.
    #[serde(skip)]
    pub fill: Fill,
    /// Only this track (by id); every track when `None`.
    pub track: Option<String>,
    /// Use the V-STaR item's `timestamps` instead of its boxes.
    pub temporal: bool,
    /// V-STaR: the item to read.
    pub item: Option<String>,
}

impl AnnotationSpans {
    /// Every track of `path`, boxes interpolated between keys.
    pub fn new(path: impl Into<PathBuf>) -> AnnotationSpans {
        AnnotationSpans {
            path: path.into(),
            format: Format::Auto,
            fill: Fill::Linear,
            track: None,
            temporal: false,
            item: None,
        }
    }
}

/// The spans of `request` on the frames of a source whose table is `table` and whose video
/// stream is `info` (what the stream was opened with: nothing is opened here).
pub fn spans(
    table: &FrameTable,
    info: &crate::media::input::VideoStreamInfo,
    request: &AnnotationSpans,
    ctx: &crate::call::context::CallContext,
) -> Result<Vec<Span>> {
    // Boxes on the stored grid, as every reader takes them (only where they are matters).
    let (w, h) = info.upright_stored_size();
    let mut boxes = BoxesRequest::new(request.path.clone());
    boxes.format = request.format;
    boxes.fill = request.fill;
    boxes.read = ReadOptions {
        item: request.item.clone(),
        ..ReadOptions::default()
    };
    let loaded = SourceBoxes::load(&boxes, table, (w, h), info.displayed_size(), None, ctx)?;
    if request.temporal {
        let Some(ts) = loaded.annotations.meta.fields.get("timestamps") else {
            return Err(Error::request(
                &request.path,
                "has no `timestamps` [start_s, end_s] to take a temporal span from (a V-STaR item has)",
            ));
        };
        let pair = ts
            .as_array()
            .filter(|a| a.len() == 2)
            .and_then(|a| Some((a[0].as_f64()?, a[1].as_f64()?)))
            .filter(|(a, b)| a.is_finite() && b.is_finite() && *a >= 0.0 && a <= b)
            .ok_or_else(|| {
                Error::request(
                    &request.path,
                    format!(
                        "`timestamps` must be [start_s, end_s] with 0 <= start <= end, not {ts}"
                    ),
                )
            })?;
        // On the table's timeline: a V-STaR time counts from the first frame.
        let shift = loaded.annotations.time_shift(table.time(0));
        let to_time = |s: f64| Time::from_secs_f64(s, 1_000_000).unwrap_or(Time::ZERO) + shift;
        let start = nearest_boundary(table, to_time(pair.0));
        let end = nearest_boundary(table, to_time(pair.1)).max(start);
        return Ok(if start < end {
            vec![Span {
                start,
                end,
                evidence: serde_json::json!({
                    "annotations": request.path.display().to_string(),
                    "timestamps": [pair.0, pair.1],
                }),
            }]
        } else {
            Vec::new()
        });
    }
    let wanted: Option<usize> = match &request.track {
        Some(id) => Some(loaded.annotations.track_index(id).ok_or_else(|| {
            let known: Vec<&str> = loaded
                .annotations
                .tracks
                .iter()
                .take(20)
                .map(|t| t.id.as_str())
                .collect();
            Error::request(
                &request.path,
                format!("has no track {id:?}; its tracks are {}", known.join(", ")),
            )
        })?),
        None => None,
    };
    let mut out: Vec<Span> = Vec::new();
    for (frame, boxes) in loaded.resolved.frames_with_boxes() {
        let count = boxes
            .iter()
            .filter(|b| match (wanted, b.source) {
                (None, _) => true,
                (Some(w), crate::annotations::BoxSource::Track(t)) => t == w,
                (Some(_), _) => false,
            })
            .count();
        if count == 0 {
            continue;
        }
        match out.last_mut() {
            Some(last) if last.end == frame => {
                last.end = frame + 1;
                let peak = last.evidence["max_boxes"].as_u64().unwrap_or(0);
                last.evidence["max_boxes"] = serde_json::json!(peak.max(count as u64));
                last.evidence["boxed_frames"] =
                    serde_json::json!(last.evidence["boxed_frames"].as_u64().unwrap_or(0) + 1);
            }
            _ => out.push(Span {
                start: frame,
                end: frame + 1,
                evidence: serde_json::json!({
                    "annotations": request.path.display().to_string(),
                    "track": request.track,
                    "max_boxes": count,
                    "boxed_frames": 1,
                }),
            }),
        }
    }
    Ok(out)
}

/// The frame boundary nearest to `t`: `k` stands for the start of frame `k` (its time), `len()`
/// for the video's end. At equal distance the later boundary wins.
fn nearest_boundary(table: &FrameTable, t: Time) -> usize {
    let n = table.len();
    let at = |k: usize| {
        if k < n {
            table.time(k)
        } else {
            table.end_time()
        }
    };
    let after = table.first_at_or_after(t);
    if after == 0 {
        return 0;
    }
    let before = after - 1;
    let gap = |a: Time, b: Time| if a > b { a - b } else { b - a };
    if after <= n && gap(at(after), t) <= gap(t, at(before)) {
        after
    } else {
        before
    }
}
