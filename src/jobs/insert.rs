//! Needle insertion: a GOT-10k tracking sequence (JPEG frames + boxes) inserted into a host
//! video at a chosen or seeded-random frame boundary, conformed to the host (retimed from the
//! sequence's `anno_fps` to the host's frame rate, fitted to its frame), with the host's later
//! content delayed by the needle's duration (nothing of the host is lost), host audio around it
//! and silence under it, and the boxes written in V-STaR's schema in output frames and pixels.
//!
//! Timing: the needle lasts `D = K / host_fps` with `K = round(n * host_fps / anno_fps)`
//! output frames for `n` sequence frames; output needle frame `k` shows sequence frame
//! `floor(k * anno_fps / host_fps)` (each sequence frame is shown for `1 / anno_fps` seconds).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ffmpeg_next::frame::Video as VideoFrame;
use serde::Serialize;

use crate::annotations::{self, ConstantRateClock, Fill, FrameClock};
use crate::error::{Error, Result};
use crate::fit::{Fit, Placement, Placer};
use crate::jobs::clip::stream_timing;
use crate::media::audio::{AudioPlan, AudioSegment};
use crate::media::decode::{DecodeOptions, FrameReader};
use crate::media::encode::EncodeSettings;
use crate::media::frame::share;
use crate::media::input::Ratio;
use crate::media::still::{decode_still, still_size};
use crate::media::table::FrameTable;
use crate::output::{ensure_not_an_input, sidecar_path, PendingFile};
use crate::overlay::{BoxRecorder, BoxesRequest, OverlayStage, SourceBoxes, Style};
use crate::pipeline::{
    self, ClipSource, FrameOrigin, FrameSink, FrameSource, FrameStage, Geometry, PipelineFrame,
    Progress,
};
use crate::sampling::SplitMix64;
use crate::sidecar::{ProvenanceRecorder, SourceRecord, TimeRecord, VERSION};
use crate::sinks::{Mp4Sink, SidecarContext, StreamTiming};
use crate::time::{FrameRange, Rounding, Time, TimeSpec};

/// Where the needle goes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Position {
    /// Before the host frame at this time/frame/percentage (`100%` or the frame count appends).
    At(TimeSpec),
    /// Uniformly over the host's frame boundaries `0..=frames`, reproducibly from this seed.
    Seed(u64),
}

#[derive(Clone, Debug)]
pub struct InsertRequest {
    pub host: PathBuf,
    pub sequence: PathBuf,
    pub position: Position,
    pub fit: Fit,
    pub output: PathBuf,
    /// Where to write the V-STaR annotations (default: `OUTPUT.vstar.json`).
    pub annotations: Option<PathBuf>,
    /// Draw the remapped boxes (for inspection).
    pub overlay: Option<Style>,
    pub encode: EncodeSettings,
}

/// Where the needle went, in host and output terms.
#[derive(Clone, Debug, Serialize)]
pub struct Insertion {
    /// The needle sits before this host frame (0 = at the start, host frame count = appended).
    pub insert_frame: usize,
    pub insert_time: TimeRecord,
    pub seed: Option<u64>,
    pub needle_frames: usize,
    pub needle_duration: TimeRecord,
    pub sequence_frames: usize,
    pub anno_fps: String,
    pub host_fps: String,
    pub placement: Placement,
    /// Output frames `[needle_start, needle_end)` are the needle.
    pub needle_start: usize,
    pub needle_end: usize,
    pub output_frames: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct InsertOutput {
    pub output: PathBuf,
    pub sidecar: PathBuf,
    pub annotations: PathBuf,
    pub insertion: Insertion,
}

/// A checked GOT-10k sequence ready to insert.
struct Needle {
    dir: PathBuf,
    images: Vec<PathBuf>,
    size: (u32, u32),
    anno_fps: Time,
    annotations: annotations::Annotations,
}

fn load_needle(dir: &Path) -> Result<Needle> {
    let seq = annotations::open_sequence(dir)?;
    let first = still_size(&seq.images[0])?;
    for image in &seq.images[1..] {
        let size = still_size(image)?;
        if size != first {
            return Err(Error::request(
                image,
                format!(
                    "is {}x{} but the sequence's first frame {} is {}x{}; a sequence's frames must all have one size",
                    size.0,
                    size.1,
                    seq.images[0].display(),
                    first.0,
                    first.1
                ),
            ));
        }
    }
    let anno_fps = seq
        .annotations
        .meta
        .fps
        .filter(|f| *f > Time::ZERO)
        .unwrap_or(Time::from_secs(annotations::got10k::DEFAULT_ANNO_FPS));
    Ok(Needle {
        dir: dir.to_path_buf(),
        images: seq.images,
        size: first,
        anno_fps,
        annotations: seq.annotations,
    })
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 {
        a.abs()
    } else {
        gcd(b, a % b)
    }
}

/// A time base that represents both the host's timestamps and multiples of `1 / fps` exactly,
/// when one fits ffmpeg's 32-bit rationals; else the host's (needle times are then rounded).
pub fn common_time_base(host: Ratio, fps: Time) -> Ratio {
    // gcd(p1/q1, p2/q2) = gcd(p1, p2) / lcm(q1, q2), with the frame step p2/q2 = 1/fps.
    let (p1, q1) = (host.num as i128, host.den as i128);
    let (p2, q2) = (fps.denom() as i128, fps.numer() as i128);
    let num = gcd(p1, p2);
    let den = q1 / gcd(q1, q2) * q2;
    let g = gcd(num, den);
    let (num, den) = (num / g, den / g);
    match (i32::try_from(num), i32::try_from(den)) {
        (Ok(n), Ok(d)) if n > 0 && d > 0 => Ratio::new(n, d),
        _ => host,
    }
}

/// A sequence prepared for insertion into one host: its frames' placement, timing and boxes.
pub struct PreparedNeedle {
    pub dir: PathBuf,
    pub images: Vec<PathBuf>,
    pub size: (u32, u32),
    pub anno_fps: Time,
    /// Number of output frames the needle takes.
    pub frames: usize,
    /// Sequence frame shown by each needle frame.
    pub map: Vec<usize>,
    /// Output frame duration (one host frame).
    pub step: Time,
    /// The needle's duration (`frames * step`).
    pub duration: Time,
    pub placement: Placement,
    /// The sequence's boxes on its own frames (drawn when asked).
    pub boxes: Arc<SourceBoxes>,
    pub object: Option<String>,
}

impl PreparedNeedle {
    /// Checks and prepares `sequence` for a host of `host_size` at `host_fps`.
    pub fn new(
        sequence: &Path,
        host_size: (u32, u32),
        host_fps: Time,
        fit: Fit,
        draw: Option<Style>,
    ) -> Result<PreparedNeedle> {
        let needle = load_needle(sequence)?;
        let n = needle.images.len();
        // K = round(n * host_fps / anno_fps), at least one frame.
        let frames = (Time::from_secs(n as i64) * host_fps)
            .scale(needle.anno_fps.denom(), needle.anno_fps.numer())
            .to_pts(1, 1, Rounding::Nearest)
            .max(1) as usize;
        let map: Vec<usize> = (0..frames)
            .map(|k| {
                let s = (Time::from_secs(k as i64) * needle.anno_fps / host_fps)
                    .div_floor(Time::from_secs(1));
                (s.max(0) as usize).min(n - 1)
            })
            .collect();
        let step = Time::from_secs(1) / host_fps;
        let placement = Placement::new(needle.size, host_size, fit);
        let clock = ConstantRateClock::new(n, needle.anno_fps, needle.size.0, needle.size.1)?;
        let mut request = BoxesRequest::new(needle.dir.clone());
        request.format = annotations::Format::Got10k;
        request.fill = Fill::None;
        request.draw = draw;
        let resolved = needle.annotations.resolve(&clock, Fill::None)?;
        let object = needle
            .annotations
            .tracks
            .first()
            .and_then(|t| t.label.clone());
        let boxes = Arc::new(SourceBoxes {
            request,
            annotations: needle.annotations,
            resolved,
            warnings: Vec::new(),
        });
        Ok(PreparedNeedle {
            dir: needle.dir,
            images: needle.images,
            size: needle.size,
            anno_fps: needle.anno_fps,
            frames,
            map,
            step,
            duration: step * frames as i64,
            placement,
            boxes,
            object,
        })
    }

    /// The time base of the sequence's own frames (`1 / anno_fps`).
    pub fn time_base(&self) -> Ratio {
        Ratio::new(self.anno_fps.denom() as i32, self.anno_fps.numer() as i32)
    }

    /// The sequence as a source record for sidecars.
    pub fn record(&self) -> SourceRecord {
        SourceRecord {
            path: self.dir.display().to_string(),
            size_bytes: self
                .images
                .iter()
                .filter_map(|p| std::fs::metadata(p).ok())
                .map(|m| m.len())
                .sum(),
            frames: self.images.len(),
            width: self.size.0,
            height: self.size.1,
            rotation_cw: 0,
            time_base: self.time_base(),
            avg_frame_rate: Ratio::new(self.anno_fps.numer() as i32, self.anno_fps.denom() as i32),
            duration_s: (Time::from_secs(self.images.len() as i64) / self.anno_fps).as_secs_f64(),
            time_origin: "0".into(),
            first_frame_time: "0".into(),
            frame_times_from: crate::media::table::TimesFrom::Packets,
            damage: Default::default(),
        }
    }
}

/// The host's frames before the insertion point, the needle (pipeline source id 1), then the
/// rest of the host delayed by the needle's duration. `S` yields the host frames (a whole
/// video or a clip of it), timed from 0.
pub struct SpliceSource<S: FrameSource> {
    host: S,
    /// Output index of the host frame the needle goes before.
    insert_at: usize,
    insert_time: Time,
    images: Vec<PathBuf>,
    map: Vec<usize>,
    placer: Placer,
    geometry: Geometry,
    step: Time,
    shift: Time,
    phase: Phase,
    pending: Option<PipelineFrame>,
    cached: Option<(usize, VideoFrame)>,
    host_frames: usize,
}

enum Phase {
    Before,
    Needle(usize),
    After,
}

impl<S: FrameSource> SpliceSource<S> {
    /// `host` has `host_frames` frames; the needle goes before its frame `insert_at`, which is
    /// shown at `insert_time` (the host's end when `insert_at == host_frames`).
    pub fn new(
        host: S,
        host_frames: usize,
        insert_at: usize,
        insert_time: Time,
        needle: &PreparedNeedle,
    ) -> SpliceSource<S> {
        SpliceSource {
            host,
            insert_at,
            insert_time,
            images: needle.images.clone(),
            map: needle.map.clone(),
            placer: Placer::new(needle.placement),
            geometry: needle.placement.geometry(),
            step: needle.step,
            shift: needle.duration,
            phase: Phase::Before,
            pending: None,
            cached: None,
            host_frames,
        }
    }

    fn needle_frame(&mut self, k: usize) -> Result<PipelineFrame> {
        let s = self.map[k];
        let image = match &self.cached {
            Some((cached, image)) if *cached == s => share(image),
            _ => {
                let path = &self.images[s];
                let raw = decode_still(path)?;
                if (raw.width(), raw.height()) != self.placer.placement().src {
                    let (w, h) = self.placer.placement().src;
                    return Err(Error::request(
                        path,
                        format!(
                            "decodes to {}x{}, expected {w}x{h} like the other frames",
                            raw.width(),
                            raw.height()
                        ),
                    ));
                }
                let placed = self
                    .placer
                    .place(&raw)
                    .map_err(|e| Error::ffmpeg(path, "scaling the sequence frame", e))?;
                self.cached = Some((s, share(&placed)));
                placed
            }
        };
        Ok(PipelineFrame {
            image,
            index: self.insert_at + k,
            time: self.insert_time + self.step * k as i64,
            duration: self.step,
            origin: FrameOrigin {
                source: 1,
                index: s,
                pts: s as i64,
            },
            geometry: self.geometry,
            damaged: false,
        })
    }
}

impl<S: FrameSource> FrameSource for SpliceSource<S> {
    fn next_frame(&mut self) -> Result<Option<PipelineFrame>> {
        loop {
            match self.phase {
                Phase::Before => {
                    if self.insert_at == 0 {
                        self.phase = Phase::Needle(0);
                        continue;
                    }
                    match self.host.next_frame()? {
                        Some(f) if f.index >= self.insert_at => {
                            self.pending = Some(f);
                            self.phase = Phase::Needle(0);
                        }
                        Some(f) => return Ok(Some(f)),
                        None => self.phase = Phase::Needle(0),
                    }
                }
                Phase::Needle(k) => {
                    if k >= self.map.len() {
                        self.phase = Phase::After;
                        continue;
                    }
                    self.phase = Phase::Needle(k + 1);
                    return self.needle_frame(k).map(Some);
                }
                Phase::After => {
                    let next = match self.pending.take() {
                        Some(f) => Some(f),
                        None => self.host.next_frame()?,
                    };
                    return Ok(next.map(|mut f| {
                        f.time = f.time + self.shift;
                        f.index += self.map.len();
                        f
                    }));
                }
            }
        }
    }

    fn len_hint(&self) -> Option<usize> {
        Some(self.host_frames + self.map.len())
    }
}

/// The host's audio around the needle and silence under it, for a host clip that starts at
/// `clip_start` and ends at `clip_end` (source times) with the needle at `insert_time` (clip
/// time). `origin_abs` is the host's frame-0 time on its own timeline.
pub fn splice_audio(
    host: &Path,
    origin_abs: Time,
    clip_start: Time,
    clip_end: Time,
    insert_time: Time,
    needle: Time,
) -> AudioPlan {
    let mut segments = Vec::new();
    let at = clip_start + insert_time;
    if at > clip_start {
        segments.push(AudioSegment::Source {
            path: host.to_path_buf(),
            start: origin_abs + clip_start,
            end: origin_abs + at,
        });
    }
    segments.push(AudioSegment::Silence { duration: needle });
    if at < clip_end {
        segments.push(AudioSegment::Source {
            path: host.to_path_buf(),
            start: origin_abs + at,
            end: origin_abs + clip_end,
        });
    }
    AudioPlan { segments }
}

/// A host's frame rate as an exact rate (its average, else its nominal rate, else the
/// typical spacing of its frames).
pub fn host_frame_rate(info: &crate::media::input::VideoStreamInfo, table: &FrameTable) -> Time {
    info.best_frame_rate()
        .map(|r| Time::new(r.num as i64, r.den as i64))
        .unwrap_or_else(|| {
            Time::new(
                table.time_base.den as i64,
                table.time_base.num as i64 * table.typical_frame_duration().max(1),
            )
        })
}

/// The host frame before which the needle goes.
fn resolve_position(host: &Path, table: &FrameTable, position: Position) -> Result<usize> {
    let n = table.len();
    Ok(match position {
        Position::Seed(seed) => SplitMix64::new(seed).below(n as u64 + 1) as usize,
        Position::At(TimeSpec::Frame(f)) => {
            if f as usize > n {
                return Err(Error::request(
                    host,
                    format!("insertion frame {f} is past the end of the host ({n} frames)"),
                ));
            }
            f as usize
        }
        Position::At(TimeSpec::Seconds(t)) => {
            if t > table.end_time() {
                return Err(Error::request(
                    host,
                    format!(
                        "insertion time {}s is past the end of the host ({}s)",
                        t.as_secs_f64(),
                        table.end_time().as_secs_f64()
                    ),
                ));
            }
            table.first_at_or_after(t)
        }
        Position::At(TimeSpec::Percent(p)) => {
            table.first_at_or_after((table.end_time() * p).scale(1, 100))
        }
    })
}

/// Inserts `request.sequence` into `request.host`.
pub fn insert(request: &InsertRequest, progress: &mut dyn Progress) -> Result<InsertOutput> {
    crate::media::table::retry_on_table_mismatch(|| insert_once(request, progress))
}

fn insert_once(request: &InsertRequest, progress: &mut dyn Progress) -> Result<InsertOutput> {
    request.encode.validate()?;
    let annotations_path = request.annotations.clone().unwrap_or_else(|| {
        let stem = request
            .output
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        request.output.with_file_name(format!("{stem}.vstar.json"))
    });
    for out in [
        &request.output,
        &sidecar_path(&request.output),
        &annotations_path,
    ] {
        ensure_not_an_input(out, &[&request.host, &request.sequence])?;
    }
    if annotations_path == sidecar_path(&request.output) {
        return Err(Error::Usage(format!(
            "--annotations {} would be overwritten by the output's sidecar; choose another name",
            annotations_path.display()
        )));
    }
    let table = FrameTable::for_file(&request.host)?;
    let reader = FrameReader::open_with(
        &request.host,
        DecodeOptions {
            threads: request.encode.threads,
            ..Default::default()
        },
    )?;
    let info = reader.info().clone();
    let host_size = reader.output_size();
    let host_fps = host_frame_rate(&info, &table);
    let needle = PreparedNeedle::new(
        &request.sequence,
        host_size,
        host_fps,
        request.fit,
        request.overlay.clone(),
    )?;
    let insert_at = resolve_position(&request.host, &table, request.position)?;
    let insert_time = if insert_at < table.len() {
        table.time(insert_at)
    } else {
        table.end_time()
    };
    let k_frames = needle.frames;
    let shift = needle.duration;
    let placement = needle.placement;
    let n = needle.images.len();

    let origin_abs = table.origin();
    let audio = splice_audio(
        &request.host,
        origin_abs,
        Time::ZERO,
        table.end_time(),
        insert_time,
        shift,
    );
    let base_timing = stream_timing(&info, reader.applied_rotation().swaps_axes());
    let timing = StreamTiming {
        time_base: common_time_base(base_timing.time_base, host_fps),
        frame_rate: Some(Ratio::new(host_fps.numer() as i32, host_fps.denom() as i32)),
        sample_aspect_ratio: base_timing.sample_aspect_ratio,
    };
    let provenance = ProvenanceRecorder::new(&[
        (table.origin(), table.time_base),
        (Time::ZERO, needle.time_base()),
    ]);
    let mut sink = Mp4Sink::new(
        &request.output,
        timing,
        &request.encode,
        Some(audio),
        provenance,
    )?
    .with_boxes(BoxRecorder::new(needle.boxes.clone(), 1));
    let mut overlay = request
        .overlay
        .clone()
        .map(|style| OverlayStage::new(needle.boxes.clone(), 1, style));
    let whole = FrameRange::new(0, table.len());
    let host = ClipSource::new(reader, table.clone(), whole, table.end_time(), 0);
    let mut source = SpliceSource::new(host, table.len(), insert_at, insert_time, &needle);
    {
        let mut stages: Vec<&mut dyn FrameStage> = Vec::new();
        if let Some(o) = overlay.as_mut() {
            stages.push(o);
        }
        pipeline::run(
            &mut source,
            &mut stages,
            &mut [&mut sink as &mut dyn FrameSink],
            progress,
        )?;
    }

    let insertion = Insertion {
        insert_frame: insert_at,
        insert_time: insert_time.into(),
        seed: match request.position {
            Position::Seed(s) => Some(s),
            _ => None,
        },
        needle_frames: k_frames,
        needle_duration: shift.into(),
        sequence_frames: n,
        anno_fps: crate::time::decimal_text(needle.anno_fps),
        host_fps: crate::time::decimal_text(host_fps),
        placement,
        needle_start: insert_at,
        needle_end: insert_at + k_frames,
        output_frames: table.len() + k_frames,
    };
    let done = sink.commit()?.write_sidecar(SidecarContext {
        job: "insert",
        sources: vec![
            SourceRecord::new(&request.host, &info, &table, true),
            needle.record(),
        ],
        request: serde_json::json!({
            "host": request.host.display().to_string(),
            "sequence": request.sequence.display().to_string(),
            "position": match request.position {
                Position::At(t) => serde_json::json!({"at": t.to_text()}),
                Position::Seed(s) => serde_json::json!({"seed": s}),
            },
            "fit": request.fit,
            "overlay": request.overlay,
        }),
        resolved: serde_json::to_value(&insertion).expect("insertion serializes"),
        encode: &request.encode,
        warnings: Vec::new(),
        boxes_out: None,
    })?;
    let (out_boxes, clock) = done.boxes.as_ref().expect("boxes recorded above");
    let vid = request
        .output
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let provenance = serde_json::json!({
        "host": request.host.display().to_string(),
        "sequence": request.sequence.display().to_string(),
        "insert_frame": insert_at,
        "insert_time": crate::time::decimal_text(insert_time),
        "needle_frames": [insert_at, insert_at + k_frames],
        "seed": insertion.seed,
        "fit": request.fit,
        "vidprep_version": VERSION,
    });
    write_vstar_annotations(
        &annotations_path,
        out_boxes,
        clock,
        &needle,
        &vid,
        insert_time,
        host_fps,
        provenance,
    )?;
    Ok(InsertOutput {
        output: done.path,
        sidecar: done.sidecar_path,
        annotations: annotations_path,
        insertion,
    })
}

/// Writes the needle's V-STaR item: its boxes in output frames and pixels (`boxes`, recorded
/// from the frames really written), `timestamps` = the needle's span in output seconds, and
/// `provenance`.
#[allow(clippy::too_many_arguments)]
pub fn write_vstar_annotations(
    path: &Path,
    boxes: &annotations::Annotations,
    clock: &annotations::TimestampClock,
    needle: &PreparedNeedle,
    vid: &str,
    insert_time: Time,
    host_fps: Time,
    provenance: serde_json::Value,
) -> Result<()> {
    let needle_track = needle
        .boxes
        .annotations
        .tracks
        .first()
        .map(|t| t.id.clone());
    let track = needle_track.and_then(|id| boxes.tracks.iter().position(|t| t.id == id));
    let mut item = match track {
        Some(t) => annotations::vstar_item(boxes, t, clock, Fill::None, vid)?,
        None => annotations::VstarItem {
            vid: vid.to_string(),
            fps: 0.0,
            width: clock.frame_size().0,
            height: clock.frame_size().1,
            frame_count: clock.frame_count(),
            object: String::new(),
            timestamps: [0.0, 0.0],
            bboxes: Vec::new(),
            extra: Default::default(),
        },
    };
    item.object = needle.object.clone().unwrap_or(item.object);
    item.fps = host_fps.as_secs_f64();
    item.timestamps = [
        insert_time.as_secs_f64(),
        (insert_time + needle.duration).as_secs_f64(),
    ];
    item.extra.insert("provenance".into(), provenance);
    let text = serde_json::to_string_pretty(&item).expect("V-STaR item serializes") + "\n";
    PendingFile::write_all(path, text.as_bytes())?;
    Ok(())
}

/// File extensions taken as host videos in a folder.
const VIDEO_EXTENSIONS: [&str; 11] = [
    "mp4", "m4v", "mov", "mkv", "webm", "avi", "ts", "mpg", "mpeg", "flv", "wmv",
];

/// The host videos in `dir` (not recursive), sorted by name.
pub fn list_hosts(dir: &Path) -> Result<Vec<PathBuf>> {
    if !dir.is_dir() {
        return Err(Error::request(dir, "is not a folder of host videos"));
    }
    let mut hosts: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .min_depth(1)
        .max_depth(1)
        .sort_by_file_name()
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .filter(|p| {
            p.extension().is_some_and(|x| {
                VIDEO_EXTENSIONS.contains(&x.to_string_lossy().to_lowercase().as_str())
            })
        })
        .collect();
    hosts.sort();
    if hosts.is_empty() {
        return Err(Error::request(
            dir,
            format!(
                "holds no videos (looked for {})",
                VIDEO_EXTENSIONS.join(", ")
            ),
        ));
    }
    Ok(hosts)
}

/// The sequence folders of a GOT-10k dataset root: the ones `list.txt` names, in its order,
/// when the root has one; else every folder below the root holding a `groundtruth.txt`,
/// sorted by path (a folder that is itself a sequence counts as one).
pub fn list_sequences(root: &Path) -> Result<Vec<PathBuf>> {
    if !root.is_dir() {
        return Err(Error::request(root, "is not a folder of GOT-10k sequences"));
    }
    let list = root.join("list.txt");
    if list.is_file() {
        let text = std::fs::read_to_string(&list).map_err(|e| Error::io(&list, e))?;
        let seqs: Vec<PathBuf> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| root.join(l))
            .collect();
        if seqs.is_empty() {
            return Err(Error::bad_file(&list, None, "lists no sequences"));
        }
        return Ok(seqs);
    }
    let mut seqs: Vec<PathBuf> = walkdir::WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_dir() && e.path().join("groundtruth.txt").is_file())
        .map(|e| e.into_path())
        .collect();
    seqs.sort();
    if seqs.is_empty() {
        return Err(Error::request(
            root,
            "holds no GOT-10k sequence folders (folders with a groundtruth.txt)",
        ));
    }
    Ok(seqs)
}

/// One planned insertion of a batch.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BatchItem {
    pub index: usize,
    pub host: PathBuf,
    pub sequence: PathBuf,
    /// The seed of this item's insertion position.
    pub seed: u64,
    pub output: PathBuf,
}

/// Pairs sequences with hosts for `count` outputs, reproducibly from `seed` alone: sequences
/// and hosts are each shuffled once (Fisher-Yates, SplitMix64) and item `j` takes sequence
/// `j mod S` and host `j mod H` of the shuffled lists; its position seed is the first
/// SplitMix64 output seeded with `seed + j`. Nothing depends on threads or timing.
pub fn plan_batch(
    hosts: &[PathBuf],
    sequences: &[PathBuf],
    count: usize,
    seed: u64,
    out_dir: &Path,
) -> Vec<BatchItem> {
    let seq_order = crate::sampling::shuffle_permutation(sequences.len(), seed);
    let host_order =
        crate::sampling::shuffle_permutation(hosts.len(), seed ^ 0xD1B5_4A32_D192_ED03);
    let name = |p: &Path| {
        p.file_stem()
            .or(p.file_name())
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    (0..count)
        .map(|j| {
            let sequence = sequences[seq_order[j % sequences.len()]].clone();
            let host = hosts[host_order[j % hosts.len()]].clone();
            let item_seed = SplitMix64::new(seed.wrapping_add(j as u64)).next_u64();
            let output = out_dir.join(format!("{j:05}_{}_in_{}.mp4", name(&sequence), name(&host)));
            BatchItem {
                index: j,
                host,
                sequence,
                seed: item_seed,
                output,
            }
        })
        .collect()
}

/// What became of one batch item (a line of `index.jsonl`).
#[derive(Clone, Debug, Serialize)]
pub struct BatchOutcome {
    #[serde(flatten)]
    pub item: BatchItem,
    pub ok: bool,
    pub sidecar: Option<PathBuf>,
    pub annotations: Option<PathBuf>,
    pub insert_frame: Option<usize>,
    pub insert_time_s: Option<f64>,
    pub needle_frames: Option<[usize; 2]>,
    pub error: Option<String>,
    pub seconds: f64,
}

/// Runs a batch of insertions, `jobs` at a time, writing `out_dir/index.jsonl`. A bad host or
/// sequence fails its items only.
pub fn run_batch(
    items: &[BatchItem],
    fit: Fit,
    overlay: Option<Style>,
    encode: &EncodeSettings,
    jobs: usize,
    out_dir: &Path,
    on_done: &(dyn Fn(&BatchOutcome) + Sync),
) -> Result<Vec<BatchOutcome>> {
    use rayon::prelude::*;
    std::fs::create_dir_all(out_dir).map_err(|e| Error::io(out_dir, e))?;
    let jobs = jobs.max(1);
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let mut encode = encode.clone();
    encode.threads = (cores / jobs).max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(|e| Error::Usage(format!("cannot start {jobs} workers: {e}")))?;
    let outcomes: Vec<BatchOutcome> = pool.install(|| {
        items
            .par_iter()
            .map(|item| {
                let started = std::time::Instant::now();
                let request = InsertRequest {
                    host: item.host.clone(),
                    sequence: item.sequence.clone(),
                    position: Position::Seed(item.seed),
                    fit,
                    output: item.output.clone(),
                    annotations: None,
                    overlay: overlay.clone(),
                    encode: encode.clone(),
                };
                let result = insert(&request, &mut pipeline::NoProgress);
                let outcome = match result {
                    Ok(out) => BatchOutcome {
                        item: item.clone(),
                        ok: true,
                        sidecar: Some(out.sidecar),
                        annotations: Some(out.annotations),
                        insert_frame: Some(out.insertion.insert_frame),
                        insert_time_s: Some(out.insertion.insert_time.seconds),
                        needle_frames: Some([out.insertion.needle_start, out.insertion.needle_end]),
                        error: None,
                        seconds: started.elapsed().as_secs_f64(),
                    },
                    Err(e) => BatchOutcome {
                        item: item.clone(),
                        ok: false,
                        sidecar: None,
                        annotations: None,
                        insert_frame: None,
                        insert_time_s: None,
                        needle_frames: None,
                        error: Some(e.to_string()),
                        seconds: started.elapsed().as_secs_f64(),
                    },
                };
                on_done(&outcome);
                outcome
            })
            .collect()
    });
    let mut index = String::new();
    for o in &outcomes {
        index.push_str(&serde_json::to_string(o).expect("outcome serializes"));
        index.push('\n');
    }
    PendingFile::write_all(&out_dir.join("index.jsonl"), index.as_bytes())?;
    Ok(outcomes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_time_base_represents_both_grids() {
        // 1/12800 and 25 fps: 1/25 = 512/12800 already fits.
        assert_eq!(
            common_time_base(Ratio::new(1, 12800), Time::from_secs(25)),
            Ratio::new(1, 12800)
        );
        // 1/1000 (mkv) and 30000/1001 fps: step 1001/30000 needs 1/30000.
        assert_eq!(
            common_time_base(Ratio::new(1, 1000), Time::new(30000, 1001)),
            Ratio::new(1, 30000)
        );
        // 1/10 (AVI) and 10 fps.
        assert_eq!(
            common_time_base(Ratio::new(1, 10), Time::from_secs(10)),
            Ratio::new(1, 10)
        );
    }

    #[test]
    fn batch_plans_are_reproducible_and_cover_everything() {
        let hosts: Vec<PathBuf> = (0..3).map(|i| PathBuf::from(format!("h{i}.mp4"))).collect();
        let seqs: Vec<PathBuf> = (0..4).map(|i| PathBuf::from(format!("s{i}"))).collect();
        let a = plan_batch(&hosts, &seqs, 12, 7, Path::new("out"));
        let b = plan_batch(&hosts, &seqs, 12, 7, Path::new("out"));
        assert_eq!(a, b);
        let c = plan_batch(&hosts, &seqs, 12, 8, Path::new("out"));
        assert_ne!(a, c);
        // Every sequence is used 3 times, every host 4 times.
        for s in &seqs {
            assert_eq!(a.iter().filter(|i| &i.sequence == s).count(), 3);
        }
        for h in &hosts {
            assert_eq!(a.iter().filter(|i| &i.host == h).count(), 4);
        }
        let names: std::collections::HashSet<_> = a.iter().map(|i| i.output.clone()).collect();
        assert_eq!(names.len(), 12);
    }
}
