//! vidprep's own annotation JSON: the whole model, versioned, written and read back exactly.
//!
//! Schema, version 1:
//! ```json
//! {
//!   "vidprep_annotations": 1,
//!   "coords": "pixels",                      // or "normalized" (fractions of the frame)
//!   "time_origin": "first_frame",            // optional; default "timeline" (see below)
//!   "meta": {"source_format": "got10k", "source_path": "...", "fps": "25",
//!            "frame_size": [480, 360], "frame_count": 196, "fields": {"object_class": "bag"}},
//!   "tracks": [
//!     {"id": "1", "label": "bag", "keys": [
//!       {"frame": 0, "box": [292.23, 128.36, 438.19, 260.83], "extras": {"cover": 8}},
//!       {"time": "21/5", "absent": true}
//!     ]}
//!   ],
//!   "detections": [
//!     {"frame": 0, "box": [649.441, 231.502, 693.858, 317.632], "score": 0.995474, "label": "person"}
//!   ]
//! }
//! ```
//! - every key has exactly one of `frame` (0-based index) or `time` (exact seconds as text,
//!   `"4.2"` or `"21/5"`), and either `box` (`[x1, y1, x2, y2]`) or `"absent": true`;
//! - `time` counts on the video's timeline (from the input's start, as `cut --start` does)
//!   unless `"time_origin": "first_frame"` says it counts from the first frame (kept when
//!   V-STaR or Waymo times are saved);
//! - `meta`, `label`, `extras`, `score` and the `meta` members are optional; unknown members
//!   are errors (a misspelt member should not be ignored silently);
//! - times are exact fractions; coordinates are JSON numbers written in the shortest form that
//!   reads back to the same f64 (exact round trip needs serde_json's `float_roundtrip` feature).
//!
//! The writer puts one key or detection per line so that large files stay diffable.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::bbox::BBox;
use super::error::{AnnotationError, Location};
use super::model::{Annotations, Coords, Detection, Entry, Extras, Key, Meta, TimeOrigin, Track};
use super::text::{read_text, show_json};
use super::{Format, ReadOptions, Recognised, Shape, Sniffed};
use crate::vocab::time::Time;

/// The schema version this code writes and reads.
pub const NATIVE_VERSION: u64 = 1;

/// The member that marks a vidprep annotation file and holds its version.
pub const NATIVE_MARKER: &str = "vidprep_annotations";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileWire {
    #[allow(dead_code)] // checked before, kept in the schema (deny_unknown_fields)
    vidprep_annotations: u64,
    coords: CoordsWire,
    #[serde(default)]
    time_origin: TimeOriginWire,
    #[serde(default)]
    meta: MetaWire,
    #[serde(default)]
    tracks: Vec<TrackWire>,
    #[serde(default)]
    detections: Vec<DetectionWire>,
}

#[derive(Serialize, Deserialize, Clone, Copy, Default, PartialEq)]
#[serde(rename_all = "snake_case")]
enum TimeOriginWire {
    #[default]
    Timeline,
    FirstFrame,
}

#[derive(Serialize, Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum CoordsWire {
    Pixels,
    Normalized,
}

#[derive(Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct MetaWire {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    source_format: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    source_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fps: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    frame_size: Option<[u32; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    frame_count: Option<usize>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    fields: BTreeMap<String, Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TrackWire {
    id: String,
    #[serde(default)]
    label: Option<String>,
    #[serde(default, deserialize_with = "keys_in_span")]
    keys: KeysRead,
}

/// What a read keeps of a track's keys: those the request can use (see [`super::span`]),
/// with their indexes, and the first error of a key not kept.
#[derive(Default)]
struct KeysRead {
    kept: Vec<(usize, KeyWire)>,
    dropped_error: Option<(usize, &'static str)>,
    beyond: usize,
    outside: usize,
}

thread_local! {
    /// The frame count and span of the read under way on this thread ([`from_native_str_with`]).
    static KEY_FILTER: std::cell::RefCell<(Option<usize>, Option<std::ops::Range<usize>>)> =
        const { std::cell::RefCell::new((None, None)) };
}

const NO_KEY: &str = "expected exactly one of \"frame\" or \"time\"";
const NO_ENTRY: &str = "expected either \"box\": [x1, y1, x2, y2] or \"absent\": true";

/// A track's keys, read one at a time: keys keyed by frame past the video's end or outside
/// the span are counted, not kept, but for the nearest on either side (MOT's rule).
fn keys_in_span<'de, D: serde::Deserializer<'de>>(d: D) -> Result<KeysRead, D::Error> {
    struct Keys;
    impl<'de> serde::de::Visitor<'de> for Keys {
        type Value = KeysRead;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a sequence")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<KeysRead, A::Error> {
            let (frame_count, span) = KEY_FILTER.with(|f| f.borrow().clone());
            let mut out = KeysRead::default();
            // (index, key) held as the nearest before the span, after it, after the end.
            let mut before: Option<(usize, KeyWire)> = None;
            let mut after: Option<(usize, KeyWire)> = None;
            let mut after_end: Option<(usize, KeyWire)> = None;
            let mut ki = 0usize;
            while let Some(kw) = seq.next_element::<KeyWire>()? {
                let i = ki;
                ki += 1;
                let error = match (kw.frame, kw.time, kw.bbox.is_some(), kw.absent) {
                    (Some(_), Some(_), ..) | (None, None, ..) => Some(NO_KEY),
                    (_, _, true, false) | (_, _, false, true) => None,
                    _ => Some(NO_ENTRY),
                };
                let frame = match kw.frame {
                    Some(f) if kw.time.is_none() => f,
                    _ => {
                        out.kept.push((i, kw));
                        continue;
                    }
                };
                let hold =
                    |slot: &mut Option<(usize, KeyWire)>, kw, nearer: fn(usize, usize) -> bool| {
                        if slot
                            .as_ref()
                            .is_none_or(|(_, k)| nearer(k.frame.unwrap_or(0), frame))
                        {
                            *slot = Some((i, kw));
                        }
                    };
                let used = frame_count.is_none_or(|n| frame < n)
                    && span.as_ref().is_none_or(|s| s.contains(&frame));
                if let (false, Some(e)) = (used, error) {
                    out.dropped_error.get_or_insert((i, e));
                }
                if frame_count.is_some_and(|n| frame >= n) {
                    out.beyond += 1;
                    hold(&mut after_end, kw, |k, f| f < k);
                } else if let Some(s) = span.as_ref().filter(|s| !s.contains(&frame)) {
                    out.outside += 1;
                    if frame < s.start {
                        hold(&mut before, kw, |k, f| f > k);
                    } else {
                        hold(&mut after, kw, |k, f| f < k);
                    }
                } else {
                    out.kept.push((i, kw));
                }
            }
            for (held, past) in [(before, false), (after, false), (after_end, true)] {
                if let Some(h) = held {
                    if past {
                        out.beyond -= 1;
                    } else {
                        out.outside -= 1;
                    }
                    out.kept.push(h);
                }
            }
            out.kept.sort_by_key(|(i, _)| *i);
            Ok(out)
        }
    }
    d.deserialize_seq(Keys)
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyWire {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    frame: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    time: Option<Time>,
    #[serde(rename = "box", default, skip_serializing_if = "Option::is_none")]
    bbox: Option<[f64; 4]>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    absent: bool,
    #[serde(default, skip_serializing_if = "Extras::is_empty")]
    extras: Extras,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct DetectionWire {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    frame: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    time: Option<Time>,
    #[serde(rename = "box")]
    bbox: [f64; 4],
    #[serde(default, skip_serializing_if = "Option::is_none")]
    score: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    label: Option<String>,
}

fn split_key(key: Key) -> (Option<usize>, Option<Time>) {
    match key {
        Key::Frame(f) => (Some(f), None),
        Key::Time(t) => (None, Some(t)),
    }
}

fn box_array(b: &BBox) -> [f64; 4] {
    [b.x1, b.y1, b.x2, b.y2]
}

/// The annotations as vidprep JSON text. Fails (naming the place) on a non-finite number,
/// which JSON cannot hold.
pub fn to_native_string(annotations: &Annotations) -> Result<String, AnnotationError> {
    let unsaved = |at: String, what: &str| {
        AnnotationError::Usage(format!(
            "cannot save annotations as JSON: {at} has a non-finite {what}"
        ))
    };
    let meta = &annotations.meta;
    let meta_wire = MetaWire {
        source_format: meta.source_format.map(|f| f.name().to_string()),
        source_path: meta
            .source_path
            .as_ref()
            .map(|p| p.to_string_lossy().into_owned()),
        fps: meta.fps,
        frame_size: meta.frame_size.map(|(w, h)| [w, h]),
        frame_count: meta.frame_count,
        fields: meta.fields.clone(),
    };
    let coords = match annotations.coords {
        Coords::Pixels => CoordsWire::Pixels,
        Coords::Normalized => CoordsWire::Normalized,
    };
    let mut out = String::new();
    out.push_str("{\n");
    let _ = writeln!(out, "  \"{NATIVE_MARKER}\": {NATIVE_VERSION},");
    let _ = writeln!(out, "  \"coords\": {},", json(&coords));
    if annotations.time_origin == TimeOrigin::FirstFrame {
        let _ = writeln!(
            out,
            "  \"time_origin\": {},",
            json(&TimeOriginWire::FirstFrame)
        );
    }
    let _ = writeln!(out, "  \"meta\": {},", json(&meta_wire));
    out.push_str("  \"tracks\": [");
    for (ti, track) in annotations.tracks.iter().enumerate() {
        out.push_str(if ti == 0 { "\n" } else { ",\n" });
        let _ = write!(out, "    {{\"id\": {}", json(&track.id));
        if let Some(label) = &track.label {
            let _ = write!(out, ", \"label\": {}", json(label));
        }
        out.push_str(", \"keys\": [");
        for (ki, (key, entry)) in track.keys.iter().enumerate() {
            let (frame, time) = split_key(*key);
            let extras = track.extras.get(key).cloned().unwrap_or_default();
            let at = || format!("track {:?} {key}", track.id);
            let bbox = entry.bbox().map(box_array);
            if bbox.is_some_and(|b| b.iter().any(|v| !v.is_finite())) {
                return Err(unsaved(at(), "box coordinate"));
            }
            if extras.values().any(|v: f64| !v.is_finite()) {
                return Err(unsaved(at(), "extra value"));
            }
            let wire = KeyWire {
                frame,
                time,
                bbox,
                absent: bbox.is_none(),
                extras,
            };
            out.push_str(if ki == 0 { "\n" } else { ",\n" });
            let _ = write!(out, "      {}", json(&wire));
        }
        out.push_str(if track.keys.is_empty() {
            "]}"
        } else {
            "\n    ]}"
        });
    }
    out.push_str(if annotations.tracks.is_empty() {
        "],\n"
    } else {
        "\n  ],\n"
    });
    out.push_str("  \"detections\": [");
    for (di, d) in annotations.detections.iter().enumerate() {
        let (frame, time) = split_key(d.key);
        let at = || format!("detection {di} ({})", d.key);
        if !d.bbox.is_finite() {
            return Err(unsaved(at(), "box coordinate"));
        }
        if d.score.is_some_and(|s| !s.is_finite()) {
            return Err(unsaved(at(), "score"));
        }
        let wire = DetectionWire {
            frame,
            time,
            bbox: box_array(&d.bbox),
            score: d.score,
            label: d.label.clone(),
        };
        out.push_str(if di == 0 { "\n" } else { ",\n" });
        let _ = write!(out, "    {}", json(&wire));
    }
    out.push_str(if annotations.detections.is_empty() {
        "]\n}\n"
    } else {
        "\n  ]\n}\n"
    });
    Ok(out)
}

/// Compact JSON of a wire value. Serialising these plain structs, strings and maps of finite
/// numbers cannot fail; the fallback only keeps the writer panic-free.
fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|e| format!("\"<unserialisable: {e}>\""))
}

/// Writes the annotations as vidprep JSON.
#[cfg(test)]
pub fn write_native(path: &Path, annotations: &Annotations) -> Result<(), AnnotationError> {
    let text = to_native_string(annotations)?;
    std::fs::write(path, text).map_err(|e| AnnotationError::write(path, e))
}

/// Reads a vidprep JSON file.
pub fn read_native(path: &Path) -> Result<Annotations, AnnotationError> {
    let text = read_text(path)?;
    let mut a = from_native_str(&text, path)?;
    a.meta.source_path.get_or_insert_with(|| path.to_path_buf());
    Ok(a)
}

/// Parses vidprep JSON text; `path` is only used in error messages.
pub fn from_native_str(text: &str, path: &Path) -> Result<Annotations, AnnotationError> {
    from_native_str_with(text, path, &ReadOptions::default())
}

/// The value of the top level's [`NATIVE_MARKER`] member (the last when repeated), without
/// building the rest; `None` when the top level is not an object or has no such member.
pub(crate) fn native_marker(text: &str) -> Result<Option<Value>, serde_json::Error> {
    struct Probe(Option<Value>);
    impl<'de> Deserialize<'de> for Probe {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Probe, D::Error> {
            struct V;
            impl<'de> serde::de::Visitor<'de> for V {
                type Value = Probe;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("any JSON value")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<Probe, A::Error> {
                    let mut found = None;
                    while let Some(k) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                        if k == NATIVE_MARKER {
                            found = Some(map.next_value::<Value>()?);
                        } else {
                            map.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                    Ok(Probe(found))
                }
                fn visit_seq<A: serde::de::SeqAccess<'de>>(
                    self,
                    mut seq: A,
                ) -> Result<Probe, A::Error> {
                    while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                    Ok(Probe(None))
                }
                fn visit_bool<E>(self, _: bool) -> Result<Probe, E> {
                    Ok(Probe(None))
                }
                fn visit_i64<E>(self, _: i64) -> Result<Probe, E> {
                    Ok(Probe(None))
                }
                fn visit_u64<E>(self, _: u64) -> Result<Probe, E> {
                    Ok(Probe(None))
                }
                fn visit_f64<E>(self, _: f64) -> Result<Probe, E> {
                    Ok(Probe(None))
                }
                fn visit_str<E>(self, _: &str) -> Result<Probe, E> {
                    Ok(Probe(None))
                }
                fn visit_unit<E>(self) -> Result<Probe, E> {
                    Ok(Probe(None))
                }
            }
            d.deserialize_any(V)
        }
    }
    serde_json::from_str::<Probe>(text).map(|p| p.0)
}

/// [`from_native_str`] keeping only the keys `options` can use ([`ReadOptions::frame_count`],
/// [`ReadOptions::span`], the rule of [`super::span`]): the file is parsed without building a
/// JSON value, and the keys not kept are checked, counted and let go as they are read.
pub fn from_native_str_with(
    text: &str,
    path: &Path,
    options: &ReadOptions,
) -> Result<Annotations, AnnotationError> {
    // The same syntax errors as parsing a whole value, without building it.
    serde_json::from_str::<serde::de::IgnoredAny>(text)
        .map_err(|e| AnnotationError::json(path, &e))?;
    let marker = native_marker(text).map_err(|e| AnnotationError::json(path, &e))?;
    match &marker {
        Some(v) if v.as_u64() == Some(NATIVE_VERSION) => {}
        Some(v) => {
            return Err(AnnotationError::file(
                path,
                format!(
                    "expected \"{NATIVE_MARKER}\": {NATIVE_VERSION} (the version this vidprep reads), found {}",
                    show_json(v)
                ),
            ))
        }
        None => {
            return Err(AnnotationError::file(
                path,
                format!("expected a vidprep annotation file (an object with \"{NATIVE_MARKER}\": {NATIVE_VERSION})"),
            ))
        }
    }
    KEY_FILTER.with(|f| *f.borrow_mut() = (options.frame_count, options.span.clone()));
    let file = serde_json::from_str::<FileWire>(text);
    KEY_FILTER.with(|f| *f.borrow_mut() = (None, None));
    let file = file.map_err(|e| AnnotationError::json(path, &e))?;
    let (mut beyond, mut outside) = (0usize, 0usize);

    let key_of = |frame: Option<usize>, time: Option<Time>, at: &str| match (frame, time) {
        (Some(f), None) => Ok(Key::Frame(f)),
        (None, Some(t)) => Ok(Key::Time(t)),
        _ => Err(AnnotationError::at_item(
            path,
            at,
            "expected exactly one of \"frame\" or \"time\"",
        )),
    };
    let mut tracks = Vec::with_capacity(file.tracks.len());
    let mut seen_ids: HashMap<String, usize> = HashMap::new();
    for (ti, tw) in file.tracks.into_iter().enumerate() {
        if let Some(first) = seen_ids.insert(tw.id.clone(), ti) {
            return Err(AnnotationError::at_item(
                path,
                format!("tracks[{ti}]"),
                format!("a second track with id {:?} (the first is tracks[{first}]); expected unique ids", tw.id),
            ));
        }
        let mut track = Track {
            id: tw.id,
            label: tw.label,
            ..Track::default()
        };
        let mut key_at: HashMap<Key, usize> = HashMap::new();
        beyond += tw.keys.beyond;
        outside += tw.keys.outside;
        let mut dropped_error = tw.keys.dropped_error;
        for (ki, kw) in tw.keys.kept {
            if let Some((di, message)) = dropped_error.filter(|(di, _)| *di < ki) {
                return Err(AnnotationError::at_item(
                    path,
                    format!("tracks[{ti}].keys[{di}]"),
                    message,
                ));
            }
            let at = format!("tracks[{ti}].keys[{ki}]");
            let key = key_of(kw.frame, kw.time, &at)?;
            let entry = match (kw.bbox, kw.absent) {
                (Some([x1, y1, x2, y2]), false) => Entry::Present(BBox::new(x1, y1, x2, y2)),
                (None, true) => Entry::Absent,
                _ => {
                    return Err(AnnotationError::at_item(
                        path,
                        at,
                        "expected either \"box\": [x1, y1, x2, y2] or \"absent\": true",
                    ))
                }
            };
            if let Some(first) = key_at.insert(key, ki) {
                return Err(AnnotationError::at_item(
                    path,
                    at,
                    format!(
                        "track {:?} has a second entry for {key} (the first is tracks[{ti}].keys[{first}]); expected one per key",
                        track.id
                    ),
                ));
            }
            track.keys.insert(key, entry);
            if !kw.extras.is_empty() {
                track.extras.insert(key, kw.extras);
            }
            dropped_error = dropped_error.filter(|(di, _)| *di > ki);
        }
        if let Some((di, message)) = dropped_error {
            return Err(AnnotationError::at_item(
                path,
                format!("tracks[{ti}].keys[{di}]"),
                message,
            ));
        }
        tracks.push(track);
    }
    let mut detections = Vec::with_capacity(file.detections.len());
    for (di, dw) in file.detections.into_iter().enumerate() {
        let key = key_of(dw.frame, dw.time, &format!("detections[{di}]"))?;
        let [x1, y1, x2, y2] = dw.bbox;
        detections.push(Detection {
            key,
            bbox: BBox::new(x1, y1, x2, y2),
            score: dw.score,
            label: dw.label,
        });
    }
    let source_format = match file.meta.source_format {
        None => None,
        Some(name) => Some(name.parse::<Format>().ok().filter(|f| *f != Format::Auto).ok_or_else(|| {
            AnnotationError::invalid(
                path,
                Location::Item("meta.source_format".into()),
                format!("expected a format name (got10k, mot, vstar, waymo, plain, vidprep), found {name:?}"),
            )
        })?),
    };
    let mut fields = file.meta.fields;
    if beyond > 0 {
        fields.insert(super::mot::ROWS_PAST_THE_VIDEO.into(), beyond.into());
    }
    if outside > 0 {
        fields.insert(super::mot::ROWS_OUTSIDE_THE_SPAN.into(), outside.into());
    }
    Ok(Annotations {
        tracks,
        detections,
        coords: match file.coords {
            CoordsWire::Pixels => Coords::Pixels,
            CoordsWire::Normalized => Coords::Normalized,
        },
        time_origin: match file.time_origin {
            TimeOriginWire::Timeline => TimeOrigin::Timeline,
            TimeOriginWire::FirstFrame => TimeOrigin::FirstFrame,
        },
        meta: Meta {
            source_format,
            source_path: file.meta.source_path.map(PathBuf::from),
            fps: file.meta.fps,
            frame_size: file.meta.frame_size.map(|[w, h]| (w, h)),
            frame_count: file.meta.frame_count,
            fields,
        },
    })
}

/// vidprep's own versioned JSON (read and written). Registered in [`super::FORMATS`].
pub(crate) struct NativeFormat;

impl super::AnnotationFormat for NativeFormat {
    fn name(&self) -> &'static str {
        "vidprep"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["native"]
    }
    fn recognise(&self, file: &Sniffed) -> Recognised {
        match file.shape {
            Shape::Json { outline, .. }
                if !outline.list && outline.member(NATIVE_MARKER).is_some() =>
            {
                Recognised::Yes
            }
            Shape::Json { .. } => Recognised::No(format!("no \"{NATIVE_MARKER}\" member")),
            _ => Recognised::NotApplicable,
        }
    }
    fn read(&self, path: &Path, options: &ReadOptions) -> Result<Annotations, AnnotationError> {
        let text = read_text(path)?;
        self.read_text(path, &text, options)
    }

    fn read_text(
        &self,
        path: &Path,
        text: &str,
        options: &ReadOptions,
    ) -> Result<Annotations, AnnotationError> {
        let mut a = from_native_str_with(text, path, options)?;
        a.meta.source_path.get_or_insert_with(|| path.to_path_buf());
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::annotations::model::Extras;
    use crate::annotations::test_support::fixture;
    use crate::annotations::{read, ReadOptions};
    use proptest::prelude::*;

    #[test]
    fn reads_the_documented_fixture() {
        let a = read(
            &fixture("native/example.vidprep.json"),
            Format::Auto,
            &ReadOptions::default(),
        )
        .unwrap();
        assert_eq!(a.meta.source_format, Some(Format::Got10k));
        assert_eq!(a.meta.fps, Some(Time::from_secs(25)));
        assert_eq!(a.meta.frame_size, Some((480, 360)));
        let t = &a.tracks[0];
        assert_eq!(t.label.as_deref(), Some("bag"));
        assert_eq!(
            t.keys[&Key::Frame(0)],
            Entry::Present(BBox::new(292.23, 128.36, 438.19, 260.83))
        );
        assert_eq!(t.keys[&Key::Time(Time::new(21, 5))], Entry::Absent);
        assert_eq!(t.extras[&Key::Frame(0)]["cover"], 8.0);
        assert_eq!(a.detections[0].score, Some(0.995474));
        assert_eq!(a.detections[0].label.as_deref(), Some("person"));
    }

    #[test]
    fn round_trips_a_written_file() {
        let a = read(
            &fixture("native/example.vidprep.json"),
            Format::Vidprep,
            &ReadOptions::default(),
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.json");
        write_native(&p, &a).unwrap();
        let b = read_native(&p).unwrap();
        assert_eq!(a, b);
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            to_native_string(&b).unwrap()
        );
    }

    #[test]
    fn bad_files_are_located() {
        let path = Path::new("n.json");
        let cases = [
            (r#"{"vidprep_annotations": 2, "coords": "pixels"}"#, "n.json: expected \"vidprep_annotations\": 1 (the version this vidprep reads), found 2"),
            (r#"{"coords": "pixels"}"#, "n.json: expected a vidprep annotation file (an object with \"vidprep_annotations\": 1)"),
            (
                r#"{"vidprep_annotations": 1, "coords": "pixels", "tracks": [{"id": "a", "keys": [{"frame": 1, "time": "2", "absent": true}]}]}"#,
                "n.json tracks[0].keys[0]: expected exactly one of \"frame\" or \"time\"",
            ),
            (
                r#"{"vidprep_annotations": 1, "coords": "pixels", "tracks": [{"id": "a", "keys": [{"frame": 1}]}]}"#,
                "n.json tracks[0].keys[0]: expected either \"box\": [x1, y1, x2, y2] or \"absent\": true",
            ),
            (
                r#"{"vidprep_annotations": 1, "coords": "pixels", "tracks": [{"id": "a", "keys": [{"frame": 1, "absent": true}, {"frame": 1, "box": [1, 2, 3, 4]}]}]}"#,
                "n.json tracks[0].keys[1]: track \"a\" has a second entry for frame 1 (the first is tracks[0].keys[0]); expected one per key",
            ),
            (
                r#"{"vidprep_annotations": 1, "coords": "pixels", "tracks": [{"id": "a"}, {"id": "a"}]}"#,
                "n.json tracks[1]: a second track with id \"a\" (the first is tracks[0]); expected unique ids",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(from_native_str(text, path).unwrap_err().to_string(), want);
        }
        let err = from_native_str(
            "{\"vidprep_annotations\": 1,\n \"coords\": \"pixels\", \"trakcs\": []}",
            path,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("n.json line 2 column ") && err.contains("unknown field `trakcs`"),
            "{err}"
        );
        let mut a = Annotations::new(Coords::Pixels);
        let mut t = Track::new("x");
        t.insert(
            Key::Frame(3),
            Entry::Present(BBox::new(f64::NAN, 0.0, 1.0, 1.0)),
        )
        .unwrap();
        a.tracks.push(t);
        assert_eq!(
            to_native_string(&a).unwrap_err().to_string(),
            "cannot save annotations as JSON: track \"x\" frame 3 has a non-finite box coordinate"
        );
    }

    fn finite() -> impl Strategy<Value = f64> {
        prop_oneof![
            any::<f64>().prop_filter("finite", |v| v.is_finite()),
            -5000.0f64..5000.0,
            (0i32..4000).prop_map(|v| v as f64 / 7.0),
            Just(0.0),
            Just(-0.0),
        ]
    }

    fn key() -> impl Strategy<Value = Key> {
        prop_oneof![
            (0usize..100_000).prop_map(Key::Frame),
            (-1_000_000i64..1_000_000, 1i64..100_000).prop_map(|(n, d)| Key::Time(Time::new(n, d))),
        ]
    }

    fn entry() -> impl Strategy<Value = Entry> {
        prop_oneof![
            1 => Just(Entry::Absent),
            4 => (finite(), finite(), finite(), finite()).prop_map(|(a, b, c, d)| Entry::Present(BBox::new(a, b, c, d))),
        ]
    }

    fn text() -> impl Strategy<Value = String> {
        prop_oneof!["[a-z0-9 _-]{0,8}", "\\PC{0,6}"]
    }

    fn track() -> impl Strategy<Value = Track> {
        (
            text(),
            proptest::option::of(text()),
            proptest::collection::btree_map(
                key(),
                (
                    entry(),
                    proptest::option::of(proptest::collection::btree_map(
                        "[a-z]{1,5}",
                        finite(),
                        0..3,
                    )),
                ),
                0..12,
            ),
        )
            .prop_map(|(id, label, keyed)| {
                let mut t = Track {
                    id,
                    label,
                    ..Track::default()
                };
                for (k, (e, extras)) in keyed {
                    t.keys.insert(k, e);
                    if let Some(x) = extras.map(Extras::from).filter(|x: &Extras| !x.is_empty()) {
                        t.extras.insert(k, x);
                    }
                }
                t
            })
    }

    fn detection() -> impl Strategy<Value = Detection> {
        (
            key(),
            finite(),
            finite(),
            finite(),
            finite(),
            proptest::option::of(finite()),
            proptest::option::of(text()),
        )
            .prop_map(|(key, a, b, c, d, score, label)| Detection {
                key,
                bbox: BBox::new(a, b, c, d),
                score,
                label,
            })
    }

    fn annotations() -> impl Strategy<Value = Annotations> {
        (
            proptest::collection::vec(track(), 0..5),
            proptest::collection::vec(detection(), 0..6),
            (any::<bool>(), any::<bool>()),
            proptest::option::of((1i64..100_000, 1i64..1001)),
            proptest::option::of((1u32..10_000, 1u32..10_000)),
            proptest::collection::btree_map(
                "[a-z_]{1,8}",
                prop_oneof![
                    text().prop_map(Value::from),
                    finite().prop_map(Value::from),
                    any::<i64>().prop_map(Value::from)
                ],
                0..4,
            ),
        )
            .prop_map(
                |(mut tracks, detections, (normalized, first_frame), fps, size, fields)| {
                    // Track ids must be unique in a file.
                    for (i, t) in tracks.iter_mut().enumerate() {
                        t.id = format!("{i}-{}", t.id);
                    }
                    Annotations {
                        tracks,
                        detections,
                        coords: if normalized {
                            Coords::Normalized
                        } else {
                            Coords::Pixels
                        },
                        time_origin: if first_frame {
                            TimeOrigin::FirstFrame
                        } else {
                            TimeOrigin::Timeline
                        },
                        meta: Meta {
                            source_format: Some(Format::Mot),
                            source_path: Some(PathBuf::from("some/where.txt")),
                            fps: fps.map(|(n, d)| Time::new(n, d)),
                            frame_size: size,
                            frame_count: size.map(|(w, _)| w as usize),
                            fields,
                        },
                    }
                },
            )
    }

    proptest! {
        #[test]
        fn native_json_round_trips_exactly(a in annotations()) {
            let text = to_native_string(&a).unwrap();
            let b = from_native_str(&text, Path::new("mem.json")).unwrap();
            prop_assert_eq!(&b, &a);
            // Bit-exact, including -0.0: writing again gives the same text.
            prop_assert_eq!(to_native_string(&b).unwrap(), text);
        }
    }
}
