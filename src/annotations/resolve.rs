//! Resolution of annotations onto a video's frames: which boxes to draw on each frame
//! ([`Annotations::resolve`] -> [`ResolvedBoxes`]), with keys mapped through a [`FrameClock`]
//! and the gaps between keys filled as [`Fill`] says.
//!
//! Rules:
//! - a frame key `i` is frame `i`; a time key `t` lands on the frame shown at `t` (the frame
//!   with the largest presentation time `<= t`), after [`Annotations::time_shift`] puts it on
//!   the video's timeline (a V-STaR time counts from the first frame). Keys that land on no frame (frame index past
//!   the end, time before the first frame or at/after the video's end) are counted in
//!   [`ResolvedBoxes::keys_outside_video`]; time keys outside still anchor interpolation, so a
//!   clip cut from a longer annotated video gets the in-between boxes at its edges.
//! - when several keys of one track land on the same frame, the earliest (the one nearest the
//!   frame's presentation time) is drawn; the others are counted in
//!   [`ResolvedBoxes::keys_superseded`].
//! - `Fill::Linear` interpolates by presentation time between two consecutive `Present` keys of
//!   a track; `Fill::Hold` keeps a `Present` box on the frames up to the track's next key;
//!   `Fill::None` draws keyed frames only. Nothing is filled before a track's first key, after
//!   its last, or across an `Absent` key; `Absent` keys never get a box.
//! - `Fill::Cubic` is a monotone cubic (PCHIP: Fritsch-Carlson slopes as Fritsch-Butland's
//!   weighted harmonic mean inside, the three-point shape-preserving formula at the ends, as
//!   SciPy's `PchipInterpolator`) by presentation time through every run of consecutive
//!   `Present` keys, of each box's centre and size (not its corners, so width and height stay
//!   positive). Monotone: between two keys a coordinate never leaves their range (no overshoot,
//!   unlike Catmull-Rom), so a box that stops stays stopped; a run of two keys is linear.
//! - `Fill::Track` resolves as `Fill::Linear` here and lists the gaps a tracker may fill
//!   instead ([`ResolvedBoxes::gaps`]): between two present keys on frames of the video, and
//!   after a track's last present key (or up to its `Absent` key); the tracking module
//!   (`tracking`, the `tracking` feature) replaces their boxes.
//! - detections are drawn on their own frame only.
//! - normalised coordinates become pixels of the clock's frame size. Boxes are not clamped;
//!   drawing code clamps with [`BBox::clamped`].

use std::str::FromStr;

use super::bbox::BBox;
use super::clock::FrameClock;
use super::error::AnnotationError;
use super::model::{Annotations, Coords, Entry, Key};
use crate::vocab::time::Time;

/// How frames between a track's keys get boxes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Fill {
    /// Interpolate linearly by presentation time between consecutive present keys.
    #[default]
    Linear,
    /// A monotone cubic (PCHIP) by presentation time through consecutive present keys.
    Cubic,
    /// Keep each present box until the track's next key.
    Hold,
    /// Only keyed frames.
    None,
    /// An OpenCV tracker run between keys (forward and backward, blended) and after the last
    /// key (forward, up to a limit); needs the `tracking` feature.
    Track(TrackerKind),
}

/// Which OpenCV tracker `Fill::Track` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TrackerKind {
    /// Discriminative correlation filter with channel and spatial reliability: the most
    /// accurate of OpenCV's classic trackers.
    #[default]
    Csrt,
    /// Kernelized correlation filters: several times faster, less robust to scale change.
    Kcf,
}

impl TrackerKind {
    /// Its name (`csrt`, `kcf`).
    pub fn name(self) -> &'static str {
        match self {
            TrackerKind::Csrt => "csrt",
            TrackerKind::Kcf => "kcf",
        }
    }
}

impl FromStr for TrackerKind {
    type Err = String;
    fn from_str(s: &str) -> Result<TrackerKind, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "csrt" => Ok(TrackerKind::Csrt),
            "kcf" => Ok(TrackerKind::Kcf),
            other => Err(format!("unknown tracker {other:?}; expected csrt or kcf")),
        }
    }
}

impl std::fmt::Display for Fill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Fill::Linear => "linear",
            Fill::Cubic => "cubic",
            Fill::Hold => "hold",
            Fill::None => "none",
            Fill::Track(TrackerKind::Csrt) => "track",
            Fill::Track(TrackerKind::Kcf) => "track-kcf",
        })
    }
}

crate::vocab::textual::serde_as_text!(Fill);
// `Fill::from_str`: trimmed and lower-cased; `track-KIND` / `track:KIND` parses KIND as
// `TrackerKind` does (trimmed again, so `track- kcf` is `track-kcf`).
crate::vocab::textual::json_schema_as!(Fill, "Fill", {
    use crate::vocab::textual::caseless_words as words;
    crate::vocab::textual::pattern(
        "Frames between keys: `linear` (`interpolate`), `cubic`, `hold`, `none`, `track` \
         (CSRT), `track-csrt` / `track:csrt` or `track-kcf` / `track:kcf`, in any case.",
        &format!(
            "^\\s*({}|{}([-:]\\s*({}))?)\\s*$",
            words(&["linear", "interpolate", "cubic", "hold", "none"]),
            words(&["track"]),
            words(&["csrt", "kcf"])
        ),
    )
});

impl FromStr for Fill {
    type Err = String;
    fn from_str(s: &str) -> Result<Fill, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "linear" | "interpolate" => Ok(Fill::Linear),
            "cubic" => Ok(Fill::Cubic),
            "hold" => Ok(Fill::Hold),
            "none" => Ok(Fill::None),
            "track" => Ok(Fill::Track(TrackerKind::Csrt)),
            other => match other
                .strip_prefix("track-")
                .or_else(|| other.strip_prefix("track:"))
                .map(str::parse::<TrackerKind>)
            {
                Some(Ok(kind)) => Ok(Fill::Track(kind)),
                _ => Err(format!(
                    "unknown fill {other:?}; expected linear, cubic, hold, none, track \
                     (CSRT), track-csrt or track-kcf"
                )),
            },
        }
    }
}

/// Where a drawn box comes from: an index into `Annotations::tracks` or `::detections`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoxSource {
    /// A 0-based index into `Annotations::tracks`.
    Track(usize),
    /// A 0-based index into `Annotations::detections`.
    Detection(usize),
}

/// One box to draw on one frame, in pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DrawBox {
    /// The track or detection the box belongs to.
    pub source: BoxSource,
    /// The box in pixels of the clock's frame size, not clamped to the frame.
    pub bbox: BBox,
    /// True when the frame had no key of its own and the box was interpolated or held.
    pub filled: bool,
}

/// The boxes of every frame, stored sparsely (only frames with boxes take space).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ResolvedBoxes {
    frame_count: usize,
    /// Frame indices that have boxes, increasing.
    frames: Vec<usize>,
    /// `boxes[starts[i]..starts[i + 1]]` belong to `frames[i]`.
    starts: Vec<usize>,
    boxes: Vec<DrawBox>,
    /// Keys (of tracks and detections) that land on no frame of the video.
    pub keys_outside_video: usize,
    /// Track keys not drawn because an earlier key of the same track landed on the same frame.
    pub keys_superseded: usize,
    /// With `Fill::Track`: the gaps a tracker may fill, by track, then frame (their boxes
    /// here are linear, or none after a last key).
    pub gaps: Vec<Gap>,
}

/// A stretch of one track's frames that `Fill::Track` hands to a tracker: after the keyed
/// frame `from`, up to the keyed frame `to` (tracked both ways) or, without `to`, forward
/// only, never to `end` (an absent key's frame or the video's end) nor past the tracker's
/// limit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gap {
    /// An index into `Annotations::tracks`.
    pub track: usize,
    /// The keyed frame the gap follows and its box, in pixels.
    pub from: (usize, BBox),
    /// The keyed frame that ends the gap and its box, in pixels (`None`: forward only).
    pub to: Option<(usize, BBox)>,
    /// The first frame past the gap (`to`'s frame when there is one).
    pub end: usize,
}

impl ResolvedBoxes {
    /// The boxes to draw on frame `index`: tracks in track order, then detections.
    pub fn boxes_at(&self, index: usize) -> &[DrawBox] {
        match self.frames.binary_search(&index) {
            Ok(i) => &self.boxes[self.starts[i]..self.starts[i + 1]],
            Err(_) => &[],
        }
    }

    /// The frames that have boxes, in order, with their boxes.
    pub fn frames_with_boxes(&self) -> impl Iterator<Item = (usize, &[DrawBox])> + '_ {
        self.frames
            .iter()
            .enumerate()
            .map(move |(i, &f)| (f, &self.boxes[self.starts[i]..self.starts[i + 1]]))
    }

    /// The video's frame count these boxes were resolved for.
    pub fn frame_count(&self) -> usize {
        self.frame_count
    }

    /// The total number of boxes over all frames.
    pub fn box_count(&self) -> usize {
        self.boxes.len()
    }

    /// True when no frame has a box.
    pub fn is_empty(&self) -> bool {
        self.boxes.is_empty()
    }

    /// The first and last frame with a box.
    pub fn frame_span(&self) -> Option<(usize, usize)> {
        Some((*self.frames.first()?, *self.frames.last()?))
    }

    /// Every box with its frame, in frame order (within a frame, tracks then detections).
    pub fn to_list(&self) -> Vec<(usize, DrawBox)> {
        self.frames_with_boxes()
            .flat_map(|(f, list)| list.iter().map(move |d| (f, *d)))
            .collect()
    }

    /// Replaces every box with `list` (any order; sorted stably by frame, then source),
    /// keeping the counts and gaps.
    pub fn replace_all(&mut self, mut list: Vec<(usize, DrawBox)>) {
        list.sort_by_key(|(f, d)| {
            (
                *f,
                match d.source {
                    BoxSource::Track(i) => (0, i),
                    BoxSource::Detection(i) => (1, i),
                },
            )
        });
        self.frames.clear();
        self.starts.clear();
        self.boxes.clear();
        self.boxes.reserve(list.len());
        for (f, draw) in list {
            if self.frames.last() != Some(&f) {
                self.frames.push(f);
                self.starts.push(self.boxes.len());
            }
            self.boxes.push(draw);
        }
        self.starts.push(self.boxes.len());
    }
}

struct Anchor {
    time: Time,
    frame: Option<usize>,
    entry: Entry,
    drawn: bool,
}

impl Annotations {
    /// The boxes to draw on each frame of a video with this clock (see the module rules).
    pub fn resolve(
        &self,
        clock: &dyn FrameClock,
        fill: Fill,
    ) -> Result<ResolvedBoxes, AnnotationError> {
        let n = clock.frame_count();
        let (w, h) = clock.frame_size();
        let scale = match self.coords {
            Coords::Pixels => None,
            Coords::Normalized => {
                if w == 0 || h == 0 {
                    return Err(AnnotationError::Usage(format!(
                        "normalised boxes need the video's frame size, but the clock says {w}x{h}"
                    )));
                }
                Some((w as f64, h as f64))
            }
        };
        let to_pixels = |b: &BBox| match scale {
            Some((sx, sy)) => b.scaled(sx, sy),
            None => *b,
        };
        let mut out: Vec<(usize, DrawBox)> = Vec::new();
        let mut outside = 0usize;
        let mut superseded = 0usize;
        let mut gaps: Vec<Gap> = Vec::new();
        let shift = if n == 0 {
            Time::ZERO
        } else {
            self.time_shift(clock.frame_time(0))
        };

        for (ti, track) in self.tracks.iter().enumerate() {
            let mut anchors: Vec<Anchor> = Vec::with_capacity(track.keys.len());
            for (key, entry) in &track.keys {
                match *key {
                    Key::Frame(i) if i < n => anchors.push(Anchor {
                        time: clock.frame_time(i),
                        frame: Some(i),
                        entry: *entry,
                        drawn: false,
                    }),
                    Key::Frame(_) => outside += 1,
                    Key::Time(t) => {
                        let t = t + shift;
                        let frame = if n == 0 {
                            None
                        } else {
                            clock.frame_shown_at(t)
                        };
                        if frame.is_none() {
                            outside += 1;
                        }
                        anchors.push(Anchor {
                            time: t,
                            frame,
                            entry: *entry,
                            drawn: false,
                        });
                    }
                }
            }
            if n == 0 {
                continue;
            }
            // Stable: at equal times the key order (frame keys first) decides.
            anchors.sort_by_key(|a| a.time);
            let mut last_frame = None;
            for a in anchors.iter_mut() {
                if let Some(f) = a.frame {
                    if last_frame == Some(f) {
                        superseded += 1;
                    } else {
                        a.drawn = true;
                        last_frame = Some(f);
                        if let Entry::Present(b) = &a.entry {
                            out.push((
                                f,
                                DrawBox {
                                    source: BoxSource::Track(ti),
                                    bbox: to_pixels(b),
                                    filled: false,
                                },
                            ));
                        }
                    }
                }
            }
            if fill == Fill::None {
                continue;
            }
            let slopes = if fill == Fill::Cubic {
                pchip_slopes(&anchors)
            } else {
                Vec::new()
            };
            let first_time = clock.frame_time(0);
            for (i, pair) in anchors.windows(2).enumerate() {
                let (a, b) = (&pair[0], &pair[1]);
                let Entry::Present(box_a) = a.entry else {
                    continue;
                };
                if let (Fill::Track(_), Some(fa), Some(fb)) = (fill, a.frame, b.frame) {
                    if fb > fa + 1 {
                        gaps.push(Gap {
                            track: ti,
                            from: (fa, to_pixels(&box_a)),
                            to: match b.entry {
                                Entry::Present(box_b) => Some((fb, to_pixels(&box_b))),
                                Entry::Absent => None,
                            },
                            end: fb,
                        });
                    }
                }
                let box_b = match (fill, b.entry) {
                    (Fill::Linear | Fill::Cubic | Fill::Track(_), Entry::Present(box_b)) => {
                        Some(box_b)
                    }
                    (Fill::Linear | Fill::Cubic | Fill::Track(_), Entry::Absent) => continue,
                    _ => None,
                };
                // Frames with presentation time strictly between a's frame and b's frame.
                let start = match a.frame {
                    Some(f) => f + 1,
                    None if a.time < first_time => 0,
                    None => n,
                };
                let end = match b.frame {
                    Some(f) => f,
                    None if b.time < first_time => 0,
                    None => n,
                };
                let cubic = match (fill, box_b) {
                    (Fill::Cubic, Some(box_b)) if b.time > a.time => Some(Hermite {
                        a: components(&box_a),
                        b: components(&box_b),
                        da: slopes[i],
                        db: slopes[i + 1],
                        h: (b.time - a.time).as_secs_f64(),
                    }),
                    _ => None,
                };
                for f in start..end {
                    let bbox = match (box_b, &cubic) {
                        (Some(_), Some(c)) => {
                            c.at(time_ratio(clock.frame_time(f) - a.time, b.time - a.time))
                        }
                        (Some(box_b), None) => {
                            let u = time_ratio(clock.frame_time(f) - a.time, b.time - a.time);
                            BBox::lerp(&box_a, &box_b, u)
                        }
                        (None, _) => box_a,
                    };
                    out.push((
                        f,
                        DrawBox {
                            source: BoxSource::Track(ti),
                            bbox: to_pixels(&bbox),
                            filled: true,
                        },
                    ));
                }
            }
            // After the last key, a tracker may go on forward (up to the video's end).
            if let (Fill::Track(_), Some(last)) = (fill, anchors.last()) {
                if let (Entry::Present(b), Some(f)) = (last.entry, last.frame) {
                    if f + 1 < n {
                        gaps.push(Gap {
                            track: ti,
                            from: (f, to_pixels(&b)),
                            to: None,
                            end: n,
                        });
                    }
                }
            }
        }

        for (di, d) in self.detections.iter().enumerate() {
            let frame = match d.key {
                Key::Frame(i) => (i < n).then_some(i),
                Key::Time(t) if n > 0 => clock.frame_shown_at(t + shift),
                Key::Time(_) => None,
            };
            match frame {
                Some(f) => out.push((
                    f,
                    DrawBox {
                        source: BoxSource::Detection(di),
                        bbox: to_pixels(&d.bbox),
                        filled: false,
                    },
                )),
                None => outside += 1,
            }
        }

        // Stable: within a frame, tracks in order, then detections.
        out.sort_by_key(|(f, _)| *f);
        let mut resolved = ResolvedBoxes {
            frame_count: n,
            keys_outside_video: outside,
            keys_superseded: superseded,
            gaps,
            ..ResolvedBoxes::default()
        };
        resolved.boxes.reserve(out.len());
        for (f, draw) in out {
            if resolved.frames.last() != Some(&f) {
                resolved.frames.push(f);
                resolved.starts.push(resolved.boxes.len());
            }
            resolved.boxes.push(draw);
        }
        resolved.starts.push(resolved.boxes.len());
        Ok(resolved)
    }
}

/// A box as the four coordinates cubic fill interpolates: centre x, centre y, width, height.
fn components(b: &BBox) -> [f64; 4] {
    let (cx, cy) = b.center();
    [cx, cy, b.width(), b.height()]
}

/// Whether consecutive anchors `a`, `b` bound an interval of a cubic run.
fn joined(a: &Anchor, b: &Anchor) -> bool {
    matches!((a.entry, b.entry), (Entry::Present(_), Entry::Present(_))) && b.time > a.time
}

/// PCHIP slopes (per second) of each anchor's [`components`] within its run of joined
/// anchors; zero for an anchor in no run. Interior: Fritsch-Butland's weighted harmonic mean
/// of the two secants (zero where they differ in sign); ends: the three-point formula,
/// zeroed or capped at three secants to stay shape-preserving (SciPy's choices); a run of one
/// interval gets its secant (linear).
fn pchip_slopes(anchors: &[Anchor]) -> Vec<[f64; 4]> {
    let n = anchors.len();
    let y: Vec<[f64; 4]> = anchors
        .iter()
        .map(|a| match &a.entry {
            Entry::Present(b) => components(b),
            Entry::Absent => [0.0; 4],
        })
        .collect();
    // Interval k (anchors k, k + 1): its length and its secant per component.
    let interval = |k: usize| -> Option<(f64, [f64; 4])> {
        if k + 1 >= n || !joined(&anchors[k], &anchors[k + 1]) {
            return None;
        }
        let h = (anchors[k + 1].time - anchors[k].time).as_secs_f64();
        Some((h, std::array::from_fn(|c| (y[k + 1][c] - y[k][c]) / h)))
    };
    let end_slope = |h0: f64, d0: f64, next: Option<(f64, f64)>| match next {
        None => d0,
        Some((h1, d1)) => {
            let d = ((2.0 * h0 + h1) * d0 - h0 * d1) / (h0 + h1);
            if d.signum() != d0.signum() || d0 == 0.0 {
                0.0
            } else if d0.signum() != d1.signum() && d.abs() > 3.0 * d0.abs() {
                3.0 * d0
            } else {
                d
            }
        }
    };
    (0..n)
        .map(|k| {
            let left = if k > 0 { interval(k - 1) } else { None };
            let right = interval(k);
            std::array::from_fn(|c| match (left, right) {
                (Some((h0, d0)), Some((h1, d1))) => {
                    if d0[c] * d1[c] <= 0.0 {
                        0.0
                    } else {
                        let (w1, w2) = (2.0 * h1 + h0, h1 + 2.0 * h0);
                        (w1 + w2) / (w1 / d0[c] + w2 / d1[c])
                    }
                }
                (None, Some((h, d))) => {
                    end_slope(h, d[c], interval(k + 1).map(|(h1, d1)| (h1, d1[c])))
                }
                (Some((h, d)), None) => end_slope(
                    h,
                    d[c],
                    if k >= 2 { interval(k - 2) } else { None }.map(|(h1, d1)| (h1, d1[c])),
                ),
                (None, None) => 0.0,
            })
        })
        .collect()
}

/// One interval of a cubic Hermite spline over the four [`components`].
struct Hermite {
    a: [f64; 4],
    b: [f64; 4],
    /// Slopes per second at each end.
    da: [f64; 4],
    db: [f64; 4],
    /// The interval's length in seconds.
    h: f64,
}

impl Hermite {
    /// The box at fraction `s` of the interval.
    fn at(&self, s: f64) -> BBox {
        let (s2, s3) = (s * s, s * s * s);
        let (h00, h10, h01, h11) = (
            2.0 * s3 - 3.0 * s2 + 1.0,
            s3 - 2.0 * s2 + s,
            -2.0 * s3 + 3.0 * s2,
            s3 - s2,
        );
        let v: [f64; 4] = std::array::from_fn(|c| {
            h00 * self.a[c]
                + h10 * self.h * self.da[c]
                + h01 * self.b[c]
                + h11 * self.h * self.db[c]
        });
        BBox::from_center(v[0], v[1], v[2], v[3])
    }
}

/// `num / den` for two times (den > 0), as the nearest f64 of the exact fraction.
fn time_ratio(num: Time, den: Time) -> f64 {
    let mut p = num.numer() as i128 * den.denom() as i128;
    let mut q = num.denom() as i128 * den.numer() as i128;
    let (mut a, mut b) = (p.abs(), q.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    if a > 1 {
        p /= a;
        q /= a;
    }
    p as f64 / q as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::annotations::clock::{ConstantRateClock, TimestampClock};
    use crate::annotations::model::{Detection, Track};
    use crate::vocab::time::FrameTimeline;
    use proptest::prelude::*;

    fn bx(x: f64) -> BBox {
        BBox::new(x, x, x + 10.0, x + 20.0)
    }

    fn track(keys: &[(Key, Option<BBox>)]) -> Track {
        let mut t = Track::new("t");
        for (k, b) in keys {
            t.insert(*k, b.map_or(Entry::Absent, Entry::Present))
                .unwrap();
        }
        t
    }

    fn one_track(keys: &[(Key, Option<BBox>)]) -> Annotations {
        let mut a = Annotations::new(Coords::Pixels);
        a.tracks.push(track(keys));
        a
    }

    fn cfr(n: usize, fps: i64) -> ConstantRateClock {
        ConstantRateClock::new(n, Time::from_secs(fps), 640, 480).unwrap()
    }

    #[test]
    fn first_frame_times_are_moved_onto_the_timeline() {
        // The first frame is at 1/24 s (an AVI with B-frames): frame i at (i + 1) / 24.
        let times: Vec<Time> = (1..=10).map(|i| Time::new(i, 24)).collect();
        let clock = TimestampClock::new(times, Time::new(11, 24), 100, 100).unwrap();
        let keys = [
            (Key::Time(Time::new(2, 24)), Some(bx(2.0))),
            (Key::Time(Time::new(6, 24)), Some(bx(6.0))),
        ];
        let mut a = one_track(&keys);
        // On the timeline 2/24 s is frame 1's time.
        let r = a.resolve(&clock, Fill::None).unwrap();
        assert_eq!(
            (only(&r, 1), only(&r, 5)),
            (Some((bx(2.0), false)), Some((bx(6.0), false)))
        );
        // From the first frame (V-STaR's `frame_index / fps`): frames 2 and 6, and the linear
        // fill between them is by the same shifted times.
        a.time_origin = crate::annotations::TimeOrigin::FirstFrame;
        let r = a.resolve(&clock, Fill::None).unwrap();
        assert_eq!(
            (only(&r, 2), only(&r, 6)),
            (Some((bx(2.0), false)), Some((bx(6.0), false)))
        );
        let r = a.resolve(&clock, Fill::Linear).unwrap();
        assert_eq!(
            only(&r, 4),
            Some((BBox::lerp(&bx(2.0), &bx(6.0), 0.5), true))
        );
        assert_eq!(r.frame_span(), Some((2, 6)));
    }

    fn only(r: &ResolvedBoxes, f: usize) -> Option<(BBox, bool)> {
        let b = r.boxes_at(f);
        assert!(b.len() <= 1, "frame {f}: {b:?}");
        b.first().map(|d| (d.bbox, d.filled))
    }

    #[test]
    fn linear_midpoint_is_halfway_in_time() {
        let a = one_track(&[
            (Key::Frame(2), Some(bx(0.0))),
            (Key::Frame(6), Some(bx(40.0))),
        ]);
        let r = a.resolve(&cfr(10, 25), Fill::Linear).unwrap();
        assert_eq!(only(&r, 2), Some((bx(0.0), false)));
        assert_eq!(only(&r, 3), Some((bx(10.0), true)));
        assert_eq!(only(&r, 4), Some((bx(20.0), true)));
        assert_eq!(only(&r, 5), Some((bx(30.0), true)));
        assert_eq!(only(&r, 6), Some((bx(40.0), false)));
        assert_eq!(only(&r, 1), None);
        assert_eq!(only(&r, 7), None);
        assert_eq!(r.box_count(), 5);
        assert_eq!(r.frame_span(), Some((2, 6)));
    }

    #[test]
    fn linear_uses_presentation_time_on_variable_rate() {
        // Frames at 0, 0.1, 0.4, 0.5 s. Keys on frames 0 and 3: frame 1 is 1/5 of the way in
        // time (not 1/3 as by index), frame 2 is 4/5.
        let times = vec![
            Time::ZERO,
            Time::new(1, 10),
            Time::new(4, 10),
            Time::new(5, 10),
        ];
        let clock = TimestampClock::new(times, Time::new(6, 10), 100, 100).unwrap();
        let a = one_track(&[
            (Key::Frame(0), Some(bx(0.0))),
            (Key::Frame(3), Some(bx(50.0))),
        ]);
        let r = a.resolve(&clock, Fill::Linear).unwrap();
        assert_eq!(
            only(&r, 1),
            Some((BBox::lerp(&bx(0.0), &bx(50.0), 0.2), true))
        );
        assert_eq!(
            only(&r, 2),
            Some((BBox::lerp(&bx(0.0), &bx(50.0), 0.8), true))
        );
        assert!((only(&r, 1).unwrap().0.x1 - 10.0).abs() < 1e-12);
        // Midpoint in time with time keys: keys at 0 and 0.8 s, frame at 0.4 s is exactly halfway.
        let a = one_track(&[
            (Key::Time(Time::ZERO), Some(BBox::new(0.0, 0.0, 10.0, 10.0))),
            (
                Key::Time(Time::new(8, 10)),
                Some(BBox::new(7.0, 3.0, 17.0, 13.0)),
            ),
        ]);
        let r = a.resolve(&clock, Fill::Linear).unwrap();
        assert_eq!(only(&r, 2), Some((BBox::new(3.5, 1.5, 13.5, 11.5), true)));
        // The 0.8 s key is past the end (0.6 s): counted, but it still anchors frames 1..=3.
        assert_eq!(r.keys_outside_video, 1);
        assert_eq!(r.box_count(), 4);
    }

    #[test]
    fn hold_and_none() {
        let a = one_track(&[
            (Key::Frame(1), Some(bx(0.0))),
            (Key::Frame(4), Some(bx(30.0))),
        ]);
        let r = a.resolve(&cfr(10, 10), Fill::Hold).unwrap();
        assert_eq!(only(&r, 0), None);
        assert_eq!(only(&r, 2), Some((bx(0.0), true)));
        assert_eq!(only(&r, 3), Some((bx(0.0), true)));
        assert_eq!(only(&r, 4), Some((bx(30.0), false)));
        assert_eq!(only(&r, 5), None, "never past the last key");
        let r = a.resolve(&cfr(10, 10), Fill::None).unwrap();
        assert_eq!(r.box_count(), 2);
        assert_eq!(only(&r, 2), None);
    }

    #[test]
    fn absent_breaks_fill() {
        let a = one_track(&[
            (Key::Frame(0), Some(bx(0.0))),
            (Key::Frame(3), None),
            (Key::Frame(6), Some(bx(60.0))),
            (Key::Frame(8), Some(bx(80.0))),
        ]);
        let r = a.resolve(&cfr(10, 10), Fill::Linear).unwrap();
        let drawn: Vec<usize> = r.frames_with_boxes().map(|(f, _)| f).collect();
        assert_eq!(drawn, vec![0, 6, 7, 8]);
        assert_eq!(only(&r, 7), Some((bx(70.0), true)));
        // Hold keeps the box up to the absent key, not across it.
        let r = a.resolve(&cfr(10, 10), Fill::Hold).unwrap();
        let drawn: Vec<usize> = r.frames_with_boxes().map(|(f, _)| f).collect();
        assert_eq!(drawn, vec![0, 1, 2, 6, 7, 8]);
    }

    #[test]
    fn time_keys_land_on_frame_shown_at_t() {
        let clock = cfr(10, 10);
        let a = one_track(&[
            (Key::Time(Time::new(25, 100)), Some(bx(0.0))), // 0.25 s: frame 2 (0.2 s) is on screen
            (Key::Time(Time::new(3, 10)), None),            // exactly frame 3
            (Key::Time(Time::new(-1, 10)), Some(bx(1.0))),  // before the start
            (Key::Time(Time::from_secs(1)), Some(bx(2.0))), // the end: no frame
        ]);
        let r = a.resolve(&clock, Fill::None).unwrap();
        let drawn: Vec<usize> = r.frames_with_boxes().map(|(f, _)| f).collect();
        assert_eq!(drawn, vec![2]);
        assert_eq!(r.keys_outside_video, 2);
    }

    #[test]
    fn several_keys_on_one_frame_keep_the_earliest() {
        // 30 Hz annotations on a 10 fps video.
        let keys: Vec<(Key, Option<BBox>)> = (0..7)
            .map(|i| (Key::Time(Time::new(i, 30)), Some(bx(i as f64))))
            .collect();
        let r = one_track(&keys)
            .resolve(&cfr(10, 10), Fill::Linear)
            .unwrap();
        assert_eq!(only(&r, 0), Some((bx(0.0), false)));
        assert_eq!(only(&r, 1), Some((bx(3.0), false)));
        assert_eq!(only(&r, 2), Some((bx(6.0), false)));
        assert_eq!(r.keys_superseded, 4);
        // An absent key hidden on a drawn frame still stops interpolation.
        let a = one_track(&[
            (Key::Time(Time::ZERO), Some(bx(0.0))),
            (Key::Time(Time::new(1, 30)), None),
            (Key::Time(Time::new(5, 10)), Some(bx(50.0))),
        ]);
        let r = a.resolve(&cfr(10, 10), Fill::Linear).unwrap();
        let drawn: Vec<usize> = r.frames_with_boxes().map(|(f, _)| f).collect();
        assert_eq!(drawn, vec![0, 5]);
    }

    #[test]
    fn keys_beyond_the_video_are_counted_and_detections_are_not_filled() {
        let mut a = one_track(&[
            (Key::Frame(8), Some(bx(0.0))),
            (Key::Frame(12), Some(bx(40.0))),
        ]);
        a.detections.push(Detection {
            key: Key::Frame(1),
            bbox: bx(5.0),
            score: Some(0.5),
            label: None,
        });
        a.detections.push(Detection {
            key: Key::Frame(3),
            bbox: bx(6.0),
            score: None,
            label: None,
        });
        a.detections.push(Detection {
            key: Key::Frame(30),
            bbox: bx(6.0),
            score: None,
            label: None,
        });
        a.detections.push(Detection {
            key: Key::Time(Time::new(11, 100)),
            bbox: bx(7.0),
            score: None,
            label: None,
        });
        let r = a.resolve(&cfr(10, 10), Fill::Linear).unwrap();
        assert_eq!(r.keys_outside_video, 2);
        // A frame key past the end has no time: no interpolation toward it.
        assert_eq!(only(&r, 9), None);
        assert_eq!(only(&r, 8), Some((bx(0.0), false)));
        assert_eq!(r.boxes_at(1)[0].source, BoxSource::Detection(0));
        assert_eq!(r.boxes_at(1)[1].source, BoxSource::Detection(3));
        assert!(r.boxes_at(2).is_empty());
        assert_eq!(r.boxes_at(3)[0].source, BoxSource::Detection(1));
    }

    #[test]
    fn normalised_boxes_become_pixels() {
        let mut a = one_track(&[(Key::Frame(0), Some(BBox::new(0.25, 0.5, 0.5, 1.0)))]);
        a.coords = Coords::Normalized;
        let r = a.resolve(&cfr(2, 10), Fill::Linear).unwrap();
        assert_eq!(
            only(&r, 0),
            Some((BBox::new(160.0, 240.0, 320.0, 480.0), false))
        );
        let zero = ConstantRateClock::new(2, Time::from_secs(10), 0, 0).unwrap();
        assert!(a.resolve(&zero, Fill::Linear).is_err());
    }

    #[test]
    fn sparse_over_a_long_video() {
        let a = one_track(&[
            (Key::Frame(99_990), Some(bx(0.0))),
            (Key::Frame(99_999), Some(bx(9.0))),
        ]);
        let r = a.resolve(&cfr(100_000, 30), Fill::Linear).unwrap();
        assert_eq!(r.box_count(), 10);
        assert_eq!(r.frame_count(), 100_000);
        assert!(r.boxes_at(5).is_empty());
        assert_eq!(
            only(&r, 99_995),
            Some((BBox::lerp(&bx(0.0), &bx(9.0), 5.0 / 9.0), true))
        );
    }

    #[test]
    fn fill_names() {
        assert_eq!("linear".parse::<Fill>(), Ok(Fill::Linear));
        assert_eq!("Hold".parse::<Fill>(), Ok(Fill::Hold));
        assert_eq!("none".parse::<Fill>(), Ok(Fill::None));
        assert_eq!("cubic".parse::<Fill>(), Ok(Fill::Cubic));
        assert_eq!("track".parse::<Fill>(), Ok(Fill::Track(TrackerKind::Csrt)));
        assert_eq!(
            "track-kcf".parse::<Fill>(),
            Ok(Fill::Track(TrackerKind::Kcf))
        );
        assert_eq!(
            "track:CSRT".parse::<Fill>(),
            Ok(Fill::Track(TrackerKind::Csrt))
        );
        for f in [Fill::Linear, Fill::Cubic, Fill::Hold, Fill::None] {
            assert_eq!(f.to_string().parse::<Fill>(), Ok(f));
        }
        for k in [TrackerKind::Csrt, TrackerKind::Kcf] {
            assert_eq!(
                Fill::Track(k).to_string().parse::<Fill>(),
                Ok(Fill::Track(k))
            );
        }
        assert!("spline"
            .parse::<Fill>()
            .unwrap_err()
            .contains("expected linear, cubic, hold, none, track"));
        assert!("track-mil".parse::<Fill>().is_err());
    }

    fn centred(cx: f64, w: f64) -> BBox {
        BBox::from_center(cx, 50.0, w, 20.0)
    }

    #[test]
    fn cubic_matches_pchip_by_hand() {
        // Centre x 0, 10, 30 at 0, 1, 2 s (10 fps). PCHIP by hand (h = 1 s, secants 10 and
        // 20): interior slope (3 + 3) / (3/10 + 3/20) = 40/3; start slope (3*10 - 20) / 2 = 5;
        // at 0.5 s the Hermite basis (1/2, 1/8, 1/2, -1/8) gives 5/8 + 5 - 40/24 = 3.958333.
        let a = one_track(&[
            (Key::Frame(0), Some(centred(0.0, 8.0))),
            (Key::Frame(10), Some(centred(10.0, 8.0))),
            (Key::Frame(20), Some(centred(30.0, 8.0))),
        ]);
        let r = a.resolve(&cfr(30, 10), Fill::Cubic).unwrap();
        let (b, filled) = only(&r, 5).unwrap();
        assert!(filled);
        assert!((b.center().0 - 3.958_333_333_333_333).abs() < 1e-9, "{b:?}");
        assert!((b.width() - 8.0).abs() < 1e-9);
        // End slope (3*20 - 10) / 2 = 25: at 1.5 s, 5 + (40/3)/8 + 15 - 25/8 = 18.541667.
        let (b, _) = only(&r, 15).unwrap();
        assert!(
            (b.center().0 - 18.541_666_666_666_668).abs() < 1e-9,
            "{b:?}"
        );
        // Keys are kept exactly; nothing after the last.
        assert_eq!(only(&r, 10), Some((centred(10.0, 8.0), false)));
        assert_eq!(only(&r, 21), None);
        // Linear differs (5 at 0.5 s): cubic is not linear in disguise.
        let lin = a.resolve(&cfr(30, 10), Fill::Linear).unwrap();
        assert!((only(&lin, 5).unwrap().0.center().0 - 5.0).abs() < 1e-9);
    }

    #[test]
    fn cubic_stops_where_the_keys_stop_and_breaks_at_absent() {
        // 0 -> 40 then 40 -> 40: monotone, so the stopped stretch stays at 40 (Catmull-Rom
        // would overshoot past 40 and come back).
        let a = one_track(&[
            (Key::Frame(0), Some(centred(0.0, 10.0))),
            (Key::Frame(4), Some(centred(40.0, 10.0))),
            (Key::Frame(8), Some(centred(40.0, 10.0))),
            (Key::Frame(9), None),
            (Key::Frame(12), Some(centred(0.0, 10.0))),
            (Key::Frame(14), Some(centred(20.0, 10.0))),
        ]);
        let r = a.resolve(&cfr(20, 10), Fill::Cubic).unwrap();
        for f in 5..8 {
            assert!(
                (only(&r, f).unwrap().0.center().0 - 40.0).abs() < 1e-9,
                "frame {f}"
            );
        }
        for f in 1..4 {
            let x = only(&r, f).unwrap().0.center().0;
            assert!(x > 0.0 && x < 40.0, "frame {f}: {x}");
        }
        let drawn: Vec<usize> = r.frames_with_boxes().map(|(f, _)| f).collect();
        assert_eq!(drawn, vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 13, 14]);
        // A run of two keys after the absent one is linear.
        assert!((only(&r, 13).unwrap().0.center().0 - 10.0).abs() < 1e-9);
    }

    #[test]
    fn track_fill_is_linear_with_gaps_listed() {
        let a = one_track(&[
            (Key::Frame(1), Some(bx(0.0))),
            (Key::Frame(2), Some(bx(0.0))),
            (Key::Frame(6), Some(bx(40.0))),
            (Key::Frame(8), None),
            (Key::Frame(10), Some(bx(10.0))),
        ]);
        let track = Fill::Track(TrackerKind::Kcf);
        let r = a.resolve(&cfr(15, 10), track).unwrap();
        let lin = a.resolve(&cfr(15, 10), Fill::Linear).unwrap();
        assert_eq!(r.to_list(), lin.to_list());
        assert!(lin.gaps.is_empty());
        let gaps: Vec<(usize, Option<usize>, usize)> = r
            .gaps
            .iter()
            .map(|g| (g.from.0, g.to.map(|t| t.0), g.end))
            .collect();
        // 1 -> 2 has no frame between; 6 -> absent 8 forward only; after 10, to the end.
        assert_eq!(gaps, vec![(2, Some(6), 6), (6, None, 8), (10, None, 15)]);
        assert_eq!(r.gaps[0].to.unwrap().1, bx(40.0));
    }

    #[test]
    fn a_time_key_a_hair_before_a_frame_is_that_frame() {
        // Found by CI's proptest run: 6/151 s is 0.000265 s before frame 1 of a 25 fps clock
        // (0.04 s), inside the 1/100-frame tolerance, so the box is frame 1's, not frame 0's.
        let clock = cfr(30, 25);
        let a = one_track(&[(Key::Time(Time::new(6, 151)), Some(bx(1.0)))]);
        let r = a.resolve(&clock, Fill::Linear).unwrap();
        assert_eq!(only(&r, 1), Some((bx(1.0), false)));
        assert_eq!(only(&r, 0), None);
        // Just outside the tolerance (0.0005 s before), it stays frame 0's.
        let a = one_track(&[(Key::Time(Time::new(395, 10000)), Some(bx(1.0)))]);
        let r = a.resolve(&clock, Fill::Linear).unwrap();
        assert_eq!(only(&r, 0), Some((bx(1.0), false)));
    }

    proptest! {
        #[test]
        fn interpolated_boxes_follow_time_exactly(
            fa in 0usize..50, gap in 2usize..50, fps_num in 1i64..120, fps_den in 1i64..5,
            x0 in -500.0f64..500.0, x1 in -500.0f64..500.0,
        ) {
            let fb = fa + gap;
            let clock = ConstantRateClock::new(fb + 5, Time::new(fps_num, fps_den), 100, 100).unwrap();
            let a = one_track(&[(Key::Frame(fa), Some(bx(x0))), (Key::Frame(fb), Some(bx(x1)))]);
            let r = a.resolve(&clock, Fill::Linear).unwrap();
            prop_assert_eq!(r.box_count(), gap + 1);
            for f in fa..=fb {
                let (b, filled) = only(&r, f).unwrap();
                prop_assert_eq!(filled, f != fa && f != fb);
                // On a constant-rate clock, the time fraction is the frame fraction.
                let u = (f - fa) as f64 / gap as f64;
                prop_assert_eq!(b, BBox::lerp(&bx(x0), &bx(x1), u));
                prop_assert!(b.x1 >= x0.min(x1) - 1e-9 && b.x1 <= x0.max(x1) + 1e-9);
            }
            // Two keys: cubic is linear (up to rounding).
            let cubic = a.resolve(&clock, Fill::Cubic).unwrap();
            for f in fa..=fb {
                let (c, _) = only(&cubic, f).unwrap();
                let (l, _) = only(&r, f).unwrap();
                prop_assert!((c.x1 - l.x1).abs() < 1e-6 && (c.x2 - l.x2).abs() < 1e-6, "{:?} {:?}", c, l);
            }
            let held = a.resolve(&clock, Fill::Hold).unwrap();
            for f in fa..fb {
                prop_assert_eq!(only(&held, f).unwrap().0, bx(x0));
            }
            prop_assert_eq!(only(&held, fb + 1), None);
        }

        #[test]
        fn cubic_never_overshoots_its_keys(
            xs in proptest::collection::vec((-300.0f64..300.0, 1.0f64..80.0), 3..8),
            gaps in proptest::collection::vec(1usize..12, 7),
        ) {
            let mut keys = Vec::new();
            let mut f = 0;
            for (i, (x, w)) in xs.iter().enumerate() {
                keys.push((Key::Frame(f), Some(centred(*x, *w))));
                f += gaps[i];
            }
            let a = one_track(&keys);
            let r = a.resolve(&cfr(f + 1, 25), Fill::Cubic).unwrap();
            for pair in keys.windows(2) {
                let (Key::Frame(fa), Some(ba)) = pair[0] else { unreachable!() };
                let (Key::Frame(fb), Some(bb)) = pair[1] else { unreachable!() };
                prop_assert_eq!(only(&r, fa), Some((ba, false)));
                for g in fa + 1..fb {
                    let (b, filled) = only(&r, g).unwrap();
                    prop_assert!(filled);
                    let (lo, hi) = (ba.center().0.min(bb.center().0), ba.center().0.max(bb.center().0));
                    prop_assert!(b.center().0 >= lo - 1e-9 && b.center().0 <= hi + 1e-9);
                    let (lo, hi) = (ba.width().min(bb.width()), ba.width().max(bb.width()));
                    prop_assert!(b.width() >= lo - 1e-9 && b.width() <= hi + 1e-9 && b.width() > 0.0);
                }
            }
        }

        #[test]
        fn time_keys_resolve_like_frame_shown_at(num in -100i64..2000, den in 1i64..200) {
            let clock = cfr(30, 25);
            let t = Time::new(num, den);
            let a = one_track(&[(Key::Time(t), Some(bx(1.0)))]);
            let r = a.resolve(&clock, Fill::Linear).unwrap();
            // A time within 1/100 of a frame of a frame's time is that frame's time
            // (`FRAME_TOLERANCE`): 6/151 s stands for frame 1 at 0.04 s.
            let snapped = FrameTimeline::new(30, |i| clock.frame_time(i), clock.end_time()).snap(t);
            let distance = if snapped > t { snapped - t } else { t - snapped };
            prop_assert!(distance <= Time::new(1, 25 * 100));
            match clock.frame_shown_at(t) {
                Some(f) => {
                    prop_assert!(clock.frame_time(f) <= snapped);
                    prop_assert!(f + 1 == 30 || clock.frame_time(f + 1) > snapped);
                    prop_assert_eq!(only(&r, f), Some((bx(1.0), false)));
                    prop_assert_eq!(r.keys_outside_video, 0);
                }
                None => {
                    prop_assert!(r.is_empty());
                    prop_assert_eq!(r.keys_outside_video, 1);
                }
            }
        }
    }
}
