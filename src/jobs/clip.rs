//! Cutting and truncation: resolving a requested span and decision point against a video's
//! frame table, then running the pipeline from the first kept frame to the last into one or
//! more MP4 outputs (several truncations of one clip share one decode).
//!
//! Rules (half-open everywhere):
//! - a cut `[start, end)` keeps exactly the frames with `start <= time < end`; a frame number
//!   `N` as start keeps frame N, as end stops before frame N;
//! - the decision point is relative to the clip (after the cut): the output keeps the frames
//!   shown before it (`time < decision`), so no frame at or after it survives, and the output
//!   (video and audio) ends at the decision point;
//! - a percentage is of the clip's duration (from its first frame to the end of its last);
//! - spans outside the video, empty spans and decision points outside the clip are errors.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::media::audio::{AudioPlan, AudioSegment};
use crate::media::decode::{DecodeOptions, FrameReader};
use crate::media::encode::{EncodeSettings, WriteReport};
use crate::media::input::Ratio;
use crate::media::table::FrameTable;
use crate::output::{ensure_not_an_input, sidecar_path};
use crate::overlay::{BoxRecorder, BoxesOutFormat, BoxesRequest, OverlayStage, SourceBoxes};
use crate::pipeline::{self, ClipSource, FrameSink, FrameStage, Progress};
use crate::sidecar::{ProvenanceRecorder, Sidecar, SourceRecord, TimeRecord};
use crate::sinks::{Mp4Sink, SidecarContext, StreamTiming};
use crate::stages::{DecimateStage, ScaleStage};
use crate::time::{FrameRange, Time, TimeSpec};

/// What a user asks of one clip.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClipSpec {
    pub start: Option<TimeSpec>,
    pub end: Option<TimeSpec>,
    /// Decision point relative to the clip: frames at or after it are dropped.
    pub decision: Option<TimeSpec>,
}

impl ClipSpec {
    fn request_json(&self, input: &Path) -> serde_json::Value {
        serde_json::json!({
            "input": input.display().to_string(),
            "start": self.start.map(|t| t.to_text()),
            "end": self.end.map(|t| t.to_text()),
            "decision": self.decision.map(|t| t.to_text()),
        })
    }
}

/// Where the decision point fell.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DecisionRecord {
    pub requested: String,
    /// Relative to the clip's first frame.
    pub clip_time: TimeRecord,
    /// Relative to the source's frame 0.
    pub source_time: TimeRecord,
    /// The last source frame kept (shown before the decision point).
    pub last_kept_frame: usize,
    /// The first source frame dropped (at or after the decision point), if the clip had one.
    pub first_dropped_frame: Option<usize>,
}

/// A clip resolved against a video.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResolvedClip {
    /// Source frames of the cut, before truncation.
    pub cut: FrameRange,
    /// Source frames in the output.
    pub kept: FrameRange,
    /// Source time of the first kept frame (the output's time 0).
    pub start: TimeRecord,
    /// Source time at which the output ends.
    pub end: TimeRecord,
    pub decision: Option<DecisionRecord>,
    #[serde(skip)]
    start_time: Time,
    #[serde(skip)]
    end_time: Time,
}

impl ResolvedClip {
    pub fn start_time(&self) -> Time {
        self.start_time
    }

    pub fn end_time(&self) -> Time {
        self.end_time
    }

    /// Output duration.
    pub fn duration(&self) -> Time {
        self.end_time - self.start_time
    }
}

fn secs(t: Time) -> String {
    format!("{}s", crate::time::decimal_text(t))
}

/// Resolves `spec` against the frames of `path` described by `table`.
pub fn resolve_clip(path: &Path, table: &FrameTable, spec: &ClipSpec) -> Result<ResolvedClip> {
    let n = table.len();
    let video_end = table.end_time();
    let outside = |what: &str, detail: String| {
        Error::request(
            path,
            format!(
                "{what} is outside the video: {detail} (the video has {n} frames, 0s to {})",
                secs(video_end)
            ),
        )
    };
    let start = match spec.start {
        None => 0,
        Some(TimeSpec::Frame(f)) => {
            if f as usize >= n {
                return Err(outside("start", format!("frame {f}")));
            }
            f as usize
        }
        Some(TimeSpec::Seconds(t)) => {
            if t >= video_end {
                return Err(outside("start", secs(t)));
            }
            table.first_at_or_after(t)
        }
        Some(TimeSpec::Percent(p)) => table.first_at_or_after(percent_of(video_end, p)),
    };
    let (end, cut_end_time) = match spec.end {
        None => (n, video_end),
        Some(TimeSpec::Frame(f)) => {
            let f = f as usize;
            if f > n {
                return Err(outside("end", format!("frame {f}")));
            }
            (f, if f < n { table.time(f) } else { video_end })
        }
        Some(TimeSpec::Seconds(t)) => {
            if t > video_end {
                return Err(outside("end", secs(t)));
            }
            (table.first_at_or_after(t), t)
        }
        Some(TimeSpec::Percent(p)) => {
            let t = percent_of(video_end, p);
            (table.first_at_or_after(t), t)
        }
    };
    if end <= start {
        return Err(Error::request(
            path,
            format!(
                "the span [{}, {}) holds no frames",
                spec.start
                    .map(|s| s.to_text())
                    .unwrap_or_else(|| "0".into()),
                spec.end
                    .map(|s| s.to_text())
                    .unwrap_or_else(|| "end".into())
            ),
        ));
    }
    let cut = FrameRange::new(start, end);
    let start_time = table.time(start);
    let clip_duration = cut_end_time - start_time;

    let Some(decision) = spec.decision else {
        return Ok(ResolvedClip {
            cut,
            kept: cut,
            start: start_time.into(),
            end: cut_end_time.into(),
            decision: None,
            start_time,
            end_time: cut_end_time,
        });
    };
    let outside_clip = |detail: String| {
        Error::request(
            path,
            format!(
                "decision point {detail} is outside the clip (the clip has {} frames and lasts {}; the decision point is relative to the clip's start)",
                cut.len(),
                secs(clip_duration)
            ),
        )
    };
    let (kept_end, decision_clip_time) = match decision {
        TimeSpec::Frame(f) => {
            let f = f as usize;
            if f > cut.len() {
                return Err(outside_clip(format!("frame {f}")));
            }
            let t = if start + f < end {
                table.time(start + f) - start_time
            } else {
                clip_duration
            };
            (start + f, t)
        }
        TimeSpec::Seconds(t) => {
            if t > clip_duration {
                return Err(outside_clip(secs(t)));
            }
            (table.first_at_or_after(start_time + t).clamp(start, end), t)
        }
        TimeSpec::Percent(p) => {
            let t = percent_of(clip_duration, p);
            (table.first_at_or_after(start_time + t).clamp(start, end), t)
        }
    };
    if kept_end <= start {
        return Err(Error::request(
            path,
            format!(
                "decision point {} leaves no frame before it",
                decision.to_text()
            ),
        ));
    }
    let end_time = start_time + decision_clip_time;
    Ok(ResolvedClip {
        cut,
        kept: FrameRange::new(start, kept_end),
        start: start_time.into(),
        end: end_time.into(),
        decision: Some(DecisionRecord {
            requested: decision.to_text(),
            clip_time: decision_clip_time.into(),
            source_time: end_time.into(),
            last_kept_frame: kept_end - 1,
            first_dropped_frame: (kept_end < end).then_some(kept_end),
        }),
        start_time,
        end_time,
    })
}

/// `percent`% of `duration`, exactly.
fn percent_of(duration: Time, percent: Time) -> Time {
    (duration * percent).scale(1, 100)
}

/// One finished output.
#[derive(Clone, Debug, Serialize)]
pub struct ClipOutput {
    pub output: PathBuf,
    pub sidecar: PathBuf,
    pub frames: usize,
    pub resolved: ResolvedClip,
    /// The output's boxes, when asked to write them beside it.
    pub boxes_file: Option<PathBuf>,
    /// What the encoder wrote.
    pub report: WriteReport,
    /// The sidecar as written.
    #[serde(skip)]
    pub sidecar_record: Sidecar,
}

/// One output to make from a source: what to keep and where to write it.
#[derive(Clone, Debug)]
pub struct ClipJob {
    pub spec: ClipSpec,
    pub output: PathBuf,
}

/// The name a job gives itself in sidecars.
fn job_name(spec: &ClipSpec, options: &ClipOptions) -> &'static str {
    if options.boxes.as_ref().is_some_and(|b| b.draw.is_some()) {
        "overlay"
    } else if spec.start.is_none() && spec.end.is_none() && spec.decision.is_some() {
        "truncate"
    } else {
        "cut"
    }
}

/// How clips are made: encoding, and optionally boxes to carry (and draw).
#[derive(Clone, Debug, Default)]
pub struct ClipOptions {
    pub encode: EncodeSettings,
    /// Annotations of the source: remapped into every output's sidecar, drawn when asked.
    pub boxes: Option<BoxesRequest>,
    /// Also write each output's boxes beside it in this format.
    pub boxes_out: Option<BoxesOutFormat>,
    /// Resize every frame to this size (boxes follow).
    pub scale_to: Option<(u32, u32)>,
    /// Keep one frame in this many (1 or 0: all).
    pub decimate: usize,
}

impl ClipOptions {
    pub fn with_encode(encode: EncodeSettings) -> ClipOptions {
        ClipOptions {
            encode,
            ..ClipOptions::default()
        }
    }
}

/// Makes every clip in `jobs` from `input` with one decode. All jobs must start at the same
/// source frame (as truncations of one clip do); their ends may differ.
pub fn make_clips(
    input: &Path,
    jobs: &[ClipJob],
    options: &ClipOptions,
    progress: &mut dyn Progress,
) -> Result<Vec<ClipOutput>> {
    crate::media::table::retry_on_table_mismatch(|| make_clips_once(input, jobs, options, progress))
}

fn make_clips_once(
    input: &Path,
    jobs: &[ClipJob],
    options: &ClipOptions,
    progress: &mut dyn Progress,
) -> Result<Vec<ClipOutput>> {
    let settings = &options.encode;
    settings.validate()?;
    for job in jobs {
        let mut inputs = vec![input];
        if let Some(b) = &options.boxes {
            inputs.push(&b.path);
        }
        ensure_not_an_input(&job.output, &inputs)?;
        ensure_not_an_input(&sidecar_path(&job.output), &inputs)?;
    }
    let table = FrameTable::for_file(input)?;
    let resolved: Vec<ResolvedClip> = jobs
        .iter()
        .map(|j| resolve_clip(input, &table, &j.spec))
        .collect::<Result<_>>()?;
    let Some(first) = resolved.first() else {
        return Ok(Vec::new());
    };
    if resolved.iter().any(|r| r.kept.start != first.kept.start) {
        return Err(Error::Usage(
            "clips made in one pass must start at the same frame".into(),
        ));
    }
    let range = FrameRange::new(
        first.kept.start,
        resolved
            .iter()
            .map(|r| r.kept.end)
            .max()
            .unwrap_or(first.kept.end),
    );
    let end_limit = resolved
        .iter()
        .map(|r| r.end_time)
        .max()
        .unwrap_or(first.end_time);

    let reader = FrameReader::open_with(
        input,
        DecodeOptions {
            threads: settings.threads,
            ..DecodeOptions::default()
        },
    )?;
    let info = reader.info().clone();
    let source_record = SourceRecord::new(input, &info, &table, true);
    let mut timing = stream_timing(&info, reader.applied_rotation().swaps_axes());
    if options.scale_to.is_some() {
        // Scaled outputs are made with square pixels.
        timing.sample_aspect_ratio = Ratio::new(1, 1);
    }
    let origin_abs = table.origin();
    let boxes = match &options.boxes {
        Some(request) => {
            let (w, h) = reader.output_size();
            Some(Arc::new(SourceBoxes::load(request, &table, w, h)?))
        }
        None => None,
    };

    let mut sinks = Vec::with_capacity(jobs.len());
    for (job, r) in jobs.iter().zip(&resolved) {
        let last = r.kept.end - 1;
        let video_end = (table.time(last) + table.duration_of(last)).min(r.end_time);
        let audio = AudioPlan {
            segments: vec![AudioSegment::Source {
                path: input.to_path_buf(),
                start: origin_abs + r.start_time,
                end: origin_abs + video_end,
            }],
        };
        let provenance = ProvenanceRecorder::new(&[(table.origin(), table.time_base)]);
        let mut sink = Mp4Sink::new(&job.output, timing, settings, Some(audio), provenance)?
            .with_limit(r.kept.len())
            .with_end_time(r.end_time - r.start_time);
        if let Some(b) = &boxes {
            sink = sink.with_boxes(BoxRecorder::new(b.clone(), 0));
        }
        sinks.push(sink);
    }
    let mut overlay = match (&boxes, options.boxes.as_ref().and_then(|b| b.draw.clone())) {
        (Some(b), Some(style)) => Some(OverlayStage::new(b.clone(), 0, style)),
        _ => None,
    };
    let mut decimate = (options.decimate > 1).then(|| DecimateStage::new(options.decimate));
    let mut scale = options.scale_to.map(ScaleStage::new);
    let mut source = ClipSource::new(reader, table.clone(), range, end_limit, 0);
    {
        // Drop frames first, resize next, draw last (on the output's own pixels).
        let mut stages: Vec<&mut dyn FrameStage> = Vec::new();
        if let Some(d) = decimate.as_mut() {
            stages.push(d);
        }
        if let Some(s) = scale.as_mut() {
            stages.push(s);
        }
        if let Some(o) = overlay.as_mut() {
            stages.push(o);
        }
        let mut sink_refs: Vec<&mut dyn FrameSink> =
            sinks.iter_mut().map(|s| s as &mut dyn FrameSink).collect();
        pipeline::run(&mut source, &mut stages, &mut sink_refs, progress)?;
    }
    let mut outputs = Vec::with_capacity(jobs.len());
    for ((job, r), sink) in jobs.iter().zip(resolved).zip(sinks) {
        let mut request = job.spec.request_json(input);
        if let Some(b) = &boxes {
            request["boxes"] = b.request.to_json();
        }
        let done = sink.commit()?.write_sidecar(SidecarContext {
            job: job_name(&job.spec, options),
            sources: vec![source_record.clone()],
            request,
            resolved: serde_json::to_value(&r).expect("resolved clip serializes"),
            encode: settings,
            warnings: boxes
                .as_ref()
                .map(|b| b.warnings.clone())
                .unwrap_or_default(),
            boxes_out: options.boxes_out,
        })?;
        outputs.push(ClipOutput {
            output: done.path,
            sidecar: done.sidecar_path,
            frames: done.report.frames,
            resolved: r,
            boxes_file: done.boxes_file,
            report: done.report,
            sidecar_record: done.sidecar,
        });
    }
    Ok(outputs)
}

/// Makes one clip.
pub fn make_clip(
    input: &Path,
    spec: &ClipSpec,
    output: &Path,
    options: &ClipOptions,
    progress: &mut dyn Progress,
) -> Result<ClipOutput> {
    let jobs = [ClipJob {
        spec: spec.clone(),
        output: output.to_path_buf(),
    }];
    Ok(make_clips(input, &jobs, options, progress)?.remove(0))
}

/// Output paths for a set of truncation ratios: `clip.mp4` with 50% -> `clip_50.mp4`.
pub fn ratio_output_path(base: &Path, ratio: &TimeSpec) -> PathBuf {
    let label = match ratio {
        TimeSpec::Percent(p) => crate::time::decimal_text(*p),
        other => other.to_text().replace('/', "_"),
    };
    let stem = base
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "clip".into());
    let ext = base
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_else(|| "mp4".into());
    base.with_file_name(format!("{stem}_{label}.{ext}"))
}

/// Encoder timing taken from the source stream (its time base represents every frame time).
pub fn stream_timing(info: &crate::media::input::VideoStreamInfo, swapped: bool) -> StreamTiming {
    let sar = info.sample_aspect_ratio;
    let sar = if sar.is_valid() && swapped {
        Ratio::new(sar.den, sar.num)
    } else {
        sar
    };
    StreamTiming {
        time_base: info.time_base,
        frame_rate: info.best_frame_rate(),
        sample_aspect_ratio: sar,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::table::FrameEntry;

    fn cfr_table(frames: usize) -> FrameTable {
        let entries = (0..frames as i64)
            .map(|i| FrameEntry {
                pts: i,
                dts: Some(i),
                duration: 1,
                key: i % 10 == 0,
                pos: -1,
            })
            .collect();
        FrameTable::from_entries(Ratio::new(1, 25), entries, 0, Some(Ratio::new(25, 1)), None)
    }

    fn spec(start: Option<&str>, end: Option<&str>, decision: Option<&str>) -> ClipSpec {
        let p = |s: Option<&str>| s.map(|t| TimeSpec::parse(t).unwrap());
        ClipSpec {
            start: p(start),
            end: p(end),
            decision: p(decision),
        }
    }

    #[test]
    fn cut_keeps_frames_in_the_half_open_span() {
        let t = cfr_table(100); // 4 s at 25 fps
        let path = Path::new("v.mp4");
        let r = resolve_clip(path, &t, &spec(Some("1s"), Some("2s"), None)).unwrap();
        assert_eq!(r.kept, FrameRange::new(25, 50));
        let r = resolve_clip(path, &t, &spec(Some("25"), Some("50"), None)).unwrap();
        assert_eq!(r.kept, FrameRange::new(25, 50));
        // 1.01 s: frame 25 (1.00 s) is before the start, frame 26 (1.04 s) is the first kept
        let r = resolve_clip(path, &t, &spec(Some("1.01"), Some("00:00:02.000"), None)).unwrap();
        assert_eq!(r.kept, FrameRange::new(26, 50));
        let r = resolve_clip(path, &t, &spec(None, None, None)).unwrap();
        assert_eq!(r.kept, FrameRange::new(0, 100));
        assert_eq!(r.duration(), Time::from_secs(4));
    }

    #[test]
    fn truncation_drops_the_decision_frame_and_after() {
        let t = cfr_table(100);
        let path = Path::new("v.mp4");
        // clip [1 s, 3 s) = frames 25..75; decision at 1 s into the clip = source 2 s = frame 50
        let r = resolve_clip(path, &t, &spec(Some("1s"), Some("3s"), Some("1s"))).unwrap();
        assert_eq!(r.kept, FrameRange::new(25, 50));
        let d = r.decision.unwrap();
        assert_eq!(d.first_dropped_frame, Some(50));
        assert_eq!(d.last_kept_frame, 49);
        // 75% of a 2 s clip = 1.5 s -> frames 25..62 (62 is at 2.48 s, shown before 2.5 s)
        let r = resolve_clip(path, &t, &spec(Some("1s"), Some("3s"), Some("75%"))).unwrap();
        assert_eq!(r.kept, FrameRange::new(25, 63));
        assert_eq!(r.end_time(), Time::new(5, 2));
        // frame-number decision: keep the first 10 frames of the clip
        let r = resolve_clip(path, &t, &spec(Some("1s"), Some("3s"), Some("10"))).unwrap();
        assert_eq!(r.kept, FrameRange::new(25, 35));
        // 100% keeps everything
        let r = resolve_clip(path, &t, &spec(None, None, Some("100%"))).unwrap();
        assert_eq!(r.kept, FrameRange::new(0, 100));
    }

    #[test]
    fn bad_requests_are_errors_that_say_why() {
        let t = cfr_table(100);
        let path = Path::new("v.mp4");
        let err = |s| resolve_clip(path, &t, &s).unwrap_err().to_string();
        assert!(err(spec(Some("5s"), None, None)).contains("outside the video"));
        assert!(err(spec(None, Some("101"), None)).contains("outside the video"));
        assert!(err(spec(None, Some("4.5s"), None)).contains("outside the video"));
        assert!(err(spec(Some("2s"), Some("2s"), None)).contains("holds no frames"));
        assert!(err(spec(Some("2s"), Some("1s"), None)).contains("holds no frames"));
        assert!(err(spec(Some("1s"), Some("2s"), Some("2s"))).contains("outside the clip"));
        assert!(err(spec(Some("1s"), Some("2s"), Some("26"))).contains("outside the clip"));
        assert!(err(spec(Some("1s"), Some("2s"), Some("0%"))).contains("leaves no frame"));
        assert!(err(spec(Some("1s"), Some("2s"), Some("0"))).contains("leaves no frame"));
    }

    #[test]
    fn ratio_paths() {
        let p = ratio_output_path(
            Path::new("out/clip.mp4"),
            &TimeSpec::parse("62.5%").unwrap(),
        );
        assert_eq!(p, Path::new("out/clip_62.5.mp4"));
    }
}
