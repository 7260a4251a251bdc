//! The format-neutral annotation model: tracks of keyed boxes ([`Track`]), untracked
//! detections ([`Detection`]), and the file-level [`Annotations`] with its [`Meta`].
//!
//! Conventions: boxes are `x1,y1,x2,y2` on the upright stored grid ([`super::Grid`]; pixels,
//! or fractions of the frame when [`Coords::Normalized`]); frame keys are 0-based; time keys are exact seconds
//! counted from the file's [`TimeOrigin`]: the video's timeline (what `cut --start`, ffmpeg's
//! `-ss` and players count: seconds from the input's start) unless the format counts from the
//! first frame (V-STaR). Every reader converts to these at its edge.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

use super::bbox::BBox;
use super::error::{AnnotationError, Location};
use super::Format;
use crate::vocab::time::Time;

/// When an annotation applies: a 0-based frame index of the video, or a time in seconds (from
/// the file's `TimeOrigin`). Frame keys sort before time keys; within a kind they sort by value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Key {
    /// A 0-based frame index of the video.
    Frame(usize),
    /// Exact seconds from the file's `TimeOrigin`.
    Time(Time),
}

/// What a file's time keys count from. Resolution puts every time on the video's timeline;
/// the two differ only for a video whose first frame is shown after the input's start (an
/// AVI with B-frames, audio that starts first, an edit list that delays the video).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TimeOrigin {
    /// Seconds on the video's timeline: from the input's start, as `cut --start`, ffmpeg's
    /// `-ss` and players count them (vidprep JSON, plain CSV/JSON).
    #[default]
    Timeline,
    /// Seconds from the video's first frame: V-STaR's `timestamp` is `frame_index / fps` and
    /// its evaluation takes the whole video as `[0, frame_count / fps]`; Waymo's first
    /// `timestamp_micros` is the first frame. Moved onto the timeline by adding the first
    /// frame's time.
    FirstFrame,
}

impl TimeOrigin {
    /// The name files and sidecars write: `timeline` or `first_frame`.
    pub fn name(self) -> &'static str {
        match self {
            TimeOrigin::Timeline => "timeline",
            TimeOrigin::FirstFrame => "first_frame",
        }
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Key::Frame(i) => write!(f, "frame {i}"),
            Key::Time(t) => write!(f, "time {t}s"),
        }
    }
}

/// What a track says at one key: a box, or that the object is not visible.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Entry {
    /// The object is visible in this box.
    Present(BBox),
    /// The object is not visible here (occluded, out of view, or a NaN / zero-size row).
    Absent,
}

impl Entry {
    /// `Present` for a finite box with positive area, `Absent` otherwise (NaN rows, zero-size
    /// boxes: the convention of GOT-10k and most tracking datasets for "not visible").
    pub fn from_box(bbox: BBox) -> Entry {
        if bbox.has_area() {
            Entry::Present(bbox)
        } else {
            Entry::Absent
        }
    }

    /// The box of a `Present` entry; `None` for `Absent`.
    pub fn bbox(&self) -> Option<&BBox> {
        match self {
            Entry::Present(b) => Some(b),
            Entry::Absent => None,
        }
    }
}

/// Extra per-key numbers a format carries (GOT-10k `cover`, MOT `conf`/`class`/`visibility`,
/// plain `score`), by name, in name order.
///
/// Compact because a file may hold millions of keys: a short sorted vector (formats carry one
/// to three extras), the names formats use shared as static text, so one key's extras cost one
/// allocation of 32 bytes per extra (a map of names would cost a node of about 370 bytes and a
/// string per name).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Extras(Vec<(Cow<'static, str>, f64)>);

/// Extra names the readers use, shared rather than allocated per key.
const KNOWN_EXTRAS: [&str; 8] = [
    "class",
    "conf",
    "cover",
    "score",
    "visibility",
    "world_x",
    "world_y",
    "world_z",
];

impl Extras {
    /// No extras.
    pub fn new() -> Extras {
        Extras(Vec::new())
    }

    /// Sets `name` to `value`; the previous value, if any.
    pub fn insert(&mut self, name: &str, value: f64) -> Option<f64> {
        match self.0.binary_search_by(|(n, _)| n.as_ref().cmp(name)) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, value)),
            Err(i) => {
                let name = match KNOWN_EXTRAS.iter().find(|k| **k == name) {
                    Some(k) => Cow::Borrowed(*k),
                    None => Cow::Owned(name.to_string()),
                };
                self.0.insert(i, (name, value));
                None
            }
        }
    }

    /// The value of `name`.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.0
            .binary_search_by(|(n, _)| n.as_ref().cmp(name))
            .ok()
            .map(|i| self.0[i].1)
    }

    /// The extras, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, f64)> + '_ {
        self.0.iter().map(|(n, v)| (n.as_ref(), *v))
    }

    /// The values, in name order.
    pub fn values(&self) -> impl Iterator<Item = f64> + '_ {
        self.0.iter().map(|(_, v)| *v)
    }

    /// The number of extras.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::ops::Index<&str> for Extras {
    type Output = f64;
    fn index(&self, name: &str) -> &f64 {
        match self.0.binary_search_by(|(n, _)| n.as_ref().cmp(name)) {
            Ok(i) => &self.0[i].1,
            Err(_) => panic!("no extra named {name:?}"),
        }
    }
}

impl FromIterator<(String, f64)> for Extras {
    fn from_iter<I: IntoIterator<Item = (String, f64)>>(iter: I) -> Extras {
        let mut out = Extras::new();
        for (n, v) in iter {
            out.insert(&n, v);
        }
        out
    }
}

impl From<BTreeMap<String, f64>> for Extras {
    fn from(map: BTreeMap<String, f64>) -> Extras {
        map.into_iter().collect()
    }
}

impl serde::Serialize for Extras {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

impl<'de> serde::Deserialize<'de> for Extras {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Extras, D::Error> {
        BTreeMap::<String, f64>::deserialize(d).map(Extras::from)
    }
}

/// One object over time. At most one entry per key (a `BTreeMap`, sorted by key).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Track {
    /// The track's id as text, unique within the file (the MOT track number, the GOT-10k
    /// folder name, a V-STaR or plain-file object id).
    pub id: String,
    /// Class or object name to show next to the box (GOT-10k `object_class`, MOT class, ...).
    pub label: Option<String>,
    /// What the track says at each key: a box or [`Entry::Absent`]. Keys not listed are
    /// unknown (gaps that resolution may fill).
    pub keys: BTreeMap<Key, Entry>,
    /// Optional extras per key; only keys that have some appear here.
    pub extras: BTreeMap<Key, Extras>,
}

impl Track {
    /// An empty track with this id, no label and no keys.
    pub fn new(id: impl Into<String>) -> Track {
        Track {
            id: id.into(),
            ..Track::default()
        }
    }

    /// Adds an entry; a second entry for the same key is refused with
    /// `AnnotationError::Usage` naming the track and key.
    pub fn insert(&mut self, key: Key, entry: Entry) -> Result<(), AnnotationError> {
        if self.keys.contains_key(&key) {
            return Err(AnnotationError::Usage(format!(
                "track {:?} already has an entry for {key}; one box per track and key",
                self.id
            )));
        }
        self.keys.insert(key, entry);
        Ok(())
    }

    /// The number of keys with a box.
    pub fn present_count(&self) -> usize {
        self.keys
            .values()
            .filter(|e| matches!(e, Entry::Present(_)))
            .count()
    }
}

/// An untracked box (a MOT row with id < 0, e.g. public detections): drawn only on its own
/// frame, never filled between frames.
#[derive(Clone, Debug, PartialEq)]
pub struct Detection {
    /// The frame or time the box belongs to.
    pub key: Key,
    /// The box, in the annotations' [`Coords`].
    pub bbox: BBox,
    /// The detector's confidence (MOT `conf`, native `score`); `None` when the file gives
    /// none.
    pub score: Option<f64>,
    /// Class name to show next to the box (the MOT class name); `None` when unknown.
    pub label: Option<String>,
}

/// The unit of box coordinates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Coords {
    /// Pixels of the frame (on the stored grid, see [`super::Grid`]).
    #[default]
    Pixels,
    /// Fractions `0..1` of the frame's width and height; turned into pixels at resolution
    /// time.
    Normalized,
}

impl Coords {
    /// The unit's name as files and sidecars write it: `pixels` or `normalized`.
    pub fn name(self) -> &'static str {
        match self {
            Coords::Pixels => "pixels",
            Coords::Normalized => "normalized",
        }
    }
}

/// What the source file says about itself, beyond the boxes.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Meta {
    /// The format the annotations were read from (never `Format::Auto`).
    pub source_format: Option<Format>,
    /// The file or folder the annotations were read from.
    pub source_path: Option<PathBuf>,
    /// The annotation rate in frames per second: GOT-10k `anno_fps` (10 when
    /// `meta_info.ini` does not say), V-STaR `fps`.
    pub fps: Option<Time>,
    /// The frame size the file declares (V-STaR `width`, `height`).
    pub frame_size: Option<(u32, u32)>,
    /// The frame count the file declares (V-STaR `frame_count`).
    pub frame_count: Option<usize>,
    /// Everything else the file says, by its own names (GOT-10k `object_class`, `motion_class`;
    /// V-STaR `vid`, `domain`, `question`, `timestamps`; counts of rows a filter dropped; ...).
    pub fields: BTreeMap<String, serde_json::Value>,
}

/// The [`Meta::fields`] entry where a reader lists what it noticed but read anyway (a JSON
/// list of texts, each naming the entry: a V-STaR box whose `frame_index` and `timestamp`
/// name different frames); whoever draws or records the boxes repeats them as warnings.
pub const READ_WARNINGS: &str = "read_warnings";

/// Appends `warning` (when there is one) to `meta`'s [`READ_WARNINGS`].
pub(crate) fn push_read_warning(meta: &mut Meta, warning: Option<String>) {
    let Some(warning) = warning else { return };
    let list = meta
        .fields
        .entry(READ_WARNINGS.to_string())
        .or_insert_with(|| serde_json::Value::Array(Vec::new()));
    if let serde_json::Value::Array(items) = list {
        items.push(serde_json::Value::String(warning));
    }
}

/// A file's annotations in the common model.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Annotations {
    /// The tracked objects, in the order the file first mentions them.
    pub tracks: Vec<Track>,
    /// Untracked boxes, each drawn only at its own key.
    pub detections: Vec<Detection>,
    /// The unit of every box in `tracks` and `detections`.
    pub coords: Coords,
    /// What the time keys count from.
    pub time_origin: TimeOrigin,
    /// What the file says about itself.
    pub meta: Meta,
}

impl Annotations {
    /// No tracks, no detections, empty meta, boxes in `coords`.
    pub fn new(coords: Coords) -> Annotations {
        Annotations {
            coords,
            ..Annotations::default()
        }
    }

    /// What to add to a time key to put it on the timeline of a video whose first frame is
    /// at `first_frame_time` (zero for `TimeOrigin::Timeline`).
    pub fn time_shift(&self, first_frame_time: Time) -> Time {
        match self.time_origin {
            TimeOrigin::Timeline => Time::ZERO,
            TimeOrigin::FirstFrame => first_frame_time,
        }
    }

    /// The index of the track with this id.
    pub fn track_index(&self, id: &str) -> Option<usize> {
        self.tracks.iter().position(|t| t.id == id)
    }

    /// Number of track keys (present or absent) plus detections.
    pub fn key_count(&self) -> usize {
        self.tracks.iter().map(|t| t.keys.len()).sum::<usize>() + self.detections.len()
    }

    /// Number of boxes (present track keys plus detections).
    pub fn box_count(&self) -> usize {
        self.tracks.iter().map(|t| t.present_count()).sum::<usize>() + self.detections.len()
    }

    /// True when no track has a key (present or absent) and there are no detections.
    pub fn is_empty(&self) -> bool {
        self.tracks.iter().all(|t| t.keys.is_empty()) && self.detections.is_empty()
    }

    /// Pixel boxes moved onto another pixel grid: x multiplied by `sx`, y by `sy`
    /// (normalised boxes, fractions of any grid, are left as they are).
    pub fn rescale_pixels(&mut self, sx: f64, sy: f64) {
        if self.coords != Coords::Pixels || (sx == 1.0 && sy == 1.0) {
            return;
        }
        for track in &mut self.tracks {
            for entry in track.keys.values_mut() {
                if let Entry::Present(b) = entry {
                    *b = b.scaled(sx, sy);
                }
            }
        }
        for d in &mut self.detections {
            d.bbox = d.bbox.scaled(sx, sy);
        }
    }

    /// The same annotations in pixels of a `width` x `height` frame (unchanged when already
    /// pixels).
    pub fn to_pixels(&self, width: u32, height: u32) -> Annotations {
        let mut out = self.clone();
        if self.coords == Coords::Normalized {
            let (sx, sy) = (width as f64, height as f64);
            for track in &mut out.tracks {
                for entry in track.keys.values_mut() {
                    if let Entry::Present(b) = entry {
                        *b = b.scaled(sx, sy);
                    }
                }
            }
            for d in &mut out.detections {
                d.bbox = d.bbox.scaled(sx, sy);
            }
            out.coords = Coords::Pixels;
        }
        out
    }
}

/// Collects reader rows into tracks, remembering where each key came from so that a duplicate
/// or a conflicting label is reported with both places.
pub(crate) struct TrackSet<'a> {
    path: &'a Path,
    tracks: Vec<Track>,
    by_id: HashMap<String, usize>,
    key_origin: HashMap<(usize, Key), Location>,
    label_origin: Vec<Option<Location>>,
    /// Where boxes with a non-finite or absurd coordinate, or a negative size, were read:
    /// kept as absent, and named in a read warning rather than dropped silently.
    unusable: Vec<Location>,
    unusable_count: usize,
}

/// The most places an unusable-box warning lists.
const UNUSABLE_LISTED: usize = 10;

/// Coordinates beyond this (pixels, or fractions of the frame) fit no video: a value such as
/// `1e308` is a broken row, not a box.
const ABSURD_COORDINATE: f64 = 1e7;

impl<'a> TrackSet<'a> {
    pub(crate) fn new(path: &'a Path) -> TrackSet<'a> {
        TrackSet {
            path,
            tracks: Vec::new(),
            by_id: HashMap::new(),
            key_origin: HashMap::new(),
            label_origin: Vec::new(),
            unusable: Vec::new(),
            unusable_count: 0,
        }
    }

    /// Notes a box read at `at` that cannot be drawn: a NaN or infinite coordinate, one
    /// beyond any frame (`1e308`), or a negative width or height. (Zero-size boxes are the
    /// datasets' "not visible" and are not noted.) The box still becomes `Entry::Absent`.
    pub(crate) fn note_box(&mut self, bbox: &BBox, at: &Location) {
        let absurd = [bbox.x1, bbox.y1, bbox.x2, bbox.y2]
            .iter()
            .any(|v| v.abs() > ABSURD_COORDINATE);
        if !bbox.is_finite() || absurd || bbox.width() < 0.0 || bbox.height() < 0.0 {
            self.unusable_count += 1;
            if self.unusable.len() < UNUSABLE_LISTED {
                self.unusable.push(at.clone());
            }
        }
    }

    /// The read warning naming the boxes [`note_box`](Self::note_box) found, if any.
    pub(crate) fn unusable_warning(&self) -> Option<String> {
        if self.unusable_count == 0 {
            return None;
        }
        let places: Vec<String> = self.unusable.iter().map(|l| l.to_string()).collect();
        let more = self.unusable_count - self.unusable.len();
        Some(format!(
            "{} box(es) with a NaN, infinite or absurd coordinate or a negative width or height \
             are not drawn (taken as absent): {}{}; expected finite pixel or normalised \
             coordinates with a width and height of 0 or more: fix those rows",
            self.unusable_count,
            places.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ))
    }

    /// Adds one keyed entry of track `id`, found at `at`.
    pub(crate) fn add(
        &mut self,
        id: &str,
        label: Option<&str>,
        key: Key,
        entry: Entry,
        extras: Extras,
        at: Location,
    ) -> Result<(), AnnotationError> {
        let index = match self.by_id.get(id) {
            Some(&i) => i,
            None => {
                self.tracks.push(Track::new(id));
                self.label_origin.push(None);
                self.by_id.insert(id.to_string(), self.tracks.len() - 1);
                self.tracks.len() - 1
            }
        };
        if let Some(first) = self.key_origin.get(&(index, key)) {
            return Err(AnnotationError::invalid(
                self.path,
                at,
                format!(
                    "track {id:?} has a second box for {key} (the first is at {first}); \
                     expected one box per track and {}",
                    if matches!(key, Key::Frame(_)) {
                        "frame"
                    } else {
                        "time"
                    }
                ),
            ));
        }
        let track = &mut self.tracks[index];
        if let Some(label) = label.filter(|l| !l.is_empty()) {
            match (&track.label, &self.label_origin[index]) {
                (Some(existing), Some(origin)) if existing != label => {
                    return Err(AnnotationError::invalid(
                        self.path,
                        at,
                        format!(
                            "track {id:?} is labelled {label:?} here but {existing:?} at {origin}; \
                             expected one label per track"
                        ),
                    ));
                }
                (None, _) => {
                    track.label = Some(label.to_string());
                    self.label_origin[index] = Some(at.clone());
                }
                _ => {}
            }
        }
        track.keys.insert(key, entry);
        if !extras.is_empty() {
            track.extras.insert(key, extras);
        }
        self.key_origin.insert((index, key), at);
        Ok(())
    }

    pub(crate) fn into_tracks(self) -> Vec<Track> {
        self.tracks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_sort_frames_then_times_exactly() {
        let mut keys = vec![
            Key::Time(Time::new(1, 3)),
            Key::Frame(5),
            Key::Time(Time::new(1, 4)),
            Key::Frame(2),
        ];
        keys.sort();
        assert_eq!(
            keys,
            vec![
                Key::Frame(2),
                Key::Frame(5),
                Key::Time(Time::new(1, 4)),
                Key::Time(Time::new(1, 3))
            ]
        );
    }

    #[test]
    fn extras_keep_name_order_share_known_names_and_round_trip_as_a_map() {
        let mut x = Extras::new();
        assert_eq!(x.insert("visibility", 0.5), None);
        assert_eq!(x.insert("conf", 1.0), None);
        assert_eq!(x.insert("my_score", 2.0), None);
        assert_eq!(x.insert("conf", 0.25), Some(1.0));
        let names: Vec<&str> = x.iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["conf", "my_score", "visibility"]);
        assert_eq!(
            (x.get("conf"), x["visibility"], x.get("nope")),
            (Some(0.25), 0.5, None)
        );
        assert!(matches!(x.0[0].0, Cow::Borrowed(_)) && matches!(x.0[1].0, Cow::Owned(_)));
        let text = serde_json::to_string(&x).unwrap();
        assert_eq!(text, r#"{"conf":0.25,"my_score":2.0,"visibility":0.5}"#);
        assert_eq!(serde_json::from_str::<Extras>(&text).unwrap(), x);
    }

    #[test]
    fn entry_from_box_marks_empty_and_nan_absent() {
        assert_eq!(
            Entry::from_box(BBox::from_xywh(1.0, 1.0, 0.0, 5.0)),
            Entry::Absent
        );
        assert_eq!(
            Entry::from_box(BBox::from_xywh(f64::NAN, 1.0, 2.0, 5.0)),
            Entry::Absent
        );
        assert!(matches!(
            Entry::from_box(BBox::from_xywh(1.0, 1.0, 2.0, 5.0)),
            Entry::Present(_)
        ));
    }

    #[test]
    fn track_insert_refuses_duplicates() {
        let mut t = Track::new("a");
        t.insert(Key::Frame(1), Entry::Absent).unwrap();
        let err = t
            .insert(Key::Frame(1), Entry::Absent)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "track \"a\" already has an entry for frame 1; one box per track and key"
        );
    }

    #[test]
    fn track_set_reports_duplicates_and_label_conflicts_with_both_places() {
        let path = Path::new("boxes.csv");
        let mut set = TrackSet::new(path);
        let b = Entry::Present(BBox::new(0.0, 0.0, 1.0, 1.0));
        set.add(
            "7",
            Some("car"),
            Key::Frame(3),
            b,
            Extras::new(),
            Location::Line(2),
        )
        .unwrap();
        let err = set
            .add(
                "7",
                None,
                Key::Frame(3),
                b,
                Extras::new(),
                Location::Line(9),
            )
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "boxes.csv line 9: track \"7\" has a second box for frame 3 (the first is at line 2); \
             expected one box per track and frame"
        );
        let err = set
            .add(
                "7",
                Some("truck"),
                Key::Frame(4),
                b,
                Extras::new(),
                Location::Line(10),
            )
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "boxes.csv line 10: track \"7\" is labelled \"truck\" here but \"car\" at line 2; \
             expected one label per track"
        );
    }

    #[test]
    fn to_pixels_scales_normalised_boxes() {
        let mut a = Annotations::new(Coords::Normalized);
        let mut t = Track::new("1");
        t.insert(
            Key::Frame(0),
            Entry::Present(BBox::new(0.25, 0.5, 0.75, 1.0)),
        )
        .unwrap();
        a.tracks.push(t);
        let p = a.to_pixels(640, 360);
        assert_eq!(p.coords, Coords::Pixels);
        assert_eq!(
            p.tracks[0].keys[&Key::Frame(0)],
            Entry::Present(BBox::new(160.0, 180.0, 480.0, 360.0))
        );
    }
}
