//! Annotations: the format-neutral model of boxes over a video, the readers and writers of the
//! dataset formats, and resolution of boxes onto a video's frames. Pure Rust, no media code.
//!
//! - [`model`]: [`BBox`] (pixel `x1,y1,x2,y2` in the displayed, upright frame), [`Track`]s of
//!   [`Key`] -> [`Entry`], untracked [`Detection`]s, [`Annotations`] with [`Meta`].
//! - readers, chosen by [`Format`] through [`read`]: [`got10k`], [`mot`], [`vstar`], [`waymo`],
//!   [`plain`] (CSV/JSON), [`native`] (vidprep's own versioned JSON, also written). Each
//!   format converts to the model's conventions (0-based frames, corners, pixels or
//!   normalised) at its edge.
//! - [`clock`]: the [`FrameClock`] a video offers; [`resolve`]: [`Annotations::resolve`] gives
//!   the boxes of every frame ([`ResolvedBoxes`]) with gaps filled as [`Fill`] says.
//! - [`vstar::vstar_item`] writes one track over a clock as a V-STaR benchmark item.
//!
//! All errors are [`AnnotationError`]s naming the file, the line or JSON item, and what was
//! expected.

pub mod bbox;
pub mod clock;
pub mod error;
pub mod got10k;
pub mod model;
pub mod mot;
pub mod native;
pub mod plain;
pub mod resolve;
pub mod vstar;
pub mod waymo;

#[cfg(test)]
mod test_support;
mod text;

use std::fmt;
use std::path::Path;
use std::str::FromStr;

pub use bbox::BBox;
pub use clock::{ConstantRateClock, FrameClock, TimestampClock};
pub use error::{AnnotationError, Location};
pub use got10k::{check_sequence, open_sequence, read_got10k, sequence_images, Got10kSequence};
pub use model::{Annotations, Coords, Detection, Entry, Extras, Key, Meta, Track};
pub use mot::read_mot;
pub use native::{from_native_str, read_native, to_native_string, write_native};
pub use plain::read_plain;
pub use resolve::{BoxSource, DrawBox, Fill, ResolvedBoxes};
pub use vstar::{read_vstar, vstar_item, write_vstar, VstarBox, VstarItem};
pub use waymo::read_waymo;

use text::{read_text, split_numeric_line, Table};

/// An annotation file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Format {
    /// Detect from the path and content ([`detect_format`]).
    #[default]
    Auto,
    /// A GOT-10k sequence folder or its `groundtruth.txt`.
    Got10k,
    /// MOT Challenge `gt.txt` / `det.txt`.
    Mot,
    /// V-STaR benchmark JSON.
    Vstar,
    /// Waymo-style camera boxes (CSV or JSON records).
    Waymo,
    /// Plain CSV or JSON box lists.
    Plain,
    /// vidprep's own JSON.
    Vidprep,
}

impl Format {
    /// The canonical CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::Got10k => "got10k",
            Format::Mot => "mot",
            Format::Vstar => "vstar",
            Format::Waymo => "waymo",
            Format::Plain => "plain",
            Format::Vidprep => "vidprep",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

crate::textual::serde_as_text!(Format);

/// CLI names: `auto`, `got10k`, `mot`, `vstar`, `waymo`, `csv`/`json`/`plain`, `vidprep`
/// (a few spellings such as `got-10k`, `mot17`, `v-star`, `native` are accepted too).
impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Format, String> {
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Format::Auto,
            "got10k" | "got-10k" => Format::Got10k,
            "mot" | "mot15" | "mot16" | "mot17" | "mot20" => Format::Mot,
            "vstar" | "v-star" => Format::Vstar,
            "waymo" => Format::Waymo,
            "csv" | "json" | "plain" => Format::Plain,
            "vidprep" | "native" => Format::Vidprep,
            other => {
                return Err(format!(
                "unknown annotation format {other:?}; expected auto, got10k, mot, vstar, waymo, csv, json or vidprep"
            ))
            }
        })
    }
}

/// The unit of coordinates in plain and Waymo files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Units {
    /// Normalised when every coordinate is within `[0, 1]`, else pixels.
    #[default]
    Auto,
    Pixels,
    Normalized,
}

/// Which key to use when a record has both a time and a frame index (V-STaR, plain, Waymo).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum KeyKind {
    /// Seconds: survives re-encoding at another frame rate.
    #[default]
    Time,
    /// The source's frame index.
    Frame,
}

impl fmt::Display for Units {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Units::Auto => "auto",
            Units::Pixels => "pixels",
            Units::Normalized => "normalized",
        })
    }
}

impl FromStr for Units {
    type Err = String;
    fn from_str(s: &str) -> Result<Units, String> {
        match s {
            "auto" => Ok(Units::Auto),
            "pixels" => Ok(Units::Pixels),
            "normalized" | "normalised" => Ok(Units::Normalized),
            other => Err(format!(
                "unknown units {other:?}; expected auto, pixels or normalized"
            )),
        }
    }
}

crate::textual::serde_as_text!(Units);

impl fmt::Display for KeyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            KeyKind::Time => "time",
            KeyKind::Frame => "frame",
        })
    }
}

impl FromStr for KeyKind {
    type Err = String;
    fn from_str(s: &str) -> Result<KeyKind, String> {
        match s {
            "time" => Ok(KeyKind::Time),
            "frame" => Ok(KeyKind::Frame),
            other => Err(format!("unknown keys {other:?}; expected time or frame")),
        }
    }
}

crate::textual::serde_as_text!(KeyKind);

/// Options for [`read`]; each applies to the formats named.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReadOptions {
    /// MOT: drop rows whose `conf` column is below this.
    pub min_confidence: Option<f64>,
    /// V-STaR: the item to read from a list, by `vid` (or `id`), or `#<index>`.
    pub item: Option<String>,
    /// V-STaR, plain, Waymo: time or frame keys when both are given.
    pub prefer_keys: KeyKind,
    /// Plain, Waymo: pixel or normalised coordinates.
    pub units: Units,
    /// Waymo: the camera to read (`FRONT`, `1`, ...) when the file has several.
    pub camera: Option<String>,
}

/// Reads an annotation file (or GOT-10k folder) in `format`, detecting it when `Auto`.
pub fn read(
    path: &Path,
    format: Format,
    options: &ReadOptions,
) -> Result<Annotations, AnnotationError> {
    let format = match format {
        Format::Auto => detect_format(path)?,
        f => f,
    };
    match format {
        Format::Got10k => read_got10k(path),
        Format::Mot => read_mot(path, options),
        Format::Vstar => read_vstar(path, options),
        Format::Waymo => read_waymo(path, options),
        Format::Plain => read_plain(path, options),
        Format::Vidprep => read_native(path),
        Format::Auto => unreachable!("detect_format never answers Auto"),
    }
}

/// Tells the format of an annotation file or folder from its path and content. The error lists
/// each format tried and why it did not fit.
pub fn detect_format(path: &Path) -> Result<Format, AnnotationError> {
    let unknown = |tried: Vec<(&str, String)>| AnnotationError::UnknownFormat {
        path: path.to_path_buf(),
        tried: tried
            .into_iter()
            .map(|(f, why)| (f.to_string(), why))
            .collect(),
    };
    let metadata = std::fs::metadata(path).map_err(|e| AnnotationError::read(path, e))?;
    if metadata.is_dir() {
        if path.join("groundtruth.txt").is_file() {
            return Ok(Format::Got10k);
        }
        return Err(unknown(vec![(
            "got10k",
            "the folder has no groundtruth.txt (other formats are files)".to_string(),
        )]));
    }
    if path.file_name().is_some_and(|n| n == "groundtruth.txt") {
        return Ok(Format::Got10k);
    }
    let text = read_text(path)?;
    let start = text.trim_start();
    let mut tried: Vec<(&str, String)> = Vec::new();

    if start.starts_with('[') || start.starts_with('{') {
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| AnnotationError::json(path, &e))?;
        if value.get(native::NATIVE_MARKER).is_some() {
            return Ok(Format::Vidprep);
        }
        tried.push((
            "vidprep",
            format!("no \"{}\" member", native::NATIVE_MARKER),
        ));
        let has_bboxes = |v: &serde_json::Value| v.get("bboxes").is_some_and(|b| b.is_array());
        let is_vstar = match &value {
            serde_json::Value::Object(_) => has_bboxes(&value),
            serde_json::Value::Array(items) => items.first().is_some_and(has_bboxes),
            _ => false,
        };
        if is_vstar {
            return Ok(Format::Vstar);
        }
        tried.push(("vstar", "no item with a \"bboxes\" list".to_string()));
        match Table::from_json(path, &value) {
            Ok(table) => {
                if waymo::has_waymo_columns(&table) {
                    return Ok(Format::Waymo);
                }
                tried.push(("waymo", "no center_x and length columns".to_string()));
                if plain::has_box_columns(&table) {
                    return Ok(Format::Plain);
                }
                tried.push(("json", "no x1,y1,x2,y2 or x,y,w,h columns".to_string()));
            }
            Err(_) => {
                tried.push(("waymo", "not a list of records".to_string()));
                tried.push(("json", "not a list of records".to_string()));
            }
        }
        return Err(unknown(tried));
    }

    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'));
    let Some(first) = first else {
        return Err(unknown(vec![("any", "the file is empty".to_string())]));
    };
    let fields = split_numeric_line(first);
    if fields.iter().all(|f| text::parse_f64(f).is_some()) {
        match fields.len() {
            4 | 8 => return Ok(Format::Got10k),
            6..=10 => return Ok(Format::Mot),
            n => {
                tried.push(("got10k", format!("lines have {n} numbers, not 4 (x,y,w,h)")));
                tried.push((
                    "mot",
                    format!("lines have {n} numbers, not 6 to 10 (frame,id,x,y,w,h,conf,...)"),
                ));
                tried.push(("csv", "no header row".to_string()));
                return Err(unknown(tried));
            }
        }
    }
    tried.push(("got10k", "the first line is not numbers".to_string()));
    tried.push(("mot", "the first line is not numbers".to_string()));
    let header = Table::from_csv(path, first)?;
    if waymo::has_waymo_columns(&header) {
        return Ok(Format::Waymo);
    }
    tried.push(("waymo", "no center_x and length columns".to_string()));
    if plain::has_box_columns(&header) {
        return Ok(Format::Plain);
    }
    tried.push((
        "csv",
        "no x1,y1,x2,y2 or x,y,w,h columns in the header".to_string(),
    ));
    Err(unknown(tried))
}

#[cfg(test)]
mod tests {
    use super::*;
    use test_support::fixture;

    #[test]
    fn format_names() {
        for (name, f) in [
            ("auto", Format::Auto),
            ("got10k", Format::Got10k),
            ("mot", Format::Mot),
            ("vstar", Format::Vstar),
            ("waymo", Format::Waymo),
            ("csv", Format::Plain),
            ("json", Format::Plain),
            ("vidprep", Format::Vidprep),
        ] {
            assert_eq!(name.parse::<Format>(), Ok(f));
        }
        for f in [
            Format::Auto,
            Format::Got10k,
            Format::Mot,
            Format::Vstar,
            Format::Waymo,
            Format::Plain,
            Format::Vidprep,
        ] {
            assert_eq!(f.name().parse::<Format>(), Ok(f));
        }
        assert!("xml"
            .parse::<Format>()
            .unwrap_err()
            .contains("expected auto, got10k"));
    }

    #[test]
    fn auto_detection_picks_each_fixture_format() {
        let cases = [
            ("got10k/seq_a", Format::Got10k),
            ("got10k/seq_a/groundtruth.txt", Format::Got10k),
            ("mot/gt.txt", Format::Mot),
            ("mot/det.txt", Format::Mot),
            ("vstar/item_list_form.json", Format::Vstar),
            ("vstar/bench_keyed_form.json", Format::Vstar),
            ("waymo/camera_boxes.csv", Format::Waymo),
            ("waymo/camera_boxes_v2.json", Format::Waymo),
            ("plain/boxes.csv", Format::Plain),
            ("plain/boxes_normalized.json", Format::Plain),
            ("native/example.vidprep.json", Format::Vidprep),
        ];
        for (name, want) in cases {
            assert_eq!(detect_format(&fixture(name)).unwrap(), want, "{name}");
        }
    }

    #[test]
    fn missing_files_are_named_by_every_reader() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.json");
        for format in [
            Format::Mot,
            Format::Vstar,
            Format::Waymo,
            Format::Plain,
            Format::Vidprep,
        ] {
            let err = read(&missing, format, &ReadOptions::default())
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with(&format!("{}: cannot read: ", missing.display())),
                "{format}: {err}"
            );
        }
        let err = read(&missing, Format::Got10k, &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(&format!("{}: no groundtruth.txt", missing.display())),
            "{err}"
        );
    }

    #[test]
    fn auto_detection_says_what_it_tried() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.json");
        std::fs::write(&p, r#"[{"name": "x"}]"#).unwrap();
        let err = read(&p, Format::Auto, &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!(
                "{}: cannot tell the annotation format; tried vidprep (no \"vidprep_annotations\" member), \
                 vstar (no item with a \"bboxes\" list), waymo (no center_x and length columns), \
                 json (no x1,y1,x2,y2 or x,y,w,h columns)",
                p.display()
            )
        );
        let p = dir.path().join("a.txt");
        std::fs::write(&p, "1,2,3\n").unwrap();
        let err = read(&p, Format::Auto, &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(
                "tried got10k (lines have 3 numbers, not 4 (x,y,w,h)), mot (lines have 3 numbers"
            ),
            "{err}"
        );
        let err = read(dir.path(), Format::Auto, &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.ends_with(
                "tried got10k (the folder has no groundtruth.txt (other formats are files))"
            ),
            "{err}"
        );
        let missing = dir.path().join("nope.txt");
        let err = read(&missing, Format::Auto, &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(&format!("{}: cannot read: ", missing.display())),
            "{err}"
        );
    }

    mod hostile {
        use super::super::*;
        use proptest::prelude::*;

        /// Text that looks like each format's files, with numbers at the extremes.
        fn line() -> impl Strategy<Value = String> {
            let number = prop_oneof![
                Just("-9223372036854775807/1".to_string()),
                Just("9223372036854775807".to_string()),
                Just("1e308".to_string()),
                Just("NaN".to_string()),
                Just("-inf".to_string()),
                Just("0".to_string()),
                any::<i64>().prop_map(|n| n.to_string()),
                any::<f64>().prop_map(|f| f.to_string()),
            ];
            prop::collection::vec(number, 1..11).prop_map(|v| v.join(","))
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(64))]

            /// Every reader, on arbitrary bytes and on format-shaped lines with extreme
            /// numbers: an error or annotations, never a panic or a hang.
            #[test]
            fn readers_never_panic(
                bytes in prop::collection::vec(any::<u8>(), 0..400),
                lines in prop::collection::vec(line(), 0..6),
                header in prop_oneof![
                    Just("time,track,x1,y1,x2,y2\n".to_string()),
                    Just("frame,track_id,x,y,w,h\n".to_string()),
                    Just("".to_string()),
                ],
            ) {
                let dir = tempfile::tempdir().unwrap();
                let shaped = format!("{header}{}\n", lines.join("\n"));
                for (name, content) in [
                    ("raw.txt", bytes.clone()),
                    ("raw.json", bytes.clone()),
                    ("shaped.csv", shaped.clone().into_bytes()),
                    ("gt.txt", shaped.clone().into_bytes()),
                ] {
                    let path = dir.path().join(name);
                    std::fs::write(&path, &content).unwrap();
                    for format in [
                        Format::Auto,
                        Format::Mot,
                        Format::Vstar,
                        Format::Waymo,
                        Format::Plain,
                        Format::Vidprep,
                        Format::Got10k,
                    ] {
                        if let Ok(a) = read(&path, format, &ReadOptions::default()) {
                            // Whatever was read resolves onto a small clock without panicking.
                            let clock = ConstantRateClock::new(10, crate::time::Time::from_secs(25), 64, 48).unwrap();
                            let _ = a.resolve(&clock, Fill::Linear);
                        }
                    }
                }
                // A GOT-10k folder with those lines as its groundtruth.
                std::fs::write(dir.path().join("groundtruth.txt"), shaped.as_bytes()).unwrap();
                std::fs::write(dir.path().join("meta_info.ini"), format!("[METAINFO]\nanno_fps: {}Hz\n", lines.first().map_or("10", |l| l.split(',').next().unwrap_or("10")))).unwrap();
                let _ = read(dir.path(), Format::Got10k, &ReadOptions::default());
            }
        }
    }
}
