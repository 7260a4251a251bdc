//! Event localization: proposes the event-level spans of a raw video, as a manifest that
//! `cut --manifest` and `run` take unchanged. One analysis pass (`scan.rs`) reduces every
//! frame to a few numbers; detectors turn those into spans:
//!
//! - `shots`: the stretches between shot boundaries (hard cuts, fades, dissolves; `shots.rs`),
//!   transition frames left out of both neighbours;
//! - `activity`: where motion (changed pixels on the shrunk luma, optionally inside a region)
//!   stays above a threshold (`activity.rs`): the events of static-camera footage;
//! - `annotations`: where a track is present, or a V-STaR item's temporal span
//!   (`annotated.rs`); needs no decoding.
//!
//! Every detector's spans then get the same shaping (`spans.rs`): split at shot boundaries
//! (composition), merged across short gaps, padded, and dropped when too short. Spans are
//! half-open and frame-exact: `[start, end)` in frame indices of the source's frame table.
//!
//! The entry (public: a library feature, not the command line's alone): [`detect`] runs a
//! [`DetectOptions`] over a source and gives a [`Detection`]: its [`Proposal`]s, boundaries and
//! per-frame statistics, as a manifest ([`Detection::manifest`]), plans ([`Detection::plans`])
//! or CSV ([`Detection::stats_csv`]). `vidprep detect` is a thin door over it.
//!
//! Adding a detector: a file here with a function from the statistics (or the annotations)
//! to spans with evidence, one arm in [`Detector`] and in `detect_with`, and its flags in
//! `cli/src/detect.rs` and `docs/detect.md`.

pub(crate) mod activity;
pub(crate) mod annotated;
pub(crate) mod scan;
pub(crate) mod shots;
pub(crate) mod spans;

#[cfg(test)]
use std::sync::Arc;

use serde::Serialize;

use crate::call::context::CallContext;
use crate::error::{Error, Result};
use crate::frames::pipeline::Progress;
use crate::frames::stages::stream::ProcessedStream;
use crate::media::source::Source;
use crate::media::table::FrameTable;
use crate::plan::Plan;
use crate::vocab::time::{Time, TimeSpec};

pub use activity::ActivityOptions;
pub use annotated::AnnotationSpans;
pub use scan::{FrameStats, Region};
pub use shots::{Boundary, BoundaryKind, ShotOptions};
pub use spans::{Length, Shaping, Span};

/// Which detector proposes the spans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detector {
    /// Shots between boundaries.
    Shots,
    /// Spans of motion.
    Activity,
    /// Spans where annotations say the object is present (or V-STaR temporal spans).
    Annotations,
}

crate::vocab::textual::serde_as_text!(Detector);

impl std::str::FromStr for Detector {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "shots" => Ok(Detector::Shots),
            "activity" => Ok(Detector::Activity),
            "annotations" => Ok(Detector::Annotations),
            other => Err(format!(
                "unknown detector {other:?}; expected shots, activity or annotations"
            )),
        }
    }
}

impl std::fmt::Display for Detector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Detector::Shots => "shots",
            Detector::Activity => "activity",
            Detector::Annotations => "annotations",
        })
    }
}

/// What to detect and how.
#[derive(Clone, Debug)]
pub struct DetectOptions {
    /// The detector whose spans become proposals.
    pub by: Detector,
    /// Shot boundary thresholds (for `shots`, and for splitting other spans at shots).
    pub shots: ShotOptions,
    /// Activity thresholds.
    pub activity: ActivityOptions,
    /// Annotations to read (for `annotations`).
    pub annotations: Option<AnnotationSpans>,
    /// Split the proposals at shot boundaries (and leave transition frames out).
    pub split_at_shots: bool,
    /// Minimum length, merge gap and padding.
    pub shaping: Shaping,
    /// Where motion is measured (displayed pixels).
    pub region: Option<Region>,
    /// Parallel decoders of the analysis pass (0: one per core).
    pub workers: usize,
    /// Proposal ids are `<prefix>_e001`, ... (default: the source's file stem).
    pub id_prefix: Option<String>,
}

impl Default for DetectOptions {
    fn default() -> Self {
        DetectOptions {
            by: Detector::Shots,
            shots: ShotOptions::default(),
            activity: ActivityOptions::default(),
            annotations: None,
            split_at_shots: false,
            shaping: Shaping::default(),
            region: None,
            workers: 0,
            id_prefix: None,
        }
    }
}

/// One proposed event.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Proposal {
    /// The manifest id.
    pub id: String,
    /// First frame.
    pub start: usize,
    /// First frame after the span.
    pub end: usize,
    /// Time of `start` (from the source's time origin).
    pub start_time: Time,
    /// Time `end` begins (the source's end when `end` is its frame count).
    pub end_time: Time,
    /// Why: the detector, its scores, the boundaries at each side.
    pub evidence: serde_json::Value,
}

/// What `detect` found.
#[derive(Clone, Debug)]
pub struct Detection {
    /// The source (a video file, an image sequence with its rate, or a URL).
    pub source: Source,
    /// Its frame count.
    pub frames: usize,
    /// Per-frame statistics (empty when nothing needed decoding).
    pub stats: Vec<FrameStats>,
    /// Shot boundaries (when shots were detected).
    pub boundaries: Vec<Boundary>,
    /// The proposals, in frame order.
    pub proposals: Vec<Proposal>,
    /// Spans `[start, end)` the detector found that `shaping.min_length` dropped (after
    /// merging and padding), in frame order: why an expected proposal is missing.
    pub too_short: Vec<ShortSpan>,
}

/// A span the minimum length dropped.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ShortSpan {
    /// First frame.
    pub start: usize,
    /// First frame after the span.
    pub end: usize,
    /// From its first frame's time to the end of its last frame.
    pub length: Time,
}

/// Detects the events of `source`, for the call `ctx`.
///
/// The source is read as the executor reads a plan's ([`crate::exec::read_stream`]): opened
/// once for its description and its frame table, the analysis pass decoding from that input
/// (and one more input per further parallel worker), and run again on a table built by
/// decoding when a decoder disagrees with the table from packets (damaged packets).
pub fn detect(
    source: &Source,
    options: &DetectOptions,
    progress: &mut dyn Progress,
    ctx: &CallContext,
) -> Result<Detection> {
    crate::media::source::check_source(source.path(), source.fps())?;
    // The whole source, as a plan with nothing to export: the executor's stream of it.
    let mut plan = Plan::new("detect", source.path(), Vec::new());
    plan.source_fps = source.fps();
    let exec = crate::exec::ExecOptions::default().in_context(ctx);
    crate::exec::read_stream(&plan, &exec, ctx, |stream| {
        detect_with(source, stream, options, &mut *progress, ctx)
    })
}

/// [`detect`] on the processed stream `stream` of `source`.
fn detect_with(
    source: &Source,
    stream: &ProcessedStream,
    options: &DetectOptions,
    progress: &mut dyn Progress,
    ctx: &CallContext,
) -> Result<Detection> {
    let path = source.path();
    let table = stream.table.clone();
    let n = table.len();
    if n == 0 {
        return Err(Error::corrupt(path, "", "the video holds no frames"));
    }
    let needs_scan = options.by != Detector::Annotations || options.split_at_shots;
    let region = match options.region {
        Some(r) => {
            // The size players show, from the input the stream was opened with.
            let (w, h) = stream.display_size();
            let (w, h) = (f64::from(w), f64::from(h));
            if !(r.x1 >= 0.0 && r.y1 >= 0.0 && r.x2 <= w && r.y2 <= h && r.x1 < r.x2 && r.y1 < r.y2)
            {
                return Err(Error::Usage(format!(
                    "{}: the region {},{},{},{} is not inside the {w}x{h} frame (x1,y1,x2,y2 in displayed pixels, x1 < x2, y1 < y2)",
                    path.display(),
                    r.x1,
                    r.y1,
                    r.x2,
                    r.y2
                )));
            }
            Some(Region {
                x1: r.x1 / w,
                y1: r.y1 / h,
                x2: r.x2 / w,
                y2: r.y2 / h,
            })
        }
        None => None,
    };
    let stats = if needs_scan {
        scan::scan(
            stream,
            &scan::ScanOptions {
                workers: options.workers,
                black_level: options.shots.black,
                region,
            },
            progress,
            ctx,
        )?
    } else {
        Vec::new()
    };
    let boundaries = if needs_scan && (options.by == Detector::Shots || options.split_at_shots) {
        shots::boundaries(&stats, &options.shots)
    } else {
        Vec::new()
    };
    let raw: Vec<Span> = match options.by {
        Detector::Shots => spans::between(&boundaries, n),
        Detector::Activity => activity::spans(&stats, &table, &options.activity),
        Detector::Annotations => {
            let request = options.annotations.as_ref().ok_or_else(|| {
                Error::request(
                    path,
                    "the annotations detector needs annotations (`annotations`)",
                )
            })?;
            annotated::spans(&table, &stream.info, request, ctx)?
        }
    };
    let spans::Shaped {
        spans: mut shaped,
        mut too_short,
    } = spans::shape(raw, &options.shaping, &table);
    if options.split_at_shots && options.by != Detector::Shots {
        shaped = spans::split_at(shaped, &boundaries);
        // Splitting can leave short pieces.
        let again = spans::shape(
            shaped,
            &Shaping {
                merge_gap: Length::Frames(0),
                padding: Length::Frames(0),
                ..options.shaping
            },
            &table,
        );
        shaped = again.spans;
        too_short.extend(again.too_short);
        too_short.sort_by_key(|s| s.start);
    }
    let prefix = options
        .id_prefix
        .clone()
        .unwrap_or_else(|| safe_name(&crate::media::source::display_name(path)));
    let proposals = shaped
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let mut evidence = s.evidence;
            if let serde_json::Value::Object(map) = &mut evidence {
                map.insert("detector".into(), options.by.to_string().into());
                for (side, frame) in [("boundary_before", s.start), ("boundary_after", s.end)] {
                    if let Some(b) = boundaries.iter().find(|b| {
                        if side == "boundary_before" {
                            b.end == frame
                        } else {
                            b.start == frame
                        }
                    }) {
                        map.insert(side.into(), serde_json::to_value(b).unwrap_or_default());
                    }
                }
            }
            Proposal {
                id: format!("{prefix}_e{:03}", i + 1),
                start: s.start,
                end: s.end,
                start_time: table.time(s.start),
                end_time: time_at(&table, s.end),
                evidence,
            }
        })
        .collect();
    Ok(Detection {
        source: source.clone(),
        frames: n,
        stats,
        boundaries,
        proposals,
        too_short: too_short
            .iter()
            .map(|s| ShortSpan {
                start: s.start,
                end: s.end,
                length: time_at(&table, s.end) - table.time(s.start),
            })
            .collect(),
    })
}

/// The time frame `index` begins; the video's end for `index == len`.
pub(crate) fn time_at(table: &FrameTable, index: usize) -> Time {
    if index >= table.len() {
        table.end_time()
    } else {
        table.time(index)
    }
}

/// A name made safe for ids (folder names).
fn safe_name(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.is_empty() {
        "event".into()
    } else {
        clean
    }
}

impl Detection {
    /// The proposals as plans (one clip each): the manifest lines `cut --manifest` and `run`
    /// take. Spans are frame numbers; the evidence rides along in `evidence`.
    pub fn plans(&self) -> Vec<Plan> {
        self.proposals
            .iter()
            .map(|p| {
                let mut plan = Plan::new(p.id.clone(), self.source.path(), Vec::new());
                plan.source_fps = self.source.fps();
                plan.exports = crate::plan::Plan::default_exports();
                plan.start = Some(TimeSpec::Frame(p.start as u64));
                plan.end = Some(TimeSpec::Frame(p.end as u64));
                plan.evidence = Some(p.evidence.clone());
                plan
            })
            .collect()
    }

    /// The manifest text: one plan per line. A manifest's relative paths are read from its
    /// own folder, so a local source is written as an absolute path: the file works wherever
    /// it is saved.
    pub fn manifest(&self) -> String {
        let mut text = String::new();
        for mut plan in self.plans() {
            if !crate::media::source::is_url(&plan.source) {
                if let Ok(absolute) = std::path::absolute(&plan.source) {
                    plan.source = absolute;
                }
            }
            text.push_str(&serde_json::to_string(&plan).expect("a plan serialises"));
            text.push('\n');
        }
        text
    }

    /// The per-frame statistics as CSV (as PySceneDetect's stats file): one row per frame.
    pub fn stats_csv(&self) -> String {
        use std::fmt::Write;
        let mut text = String::from("frame,time_s,content,histogram,luma,dark,motion,changed");
        for lag in scan::LAGS {
            let _ = write!(text, ",far_{lag}");
        }
        for lag in scan::LAGS {
            let _ = write!(text, ",blend_{lag}");
        }
        for lag in scan::LAGS {
            let _ = write!(text, ",shape_{lag}");
        }
        for lag in scan::LAGS {
            let _ = write!(text, ",wide_{lag}");
        }
        text.push_str(",boundary\n");
        for s in &self.stats {
            let boundary = self
                .boundaries
                .iter()
                .find(|b| {
                    (b.kind == BoundaryKind::Cut && b.start == s.index)
                        || (b.start <= s.index && s.index < b.end)
                })
                .map(|b| format!("{:?}", b.kind).to_lowercase())
                .unwrap_or_default();
            let _ = write!(
                text,
                "{},{:.6},{:.3},{:.4},{:.2},{:.4},{:.4},{:.4}",
                s.index,
                s.time.as_secs_f64(),
                s.content,
                s.histogram,
                s.luma,
                s.dark,
                s.motion,
                s.changed
            );
            for v in s.far.iter().chain(&s.blend) {
                let _ = write!(text, ",{v:.3}");
            }
            for v in s.shape.iter().chain(&s.wide) {
                let _ = write!(text, ",{v:.3}");
            }
            let _ = writeln!(text, ",{boundary}");
        }
        text
    }
}

/// Shared for the tests of the detectors.
#[cfg(test)]
pub(crate) fn table_of(n: usize, fps: i32) -> Arc<FrameTable> {
    use crate::media::table::FrameEntry;
    use crate::vocab::Ratio;
    let entries = (0..n as i64)
        .map(|i| FrameEntry {
            pts: i,
            dts: Some(i),
            duration: 1,
            key: i == 0,
            pos: -1,
        })
        .collect();
    Arc::new(FrameTable::from_entries(
        Ratio::new(1, fps),
        entries,
        0,
        Some(Ratio::new(fps, 1)),
        None,
    ))
}
