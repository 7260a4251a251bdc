//! `vidprep run`: a whole benchmark from one manifest. Each item is one pipeline: its source
//! is decoded once, the span, decision point, needle insertion and box overlay are applied as
//! frame stages, and every export (clip, capped video, sampled frames) is fed from that one
//! stream, with no intermediate files. Items run in parallel with bounded codec threads;
//! each output appears under its final name only when complete; `--resume` redoes only what
//! is missing or whose manifest entry changed; `--shard I/N` splits items by id.
//!
//! Layout of the output folder: `DIR/<id>/<export name>.mp4` (+ `.json` sidecar, `.b64` for
//! capped videos asked to), `DIR/<id>/<export name>/` for frames (images, `frames.json`, ...),
//! `DIR/<id>/item.json` (written last: the item is complete), and `DIR/report.jsonl`
//! (`report.shard-I-of-N.jsonl` for a shard).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use base64::Engine as _;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::fit::fit_within;
use crate::jobs::clip::{resolve_clip, stream_timing, ResolvedClip};
use crate::jobs::export_frames::{FrameKey, FramesOutputSpec, FramesSink};
use crate::jobs::export_video::{plan_rates, Verdict};
use crate::jobs::insert::{
    common_time_base, host_frame_rate, splice_audio, PreparedNeedle, SpliceSource,
};
use crate::jobs::manifest::{read_manifest, ExportSpec, FramesExportSpec, Item};
use crate::media::audio::{audio_stream_format, AudioPlan, AudioSegment};
use crate::media::decode::{DecodeOptions, FrameReader};
use crate::media::encode::EncodeSettings;
use crate::media::input::{Ratio, VideoStreamInfo};
use crate::media::table::FrameTable;
use crate::output::{remove_stale_temporaries, sidecar_path, PendingFile, TEMP_MARKER};
use crate::overlay::{BoxRecorder, OverlayStage, SourceBoxes, Style};
use crate::pipeline::{self, ClipSource, FrameSink, FrameSource, FrameStage, Progress};
use crate::sampling::{self, FrameList, FrameTimes};
use crate::sidecar::{ProvenanceRecorder, SourceRecord, VERSION};
use crate::sinks::{Mp4Sink, SidecarContext, StagedSink, StreamTiming};
use crate::stages::{DecimateStage, ScaleStage};
use crate::time::{Time, TimeSpec};

/// How a manifest is run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub out_dir: PathBuf,
    /// Items at a time (0: one per core).
    pub jobs: usize,
    /// Run only shard `I` of `N` (0-based): the items whose id hashes to `I` modulo `N`.
    pub shard: Option<(usize, usize)>,
    /// Skip items already complete with an unchanged manifest entry.
    pub resume: bool,
    /// Start no new item after the first failure.
    pub fail_fast: bool,
    /// Codec threads per item (default: the cores divided among the jobs).
    pub codec_threads: Option<usize>,
    /// Default encoding (exports may override CRF and preset).
    pub encode: EncodeSettings,
}

/// How an item ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    Failed,
    /// Complete from an earlier run (`--resume`), not redone.
    Skipped,
    /// Not started because `--fail-fast` stopped the run.
    NotRun,
}

/// One line of the report.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ItemReport {
    pub id: Option<String>,
    pub line: usize,
    pub status: Status,
    pub outputs: Vec<String>,
    pub error: Option<String>,
    pub seconds: f64,
    pub frames: usize,
}

/// What a run did.
#[derive(Clone, Debug, Serialize)]
pub struct RunSummary {
    pub items: usize,
    pub ok: usize,
    pub failed: usize,
    pub skipped: usize,
    pub not_run: usize,
    pub frames: u64,
    pub seconds: f64,
    pub report: PathBuf,
    pub shard: Option<String>,
}

/// Watches a run (the CLI draws progress from these; the library draws nothing).
pub trait RunObserver: Sync {
    /// Called once, before work starts, with the manifest's problems and the item count.
    fn planned(&self, _items: usize, _bad: &[ItemReport]) {}
    fn item_started(&self, _id: &str) {}
    fn frames(&self, _n: u64) {}
    fn item_done(&self, _report: &ItemReport) {}
}

/// An observer that ignores everything.
pub struct Quiet;

impl RunObserver for Quiet {}

/// The completion record of an item (`DIR/<id>/item.json`).
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Completion {
    id: String,
    /// Hash of the manifest entry and the run's encoding defaults.
    hash: String,
    outputs: Vec<String>,
    vidprep_version: String,
}

/// FNV-1a, 64 bits: a stable hash for shard assignment and change detection.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The shard an id belongs to.
pub fn shard_of(id: &str, count: usize) -> usize {
    (fnv1a(id.as_bytes()) % count.max(1) as u64) as usize
}

/// Parses `I/N` (0-based shard `I` of `N`).
pub fn parse_shard(text: &str) -> std::result::Result<(usize, usize), String> {
    let (i, n) = text
        .split_once('/')
        .ok_or_else(|| format!("cannot read shard {text:?}; expected I/N such as 0/8"))?;
    let (i, n): (usize, usize) = (
        i.trim()
            .parse()
            .map_err(|_| format!("bad shard index in {text:?}"))?,
        n.trim()
            .parse()
            .map_err(|_| format!("bad shard count in {text:?}"))?,
    );
    if n == 0 || i >= n {
        return Err(format!(
            "shard {text:?}: the index must be 0..{}",
            n.max(1) - 1
        ));
    }
    Ok((i, n))
}

fn item_hash(item: &Item, options: &RunOptions) -> String {
    let defaults = format!(
        "{}|{}|{}",
        options.encode.crf, options.encode.preset, options.encode.audio
    );
    format!(
        "{:016x}",
        fnv1a(format!("{}\n{defaults}\n{VERSION}", item.text).as_bytes())
    )
}

/// Runs the manifest at `path`. Bad items are reported (with their line numbers) before any
/// work starts and count as failures; the others run.
pub fn run_manifest(
    path: &Path,
    options: &RunOptions,
    observer: &dyn RunObserver,
) -> Result<(RunSummary, Vec<ItemReport>)> {
    let started = Instant::now();
    options.encode.validate()?;
    let manifest = read_manifest(path)?;
    let in_shard = |id: Option<&str>, line: usize| match options.shard {
        None => true,
        Some((i, n)) => match id {
            Some(id) => shard_of(id, n) == i,
            None => line % n == i,
        },
    };
    let mut reports: Vec<ItemReport> = manifest
        .bad
        .iter()
        .filter(|b| in_shard(b.id.as_deref(), b.line))
        .map(|b| ItemReport {
            id: b.id.clone(),
            line: b.line,
            status: Status::Failed,
            outputs: Vec::new(),
            error: Some(b.error.to_string()),
            seconds: 0.0,
            frames: 0,
        })
        .collect();
    let items: Vec<&Item> = manifest
        .items
        .iter()
        .filter(|i| in_shard(Some(&i.id), i.line))
        .collect();
    observer.planned(items.len(), &reports);
    std::fs::create_dir_all(&options.out_dir).map_err(|e| Error::io(&options.out_dir, e))?;

    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let jobs = if options.jobs == 0 {
        cores
    } else {
        options.jobs
    }
    .max(1);
    let threads = options.codec_threads.unwrap_or(cores / jobs).max(1);
    let stop = AtomicBool::new(false);
    let frames_total = AtomicU64::new(0);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(|e| Error::Usage(format!("cannot start {jobs} workers: {e}")))?;
    let done: Vec<ItemReport> = pool.install(|| {
        items
            .par_iter()
            .map(|item| {
                let mut report = ItemReport {
                    id: Some(item.id.clone()),
                    line: item.line,
                    status: Status::NotRun,
                    outputs: Vec::new(),
                    error: None,
                    seconds: 0.0,
                    frames: 0,
                };
                if options.fail_fast && stop.load(Ordering::SeqCst) {
                    report.error =
                        Some("not started: --fail-fast stopped the run after a failure".into());
                    observer.item_done(&report);
                    return report;
                }
                let t0 = Instant::now();
                let hash = item_hash(item, options);
                if options.resume {
                    if let Some(outputs) = completed(&options.out_dir, item, &hash) {
                        report.status = Status::Skipped;
                        report.outputs = outputs;
                        observer.item_done(&report);
                        return report;
                    }
                }
                observer.item_started(&item.id);
                let mut counter = FrameCounter {
                    observer,
                    total: &frames_total,
                    count: 0,
                };
                match run_item(item, options, threads, &hash, &mut counter) {
                    Ok(outputs) => {
                        report.status = Status::Ok;
                        report.outputs = outputs;
                    }
                    Err(e) => {
                        report.status = Status::Failed;
                        report.error = Some(format!(
                            "{} line {} (id {}): {e}",
                            path.display(),
                            item.line,
                            item.id
                        ));
                        stop.store(true, Ordering::SeqCst);
                        // A failed item leaves no partial set of outputs behind.
                        let _ = std::fs::remove_dir_all(options.out_dir.join(&item.id));
                    }
                }
                report.frames = counter.count as usize;
                report.seconds = t0.elapsed().as_secs_f64();
                observer.item_done(&report);
                report
            })
            .collect()
    });
    reports.extend(done);
    reports.sort_by_key(|r| r.line);
    let report_name = match options.shard {
        None => "report.jsonl".to_string(),
        Some((i, n)) => format!("report.shard-{i}-of-{n}.jsonl"),
    };
    let report_path = options.out_dir.join(report_name);
    let mut text = String::new();
    for r in &reports {
        text.push_str(&serde_json::to_string(r).expect("report serializes"));
        text.push('\n');
    }
    PendingFile::write_all(&report_path, text.as_bytes())?;
    let count = |s: Status| reports.iter().filter(|r| r.status == s).count();
    let summary = RunSummary {
        items: reports.len(),
        ok: count(Status::Ok),
        failed: count(Status::Failed),
        skipped: count(Status::Skipped),
        not_run: count(Status::NotRun),
        frames: frames_total.load(Ordering::SeqCst),
        seconds: started.elapsed().as_secs_f64(),
        report: report_path,
        shard: options.shard.map(|(i, n)| format!("{i}/{n}")),
    };
    Ok((summary, reports))
}

/// Counts an item's frames for the observer.
struct FrameCounter<'a> {
    observer: &'a dyn RunObserver,
    total: &'a AtomicU64,
    count: u64,
}

impl Progress for FrameCounter<'_> {
    fn advance(&mut self, frames: u64) -> bool {
        self.count += frames;
        self.total.fetch_add(frames, Ordering::Relaxed);
        self.observer.frames(frames);
        true
    }
}

/// The outputs of an item complete from an earlier run with the same manifest entry.
fn completed(out_dir: &Path, item: &Item, hash: &str) -> Option<Vec<String>> {
    let record = out_dir.join(&item.id).join("item.json");
    let c: Completion = serde_json::from_str(&std::fs::read_to_string(record).ok()?).ok()?;
    (c.id == item.id && c.hash == hash && c.outputs.iter().all(|o| Path::new(o).exists()))
        .then_some(c.outputs)
}

/// Removes temporary files below `dir` left by an interrupted run.
fn clean_temporaries(dir: &Path) {
    remove_stale_temporaries(dir);
    for entry in walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .filter_map(|e| e.ok())
    {
        if entry.file_type().is_dir() {
            remove_stale_temporaries(entry.path());
        }
    }
}

/// Everything about one item's processed stream, enough to build it again.
struct ItemStream<'a> {
    item: &'a Item,
    table: Arc<FrameTable>,
    resolved: ResolvedClip,
    info: VideoStreamInfo,
    size: (u32, u32),
    swapped: bool,
    threads: usize,
    boxes: Option<Arc<SourceBoxes>>,
    needle: Option<Needle>,
}

struct Needle {
    prepared: PreparedNeedle,
    /// Index in the clip of the frame the needle goes before.
    at: usize,
    /// Clip time of the insertion.
    time: Time,
    overlay: bool,
}

impl<'a> ItemStream<'a> {
    fn open(item: &'a Item, threads: usize) -> Result<ItemStream<'a>> {
        let table = FrameTable::for_file(&item.source)?;
        let resolved = resolve_clip(&item.source, &table, &item.spec)?;
        let reader = FrameReader::open(&item.source)?;
        let info = reader.info().clone();
        let size = reader.output_size();
        let swapped = reader.applied_rotation().swaps_axes();
        drop(reader);
        let boxes = match &item.boxes {
            Some(b) => Some(Arc::new(SourceBoxes::load(b, &table, size.0, size.1)?)),
            None => None,
        };
        let needle = match &item.insert {
            None => None,
            Some(ins) => {
                let fps = host_frame_rate(&info, &table);
                let prepared = PreparedNeedle::new(
                    &ins.sequence,
                    size,
                    fps,
                    ins.fit,
                    ins.overlay.then(Style::default),
                )?;
                let n = resolved.kept.len();
                let clip_duration = resolved.duration();
                let first_at_or_after = |t: Time| -> usize {
                    (table
                        .first_at_or_after(resolved.start_time() + t)
                        .clamp(resolved.kept.start, resolved.kept.end))
                        - resolved.kept.start
                };
                let at = match ins.position {
                    crate::jobs::insert::Position::Seed(seed) => {
                        sampling::SplitMix64::new(seed).below(n as u64 + 1) as usize
                    }
                    crate::jobs::insert::Position::At(TimeSpec::Frame(f)) => {
                        if f as usize > n {
                            return Err(Error::request(
                                &item.source,
                                format!(
                                    "insertion frame {f} is past the end of the clip ({n} frames)"
                                ),
                            ));
                        }
                        f as usize
                    }
                    crate::jobs::insert::Position::At(TimeSpec::Seconds(t)) => {
                        if t > clip_duration {
                            return Err(Error::request(
                                &item.source,
                                format!(
                                    "insertion time {}s is past the end of the clip ({}s)",
                                    t.as_secs_f64(),
                                    clip_duration.as_secs_f64()
                                ),
                            ));
                        }
                        first_at_or_after(t)
                    }
                    crate::jobs::insert::Position::At(TimeSpec::Percent(p)) => {
                        first_at_or_after((clip_duration * p).scale(1, 100))
                    }
                };
                let time = if at < n {
                    table.time(resolved.kept.start + at) - resolved.start_time()
                } else {
                    clip_duration
                };
                Some(Needle {
                    prepared,
                    at,
                    time,
                    overlay: ins.overlay,
                })
            }
        };
        Ok(ItemStream {
            item,
            table,
            resolved,
            info,
            size,
            swapped,
            threads,
            boxes,
            needle,
        })
    }

    /// A fresh source of the processed stream.
    fn source(&self) -> Result<Box<dyn FrameSource>> {
        let reader = FrameReader::open_with(
            &self.item.source,
            DecodeOptions {
                threads: self.threads,
                ..Default::default()
            },
        )?;
        let clip = ClipSource::new(
            reader,
            self.table.clone(),
            self.resolved.kept,
            self.resolved.end_time(),
            0,
        );
        Ok(match &self.needle {
            None => Box::new(clip),
            Some(n) => Box::new(SpliceSource::new(
                clip,
                self.resolved.kept.len(),
                n.at,
                n.time,
                &n.prepared,
            )),
        })
    }

    /// The stages every export sees: the boxes drawn.
    fn stages(&self) -> Vec<Box<dyn FrameStage + Send>> {
        let mut stages: Vec<Box<dyn FrameStage + Send>> = Vec::new();
        if let (Some(b), Some(style)) = (
            &self.boxes,
            self.item.boxes.as_ref().and_then(|b| b.draw.clone()),
        ) {
            stages.push(Box::new(OverlayStage::new(b.clone(), 0, style)));
        }
        if let Some(n) = self.needle.as_ref().filter(|n| n.overlay) {
            stages.push(Box::new(OverlayStage::new(
                n.prepared.boxes.clone(),
                1,
                Style::default(),
            )));
        }
        stages
    }

    fn frame_count(&self) -> usize {
        self.resolved.kept.len() + self.needle.as_ref().map_or(0, |n| n.prepared.frames)
    }

    fn duration(&self) -> Time {
        self.resolved.duration()
            + self
                .needle
                .as_ref()
                .map_or(Time::ZERO, |n| n.prepared.duration)
    }

    /// Presentation time of every frame of the processed stream.
    fn times(&self) -> Vec<Time> {
        let start = self.resolved.start_time();
        let host: Vec<Time> = (self.resolved.kept.start..self.resolved.kept.end)
            .map(|i| self.table.time(i) - start)
            .collect();
        match &self.needle {
            None => host,
            Some(n) => {
                let mut t = host[..n.at].to_vec();
                t.extend((0..n.prepared.frames).map(|k| n.time + n.prepared.step * k as i64));
                t.extend(host[n.at..].iter().map(|&h| h + n.prepared.duration));
                t
            }
        }
    }

    fn audio(&self) -> AudioPlan {
        let origin_abs = self.table.origin();
        let last = self.resolved.kept.end - 1;
        let video_end =
            (self.table.time(last) + self.table.duration_of(last)).min(self.resolved.end_time());
        match &self.needle {
            None => AudioPlan {
                segments: vec![AudioSegment::Source {
                    path: self.item.source.clone(),
                    start: origin_abs + self.resolved.start_time(),
                    end: origin_abs + video_end,
                }],
            },
            Some(n) => splice_audio(
                &self.item.source,
                origin_abs,
                self.resolved.start_time(),
                video_end,
                n.time,
                n.prepared.duration,
            ),
        }
    }

    fn timing(&self) -> StreamTiming {
        let base = stream_timing(&self.info, self.swapped);
        match &self.needle {
            None => base,
            Some(n) => {
                let fps = Time::from_secs(1) / n.prepared.step;
                StreamTiming {
                    time_base: common_time_base(base.time_base, fps),
                    frame_rate: Some(Ratio::new(fps.numer() as i32, fps.denom() as i32)),
                    sample_aspect_ratio: base.sample_aspect_ratio,
                }
            }
        }
    }

    fn provenance(&self) -> ProvenanceRecorder {
        let mut sources = vec![(self.table.origin(), self.table.time_base)];
        if let Some(n) = &self.needle {
            sources.push((Time::ZERO, n.prepared.time_base()));
        }
        ProvenanceRecorder::new(&sources)
    }

    fn recorder(&self) -> Option<BoxRecorder> {
        let mut sources = Vec::new();
        if let Some(b) = &self.boxes {
            sources.push((0, b.clone()));
        }
        if let Some(n) = &self.needle {
            sources.push((1, n.prepared.boxes.clone()));
        }
        (!sources.is_empty()).then(|| BoxRecorder::for_sources(sources))
    }

    fn source_records(&self) -> Vec<SourceRecord> {
        let mut records = vec![SourceRecord::new(
            &self.item.source,
            &self.info,
            &self.table,
            true,
        )];
        if let Some(n) = &self.needle {
            records.push(n.prepared.record());
        }
        records
    }

    fn resolved_json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({"clip": self.resolved, "frames": self.frame_count()});
        if let Some(n) = &self.needle {
            v["insert"] = serde_json::json!({
                "sequence": n.prepared.dir.display().to_string(),
                "insert_frame": n.at,
                "insert_time": crate::time::decimal_text(n.time),
                "needle_frames": [n.at, n.at + n.prepared.frames],
                "needle_duration": crate::time::decimal_text(n.prepared.duration),
                "placement": n.prepared.placement,
            });
        }
        v
    }

    fn mp4_sink(&self, path: &Path, encode: &EncodeSettings) -> Result<Mp4Sink> {
        let mut sink = Mp4Sink::new(
            path,
            self.timing(),
            encode,
            Some(self.audio()),
            self.provenance(),
        )?;
        if let Some(r) = self.recorder() {
            sink = sink.with_boxes(r);
        }
        Ok(sink)
    }
}

/// What every sidecar of an item says besides the output itself.
struct SidecarParts {
    sources: Vec<SourceRecord>,
    item: serde_json::Value,
    export: String,
    resolved: serde_json::Value,
    warnings: Vec<String>,
}

impl SidecarParts {
    fn context<'a>(&self, job: &'a str, encode: &'a EncodeSettings) -> SidecarContext<'a> {
        SidecarContext {
            job,
            sources: self.sources.clone(),
            request: serde_json::json!({"item": self.item, "export": self.export}),
            resolved: self.resolved.clone(),
            encode,
            warnings: self.warnings.clone(),
            boxes_out: None,
        }
    }
}

/// An export being made in the item's pass.
enum Making {
    Clip {
        name: String,
        encode: EncodeSettings,
        sink: Mp4Sink,
    },
    Video {
        name: String,
        base64: bool,
        max_base64_bytes: u64,
        encode: EncodeSettings,
        solver: crate::jobs::export_video::RateSolver,
        sink: StagedSink<Mp4Sink>,
        path: PathBuf,
        started: Instant,
    },
    Frames {
        spec: Box<FramesExportSpec>,
        sampled: sampling::Sampled,
        arranged: sampling::Arranged,
        sink: StagedSink<FramesSink>,
    },
}

impl Making {
    fn sink(&mut self) -> &mut dyn FrameSink {
        match self {
            Making::Clip { sink, .. } => sink,
            Making::Video { sink, .. } => sink,
            Making::Frames { sink, .. } => sink,
        }
    }
}

/// The stream's frames as the samplers see them.
struct StreamTimes {
    list: FrameList,
}

impl FrameTimes for StreamTimes {
    fn total(&self) -> usize {
        self.list.total()
    }
    fn duration(&self) -> Time {
        self.list.duration()
    }
    fn frame_shown_at(&self, t: Time) -> usize {
        self.list.frame_shown_at(t)
    }
    fn nominal_fps(&self) -> f64 {
        self.list.nominal_fps()
    }
}

fn video_stages(
    size: (u32, u32),
    stream: (u32, u32),
    step: usize,
) -> Vec<Box<dyn FrameStage + Send>> {
    let mut stages: Vec<Box<dyn FrameStage + Send>> = Vec::new();
    if step > 1 {
        stages.push(Box::new(DecimateStage::new(step)));
    }
    if size != stream {
        stages.push(Box::new(ScaleStage::new(size)));
    }
    stages
}

fn attempt_path(dir: &Path, name: &str, n: usize) -> PathBuf {
    dir.join(format!(
        ".{name}.mp4{TEMP_MARKER}-attempt{n}-{}.mp4",
        std::process::id()
    ))
}

/// Runs one item; returns the paths it wrote.
fn run_item(
    item: &Item,
    options: &RunOptions,
    threads: usize,
    hash: &str,
    progress: &mut dyn Progress,
) -> Result<Vec<String>> {
    crate::media::table::retry_on_table_mismatch(|| {
        run_item_once(item, options, threads, hash, progress)
    })
}

fn run_item_once(
    item: &Item,
    options: &RunOptions,
    threads: usize,
    hash: &str,
    progress: &mut dyn Progress,
) -> Result<Vec<String>> {
    let dir = options.out_dir.join(&item.id);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    clean_temporaries(&dir);
    let _ = std::fs::remove_file(dir.join("item.json"));
    let stream = ItemStream::open(item, threads)?;
    let mut base = options.encode.clone();
    base.threads = threads;
    let has_audio = base.audio && audio_stream_format(&item.source)?.is_some();
    let duration_s = stream.duration().as_secs_f64();
    let request_json: serde_json::Value =
        serde_json::from_str(&item.text).unwrap_or(serde_json::Value::Null);

    let mut making = Vec::new();
    for export in &item.exports {
        match export {
            ExportSpec::Clip {
                name,
                crf,
                preset,
                audio,
            } => {
                let mut encode = base.clone();
                if let Some(c) = crf {
                    encode.crf = *c;
                }
                if let Some(p) = preset {
                    encode.preset = p.clone();
                }
                encode.audio = encode.audio && *audio;
                let sink = stream.mp4_sink(&dir.join(format!("{name}.mp4")), &encode)?;
                making.push(Making::Clip {
                    name: name.clone(),
                    encode,
                    sink,
                });
            }
            ExportSpec::Video {
                name,
                max_size,
                max_base64_bytes,
                base64,
                preset,
                audio,
            } => {
                let mut encode = base.clone();
                if let Some(p) = preset {
                    encode.preset = p.clone();
                }
                encode.audio = encode.audio && *audio;
                let plan = plan_rates(
                    stream.size.0,
                    stream.size.1,
                    stream.frame_count(),
                    duration_s,
                    has_audio && encode.audio,
                    *max_size,
                    crate::jobs::export_video::budget_bytes(*max_base64_bytes),
                )
                .map_err(|m| Error::request(&item.source, format!("export {name:?}: {m}")))?;
                let solver = crate::jobs::export_video::RateSolver::new(
                    plan,
                    *max_base64_bytes,
                    stream.frame_count(),
                    duration_s,
                    encode.crf,
                );
                let path = attempt_path(&dir, name, 1);
                let sink = StagedSink::new(
                    video_stages(plan.size, stream.size, plan.frame_step),
                    stream.mp4_sink(&path, &solver.settings(&encode))?,
                );
                making.push(Making::Video {
                    name: name.clone(),
                    base64: *base64,
                    max_base64_bytes: *max_base64_bytes,
                    encode,
                    solver,
                    sink,
                    path,
                    started: Instant::now(),
                });
            }
            ExportSpec::Frames(spec) => {
                let times = stream.times();
                let list = FrameList::new(
                    times.clone(),
                    stream.duration(),
                    stream.timing().frame_rate.map_or(0.0, |r| r.as_f64()),
                )
                .ok_or_else(|| {
                    Error::request(&item.source, "the processed stream has no frames")
                })?;
                let st = StreamTimes { list };
                let sampled = sampling::sample(&st, spec.sampler, spec.request, spec.allow_repeats)
                    .map_err(|e| {
                        Error::request(&item.source, format!("export {:?}: {e}", spec.name))
                    })?;
                let arranged = sampling::arrange(&sampled.indices, spec.order, spec.seed);
                let size = spec
                    .max_size
                    .map(|(mw, mh)| fit_within(stream.size.0, stream.size.1, mw, mh))
                    .unwrap_or(stream.size);
                let out_dir = dir.join(&spec.name);
                std::fs::create_dir_all(&out_dir).map_err(|e| Error::io(&out_dir, e))?;
                let output = FramesOutputSpec {
                    format: spec.format,
                    quality: spec.quality,
                    strip: spec.strip,
                    payload: spec.payload,
                    jsonl: spec.jsonl,
                };
                let at: Vec<Time> = arranged.indices.iter().map(|&i| times[i]).collect();
                let sink = FramesSink::new(
                    &out_dir,
                    &output,
                    FrameKey::Stream,
                    &arranged.indices,
                    &at,
                    size.0,
                );
                making.push(Making::Frames {
                    spec: spec.clone(),
                    sampled,
                    arranged,
                    sink: StagedSink::new(video_stages(size, stream.size, 1), sink),
                });
            }
        }
    }

    // The one pass: every export from the same decoded, processed stream.
    {
        let mut source = stream.source()?;
        let mut stages = stream.stages();
        let mut stage_refs: Vec<&mut dyn FrameStage> = stages
            .iter_mut()
            .map(|s| s.as_mut() as &mut dyn FrameStage)
            .collect();
        let mut sinks: Vec<&mut dyn FrameSink> = making.iter_mut().map(|m| m.sink()).collect();
        pipeline::run(source.as_mut(), &mut stage_refs, &mut sinks, progress)?;
    }

    let mut outputs = Vec::new();
    let sources = stream.source_records();
    let resolved = stream.resolved_json();
    let warnings: Vec<String> = stream
        .boxes
        .as_ref()
        .map(|b| b.warnings.clone())
        .unwrap_or_default();
    let parts = |export: &str| SidecarParts {
        sources: sources.clone(),
        item: request_json.clone(),
        export: export.to_string(),
        resolved: resolved.clone(),
        warnings: warnings.clone(),
    };
    for m in making {
        match m {
            Making::Clip { name, encode, sink } => {
                let done = sink
                    .commit()?
                    .write_sidecar(parts(&name).context("run:clip", &encode))?;
                outputs.push(done.path.display().to_string());
                outputs.push(done.sidecar_path.display().to_string());
            }
            Making::Video {
                name,
                base64,
                max_base64_bytes,
                encode,
                mut solver,
                sink,
                path,
                started,
            } => {
                let kept = finish_video(
                    &stream,
                    &dir,
                    &name,
                    &encode,
                    &mut solver,
                    sink,
                    path,
                    started,
                    &parts(&name),
                    progress,
                )?;
                let final_path = dir.join(format!("{name}.mp4"));
                let mut sidecar: serde_json::Value = serde_json::from_str(
                    &std::fs::read_to_string(sidecar_path(&kept))
                        .map_err(|e| Error::io(&sidecar_path(&kept), e))?,
                )
                .map_err(|e| Error::bad_file(&sidecar_path(&kept), None, e.to_string()))?;
                std::fs::rename(&kept, &final_path).map_err(|e| Error::io(&final_path, e))?;
                let _ = std::fs::remove_file(sidecar_path(&kept));
                let n = solver.chosen().expect("a kept attempt");
                let attempt = solver.attempts[n].clone();
                let b64_path = if base64 {
                    let bytes =
                        std::fs::read(&final_path).map_err(|e| Error::io(&final_path, e))?;
                    let p = dir.join(format!("{name}.b64"));
                    PendingFile::write_all(
                        &p,
                        base64::engine::general_purpose::STANDARD
                            .encode(bytes)
                            .as_bytes(),
                    )?;
                    Some(p)
                } else {
                    None
                };
                sidecar["output"]["path"] = final_path.display().to_string().into();
                sidecar["export"] = serde_json::json!({
                    "max_base64_bytes": max_base64_bytes,
                    "budget_bytes": crate::jobs::export_video::budget_bytes(max_base64_bytes),
                    "bytes": attempt.bytes,
                    "base64_bytes": attempt.base64_bytes,
                    "budget_used": attempt.budget_used,
                    "encodes": solver.attempts.len(),
                    "attempts": solver.attempts,
                    "base64": b64_path.as_ref().map(|p| p.display().to_string()),
                });
                if !solver.warnings.is_empty() {
                    let mut w = warnings.clone();
                    w.extend(solver.warnings.clone());
                    sidecar["warnings"] = serde_json::to_value(w).expect("strings");
                }
                let side = sidecar_path(&final_path);
                PendingFile::write_all(
                    &side,
                    (serde_json::to_string_pretty(&sidecar).expect("json") + "\n").as_bytes(),
                )?;
                outputs.push(final_path.display().to_string());
                outputs.push(side.display().to_string());
                if let Some(p) = b64_path {
                    outputs.push(p.display().to_string());
                }
            }
            Making::Frames {
                spec,
                sampled,
                arranged,
                sink,
            } => {
                let out_dir = dir.join(&spec.name);
                let (records, files) = sink.into_inner().commit(&item.source)?;
                let summary = serde_json::json!({
                    "vidprep_version": VERSION,
                    "sources": sources,
                    "request": {"item": request_json, "export": spec.name},
                    "resolved": resolved,
                    "total_frames": stream.frame_count(),
                    "sampled": sampled,
                    "order": arranged,
                    "format": spec.format,
                    "frames": records,
                    "strip": files.strip,
                    "payload": files.payload,
                    "jsonl": files.jsonl,
                });
                let fj = out_dir.join("frames.json");
                PendingFile::write_all(
                    &fj,
                    (serde_json::to_string_pretty(&summary).expect("json") + "\n").as_bytes(),
                )?;
                outputs.push(fj.display().to_string());
            }
        }
    }
    let completion = Completion {
        id: item.id.clone(),
        hash: hash.to_string(),
        outputs: outputs.clone(),
        vidprep_version: VERSION.to_string(),
    };
    PendingFile::write_all(
        &dir.join("item.json"),
        (serde_json::to_string_pretty(&completion).expect("json") + "\n").as_bytes(),
    )?;
    Ok(outputs)
}

/// Finishes a capped video: judges the attempt made in the shared pass and, while the solver
/// asks, encodes again from a fresh pass of the stream. Returns the kept attempt's file.
#[allow(clippy::too_many_arguments)]
fn finish_video(
    stream: &ItemStream,
    dir: &Path,
    name: &str,
    encode: &EncodeSettings,
    solver: &mut crate::jobs::export_video::RateSolver,
    sink: StagedSink<Mp4Sink>,
    first: PathBuf,
    started: Instant,
    context: &SidecarParts,
    progress: &mut dyn Progress,
) -> Result<PathBuf> {
    let mut files = Vec::new();
    let mut pending = Some((sink, first, started));
    let mut why = None;
    while let Some((sink, path, started)) = pending.take() {
        let done = sink.into_inner().commit()?;
        let bytes = std::fs::metadata(&done.path)
            .map_err(|e| Error::io(&done.path, e))?
            .len();
        let report = done.report.clone();
        done.write_sidecar(context.context("run:video", encode))?;
        files.push(path.clone());
        match solver.record(&report, bytes, started.elapsed().as_secs_f64()) {
            Verdict::Accept => {}
            Verdict::GiveUp(w) => why = Some(w),
            Verdict::Retry => {
                let next = attempt_path(dir, name, solver.attempts.len() + 1);
                let plan = solver.plan;
                let mut sink = StagedSink::new(
                    video_stages(plan.size, stream.size, plan.frame_step),
                    stream.mp4_sink(&next, &solver.settings(encode))?,
                );
                let started = Instant::now();
                let mut source = stream.source()?;
                let mut stages = stream.stages();
                let mut stage_refs: Vec<&mut dyn FrameStage> = stages
                    .iter_mut()
                    .map(|s| s.as_mut() as &mut dyn FrameStage)
                    .collect();
                pipeline::run(
                    source.as_mut(),
                    &mut stage_refs,
                    &mut [&mut sink as &mut dyn FrameSink],
                    progress,
                )?;
                pending = Some((sink, next, started));
            }
        }
    }
    let chosen = solver.chosen();
    for (i, f) in files.iter().enumerate() {
        if Some(i) != chosen {
            let _ = std::fs::remove_file(f);
            let _ = std::fs::remove_file(sidecar_path(f));
        }
    }
    match chosen {
        Some(i) => Ok(files[i].clone()),
        None => Err(Error::request(
            &stream.item.source,
            format!("export {name:?}: {}", solver.failure(why)),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_split_ids_disjointly() {
        let ids: Vec<String> = (0..500).map(|i| format!("item-{i}")).collect();
        let mut seen = std::collections::HashSet::new();
        for shard in 0..7 {
            for id in ids.iter().filter(|id| shard_of(id, 7) == shard) {
                assert!(seen.insert(id.clone()), "{id} in two shards");
            }
        }
        assert_eq!(seen.len(), 500);
        // Stable across runs and machines: FNV-1a test vector.
        assert_eq!(fnv1a(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(parse_shard("2/8"), Ok((2, 8)));
        assert!(parse_shard("8/8").is_err() && parse_shard("1").is_err());
    }
}
