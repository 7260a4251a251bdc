//! V-STaR benchmark JSON (github.com/V-STaR-Bench/V-STaR): reading an item's `bboxes` as one
//! track, and writing a track over a video clock as a V-STaR item ([`VstarItem`]).
//!
//! An item is `{"vid", "domain", "fps", "width", "height", "frame_count", "question", "chain",
//! "object", "answer", "temporal_question", "timestamps": [start_s, end_s], "spatial_question",
//! "spatial_question_2", "bboxes": [...]}`. `bboxes` appears in two forms, both read:
//! - a list of `{"timestamp", "frame_index", "xmin", "ymin", "xmax", "ymax"}` (what the
//!   evaluation script reads);
//! - a list of `{"<timestamp>_<frame_index>": {"xmin", "ymin", "xmax", "ymax"}}` (the
//!   annotation README).
//!
//! Boxes are pixels of the item's `width` x `height`; `frame_index` is 0-based. The file may be
//! one item or a list of items (a whole benchmark file); `ReadOptions::item` picks one by `vid`
//! (or `#<index>`). Keys are times by default: when `frame_index / fps` agrees with the
//! timestamp to within half a frame, that exact fraction is the key (so a rounded `3.33` for
//! frame 100 at 30 fps lands exactly on frame 100).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::bbox::BBox;
use super::clock::FrameClock;
use super::error::{AnnotationError, Location};
use super::json_list::{JsonKind, Records};
use super::model::{
    push_read_warning, Annotations, Coords, Entry, Extras, Key, Meta, TimeOrigin, TrackSet,
    READ_WARNINGS,
};
use super::resolve::Fill;
use super::text::{
    json_time, open_text, parse_integer, parse_time, show_json, skip_byte_order_mark, snap_fps,
};
use super::{Format, KeyKind, ReadOptions, Recognised, Shape, Sniffed};
use crate::vocab::time::Time;

/// Fields that name an item, tried in order when selecting with `ReadOptions::item`.
const ID_FIELDS: [&str; 4] = ["vid", "id", "video_id", "qid"];

/// Reads one V-STaR item's boxes. The file is read as a stream: of a list of items (a whole
/// benchmark file), only the item asked for is kept (and each item's id, for the errors), so
/// memory follows that item's boxes, not the file.
pub fn read_vstar(path: &Path, options: &ReadOptions) -> Result<Annotations, AnnotationError> {
    read_vstar_stream(path, open_text(path)?, options)
}

/// [`read_vstar`] of the file `path` opened as `reader`, from its start.
pub(crate) fn read_vstar_stream(
    path: &Path,
    mut reader: impl std::io::BufRead,
    options: &ReadOptions,
) -> Result<Annotations, AnnotationError> {
    skip_byte_order_mark(&mut reader).map_err(|e| AnnotationError::read(path, e))?;
    let mut de = serde_json::Deserializer::from_reader(reader);
    read_vstar_from(path, &mut de, options)
}

/// [`read_vstar`] of the JSON that `de` reads (a file's stream, or its text).
fn read_vstar_from<'de, R: serde_json::de::Read<'de>>(
    path: &Path,
    de: &mut serde_json::Deserializer<R>,
    options: &ReadOptions,
) -> Result<Annotations, AnnotationError> {
    let wanted = options.item.as_deref();
    let top = serde::Deserializer::deserialize_any(&mut *de, TopVisitor { wanted })
        .map_err(|e| AnnotationError::json(path, &e))?;
    de.end().map_err(|e| AnnotationError::json(path, &e))?;
    let ((item, bboxes), prefix) = match top {
        Top::Item(kept) => (kept, String::new()),
        Top::List(pick) => {
            let (index, (item, bboxes)) = pick.select(path)?;
            let prefix = match item_id(&item) {
                Some(id) => format!("item {index} (vid {id:?}) "),
                None => format!("item {index} "),
            };
            ((item, bboxes), prefix)
        }
        Top::Other(other) => {
            return Err(AnnotationError::file(
                path,
                format!(
                    "expected a V-STaR item or a list of items, found {}",
                    show_json(&other)
                ),
            ))
        }
    };
    read_item(path, &item, bboxes.as_deref(), &prefix, options)
}

/// Whether the file `reader` reads from its start is a JSON list whose first element is an
/// object with a `"bboxes"` list (what auto-detection takes for V-STaR), told from that
/// element alone, without reading the rest of the file (the reader reads it, and reports its
/// errors). `false` also when it cannot tell: detection then reads the file as before. Leaves
/// `reader` anywhere.
pub(crate) fn is_item_list(mut reader: impl std::io::BufRead) -> bool {
    if skip_byte_order_mark(&mut reader).is_err() {
        return false;
    }
    // The first character that is not white space must open a list.
    loop {
        let Ok(buf) = std::io::BufRead::fill_buf(&mut reader) else {
            return false;
        };
        let Some(&first) = buf.first() else {
            return false;
        };
        if first.is_ascii_whitespace() {
            std::io::BufRead::consume(&mut reader, 1);
            continue;
        }
        if first != b'[' {
            return false;
        }
        break;
    }
    struct First<'a>(&'a mut bool);
    impl<'de> serde::de::Visitor<'de> for First<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            let first: Option<Value> = seq.next_element()?;
            *self.0 = first.is_some_and(|v| v.get("bboxes").is_some_and(Value::is_array));
            // The rest is left unread: the error this gives is not looked at.
            Err(serde::de::Error::custom("only the first element is read"))
        }
    }
    let mut found = false;
    let mut de = serde_json::Deserializer::from_reader(reader);
    let _ = serde::Deserializer::deserialize_seq(&mut de, First(&mut found));
    found
}

fn item_id(item: &Map<String, Value>) -> Option<String> {
    ID_FIELDS.iter().find_map(|f| match item.get(*f)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    })
}

/// A V-STaR file's top-level JSON: one item, a list of items (read as [`Pick`]), or neither.
enum Top {
    Item(Item),
    List(Pick),
    Other(Value),
}

/// What is kept of a list of items while it streams past: how many there are, the names of
/// the first few, where the item asked for is, and that item (or the candidates for it).
struct Pick {
    /// `ReadOptions::item`.
    wanted: Option<String>,
    /// The index `#<i>` of `wanted`, tried when no item has it as its vid.
    wanted_index: Option<usize>,
    count: usize,
    /// The first five items' ids (`#<i>` for an item without one), for the errors.
    first_ids: Vec<String>,
    /// The indexes of the items whose id is `wanted`.
    matches: Vec<usize>,
    /// The first item whose id is `wanted`.
    by_id: Option<Item>,
    /// The item at `wanted_index`, or the first item when nothing is wanted.
    by_index: Option<Item>,
    /// The first element that is not an object, and what it is.
    not_object: Option<(usize, String)>,
}

impl Pick {
    fn new(wanted: Option<&str>) -> Pick {
        Pick {
            wanted: wanted.map(str::to_string),
            wanted_index: wanted
                .and_then(|w| w.strip_prefix('#'))
                .and_then(|s| s.parse::<usize>().ok()),
            count: 0,
            first_ids: Vec::new(),
            matches: Vec::new(),
            by_id: None,
            by_index: None,
            not_object: None,
        }
    }

    /// Takes the next element of the list.
    fn take<E: serde::de::Error>(&mut self, element: Element) -> Result<(), E> {
        let index = self.count;
        self.count += 1;
        let (fields, bboxes) = match element {
            Element::Item(fields, bboxes) => (fields, bboxes),
            Element::Other(other) => {
                if self.not_object.is_none() {
                    self.not_object = Some((index, show_json(&other)));
                }
                if self.first_ids.len() < 5 {
                    self.first_ids.push(format!("#{index}"));
                }
                return Ok(());
            }
        };
        let id = item_id(&fields);
        if self.first_ids.len() < 5 {
            self.first_ids
                .push(id.clone().unwrap_or_else(|| format!("#{index}")));
        }
        let is_wanted = self.wanted.is_some() && id.is_some() && id == self.wanted;
        if is_wanted {
            self.matches.push(index);
        }
        let keep_by_id = is_wanted && self.by_id.is_none();
        let keep_by_index = match self.wanted {
            None => index == 0,
            Some(_) => self.wanted_index == Some(index),
        };
        if !(keep_by_id || keep_by_index) || self.not_object.is_some() {
            return Ok(());
        }
        // The kept item's boxes stay text until they are read, one box at a time (each other
        // item's are let go).
        if keep_by_id && keep_by_index {
            self.by_index = Some((fields.clone(), bboxes.clone()));
        } else if keep_by_index {
            self.by_index = Some((fields, bboxes));
            return Ok(());
        }
        self.by_id = Some((fields, bboxes));
        Ok(())
    }

    /// The item asked for and its index, or an error saying why there is none.
    fn select(self, path: &Path) -> Result<(usize, Item), AnnotationError> {
        if let Some((i, found)) = self.not_object {
            return Err(AnnotationError::at_item(
                path,
                format!("item {i}"),
                format!("expected a V-STaR item (a JSON object), found {found}"),
            ));
        }
        let some_ids = || {
            let more = if self.count > 5 { ", ..." } else { "" };
            format!("{}{more}", self.first_ids.join(", "))
        };
        let Some(wanted) = self.wanted.as_deref() else {
            return match (self.count, self.by_index) {
                (0, _) => Err(AnnotationError::file(
                    path,
                    "is an empty list; expected at least one V-STaR item",
                )),
                (1, Some(item)) => Ok((0, item)),
                (n, _) => Err(AnnotationError::file(
                    path,
                    format!(
                        "holds {n} items; choose one by its vid (or #index), e.g. {}",
                        some_ids()
                    ),
                )),
            };
        };
        match (self.matches.len(), self.by_id) {
            (1, Some(item)) => Ok((self.matches[0], item)),
            (0, _) => {
                if let Some(i) = self.wanted_index {
                    if let Some(item) = self.by_index {
                        return Ok((i, item));
                    }
                    return Err(AnnotationError::file(
                        path,
                        format!(
                            "has no item #{i}; it holds {} items (#0 to #{})",
                            self.count,
                            self.count.saturating_sub(1)
                        ),
                    ));
                }
                Err(AnnotationError::file(
                    path,
                    format!(
                        "has no item with vid {wanted:?}; its items include {}",
                        some_ids()
                    ),
                ))
            }
            (n, _) => Err(AnnotationError::file(
                path,
                format!(
                    "has {n} items with vid {wanted:?} ({}); choose one by index",
                    self.matches
                        .iter()
                        .map(|i| format!("#{i}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
        }
    }
}

/// One element of a list of items: an object's fields but its `"bboxes"` (left as text until
/// the item is known to be the one asked for), or something else.
enum Element {
    Item(Map<String, Value>, Option<Box<RawValue>>),
    Other(Value),
}

/// An item: its fields but `"bboxes"` (a place holder `null` keeps that field's place), and
/// the text of its `"bboxes"` (the last of the name), read one box at a time.
type Item = (Map<String, Value>, Option<Box<RawValue>>);

/// The fields of an item (an object) that `map` reads, its `"bboxes"` as text.
fn item_fields<'de, A: serde::de::MapAccess<'de>>(mut map: A) -> Result<Item, A::Error> {
    let mut fields = Map::new();
    let mut bboxes = None;
    while let Some(key) = map.next_key::<String>()? {
        if key == "bboxes" {
            // Kept as text (the last of the same name, as for any key); a place holder
            // keeps the field's place.
            bboxes = Some(map.next_value::<Box<RawValue>>()?);
            fields.insert(key, Value::Null);
        } else {
            let value: Value = map.next_value()?;
            fields.insert(key, value);
        }
    }
    Ok((fields, bboxes))
}

/// The visits of a JSON value that is not an object or a list, as a [`Value`] (for the
/// errors that show what was found).
macro_rules! visit_other_values {
    ($wrap:expr) => {
        fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Self::Value, E> {
            Ok($wrap(Value::Bool(v)))
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
            Ok($wrap(Value::from(v)))
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
            Ok($wrap(Value::from(v)))
        }
        fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Self::Value, E> {
            Ok($wrap(Value::from(v)))
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok($wrap(Value::from(v)))
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok($wrap(Value::Null))
        }
    };
}

/// Reads a V-STaR file's top level, streaming a list's elements into a [`Pick`].
struct TopVisitor<'w> {
    wanted: Option<&'w str>,
}

impl<'de> serde::de::Visitor<'de> for TopVisitor<'_> {
    type Value = Top;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a V-STaR item or a list of items")
    }
    visit_other_values!(Top::Other);
    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Top, A::Error> {
        // One item: its boxes are read one at a time, as a list's kept item's are.
        Ok(Top::Item(item_fields(map)?))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Top, A::Error> {
        let mut pick = Pick::new(self.wanted);
        while let Some(element) = seq.next_element_seed(ElementVisitor)? {
            pick.take(element)?;
        }
        Ok(Top::List(pick))
    }
}

/// Reads one element of a list of items ([`Element`]).
#[derive(Clone, Copy)]
struct ElementVisitor;

impl<'de> serde::de::DeserializeSeed<'de> for ElementVisitor {
    type Value = Element;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Element, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for ElementVisitor {
    type Value = Element;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a V-STaR item")
    }
    visit_other_values!(Element::Other);
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Element, A::Error> {
        let value = Value::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))?;
        Ok(Element::Other(value))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Element, A::Error> {
        let (fields, bboxes) = item_fields(map)?;
        Ok(Element::Item(fields, bboxes))
    }
}

struct RawBox {
    at: String,
    timestamp: Option<Time>,
    frame_index: Option<usize>,
    bbox: BBox,
}

/// Reads an item's boxes (`bboxes`, the text of its `"bboxes"`, one box built at a time).
fn read_item(
    path: &Path,
    item: &Map<String, Value>,
    bboxes: Option<&RawValue>,
    prefix: &str,
    options: &ReadOptions,
) -> Result<Annotations, AnnotationError> {
    let here = |rest: &str| format!("{prefix}{rest}").trim_end().to_string();
    let bboxes = match bboxes {
        Some(raw) if JsonKind::of(raw.get()) == JsonKind::List => raw.get(),
        Some(raw) => {
            let other: Value = serde_json::from_str(raw.get()).unwrap_or(Value::Null);
            return Err(AnnotationError::at_item(
                path,
                here("bboxes"),
                format!("expected a list of boxes, found {}", show_json(&other)),
            ));
        }
        None => {
            let at = if prefix.is_empty() {
                "item".to_string()
            } else {
                here("")
            };
            return Err(AnnotationError::at_item(
                path,
                at,
                "has no \"bboxes\" list; expected a V-STaR item",
            ));
        }
    };

    let fps = match item.get("fps") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            json_time(v)
                .filter(|t| *t > Time::ZERO)
                .map(snap_fps)
                .ok_or_else(|| {
                    AnnotationError::at_item(
                        path,
                        here("fps"),
                        format!("expected a positive frame rate, found {}", show_json(v)),
                    )
                })?,
        ),
    };
    let dimension = |name: &str| -> Result<Option<u64>, AnnotationError> {
        match item.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .or_else(|| {
                    v.as_f64()
                        .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                        .map(|f| f as u64)
                })
                .map(Some)
                .ok_or_else(|| {
                    AnnotationError::at_item(
                        path,
                        here(name),
                        format!("expected a whole number, found {}", show_json(v)),
                    )
                }),
        }
    };
    let width = dimension("width")?;
    let height = dimension("height")?;
    let frame_count = dimension("frame_count")?;

    let label = item
        .get("object")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());
    let mut set = TrackSet::new(path);
    let mut disagreeing: Vec<Value> = Vec::new();
    // Each box is keyed and added as it is read (none is held but in the set).
    let mut add_box = |b: RawBox| -> Result<(), AnnotationError> {
        let exact_time = match (b.timestamp, b.frame_index, fps) {
            (Some(t), Some(f), Some(fps)) => {
                let frame_time = Time::from_secs(f as i64).scale(fps.denom(), fps.numer());
                let diff = if t > frame_time {
                    t - frame_time
                } else {
                    frame_time - t
                };
                // A frame or more apart (diff * fps >= 1): the two keys name different frames.
                if diff.scale(fps.numer(), fps.denom()) >= Time::from_secs(1) {
                    let keyed = match options.prefer_keys {
                        KeyKind::Frame => "frame_index (--keys frame)",
                        _ => "timestamp (--keys frame keys it by frame_index)",
                    };
                    disagreeing.push(Value::from(format!(
                        "{}: \"frame_index\" {f} and \"timestamp\" {} disagree by {:.2} frames \
                         at the item's fps {}; the box is keyed by its {keyed}",
                        b.at,
                        crate::vocab::time::human_secs(t),
                        diff.scale(fps.numer(), fps.denom()).as_secs_f64(),
                        crate::vocab::time::human_secs(fps),
                    )));
                }
                // within half a frame: diff * fps * 2 <= 1
                Some(
                    if diff.scale(2 * fps.numer(), fps.denom()) <= Time::from_secs(1) {
                        frame_time
                    } else {
                        t
                    },
                )
            }
            (t, _, _) => t,
        };
        let key = match (options.prefer_keys, exact_time, b.frame_index) {
            (KeyKind::Time, Some(t), _) => Key::Time(t),
            (KeyKind::Frame, _, Some(f)) => Key::Frame(f),
            (_, Some(t), None) => Key::Time(t),
            (_, None, Some(f)) => Key::Frame(f),
            (_, None, None) => {
                return Err(AnnotationError::at_item(
                    path,
                    b.at,
                    "expected a \"timestamp\" or a \"frame_index\"",
                ));
            }
        };
        set.note_box(&b.bbox, &Location::Item(b.at.clone()));
        set.add(
            "1",
            label,
            key,
            Entry::from_box(b.bbox),
            Extras::new(),
            Location::Item(b.at),
        )?;
        Ok(())
    };
    for element in Records::of_list(bboxes) {
        let (j, entry) = element.map_err(|e| AnnotationError::read(path, e))?;
        let entry = &entry;
        let at = here(&format!("bboxes[{j}]"));
        let Value::Object(map) = entry else {
            return Err(AnnotationError::at_item(
                path,
                at,
                format!("expected a box object, found {}", show_json(entry)),
            ));
        };
        if map.contains_key("xmin") {
            let timestamp = match map.get("timestamp") {
                None | Some(Value::Null) => None,
                Some(v) => Some(json_time(v).ok_or_else(|| {
                    AnnotationError::at_item(
                        path,
                        &at,
                        format!("\"timestamp\": expected seconds, found {}", show_json(v)),
                    )
                })?),
            };
            let frame_index = match map.get("frame_index") {
                None | Some(Value::Null) => None,
                Some(v) => Some(json_index(v).ok_or_else(|| {
                    AnnotationError::at_item(
                        path,
                        &at,
                        format!(
                            "\"frame_index\": expected a frame index 0, 1, ..., found {}",
                            show_json(v)
                        ),
                    )
                })?),
            };
            let bbox = box_of(path, &at, map)?;
            add_box(RawBox {
                at,
                timestamp,
                frame_index,
                bbox,
            })?;
        } else {
            if map.is_empty() {
                return Err(AnnotationError::at_item(
                    path,
                    at,
                    "is empty; expected {\"timestamp\", \"frame_index\", \"xmin\", ...} or {\"<timestamp>_<frame_index>\": {\"xmin\", ...}}",
                ));
            }
            for (k, v) in map {
                let at = format!("{at} {k:?}");
                let parsed = k
                    .rsplit_once('_')
                    .and_then(|(t, f)| Some((parse_time(t)?, parse_integer(f)?)));
                let Some((timestamp, frame)) = parsed.filter(|(_, f)| *f >= 0) else {
                    return Err(AnnotationError::at_item(
                        path,
                        at,
                        "expected a key \"<timestamp>_<frame_index>\" (e.g. \"3.5_105\") or a box with \"xmin\"",
                    ));
                };
                let Value::Object(inner) = v else {
                    return Err(AnnotationError::at_item(
                        path,
                        at,
                        format!(
                            "expected {{\"xmin\", \"ymin\", \"xmax\", \"ymax\"}}, found {}",
                            show_json(v)
                        ),
                    ));
                };
                let bbox = box_of(path, &at, inner)?;
                add_box(RawBox {
                    at,
                    timestamp: Some(timestamp),
                    frame_index: Some(frame as usize),
                    bbox,
                })?;
            }
        }
    }

    let mut annotations = Annotations::new(Coords::Pixels);
    // `timestamp` is `frame_index / fps`: seconds from the first frame.
    annotations.time_origin = TimeOrigin::FirstFrame;
    let unusable = set.unusable_warning();
    annotations.tracks = set.into_tracks();
    let fields: BTreeMap<String, Value> = item
        .iter()
        .filter(|(k, _)| k.as_str() != "bboxes")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    annotations.meta = Meta {
        source_format: Some(Format::Vstar),
        source_path: Some(path.to_path_buf()),
        fps,
        frame_size: match (width, height) {
            (Some(w), Some(h)) => Some((
                u32::try_from(w).unwrap_or(u32::MAX),
                u32::try_from(h).unwrap_or(u32::MAX),
            )),
            _ => None,
        },
        frame_count: frame_count.map(|n| n as usize),
        fields,
    };
    if !disagreeing.is_empty() {
        annotations
            .meta
            .fields
            .insert(READ_WARNINGS.into(), Value::Array(disagreeing));
    }
    push_read_warning(&mut annotations.meta, unusable);
    Ok(annotations)
}

fn json_index(v: &Value) -> Option<usize> {
    match v {
        Value::Number(n) => n
            .as_u64()
            .map(|u| u as usize)
            .or_else(|| parse_integer(&n.to_string()).and_then(|i| usize::try_from(i).ok())),
        Value::String(s) => parse_integer(s).and_then(|i| usize::try_from(i).ok()),
        _ => None,
    }
}

fn box_of(path: &Path, at: &str, map: &Map<String, Value>) -> Result<BBox, AnnotationError> {
    let mut v = [0f64; 4];
    for (k, name) in ["xmin", "ymin", "xmax", "ymax"].iter().enumerate() {
        let value = map.get(*name);
        v[k] = value
            .and_then(|x| match x {
                Value::Number(n) => n.as_f64(),
                Value::String(s) => s.trim().parse().ok(),
                _ => None,
            })
            .ok_or_else(|| {
                let found = value.map_or("nothing".to_string(), show_json);
                AnnotationError::at_item(
                    path,
                    at,
                    format!("{name:?}: expected a number, found {found}"),
                )
            })?;
    }
    Ok(BBox::new(v[0], v[1], v[2], v[3]))
}

/// One V-STaR box as written: `timestamp` in seconds, 0-based `frame_index`, pixel corners.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VstarBox {
    /// The frame's presentation time, seconds from the video's first frame (V-STaR's
    /// `frame_index / fps` for a constant rate).
    pub timestamp: f64,
    /// The frame's 0-based index in the video.
    pub frame_index: usize,
    /// Left edge, pixels from the frame's left side.
    pub xmin: f64,
    /// Top edge, pixels down from the frame's top.
    pub ymin: f64,
    /// Right edge, pixels from the frame's left side.
    pub xmax: f64,
    /// Bottom edge, pixels down from the frame's top.
    pub ymax: f64,
}

/// A V-STaR item for one object over a video. `extra` holds any further fields (question,
/// answer, provenance...) and is written flat beside the others.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VstarItem {
    /// The video's id in the benchmark (usually its file name without extension).
    pub vid: String,
    /// The video's average frame rate, frames per second (0 when it cannot be told).
    pub fps: f64,
    /// The frame width in pixels (the stored grid of the video the boxes are for).
    pub width: u32,
    /// The frame height in pixels (the stored grid).
    pub height: u32,
    /// The number of frames in the video.
    pub frame_count: usize,
    /// What the boxes follow: the track's label, or its id when it has none.
    pub object: String,
    /// `[start_s, end_s]`, seconds from the first frame, half-open: from the first frame with
    /// a box to the end of the last one (a frame at `t` is inside when `start_s <= t < end_s`;
    /// the whole video is `[0, frame_count / fps]`, as V-STaR's evaluation takes it).
    pub timestamps: [f64; 2],
    /// One box per frame with a box, in frame order, clamped to the frame.
    pub bboxes: Vec<VstarBox>,
    /// Any further fields (question, answer, provenance, ...), written flat beside the others.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The V-STaR item of track `track` over a video with this clock: one box per frame that has
/// one after resolution with `fill` (absent frames omitted), clamped to the frame (frames whose
/// box lies wholly outside are omitted). `object` is the track's label, or its id.
pub fn vstar_item(
    annotations: &Annotations,
    track: usize,
    clock: &dyn FrameClock,
    fill: Fill,
    vid: &str,
) -> Result<VstarItem, AnnotationError> {
    let Some(t) = annotations.tracks.get(track) else {
        return Err(AnnotationError::Usage(format!(
            "no track {track}: the annotations have {} tracks",
            annotations.tracks.len()
        )));
    };
    let single = Annotations {
        tracks: vec![t.clone()],
        detections: Vec::new(),
        coords: annotations.coords,
        time_origin: annotations.time_origin,
        meta: Meta::default(),
    };
    let resolved = single.resolve(clock, fill)?;
    let (w, h) = clock.frame_size();
    // V-STaR defines a box's time as `frame_index / fps` (seconds from the first frame);
    // where the video's own frame times part from that (a skipped frame, a variable rate),
    // the sidecar says so ([`index_time_parting`]). Without a rate, the frame's own time.
    let origin = if clock.frame_count() > 0 {
        clock.frame_time(0)
    } else {
        Time::ZERO
    };
    let fps = clock.nominal_fps();
    let index_time = |frame: usize| match fps {
        Some(fps) => Time::from_secs(frame as i64)
            .scale(fps.denom(), fps.numer())
            .as_secs_f64(),
        None if frame < clock.frame_count() => (clock.frame_time(frame) - origin).as_secs_f64(),
        None => (clock.end_time() - origin).as_secs_f64(),
    };
    let mut bboxes = Vec::new();
    let mut last_frame = 0;
    for (frame, boxes) in resolved.frames_with_boxes() {
        for d in boxes {
            if let Some(b) = d.bbox.clamped(w as f64, h as f64) {
                last_frame = frame;
                bboxes.push(VstarBox {
                    timestamp: index_time(frame),
                    frame_index: frame,
                    xmin: b.x1,
                    ymin: b.y1,
                    xmax: b.x2,
                    ymax: b.y2,
                });
            }
        }
    }
    let Some(first_box) = bboxes.first() else {
        return Err(AnnotationError::Usage(format!(
            "track {:?} has no box inside any frame of the video ({} frames, {w}x{h})",
            t.id,
            clock.frame_count()
        )));
    };
    // Half-open, as V-STaR's evaluation reads it: from the first boxed frame's time to the
    // end of the last boxed frame (the next frame's time), both `frame_index / fps`.
    let timestamps = [first_box.timestamp, index_time(last_frame + 1)];
    Ok(VstarItem {
        vid: vid.to_string(),
        fps: clock.nominal_fps().map_or(0.0, Time::as_secs_f64),
        width: w,
        height: h,
        frame_count: clock.frame_count(),
        object: t.label.clone().unwrap_or_else(|| t.id.clone()),
        timestamps,
        bboxes,
        extra: Map::new(),
    })
}

/// Where a video's own frame times part from V-STaR's `frame_index / fps`: the frames whose
/// time differs from it by half a frame or more (a skipped frame, a variable rate).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct IndexTimeParting {
    /// The rate the V-STaR times use (the video's typical frame spacing).
    pub fps: f64,
    /// The first such frame (0-based), its own time and `frame_index / fps`, seconds from
    /// the first frame.
    pub first_frame: usize,
    pub frame_time_s: f64,
    pub index_time_s: f64,
    /// How many frames differ so.
    pub frames: usize,
    /// The largest difference, seconds.
    pub largest_difference_s: f64,
}

/// [`IndexTimeParting`] of a video with this clock; `None` where every frame is within half
/// a frame of `frame_index / fps` (or the rate is unknown).
pub(crate) fn index_time_parting(clock: &dyn FrameClock) -> Option<IndexTimeParting> {
    let fps = clock.nominal_fps()?;
    let n = clock.frame_count();
    if n == 0 {
        return None;
    }
    let origin = clock.frame_time(0);
    let mut parting: Option<IndexTimeParting> = None;
    for frame in 0..n {
        let own = clock.frame_time(frame) - origin;
        let index = Time::from_secs(frame as i64).scale(fps.denom(), fps.numer());
        let diff = if own > index {
            own - index
        } else {
            index - own
        };
        // Half a frame or more: diff * fps * 2 >= 1.
        if diff.scale(2 * fps.numer(), fps.denom()) < Time::from_secs(1) {
            continue;
        }
        let d = diff.as_secs_f64();
        match parting.as_mut() {
            None => {
                parting = Some(IndexTimeParting {
                    fps: fps.as_secs_f64(),
                    first_frame: frame,
                    frame_time_s: own.as_secs_f64(),
                    index_time_s: index.as_secs_f64(),
                    frames: 1,
                    largest_difference_s: d,
                })
            }
            Some(p) => {
                p.frames += 1;
                p.largest_difference_s = p.largest_difference_s.max(d);
            }
        }
    }
    parting
}

/// Writes items as a pretty-printed JSON list (the layout of a V-STaR benchmark file).
#[cfg(test)]
pub fn write_vstar(path: &Path, items: &[VstarItem]) -> Result<(), AnnotationError> {
    let text = serde_json::to_string_pretty(items)
        .map_err(|e| AnnotationError::file(path, e.to_string()))?;
    std::fs::write(path, text + "\n").map_err(|e| AnnotationError::write(path, e))
}

/// V-STaR benchmark JSON: items with `bboxes` lists (read and written). Registered in
/// [`super::FORMATS`].
pub(crate) struct VstarFormat;

impl super::AnnotationFormat for VstarFormat {
    fn name(&self) -> &'static str {
        "vstar"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["v-star"]
    }
    fn recognise(&self, file: &Sniffed) -> Recognised {
        let Shape::Json { outline, .. } = file.shape else {
            return Recognised::NotApplicable;
        };
        // The top-level object, or a list's first item, has a "bboxes" list.
        let is_vstar = outline.member("bboxes") == Some(JsonKind::List);
        if is_vstar {
            Recognised::Yes
        } else {
            Recognised::No("no item with a \"bboxes\" list".to_string())
        }
    }
    fn read(&self, path: &Path, options: &ReadOptions) -> Result<Annotations, AnnotationError> {
        read_vstar(path, options)
    }

    fn read_text(
        &self,
        path: &Path,
        text: &str,
        options: &ReadOptions,
    ) -> Result<Annotations, AnnotationError> {
        read_vstar_from(path, &mut serde_json::Deserializer::from_str(text), options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::annotations::clock::ConstantRateClock;
    use crate::annotations::test_support::fixture;
    use crate::annotations::{read, Track};

    #[test]
    fn reads_list_form_with_exact_times() {
        let a = read_vstar(
            &fixture("vstar/item_list_form.json"),
            &ReadOptions::default(),
        )
        .unwrap();
        assert_eq!(a.meta.source_format, Some(Format::Vstar));
        assert_eq!(a.meta.fps, Some(Time::new(30000, 1001)));
        assert_eq!(a.meta.frame_size, Some((640, 360)));
        assert_eq!(a.meta.frame_count, Some(300));
        assert_eq!(a.meta.fields["vid"], "demo_0001");
        assert!(!a.meta.fields.contains_key("bboxes"));
        let t = &a.tracks[0];
        assert_eq!(t.label.as_deref(), Some("red car"));
        // frame 30 at 30000/1001 fps, timestamp written 1.001: exactly 1001/1000 s
        assert_eq!(
            t.keys[&Key::Time(Time::new(1001, 1000))],
            Entry::Present(BBox::new(10.0, 20.0, 110.0, 220.0))
        );
        // frame 61, timestamp rounded to 2.04: snapped to 61 * 1001 / 30000
        assert_eq!(
            t.keys[&Key::Time(Time::new(61 * 1001, 30000))],
            Entry::Present(BBox::new(12.5, 20.0, 112.5, 220.0))
        );
        assert_eq!(t.keys.len(), 2);
        let frames = read_vstar(
            &fixture("vstar/item_list_form.json"),
            &ReadOptions {
                prefer_keys: KeyKind::Frame,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(
            frames.tracks[0].keys.keys().copied().collect::<Vec<_>>(),
            vec![Key::Frame(30), Key::Frame(61)]
        );
    }

    #[test]
    fn reads_keyed_form_from_a_benchmark_list() {
        let path = fixture("vstar/bench_keyed_form.json");
        let err = read_vstar(&path, &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!(
                "{}: holds 2 items; choose one by its vid (or #index), e.g. v_a, v_b",
                path.display()
            )
        );
        let pick = |item: &str| ReadOptions {
            item: Some(item.to_string()),
            ..Default::default()
        };
        let a = read_vstar(&path, &pick("v_b")).unwrap();
        let t = &a.tracks[0];
        assert_eq!(t.label.as_deref(), Some("dog"));
        assert_eq!(a.meta.fps, Some(Time::from_secs(10)));
        assert_eq!(
            t.keys[&Key::Time(Time::new(1, 2))],
            Entry::Present(BBox::new(1.0, 2.0, 3.0, 4.0))
        );
        assert_eq!(
            t.keys[&Key::Time(Time::new(7, 10))],
            Entry::Present(BBox::new(2.0, 2.0, 4.0, 4.0))
        );
        assert_eq!(read_vstar(&path, &pick("#1")).unwrap().tracks, a.tracks);
        let err = read_vstar(&path, &pick("v_z")).unwrap_err().to_string();
        assert!(
            err.ends_with("has no item with vid \"v_z\"; its items include v_a, v_b"),
            "{err}"
        );
        let auto = read(&path, Format::Auto, &pick("v_a")).unwrap();
        assert_eq!(auto.meta.source_format, Some(Format::Vstar));
    }

    #[test]
    fn bad_items_are_located() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("v.json");
        let cases = [
            (
                r#"[{"vid": "a", "bboxes": [{"timestamp": 1, "frame_index": 1, "xmin": 1, "ymin": "x", "xmax": 2, "ymax": 2}]}]"#,
                "item 0 (vid \"a\") bboxes[0]: \"ymin\": expected a number, found \"x\"",
            ),
            (
                r#"{"vid": "a", "bboxes": [{"1.5_15": {"xmin": 1, "ymin": 1, "xmax": 2}}]}"#,
                "bboxes[0] \"1.5_15\": \"ymax\": expected a number, found nothing",
            ),
            (
                r#"{"vid": "a", "bboxes": [{"oops": {"xmin": 1, "ymin": 1, "xmax": 2, "ymax": 3}}]}"#,
                "bboxes[0] \"oops\": expected a key \"<timestamp>_<frame_index>\" (e.g. \"3.5_105\") or a box with \"xmin\"",
            ),
            (
                r#"{"vid": "a", "bboxes": [{"0.5_5": {"xmin": 1, "ymin": 1, "xmax": 2, "ymax": 3}}, {"timestamp": 0.5, "xmin": 1, "ymin": 1, "xmax": 2, "ymax": 3}]}"#,
                "bboxes[1]: track \"1\" has a second box for time 1/2s (the first is at bboxes[0] \"0.5_5\"); expected one box per track and time",
            ),
            (r#"{"vid": "a"}"#, "item: has no \"bboxes\" list; expected a V-STaR item"),
        ];
        for (text, want) in cases {
            std::fs::write(&p, text).unwrap();
            let err = read_vstar(&p, &ReadOptions::default())
                .unwrap_err()
                .to_string();
            assert_eq!(err, format!("{} {want}", p.display()));
        }
        std::fs::write(&p, "[{\"vid\": 1,\n  \"bboxes\": [}]").unwrap();
        let err = read_vstar(&p, &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(&format!("{} line 2 column 14: invalid JSON: ", p.display())),
            "{err}"
        );
    }

    /// A list is read as a stream, keeping only the item asked for: the errors are those of
    /// the whole list (its JSON anywhere, an element that is not an item, several items of
    /// one vid, an index past its end), and the item is found wherever its vid is.
    #[test]
    fn a_streamed_list_is_checked_whole_and_keeps_its_item() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("v.json");
        let b = r#""bboxes": [{"timestamp": 0.5, "frame_index": 5, "xmin": 1, "ymin": 2, "xmax": 3, "ymax": 4}]"#;
        let pick = |item: &str| ReadOptions {
            item: Some(item.to_string()),
            ..Default::default()
        };
        let err = |text: &str, item: &str| {
            std::fs::write(&p, text).unwrap();
            let e = read(&p, Format::Auto, &pick(item)).unwrap_err().to_string();
            let named = read_vstar(&p, &pick(item)).unwrap_err().to_string();
            assert_eq!(e, named);
            let rest = e.strip_prefix(&p.display().to_string()).unwrap_or(&e);
            rest.trim_start_matches(':').trim_start().to_string()
        };
        assert_eq!(
            err(&format!("[{{\"vid\": \"a\", {b}}},\n  {{oops}}]"), "a"),
            "line 2 column 4: invalid JSON: key must be a string"
        );
        assert_eq!(
            err(
                &format!("[{{\"vid\": \"a\", {b}}}, 3, {{\"vid\": \"b\", {b}}}]"),
                "a"
            ),
            "item 1: expected a V-STaR item (a JSON object), found 3"
        );
        assert_eq!(
            err(
                &format!(
                    "[{{\"vid\": \"a\", {b}}}, {{\"vid\": \"b\", {b}}}, {{\"vid\": \"a\", {b}}}]"
                ),
                "a"
            ),
            "has 2 items with vid \"a\" (#0, #2); choose one by index"
        );
        assert_eq!(
            err(
                &format!("[{{\"vid\": \"a\", {b}}}, {{\"vid\": \"b\", {b}}}]"),
                "#5"
            ),
            "has no item #5; it holds 2 items (#0 to #1)"
        );
        assert_eq!(
            err(
                &format!("[{{\"vid\": \"a\", {b}}}, {{\"vid\": \"b\", {b}, \"bboxes\": 7}}]"),
                "b"
            ),
            "item 1 (vid \"b\") bboxes: expected a list of boxes, found 7"
        );
        assert_eq!(
            err(&format!("[{{\"vid\": \"a\", {b}}}] x"), "a"),
            "line 1 column 110: invalid JSON: trailing characters"
        );
        // The vid after the boxes, a byte-order mark, the item by index.
        let text = format!("[{{\"vid\": \"a\", {b}}}, {{{b}, \"vid\": \"b\"}}]");
        std::fs::write(&p, format!("\u{feff}{text}")).unwrap();
        for item in ["b", "#1"] {
            let a = read(&p, Format::Auto, &pick(item)).unwrap();
            assert_eq!(a.meta.fields["vid"], "b");
            assert_eq!(
                a.tracks[0].keys[&Key::Time(Time::new(1, 2))],
                Entry::Present(BBox::new(1.0, 2.0, 3.0, 4.0))
            );
        }
    }

    #[test]
    fn writer_lists_resolved_frames_and_reads_back() {
        let clock = ConstantRateClock::new(20, Time::from_secs(25), 100, 50).unwrap();
        let mut a = Annotations::new(Coords::Pixels);
        let mut t = Track::new("7");
        t.label = Some("ball".into());
        t.insert(
            Key::Frame(2),
            Entry::Present(BBox::new(10.0, 10.0, 20.0, 20.0)),
        )
        .unwrap();
        t.insert(
            Key::Frame(4),
            Entry::Present(BBox::new(30.0, 10.0, 40.0, 20.0)),
        )
        .unwrap();
        t.insert(Key::Frame(5), Entry::Absent).unwrap();
        t.insert(
            Key::Frame(7),
            Entry::Present(BBox::new(90.0, 40.0, 120.0, 60.0)),
        )
        .unwrap();
        a.tracks.push(t);
        let mut item = vstar_item(&a, 0, &clock, Fill::Linear, "clip_1").unwrap();
        assert_eq!(item.object, "ball");
        assert_eq!(
            (item.width, item.height, item.frame_count, item.fps),
            (100, 50, 20, 25.0)
        );
        let frames: Vec<usize> = item.bboxes.iter().map(|b| b.frame_index).collect();
        assert_eq!(frames, vec![2, 3, 4, 7]);
        assert_eq!(
            item.bboxes[1],
            VstarBox {
                timestamp: 0.12,
                frame_index: 3,
                xmin: 20.0,
                ymin: 10.0,
                xmax: 30.0,
                ymax: 20.0
            }
        );
        // clamped to the 100x50 frame
        assert_eq!((item.bboxes[3].xmax, item.bboxes[3].ymax), (100.0, 50.0));
        // half-open: frame 2's time to the end of frame 7 (frame 8's time)
        assert_eq!(item.timestamps, [0.08, 0.32]);
        item.extra.insert("source".into(), "host.mp4".into());
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.json");
        write_vstar(&p, &[item.clone()]).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains("\"source\": \"host.mp4\""));
        let back: Vec<VstarItem> = serde_json::from_str(&text).unwrap();
        assert_eq!(back[0], item);
        let read_back = read(&p, Format::Auto, &ReadOptions::default()).unwrap();
        let keys: Vec<Key> = read_back.tracks[0].keys.keys().copied().collect();
        let want: Vec<Key> = frames
            .iter()
            .map(|&f| Key::Time(clock.frame_time(f)))
            .collect();
        assert_eq!(keys, want, "timestamps read back as the exact frame times");
        let r = read_back.resolve(&clock, Fill::None).unwrap();
        assert_eq!(
            r.frames_with_boxes().map(|(f, _)| f).collect::<Vec<_>>(),
            frames
        );
        assert!(vstar_item(&a, 3, &clock, Fill::Linear, "x").is_err());
    }
}
