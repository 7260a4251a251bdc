//! The insert stage: a GOT-10k tracking sequence (JPEG frames + boxes) inserted into the clip
//! at a chosen or seeded-random frame boundary, conformed to it (retimed from the sequence's
//! `anno_fps` to the clip's frame rate, fitted to its frame), with the clip's later content
//! delayed by the needle's duration (nothing is lost), the clip's audio around it and silence
//! under it. Its boxes are recorded in output frames and pixels (V-STaR's schema beside the
//! output) and drawn when asked.
//!
//! Timing: the needle lasts `D = K / fps` with `K = round(n * fps / anno_fps)` output frames
//! for `n` sequence frames; output needle frame `k` shows sequence frame
//! `floor(k * anno_fps / fps)` (each sequence frame is shown for `1 / anno_fps` seconds).

use std::path::{Path, PathBuf};

use crate::annotations::{self, Fill, FrameClock};
use crate::call::context::CallContext;
use crate::error::{Error, Result};
use crate::frames::fit::Placer;
use crate::frames::overlay::Style;
use crate::frames::pipeline::{FrameOrigin, FrameSource, Geometry, PipelineFrame};
use crate::frames::stages::builder::{NeedleSegment, Stage, StreamBuilder};
use crate::frames::stages::needle::PreparedNeedle;
use crate::media::audio::{AudioPlan, AudioSegment};
use crate::media::still::decode_still;
use crate::media::table::FrameTable;
use crate::media::Picture;
use crate::plan::{InsertSpec, Plan, Position};
use crate::profiles::sampling::SplitMix64;
use crate::vocab::time::{Time, TimeSpec};
use crate::vocab::Fit;
use crate::vocab::Ratio;

/// The pipeline source id of the needle's frames (the host is 0).
pub(crate) const NEEDLE_SOURCE: usize = 1;

/// The insert stage of a plan.
pub(crate) struct InsertStage {
    pub spec: InsertSpec,
}

impl Stage for InsertStage {
    fn shape(&self, stream: &mut StreamBuilder) -> Result<()> {
        let fps = host_frame_rate(&stream.info, &stream.table);
        let prepared = PreparedNeedle::new(
            &self.spec.sequence,
            stream.size,
            shown_pixel_aspect(&stream.info),
            fps,
            self.spec.fit,
        )?;
        let resolved = &stream.resolved;
        let n = resolved.kept.len();
        let clip_duration = resolved.duration();
        let table = &stream.table;
        let first_at_or_after = |t: Time| -> usize {
            table
                .first_at_or_after(resolved.start_time() + t)
                .clamp(resolved.kept.start, resolved.kept.end)
                - resolved.kept.start
        };
        let source = &stream.source;
        let at = match self.spec.position() {
            Position::Seed(seed) => SplitMix64::new(seed).below(n as u64 + 1) as usize,
            Position::At(TimeSpec::Frame(f)) => {
                if f as usize > n {
                    return Err(Error::request(
                        source,
                        format!("insertion frame {f} is past the end of the clip ({n} frames)"),
                    ));
                }
                f as usize
            }
            Position::At(TimeSpec::Seconds(t)) => {
                if t > clip_duration {
                    return Err(Error::request(
                        source,
                        format!(
                            "insertion time {}s is past the end of the clip ({}s)",
                            crate::vocab::time::human_secs(t),
                            crate::vocab::time::human_secs(clip_duration)
                        ),
                    ));
                }
                first_at_or_after(t)
            }
            Position::At(TimeSpec::Percent(p)) => {
                first_at_or_after((clip_duration * p).scale(1, 100))
            }
        };
        let time = if at < n {
            table.time(resolved.kept.start + at) - resolved.start_time()
        } else {
            clip_duration
        };
        stream.add_box_source(
            NEEDLE_SOURCE,
            prepared.boxes.clone(),
            self.spec.overlay.then(Style::default),
        );
        stream.needle = Some(NeedleSegment {
            prepared,
            at,
            time,
            seed: self.spec.seed,
            fit: self.spec.fit,
        });
        Ok(())
    }
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

/// The host's frames before the insertion point, the needle (pipeline source id 1), then the
/// rest of the host delayed by the needle's duration. `S` yields the host frames (a whole
/// video or a clip of it), timed from 0.
pub struct SpliceSource<S: FrameSource> {
    host: S,
    /// Output index of the host frame the needle goes before.
    insert_at: usize,
    needle: NeedleRenderer,
    shift: Time,
    phase: Phase,
    pending: Option<PipelineFrame>,
    host_frames: usize,
}

/// How many times as wide as tall a pixel of the host's upright frames is shown (its sample
/// aspect ratio, inverted where the rotation swaps the axes; 1 when the file does not say): a
/// needle's square pixels are fitted to the picture a player shows, the clip keeping the
/// host's pixel shape.
fn shown_pixel_aspect(info: &crate::media::input::VideoStreamInfo) -> f64 {
    let sar = info.sample_aspect_ratio;
    if !sar.is_valid() || sar.num <= 0 || sar.den <= 0 {
        return 1.0;
    }
    let aspect = sar.num as f64 / sar.den as f64;
    if info.rotation.swaps_axes() {
        1.0 / aspect
    } else {
        aspect
    }
}

/// Renders needle frames: sequence images decoded, fitted to the host frame, timed.
pub(crate) struct NeedleRenderer {
    insert_at: usize,
    insert_time: Time,
    images: Vec<PathBuf>,
    map: Vec<usize>,
    placer: Placer,
    geometry: Geometry,
    step: Time,
    cached: Option<(usize, Picture)>,
    /// The call it renders for (its images' opens count on the call's tally).
    call: CallContext,
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
        call: &CallContext,
    ) -> SpliceSource<S> {
        SpliceSource {
            host,
            insert_at,
            needle: NeedleRenderer::new(needle, insert_at, insert_time, call),
            shift: needle.duration,
            phase: Phase::Before,
            pending: None,
            host_frames,
        }
    }
}

impl NeedleRenderer {
    /// Needle frame `k` is output frame `insert_at + k`, shown at `insert_time + k * step`;
    /// its images are read for the call `call`.
    pub fn new(
        needle: &PreparedNeedle,
        insert_at: usize,
        insert_time: Time,
        call: &CallContext,
    ) -> NeedleRenderer {
        NeedleRenderer {
            insert_at,
            insert_time,
            images: needle.images.clone(),
            map: needle.map.clone(),
            placer: Placer::new(needle.placement),
            geometry: needle.placement.geometry(),
            step: needle.step,
            cached: None,
            call: call.clone(),
        }
    }

    /// How many frames the needle has.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Needle frame `k` (0-based within the needle).
    pub fn frame(&mut self, k: usize) -> Result<PipelineFrame> {
        let s = self.map[k];
        let image = match &self.cached {
            Some((cached, image)) if *cached == s => image.share(),
            _ => {
                let path = &self.images[s];
                let raw = decode_still(path, &self.call)?;
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
                self.cached = Some((s, placed.share()));
                placed
            }
        };
        Ok(PipelineFrame {
            image,
            index: self.insert_at + k,
            time: self.insert_time + self.step * k as i64,
            duration: self.step,
            origin: FrameOrigin {
                source: NEEDLE_SOURCE,
                index: s,
                pts: s as i64,
            },
            geometry: self.geometry,
            damaged: false,
            rgb: None,
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
                    if k >= self.needle.len() {
                        self.phase = Phase::After;
                        continue;
                    }
                    self.phase = Phase::Needle(k + 1);
                    return self.needle.frame(k).map(Some);
                }
                Phase::After => {
                    let next = match self.pending.take() {
                        Some(f) => Some(f),
                        None => self.host.next_frame()?,
                    };
                    return Ok(next.map(|mut f| {
                        f.time = f.time + self.shift;
                        f.index += self.needle.len();
                        f
                    }));
                }
            }
        }
    }

    fn len_hint(&self) -> Option<usize> {
        Some(self.host_frames + self.needle.len())
    }
}

/// The host's audio around the needle and silence under it, for a host clip that starts at
/// `clip_start` and ends at `clip_end` (source times) with the needle at `insert_time` (clip
/// time). `origin_abs` is the host's frame-0 time on its own timeline.
pub fn splice_audio(
    host: &crate::media::Source,
    inputs: &std::sync::Arc<crate::media::pool::InputPool>,
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
            source: host.clone(),
            start: origin_abs + clip_start,
            end: origin_abs + at,
            inputs: inputs.clone(),
        });
    }
    segments.push(AudioSegment::Silence { duration: needle });
    if at < clip_end {
        segments.push(AudioSegment::Source {
            source: host.clone(),
            start: origin_abs + at,
            end: origin_abs + clip_end,
            inputs: inputs.clone(),
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

/// The needle's V-STaR item as JSON text: its boxes in output frames and pixels (`boxes`,
/// recorded from the frames really written; the first track that came from the needle),
/// `timestamps` = the needle's span in output seconds, `fps` the output's frame rate, and
/// `provenance`.
pub(crate) fn needle_vstar_text(
    boxes: &annotations::Annotations,
    clock: &annotations::TimestampClock,
    needle: &NeedleSegment,
    vid: &str,
    provenance: serde_json::Value,
) -> Result<String> {
    let track = boxes
        .meta
        .fields
        .get("track_sources")
        .and_then(|v| v.as_array())
        .and_then(|sources| {
            sources
                .iter()
                .position(|s| s.as_u64() == Some(NEEDLE_SOURCE as u64))
        });
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
    let prepared = &needle.prepared;
    item.object = prepared.object.clone().unwrap_or(item.object);
    // The needle's span in V-STaR's own terms, `frame_index / fps` at the output's rate (as
    // its boxes' times are), where the output has a rate; else its own times.
    item.timestamps = match clock.nominal_fps() {
        Some(fps) => {
            let at = |frame: usize| {
                Time::from_secs(frame as i64)
                    .scale(fps.denom(), fps.numer())
                    .as_secs_f64()
            };
            item.fps = fps.as_secs_f64();
            [at(needle.at), at(needle.at + prepared.frames)]
        }
        None => {
            item.fps = (Time::from_secs(1) / prepared.step).as_secs_f64();
            [
                needle.time.as_secs_f64(),
                (needle.time + prepared.duration).as_secs_f64(),
            ]
        }
    };
    item.extra.insert("provenance".into(), provenance);
    Ok(serde_json::to_string_pretty(&item).expect("V-STaR item serializes") + "\n")
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
        .map(|e| e.into_path())
        // `is_file` follows symbolic links: a folder of links to videos is a folder of videos.
        .filter(|p| p.is_file())
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
        let text = std::fs::read_to_string(&list).map_err(|e| Error::read(&list, e))?;
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

/// The plans of a batch of insertions: sequences paired with hosts for `count` items,
/// reproducibly from `seed` alone. Sequences and hosts are each shuffled once (Fisher-Yates,
/// SplitMix64) and item `j` takes sequence `j mod S` and host `j mod H` of the shuffled lists;
/// its position seed is the first SplitMix64 output seeded with `seed + j`. Nothing depends
/// on threads or timing. Each plan makes one clip (with the needle's V-STaR annotations).
pub fn plan_batch(
    hosts: &[PathBuf],
    sequences: &[PathBuf],
    count: usize,
    seed: u64,
    fit: Fit,
    overlay: bool,
    exports: &[crate::plan::ExportSpec],
) -> Vec<Plan> {
    let seq_order = crate::profiles::sampling::shuffle_permutation(sequences.len(), seed);
    let host_order =
        crate::profiles::sampling::shuffle_permutation(hosts.len(), seed ^ 0xD1B5_4A32_D192_ED03);
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
            let host_name = if crate::media::source::is_url(&host) {
                crate::media::source::display_name(&host)
            } else {
                name(&host)
            };
            let id = format!("{j:05}_{}_in_{host_name}", name(&sequence));
            let mut plan = Plan::new(id, host, exports.to_vec());
            plan.insert = Some(InsertSpec {
                sequence,
                at: None,
                seed: Some(item_seed),
                fit,
                overlay,
            });
            plan
        })
        .collect()
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
        let exports = [crate::plan::ExportSpec::Clip(Default::default())];
        let plan = |seed| plan_batch(&hosts, &seqs, 12, seed, Fit::Letterbox, false, &exports);
        let a = plan(7);
        assert_eq!(a, plan(7));
        assert_ne!(a, plan(8));
        let seq = |p: &Plan| p.insert.as_ref().unwrap().sequence.clone();
        // Every sequence is used 3 times, every host 4 times.
        for s in &seqs {
            assert_eq!(a.iter().filter(|p| &seq(p) == s).count(), 3);
        }
        for h in &hosts {
            assert_eq!(a.iter().filter(|p| &p.source == h).count(), 4);
        }
        let ids: std::collections::HashSet<_> = a.iter().map(|p| p.id.clone()).collect();
        assert_eq!(ids.len(), 12);
        assert!(a.iter().all(|p| p.check().is_ok()));
    }
}
