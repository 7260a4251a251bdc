//! Keyframe propagation with a single-object tracker (`--fill track`): the gaps that
//! [`Fill::Track`](crate::annotations::Fill) resolution lists ([`Gap`](crate::annotations::resolve::Gap)) are filled by running
//! a tracker over the exact frames vidprep's own decoder gives (the frames a cut uses), not
//! by interpolating.
//!
//! - Between two keyed frames `a < b` of a track: one tracker runs forward from `a`'s box over
//!   `a+1..=b`, another backward from `b`'s box over `b-1..=a`; each is snapped to the key it
//!   runs toward (its miss there spread linearly over the gap), then frame `f` gets the blend
//!   of the two, weighted by distance (`u = (f-a)/(b-a)`: the forward box near `a`, the
//!   backward one near `b`), so the track meets both keys exactly ([`blend`]). Where one
//!   tracker lost the object, the other's box is used; where both did, the linear box.
//! - After a track's last key (or up to an absent key), forward only, for at most
//!   [`TrackOptions::forward_limit`] frames, and only while the tracker holds the object.
//! - Drift: the IoU of the forward track against the next keyframe's box, recorded per gap
//!   ([`GapRecord`]); a gap whose drift IoU is below [`TrackOptions::min_drift_iou`] (or
//!   whose forward track was lost before the key) is flagged, and the boxes stage warns.
//!   A forward-only gap has no key to meet: a fresh tracker runs back from its last tracked
//!   box to the key, and the IoU it ends with against the key's box (`consistency_iou`, the
//!   forward-backward check) is flagged below the same threshold.
//!
//! The tracker itself is [`BoxTracker`]: OpenCV's CSRT or KCF through `tracking::opencv` (the
//! `tracking` feature, the only code that calls OpenCV), or any other implementation (the unit
//! tests use one that reads a synthetic target's position). Without the feature,
//! [`open_tracker`] is a usage error saying how to build with it.

#[cfg(feature = "tracking")]
pub(crate) mod opencv;

use std::sync::Arc;

use serde::Serialize;

use crate::annotations::{BBox, BoxSource, DrawBox, ResolvedBoxes, TrackerKind};
use crate::call::context::CallContext;
use crate::error::{Error, Result};
use crate::media::decode::{DecodeOptions, FrameReader};
use crate::media::source::Source;
use crate::media::table::FrameTable;
use crate::media::{Converter, PixelFormat};

/// A picture as trackers take it: packed 8-bit BGR, rows without padding.
#[derive(Clone, Debug, PartialEq)]
pub struct BgrImage {
    pub width: u32,
    pub height: u32,
    /// `width * height * 3` bytes, row by row, B, G, R.
    pub data: Vec<u8>,
}

/// A single-object tracker: started on a box in one picture, then asked where the object is
/// in each following picture (`None`: lost).
pub trait BoxTracker {
    /// Starts tracking `bbox` (pixels, inside the picture) in `image`.
    fn init(&mut self, image: &BgrImage, bbox: BBox) -> Result<()>;
    /// The object's box in the next picture, or `None` when the tracker lost it.
    fn update(&mut self, image: &BgrImage) -> Result<Option<BBox>>;
}

/// Makes a fresh tracker of one kind.
pub type TrackerFactory<'a> = dyn Fn() -> Result<Box<dyn BoxTracker>> + 'a;

/// An OpenCV tracker of `kind` (needs the `tracking` feature).
pub fn open_tracker(kind: TrackerKind) -> Result<Box<dyn BoxTracker>> {
    #[cfg(feature = "tracking")]
    {
        Ok(Box::new(
            crate::frames::tracking::opencv::OpenCvTracker::new(kind)?,
        ))
    }
    #[cfg(not(feature = "tracking"))]
    {
        Err(Error::Usage(format!(
            "the {} tracker needs vidprep built with the tracking feature (OpenCV: \
             apt-get install libopencv-dev libopencv-contrib-dev clang libclang-dev, then \
             cargo build --features tracking); or fill with `cubic` or `linear` instead",
            kind.name()
        )))
    }
}

/// The IoU below which a tracked gap's drift is flagged (`TrackOptions::min_drift_iou`'s
/// default; [`GapRecord::warning`]'s threshold for `vidprep track`).
pub const DEFAULT_MIN_DRIFT_IOU: f64 = 0.5;

/// How gaps are tracked.
#[derive(Clone, Debug, PartialEq)]
pub struct TrackOptions {
    pub kind: TrackerKind,
    /// Frames tracked forward after a track's last key (or toward an absent key).
    pub forward_limit: usize,
    /// A gap whose forward track meets the next key with an IoU below this is flagged.
    pub min_drift_iou: f64,
    /// A gap whose frames (BGR) would take more than this many bytes is filled linearly.
    pub max_gap_bytes: usize,
}

impl TrackOptions {
    /// Defaults: 50 frames forward after the last key, drift flagged below IoU 0.5, gaps of up
    /// to 1 GiB of BGR frames (about 170 frames of 1080p).
    pub fn new(kind: TrackerKind) -> TrackOptions {
        TrackOptions {
            kind,
            forward_limit: 50,
            min_drift_iou: DEFAULT_MIN_DRIFT_IOU,
            max_gap_bytes: 1 << 30,
        }
    }
}

impl GapRecord {
    /// The warning a flagged gap gets (`None`: not flagged); `threshold` is the options'
    /// `min_drift_iou`.
    pub fn warning(&self, threshold: f64) -> Option<String> {
        if !self.flagged {
            return None;
        }
        let tracker = self.method.trim_start_matches("track-");
        let tracker = tracker.trim_end_matches("-forward").to_uppercase();
        Some(match self.to {
            Some(to) => format!(
                "track {}: the {tracker} track from frame {} drifted before the key on frame \
                 {to} (IoU {:.2} with its box, below {threshold}): check or add a key between \
                 them",
                self.track,
                self.from,
                self.drift_iou.unwrap_or(0.0)
            ),
            None => format!(
                "track {}: the {tracker} track after the key on frame {} is not consistent: \
                 tracked back from frame {} it ends with IoU {:.2} against the key's box \
                 (below {threshold}), so it drifted or changed size; check its boxes or add a \
                 key",
                self.track,
                self.from,
                self.from + self.frames,
                self.consistency_iou.unwrap_or(0.0)
            ),
        })
    }
}

/// What was done to one gap of one track, for the sidecar (frames of the source).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GapRecord {
    /// The track's id.
    pub track: String,
    /// The keyed frame the gap follows.
    pub from: usize,
    /// The keyed frame that ends it (`None`: forward only, after the last key or toward an
    /// absent key).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<usize>,
    /// Frames that got a tracked (or fallback) box.
    pub frames: usize,
    /// `track-csrt`, `track-kcf` (both ways, blended), `track-csrt-forward`, or `linear`
    /// with the reason in `note`.
    pub method: String,
    /// IoU of the forward track against the `to` key's box (1: no drift).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drift_iou: Option<f64>,
    /// Forward only: the IoU of the key's box with the box a fresh tracker finds on the key's
    /// frame when it runs back from the last tracked frame (1: the track came back to the key;
    /// low: it drifted, shrank or jumped to something else).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consistency_iou: Option<f64>,
    /// The first frame the forward tracker lost the object on, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_at: Option<usize>,
    /// True when the drift (or, forward only, the forward-backward inconsistency) is too large
    /// to trust the gap's boxes.
    pub flagged: bool,
    /// Why the gap was not tracked (too many frames to hold, a key's box outside the frame,
    /// ...), when it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Where the time of `fill_gaps_with` went (printed by `vidprep track`, never recorded in an
/// output: it differs from run to run).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TrackTiming {
    /// Tracker updates (frames tracked, forward and backward counted apart).
    pub updates: usize,
    /// Seconds spent in the trackers (starting them and their updates).
    pub tracker_seconds: f64,
    /// Seconds spent decoding and converting frames.
    pub decode_seconds: f64,
}

impl TrackTiming {
    /// Tracker updates per second.
    pub fn fps(&self) -> f64 {
        if self.tracker_seconds > 0.0 {
            self.updates as f64 / self.tracker_seconds
        } else {
            0.0
        }
    }
}

/// Fills every gap of `resolved` (listed by `Fill::Track` resolution) with OpenCV trackers
/// over the frames of `source` (whose frame table is `table`); `track_ids` names the tracks.
pub fn fill_gaps(
    source: &Source,
    table: Arc<FrameTable>,
    resolved: &mut ResolvedBoxes,
    track_ids: &[String],
    options: &TrackOptions,
    ctx: &CallContext,
) -> Result<Vec<GapRecord>> {
    let kind = options.kind;
    let factory = move || open_tracker(kind);
    let mut frames = DecodedFrames::open(source, table, ctx)?;
    Ok(fill_gaps_with(&mut frames, resolved, track_ids, options, &factory)?.0)
}

/// `vidprep track` (its entry, which reads the source through the executor's stream, is
/// `crate::exec::track::track_source`): the tracks of `annotations` (hand-drawn keys, often
/// one box) filled over `frames`, the frames of `source` (whose frame table is `table`),
/// before `end` (exclusive; `None`: to the end) as `fill` says. With `Fill::Track`: between
/// keys both ways, after each track's last key forward to `end` (while the tracker holds the
/// object). The result has a frame key for every frame with a box (pixels of the upright
/// frame), what was done to each gap, and the time it took.
pub(crate) fn track_frames(
    source: &Source,
    table: &FrameTable,
    frames: &mut DecodedFrames,
    annotations: &crate::annotations::Annotations,
    end: Option<usize>,
    fill: crate::annotations::Fill,
) -> Result<(crate::annotations::Annotations, Vec<GapRecord>, TrackTiming)> {
    use crate::annotations::{
        Annotations, Coords, Entry, Fill, Format, Key, TimestampClock, Track,
    };
    let (w, h) = frames.size();
    let n = table.len();
    let end = end.unwrap_or(n).min(n);
    let times: Vec<crate::vocab::time::Time> = (0..end).map(|i| table.time(i)).collect();
    let clock_end = if end == n {
        table.end_time()
    } else {
        table.time(end)
    };
    let clock = TimestampClock::new(times, clock_end, w, h)?;
    let mut resolved = annotations.resolve(&clock, fill)?;
    if resolved.is_empty() {
        return Err(Error::request(
            source.path(),
            format!(
                "no box of the annotations lands on one of the {end} frames tracked; give a \
                 key on a frame before {end}"
            ),
        ));
    }
    let ids: Vec<String> = annotations.tracks.iter().map(|t| t.id.clone()).collect();
    let (records, timing) = match fill {
        Fill::Track(kind) => {
            let mut options = TrackOptions::new(kind);
            options.forward_limit = end;
            let factory = move || open_tracker(kind);
            fill_gaps_with(frames, &mut resolved, &ids, &options, &factory)?
        }
        _ => (Vec::new(), TrackTiming::default()),
    };
    let mut out = Annotations::new(Coords::Pixels);
    out.tracks = annotations
        .tracks
        .iter()
        .map(|t| Track {
            label: t.label.clone(),
            ..Track::new(t.id.clone())
        })
        .collect();
    for (f, list) in resolved.frames_with_boxes() {
        for d in list {
            if let BoxSource::Track(i) = d.source {
                out.tracks[i].insert(Key::Frame(f), Entry::Present(d.bbox))?;
            }
        }
    }
    out.meta.source_format = Some(Format::Vidprep);
    out.meta.source_path = Some(source.path().to_path_buf());
    out.meta.frame_size = Some((w, h));
    out.meta.frame_count = Some(n);
    out.meta.fps = crate::annotations::FrameClock::nominal_fps(&clock);
    out.meta
        .fields
        .insert("fill".into(), serde_json::Value::String(fill.to_string()));
    out.meta.fields.insert(
        "tracked_gaps".into(),
        serde_json::to_value(&records).unwrap_or_default(),
    );
    Ok((out, records, timing))
}

/// Where a gap's pictures come from.
pub trait FrameSource {
    /// Pictures `start..end` (half-open), in order.
    fn frames(&mut self, start: usize, end: usize) -> Result<Vec<BgrImage>>;
    /// The size of every picture.
    fn size(&self) -> (u32, u32);
    /// The video they come from, for messages.
    fn path(&self) -> Option<&std::path::Path> {
        None
    }
}

/// The exact frames of a source, decoded and converted to BGR.
pub struct DecodedFrames {
    reader: FrameReader,
    converter: Converter,
}

impl DecodedFrames {
    /// The frames of `source`, read for the call `ctx`.
    pub fn open(
        source: &Source,
        table: Arc<FrameTable>,
        ctx: &CallContext,
    ) -> Result<DecodedFrames> {
        let reader =
            FrameReader::open_with_table_in(source.clone(), DecodeOptions::default(), table, ctx)?;
        Ok(DecodedFrames::of(reader))
    }

    /// The frames `reader` reads (a reader of the executor's stream: see
    /// `crate::exec::track`).
    pub(crate) fn of(reader: FrameReader) -> DecodedFrames {
        DecodedFrames {
            reader,
            converter: Converter::to_format(PixelFormat::BGR24),
        }
    }
}

impl FrameSource for DecodedFrames {
    fn frames(&mut self, start: usize, end: usize) -> Result<Vec<BgrImage>> {
        let mut out = Vec::with_capacity(end.saturating_sub(start));
        if start >= end {
            return Ok(out);
        }
        self.reader.seek_to_index(start)?;
        while out.len() < end - start {
            let Some(frame) = self.reader.next_frame()? else {
                break;
            };
            let bgr = self.converter.convert(&frame.image).map_err(|e| {
                Error::ffmpeg(
                    self.reader.path(),
                    "converting a frame to BGR for tracking",
                    e,
                )
            })?;
            let (w, h) = (bgr.width() as usize, bgr.height() as usize);
            let stride = bgr.stride(0);
            let mut data = Vec::with_capacity(w * h * 3);
            for row in bgr.data(0).chunks(stride).take(h) {
                data.extend_from_slice(&row[..w * 3]);
            }
            out.push(BgrImage {
                width: w as u32,
                height: h as u32,
                data,
            });
        }
        if out.len() < end - start {
            return Err(Error::internal(format!(
                "{}: the decoder ended at frame {} while tracking frames {start}..{end}",
                self.reader.path().display(),
                start + out.len()
            )));
        }
        Ok(out)
    }

    fn size(&self) -> (u32, u32) {
        self.reader.output_size()
    }

    fn path(&self) -> Option<&std::path::Path> {
        Some(self.reader.path())
    }
}

/// [`fill_gaps`] over any frames and trackers.
pub fn fill_gaps_with(
    frames: &mut dyn FrameSource,
    resolved: &mut ResolvedBoxes,
    track_ids: &[String],
    options: &TrackOptions,
    factory: &TrackerFactory,
) -> Result<(Vec<GapRecord>, TrackTiming)> {
    let gaps = resolved.gaps.clone();
    let mut timing = TrackTiming::default();
    if gaps.is_empty() {
        return Ok((Vec::new(), timing));
    }
    // A build without trackers says so before decoding anything.
    factory()?;
    let (w, h) = frames.size();
    let frame_bytes = (w as usize * h as usize * 3).max(1);
    let mut list = resolved.to_list();
    let mut records = Vec::with_capacity(gaps.len());
    let name = options.kind.name();
    for gap in &gaps {
        let id = track_ids
            .get(gap.track)
            .cloned()
            .unwrap_or_else(|| gap.track.to_string());
        let (a, box_a) = gap.from;
        let end = match gap.to {
            Some((b, _)) => b,
            None => gap.end.min(a + 1 + options.forward_limit),
        };
        let mut record = GapRecord {
            track: id,
            from: a,
            to: gap.to.map(|t| t.0),
            frames: 0,
            method: "linear".into(),
            drift_iou: None,
            consistency_iou: None,
            lost_at: None,
            flagged: false,
            note: None,
        };
        let span = end + usize::from(gap.to.is_some()) - a;
        let inside = |b: &BBox| b.clamped(w as f64, h as f64).filter(|c| c.has_area());
        if span.saturating_mul(frame_bytes) > options.max_gap_bytes {
            record.note = Some(format!(
                "{span} frames of {w}x{h} are more than {} MiB to hold for tracking",
                options.max_gap_bytes >> 20
            ));
        } else if inside(&box_a).is_none() || gap.to.is_some_and(|(_, b)| inside(&b).is_none()) {
            record.note = Some("a key's box is outside the frame".into());
        } else {
            let clock = std::time::Instant::now();
            let pictures = frames.frames(a, a + span)?;
            timing.decode_seconds += clock.elapsed().as_secs_f64();
            let clock = std::time::Instant::now();
            let video = frames.path().map(std::path::Path::to_path_buf);
            let context = |e: Error| e.on_frame(video.as_deref(), a);
            let tracked = match gap.to {
                Some((b, box_b)) => {
                    let mut forward = factory().map_err(context)?;
                    let fwd = run(forward.as_mut(), &pictures, box_a, a).map_err(context)?;
                    let mut backward = factory().map_err(context)?;
                    let bwd_rev =
                        run_rev(backward.as_mut(), &pictures, box_b, a).map_err(context)?;
                    record.lost_at = fwd.iter().position(Option::is_none).map(|i| a + i);
                    let drift = fwd.last().copied().flatten().map_or(0.0, |f| f.iou(&box_b));
                    record.drift_iou = Some((drift * 1000.0).round() / 1000.0);
                    record.flagged = drift < options.min_drift_iou;
                    record.method = format!("track-{name}");
                    blend(a, b, box_a, box_b, &fwd, &bwd_rev, options.min_drift_iou)
                }
                None => {
                    let mut forward = factory().map_err(context)?;
                    let fwd = run(forward.as_mut(), &pictures, box_a, a).map_err(context)?;
                    record.lost_at = fwd.iter().position(Option::is_none).map(|i| a + i);
                    record.method = format!("track-{name}-forward");
                    let held: Vec<(usize, BBox)> = fwd
                        .into_iter()
                        .enumerate()
                        .skip(1)
                        .map_while(|(i, b)| b.map(|b| (a + i, b)))
                        .collect();
                    // No key to meet: the forward-backward check. A fresh tracker runs back
                    // from the last tracked box to the key; a track that held the object
                    // comes back to the key's box.
                    if let Some(&(t, box_t)) = held.last() {
                        let mut back = factory().map_err(context)?;
                        let rev = run_rev(back.as_mut(), &pictures[..=t - a], box_t, a)
                            .map_err(context)?;
                        let fb = rev[0].map_or(0.0, |r| r.iou(&box_a));
                        record.consistency_iou = Some((fb * 1000.0).round() / 1000.0);
                        record.flagged = fb < options.min_drift_iou;
                        timing.updates += t - a;
                    }
                    held
                }
            };
            timing.tracker_seconds += clock.elapsed().as_secs_f64();
            timing.updates += match gap.to {
                Some(_) => 2 * (span - 1),
                None => span - 1,
            };
            record.frames = tracked.len();
            // The gap's boxes of this track (linear, or none) give way to the tracked ones.
            let source = BoxSource::Track(gap.track);
            let (lo, hi) = (a + 1, end);
            list.retain(|(f, d)| !(d.source == source && *f >= lo && *f < hi && d.filled));
            list.extend(tracked.into_iter().map(|(f, bbox)| {
                (
                    f,
                    DrawBox {
                        source,
                        bbox,
                        filled: true,
                    },
                )
            }));
        }
        if gap.to.is_some() && record.method == "linear" {
            record.frames = end - a - 1;
        }
        records.push(record);
    }
    resolved.replace_all(list);
    Ok((records, timing))
}

/// Tracks `start` from `pictures[0]` over the rest: entry `i` is the box in `pictures[i]`
/// (`[0]` is `start`; after a loss, `None` to the end).
/// `first` is the source frame of `pictures[0]` (an OpenCV error names the frame it was on).
fn run(
    tracker: &mut dyn BoxTracker,
    pictures: &[BgrImage],
    start: BBox,
    first: usize,
) -> Result<Vec<Option<BBox>>> {
    let mut out = Vec::with_capacity(pictures.len());
    let Some(picture) = pictures.first() else {
        return Ok(out);
    };
    tracker
        .init(picture, start)
        .map_err(|e| e.on_frame(None, first))?;
    out.push(Some(start));
    let mut lost = false;
    for (i, p) in pictures.iter().enumerate().skip(1) {
        let b = if lost {
            None
        } else {
            tracker.update(p).map_err(|e| e.on_frame(None, first + i))?
        };
        lost = b.is_none();
        out.push(b);
    }
    Ok(out)
}

/// [`run`] backward, from the last picture to the first; entry `i` is still `pictures[i]`'s
/// (`first`: the source frame of `pictures[0]`).
fn run_rev(
    tracker: &mut dyn BoxTracker,
    pictures: &[BgrImage],
    start: BBox,
    first: usize,
) -> Result<Vec<Option<BBox>>> {
    let mut out = vec![None; pictures.len()];
    let Some(last) = pictures.last() else {
        return Ok(out);
    };
    let n = pictures.len();
    tracker
        .init(last, start)
        .map_err(|e| e.on_frame(None, first + n - 1))?;
    out[n - 1] = Some(start);
    for i in (0..n - 1).rev() {
        match tracker
            .update(&pictures[i])
            .map_err(|e| e.on_frame(None, first + i))?
        {
            Some(b) => out[i] = Some(b),
            None => break,
        }
    }
    Ok(out)
}

/// The boxes of frames `a+1..b` from a forward track `fwd` and a backward one `bwd` (both
/// indexed from `a`: entry `i` is frame `a + i`). Each is first snapped to the key it runs
/// toward: the forward track's miss at `b` (`box_b - fwd(b)`) is added in proportion
/// `u = (f-a)/(b-a)`, the backward one's at `a` in proportion `1-u` (so a tracker that keeps
/// its first size while the object grows still ends on the key). Then they are blended by
/// distance, `(1-u)` of the forward box and `u` of the backward one; one side alone where the
/// other lost the object (unsnapped when it lost it before its key); linear between the keys
/// where both did. Where both tracks held the object to the other key (IoU at least `trust`
/// with its box: [`TrackOptions::min_drift_iou`], below which a gap is flagged as drifted),
/// the blend is then drawn toward the linear box by how much of its departure from it is
/// tracker noise ([`shrink_factors`]).
pub fn blend(
    a: usize,
    b: usize,
    box_a: BBox,
    box_b: BBox,
    fwd: &[Option<BBox>],
    bwd: &[Option<BBox>],
    trust: f64,
) -> Vec<(usize, BBox)> {
    let miss = |key: &BBox, at: Option<BBox>| {
        at.map(|t| [key.x1 - t.x1, key.y1 - t.y1, key.x2 - t.x2, key.y2 - t.y2])
    };
    let fwd_miss = miss(&box_b, fwd.get(b - a).copied().flatten());
    let bwd_miss = miss(&box_a, bwd.first().copied().flatten());
    let snap = |x: BBox, m: Option<[f64; 4]>, w: f64| match m {
        Some(m) => BBox::new(
            x.x1 + w * m[0],
            x.y1 + w * m[1],
            x.x2 + w * m[2],
            x.y2 + w * m[3],
        ),
        None => x,
    };
    let frames: Vec<Frame> = (a + 1..b)
        .map(|f| {
            let u = (f - a) as f64 / (b - a) as f64;
            let i = f - a;
            let fw = fwd.get(i).copied().flatten().map(|x| snap(x, fwd_miss, u));
            let bw = bwd
                .get(i)
                .copied()
                .flatten()
                .map(|x| snap(x, bwd_miss, 1.0 - u));
            let linear = BBox::lerp(&box_a, &box_b, u);
            let bbox = match (fw, bw) {
                (Some(x), Some(y)) => BBox::lerp(&x, &y, u),
                (Some(x), None) => x,
                (None, Some(y)) => y,
                (None, None) => linear,
            };
            Frame {
                u,
                fw,
                bw,
                linear,
                bbox,
            }
        })
        .collect();
    // Their disagreement is jitter only where both held the object up to the other key; a
    // track that drifted disagrees by its bias, which the snap already spreads over the gap.
    let held = |end: Option<BBox>, key: &BBox| end.is_some_and(|e| e.iou(key) >= trust);
    let both_held = held(fwd.get(b - a).copied().flatten(), &box_b)
        && held(bwd.first().copied().flatten(), &box_a);
    let keep = match both_held {
        true => shrink_factors(&frames),
        false => None,
    };
    (a + 1..b)
        .zip(frames)
        .map(|(f, x)| {
            let bbox = match keep {
                Some(k) => {
                    let (l, t) = (corners(&x.linear), corners(&x.bbox));
                    let c: Vec<f64> = (0..4).map(|j| l[j] + k[j] * (t[j] - l[j])).collect();
                    BBox::new(c[0], c[1], c[2], c[3])
                }
                None => x.bbox,
            };
            (f, bbox)
        })
        .collect()
}

/// One frame of a gap in [`blend`]: its place `u`, the snapped forward and backward boxes,
/// the linear box and their distance blend.
struct Frame {
    u: f64,
    fw: Option<BBox>,
    bw: Option<BBox>,
    linear: BBox,
    bbox: BBox,
}

fn corners(b: &BBox) -> [f64; 4] {
    [b.x1, b.y1, b.x2, b.y2]
}

/// How much of the blend's departure from the linear box to keep, per coordinate (x1, y1,
/// x2, y2), over a gap where both snapped tracks span it (`None` otherwise): a shrinkage
/// estimate with nothing to tune. The departure `d = blend - linear` is the object's real
/// departure from uniform motion plus tracker noise. If each snapped track is the truth plus
/// its own noise of variance `s2`, the two differ by `fw - bw` with `E[(fw - bw)^2] = 2 s2`,
/// and their blend `(1-u) fw + u bw` carries noise of variance `((1-u)^2 + u^2) s2`. Over the
/// gap, `S = sum d^2` is the departure's energy and `N = sum ((1-u)^2 + u^2) (fw - bw)^2 / 2`
/// its expected noise part; keeping the fraction `max(0, 1 - N/S)` of `d` is the Wiener
/// (James-Stein) factor: a pedestrian walking at constant speed, where the trackers only add
/// jitter, gets nearly the linear box; a bag swung about, where both trackers agree on a
/// path far from linear, keeps the tracked one.
fn shrink_factors(frames: &[Frame]) -> Option<[f64; 4]> {
    let mut s = [0.0; 4];
    let mut n = [0.0; 4];
    for x in frames {
        let (fw, bw) = (corners(&x.fw?), corners(&x.bw?));
        let (l, t) = (corners(&x.linear), corners(&x.bbox));
        let w = (1.0 - x.u).powi(2) + x.u.powi(2);
        for j in 0..4 {
            s[j] += (t[j] - l[j]).powi(2);
            n[j] += w * (fw[j] - bw[j]).powi(2) / 2.0;
        }
    }
    Some(std::array::from_fn(|j| {
        if s[j] > 0.0 {
            (1.0 - n[j] / s[j]).max(0.0)
        } else {
            0.0
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::annotations::{Annotations, ConstantRateClock, Coords, Entry, Fill, Key, Track};
    use crate::vocab::time::Time;

    /// Frames of a white 10x10 square on black moving 3 px right per frame from x = 5.
    struct Moving {
        count: usize,
    }

    const SIDE: u32 = 10;

    fn square_x(f: usize) -> f64 {
        5.0 + 3.0 * f as f64
    }

    impl FrameSource for Moving {
        fn frames(&mut self, start: usize, end: usize) -> Result<Vec<BgrImage>> {
            assert!(end <= self.count);
            Ok((start..end)
                .map(|f| {
                    let (w, h) = self.size();
                    let mut data = vec![0u8; (w * h * 3) as usize];
                    let x0 = square_x(f) as u32;
                    for y in 20..20 + SIDE {
                        for x in x0..x0 + SIDE {
                            let p = ((y * w + x) * 3) as usize;
                            data[p..p + 3].fill(255);
                        }
                    }
                    BgrImage {
                        width: w,
                        height: h,
                        data,
                    }
                })
                .collect())
        }
        fn size(&self) -> (u32, u32) {
            (400, 60)
        }
    }

    /// Finds the white square (an oracle tracker); loses it past `blind_after` updates.
    struct Finder {
        updates: usize,
        blind_after: usize,
    }

    impl BoxTracker for Finder {
        fn init(&mut self, _: &BgrImage, _: BBox) -> Result<()> {
            self.updates = 0;
            Ok(())
        }
        fn update(&mut self, image: &BgrImage) -> Result<Option<BBox>> {
            self.updates += 1;
            if self.updates > self.blind_after {
                return Ok(None);
            }
            let w = image.width as usize;
            let first = image.data.chunks(3).position(|p| p[0] == 255).unwrap();
            let (x, y) = ((first % w) as f64, (first / w) as f64);
            Ok(Some(BBox::new(x, y, x + SIDE as f64, y + SIDE as f64)))
        }
    }

    fn truth(f: usize) -> BBox {
        BBox::new(square_x(f), 20.0, square_x(f) + SIDE as f64, 30.0)
    }

    fn keyed(frames: &[usize]) -> Annotations {
        let mut a = Annotations::new(Coords::Pixels);
        let mut t = Track::new("sq");
        for &f in frames {
            t.insert(Key::Frame(f), Entry::Present(truth(f))).unwrap();
        }
        a.tracks.push(t);
        a
    }

    fn resolve(a: &Annotations, n: usize) -> ResolvedBoxes {
        let clock = ConstantRateClock::new(n, Time::from_secs(10), 400, 60).unwrap();
        a.resolve(&clock, Fill::Track(TrackerKind::Kcf)).unwrap()
    }

    #[test]
    fn gaps_take_the_tracked_boxes_and_record_no_drift() {
        // Keys at 0 and 10; the truth is linear there, so make the square jump: it moves
        // linearly anyway, but the gap after the last key (forward only) is what linear
        // cannot fill at all.
        let a = keyed(&[0, 10, 20]);
        let mut r = resolve(&a, 100);
        let factory = || {
            Ok(Box::new(Finder {
                updates: 0,
                blind_after: usize::MAX,
            }) as Box<dyn BoxTracker>)
        };
        let mut options = TrackOptions::new(TrackerKind::Kcf);
        options.forward_limit = 30;
        let (records, timing) = fill_gaps_with(
            &mut Moving { count: 100 },
            &mut r,
            &["sq".into()],
            &options,
            &factory,
        )
        .unwrap();
        // Both ways over 0..=10 and 10..=20 (10 updates each way), 30 forward after 20 and
        // 30 back to it (the forward-backward check).
        assert_eq!(timing.updates, 2 * 10 + 2 * 10 + 30 + 30);
        assert_eq!(records.len(), 3);
        assert_eq!(records[0].method, "track-kcf");
        assert_eq!(
            (records[0].from, records[0].to, records[0].frames),
            (0, Some(10), 9)
        );
        assert_eq!(records[0].drift_iou, Some(1.0));
        assert!(!records[0].flagged);
        assert_eq!(records[2].method, "track-kcf-forward");
        assert_eq!(
            (records[2].from, records[2].to, records[2].frames),
            (20, None, 30)
        );
        for f in 0..=50 {
            let b = r.boxes_at(f);
            assert_eq!(b.len(), 1, "frame {f}");
            assert!(
                b[0].bbox.iou(&truth(f)) > 1.0 - 1e-9,
                "frame {f}: {:?}",
                b[0].bbox
            );
            assert_eq!(b[0].filled, f % 10 != 0 || f > 20);
        }
        assert!(r.boxes_at(51).is_empty(), "forward only up to the limit");
    }

    #[test]
    fn a_lost_forward_track_is_flagged_and_the_backward_one_used() {
        let a = keyed(&[0, 20]);
        let mut r = resolve(&a, 21);
        let factory = || {
            Ok(Box::new(Finder {
                updates: 0,
                blind_after: 5,
            }) as Box<dyn BoxTracker>)
        };
        let (records, _) = fill_gaps_with(
            &mut Moving { count: 21 },
            &mut r,
            &["sq".into()],
            &TrackOptions::new(TrackerKind::Csrt),
            &factory,
        )
        .unwrap();
        assert_eq!(records.len(), 1);
        let g = &records[0];
        assert_eq!(
            (g.lost_at, g.drift_iou, g.flagged),
            (Some(6), Some(0.0), true)
        );
        // Frames 1..=5 both ways found (forward 1..=5, backward 15..=19): blended truth; 6..=14
        // neither: linear, which here is the truth too (the square moves linearly).
        for f in 1..20 {
            let b = r.boxes_at(f)[0].bbox;
            assert!((b.x1 - truth(f).x1).abs() < 1e-9, "frame {f}: {b:?}");
        }
    }

    /// A tracker that follows nothing: its box shrinks by 5% a frame about its centre (a
    /// scale drift that never says "lost"), failing with an OpenCV-like error on update
    /// `fail_at`.
    struct Shrinking {
        bbox: BBox,
        updates: usize,
        fail_at: usize,
    }

    impl BoxTracker for Shrinking {
        fn init(&mut self, _: &BgrImage, bbox: BBox) -> Result<()> {
            self.bbox = bbox;
            self.updates = 0;
            Ok(())
        }
        fn update(&mut self, _: &BgrImage) -> Result<Option<BBox>> {
            self.updates += 1;
            if self.updates == self.fail_at {
                return Err(Error::Tracker {
                    path: None,
                    tracker: "KCF".into(),
                    doing: "to follow its box".into(),
                    frame: None,
                    message: "assertion failed".into(),
                });
            }
            let b = self.bbox;
            let (cx, cy) = ((b.x1 + b.x2) / 2.0, (b.y1 + b.y2) / 2.0);
            let (hw, hh) = ((b.x2 - b.x1) * 0.475, (b.y2 - b.y1) * 0.475);
            self.bbox = BBox::new(cx - hw, cy - hh, cx + hw, cy + hh);
            Ok(Some(self.bbox))
        }
    }

    #[test]
    fn a_forward_only_track_gets_a_forward_backward_check() {
        let a = keyed(&[0]);
        let mut options = TrackOptions::new(TrackerKind::Kcf);
        options.forward_limit = 30;
        // A tracker that holds the object comes back to the key: consistent, not flagged.
        let mut r = resolve(&a, 100);
        let finder = || {
            Ok(Box::new(Finder {
                updates: 0,
                blind_after: usize::MAX,
            }) as Box<dyn BoxTracker>)
        };
        let (records, timing) = fill_gaps_with(
            &mut Moving { count: 100 },
            &mut r,
            &["sq".into()],
            &options,
            &finder,
        )
        .unwrap();
        assert_eq!(timing.updates, 30 + 30, "forward, then back to the key");
        let g = &records[0];
        assert_eq!((g.to, g.frames), (None, 30));
        assert_eq!((g.consistency_iou, g.flagged), (Some(1.0), false));
        assert!(g.warning(0.5).is_none());
        // One whose box shrinks while it "holds" the object: flagged, with a warning.
        let mut r = resolve(&a, 100);
        let shrinking = || {
            Ok(Box::new(Shrinking {
                bbox: BBox::new(0.0, 0.0, 1.0, 1.0),
                updates: 0,
                fail_at: usize::MAX,
            }) as Box<dyn BoxTracker>)
        };
        let (records, _) = fill_gaps_with(
            &mut Moving { count: 100 },
            &mut r,
            &["sq".into()],
            &options,
            &shrinking,
        )
        .unwrap();
        let g = &records[0];
        assert!(g.flagged && g.consistency_iou.unwrap() < 0.1, "{g:?}");
        let w = g.warning(0.5).unwrap();
        assert!(
            w.contains("after the key on frame 0") && w.contains("from frame 30"),
            "{w}"
        );
        let json = serde_json::to_value(g).unwrap();
        assert_eq!(json["flagged"], true);
        assert!(json["consistency_iou"].as_f64().unwrap() < 0.1);
    }

    #[test]
    fn a_tracker_error_names_the_frame_it_happened_on() {
        let a = keyed(&[0, 20]);
        let mut r = resolve(&a, 21);
        let failing = || {
            Ok(Box::new(Shrinking {
                bbox: BBox::new(0.0, 0.0, 1.0, 1.0),
                updates: 0,
                fail_at: 4,
            }) as Box<dyn BoxTracker>)
        };
        let e = fill_gaps_with(
            &mut Moving { count: 21 },
            &mut r,
            &["sq".into()],
            &TrackOptions::new(TrackerKind::Kcf),
            &failing,
        )
        .unwrap_err();
        assert_eq!(e.kind(), crate::error::ErrorKind::Tracker);
        // The forward tracker's fourth update is frame 4.
        assert!(
            e.to_string()
                .starts_with("OpenCV's KCF tracker failed to follow its box on frame 4:"),
            "{e}"
        );
    }

    #[test]
    fn blend_weights_by_distance() {
        let ka = BBox::new(0.0, 0.0, 10.0, 10.0);
        let kb = BBox::new(40.0, 0.0, 50.0, 10.0);
        let fwd: Vec<Option<BBox>> = (0..=4)
            .map(|i| Some(ka.translated(i as f64 * 12.0, 0.0)))
            .collect();
        let bwd: Vec<Option<BBox>> = (0..=4)
            .map(|i| Some(kb.translated((i as f64 - 4.0) * 8.0, 0.0)))
            .collect();
        let out = blend(0, 4, ka, kb, &fwd, &bwd, 0.5);
        // The forward track ends at x 48 (8 past the key at 40), the backward one at x 8 (8
        // past the key at 0). Frame 1: forward 12 - 8/4 = 10, backward 16 - 8 * 3/4 = 10;
        // blended 10.
        assert_eq!(out[0].0, 1);
        assert!((out[0].1.x1 - 10.0).abs() < 1e-12, "{:?}", out[0]);
        // Frame 3: forward 36 - 6 = 30, backward 32 - 2 = 30.
        assert!((out[2].1.x1 - 30.0).abs() < 1e-12);
        // Unsnapped: a forward track lost before its key keeps its boxes.
        let mut lost = fwd.clone();
        lost[4] = None;
        let out = blend(0, 4, ka, kb, &lost, &vec![None; 5], 0.5);
        assert!((out[0].1.x1 - 12.0).abs() < 1e-12);
        let none = vec![None; 5];
        let out = blend(0, 4, ka, kb, &none, &none, 0.5);
        assert!((out[1].1.x1 - 20.0).abs() < 1e-12, "linear where both lost");
    }

    #[test]
    fn blend_draws_jitter_toward_linear_and_keeps_agreed_motion() {
        // A box moving 10 px a frame, keyed at frames 0 and 8.
        let truth = |f: usize| BBox::new(10.0 * f as f64, 0.0, 10.0 * f as f64 + 20.0, 20.0);
        let (ka, kb) = (truth(0), truth(8));
        // Both trackers jitter +-2 px about the truth, independently (opposite signs), and
        // end on their keys: what departs from linear is their noise alone, which the blend
        // removes (S = N: the linear box).
        let jitter = |f: usize, sign: f64| {
            let d = if f % 2 == 1 { 2.0 * sign } else { 0.0 };
            Some(truth(f).translated(d, 0.0))
        };
        let fwd: Vec<Option<BBox>> = (0..=8).map(|f| jitter(f, 1.0)).collect();
        let bwd: Vec<Option<BBox>> = (0..=8).map(|f| jitter(f, -1.0)).collect();
        let out = blend(0, 8, ka, kb, &fwd, &bwd, 0.5);
        for (f, b) in &out {
            let before = BBox::lerp(&fwd[*f].unwrap(), &bwd[*f].unwrap(), *f as f64 / 8.0);
            let (err, err_before) = (
                (b.x1 - truth(*f).x1).abs(),
                (before.x1 - truth(*f).x1).abs(),
            );
            assert!(
                err <= err_before + 1e-12 && err < 1.0,
                "frame {f}: {b:?} ({before:?})"
            );
        }
        // Both agree on a path far from linear (a 30 px detour up): kept as tracked.
        let detour = |f: usize| {
            let up = 30.0 * (std::f64::consts::PI * f as f64 / 8.0).sin();
            Some(truth(f).translated(0.0, -up))
        };
        let path: Vec<Option<BBox>> = (0..=8).map(detour).collect();
        for (f, b) in blend(0, 8, ka, kb, &path, &path, 0.5) {
            assert!(b.iou(&path[f].unwrap()) > 1.0 - 1e-9, "frame {f}: {b:?}");
        }
    }

    #[cfg(not(feature = "tracking"))]
    #[test]
    fn without_the_feature_tracking_is_a_usage_error() {
        let e = open_tracker(TrackerKind::Csrt).err().unwrap();
        assert_eq!(e.kind(), crate::error::ErrorKind::Usage);
        assert!(e.to_string().contains("--features tracking"), "{e}");
    }
}
