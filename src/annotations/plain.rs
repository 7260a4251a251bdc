//! Plain CSV / JSON box lists: one record per box, columns found by their header names.
//!
//! - key: `frame` (also `frame_index`, `frame_idx`, `frame_id`; 0-based) and/or `time` (also
//!   `timestamp`, `t`, `time_s`, `seconds`, `sec`; seconds as `4.2` or `21/5`). With both,
//!   `ReadOptions::prefer_keys` decides.
//! - track: `id` (also `track`, `track_id`, `object_id`, `tid`); without it, one track `"1"`.
//! - label (optional): `label`, `class`, `category`, `object`, `name`, `type`.
//! - box: `x1,y1,x2,y2` (also `xmin,ymin,xmax,ymax`, `left,top,right,bottom`) or `x,y,w,h`
//!   (also `width`, `height`, `bb_left`, `bb_top`, `bb_width`, `bb_height`).
//! - optional `score` (also `conf`, `confidence`) kept as the `score` extra, and `absent`
//!   (1/true: the object is not visible; its box cells may be empty).
//!
//! Units: `ReadOptions::units`; `Auto` means normalised only when every coordinate is within
//! `[0, 1]`. CSV may be comma-, tab- or semicolon-separated (found from the header) and quote
//! fields with `"`; JSON is a list of records or an object with an `annotations`/`boxes` list.

use std::path::Path;

use super::bbox::BBox;
use super::error::AnnotationError;
use super::model::{
    push_read_warning, Annotations, Coords, Entry, Extras, Key, Meta, Track, TrackSet,
};
use super::span::SpanFilter;
use super::text::{Column, Table};
use super::{Format, KeyKind, ReadOptions, Recognised, Shape, Sniffed, Units};

pub(crate) const FRAME_COLUMNS: &[&str] = &["frame", "frame_index", "frame_idx", "frame_id"];
const TIME_COLUMNS: &[&str] = &["time", "timestamp", "t", "time_s", "seconds", "sec"];
const ID_COLUMNS: &[&str] = &["id", "track", "track_id", "object_id", "tid"];
const LABEL_COLUMNS: &[&str] = &["label", "class", "category", "object", "name", "type"];
const SCORE_COLUMNS: &[&str] = &["score", "conf", "confidence"];

/// Reads a CSV or JSON list of boxes (JSON when the text starts with `[` or `{`).
pub fn read_plain(path: &Path, options: &ReadOptions) -> Result<Annotations, AnnotationError> {
    let mut text = String::new();
    read_plain_table(path, &table_of_file(path, &mut text)?, options)
}

/// The file as a [`Table`] (as [`table_of_text`] would make it): a JSON file's records are
/// read from the file one at a time; a CSV file's text is read into `text`, which the table
/// reads its rows from.
pub(crate) fn table_of_file<'t>(
    path: &'t Path,
    text: &'t mut String,
) -> Result<Table<'t>, AnnotationError> {
    let mut reader = super::text::open_text(path)?;
    if matches!(super::text::first_byte_in(&mut reader), Some(b'[' | b'{')) {
        return Table::from_json(path);
    }
    *text = super::text::read_text_from(path, reader)?;
    let text: &'t String = text;
    Table::from_csv(path, text)
}

/// The file's text as a [`Table`]: JSON when it starts with `[` or `{`, else CSV with a header.
pub(crate) fn table_of_text<'t>(
    path: &'t Path,
    text: &'t str,
) -> Result<Table<'t>, AnnotationError> {
    let start = text.trim_start();
    if start.starts_with('[') || start.starts_with('{') {
        Table::from_json(path)
    } else {
        Table::from_csv(path, text)
    }
}

enum BoxColumns<'t> {
    Corners([Column<'t>; 4]),
    Xywh([Column<'t>; 4]),
}

/// True when the table has columns for a plain box (corners or x,y,w,h).
pub(crate) fn has_box_columns(table: &Table) -> bool {
    box_columns(table).is_some()
}

fn box_columns<'t>(table: &'t Table) -> Option<BoxColumns<'t>> {
    let x2 = table.column(&["x2", "xmax", "right"]);
    let y2 = table.column(&["y2", "ymax", "bottom"]);
    if let (Some(x2), Some(y2)) = (x2, y2) {
        let x1 = table.column(&["x1", "xmin", "left", "x"])?;
        let y1 = table.column(&["y1", "ymin", "top", "y"])?;
        return Some(BoxColumns::Corners([x1, y1, x2, y2]));
    }
    let x = table.column(&["x", "x1", "xmin", "left", "bb_left"])?;
    let y = table.column(&["y", "y1", "ymin", "top", "bb_top"])?;
    let w = table.column(&["w", "width", "bb_width"])?;
    let h = table.column(&["h", "height", "bb_height"])?;
    Some(BoxColumns::Xywh([x, y, w, h]))
}

/// Which key column to use: the preferred kind when both exist.
pub(crate) fn key_column<'t>(
    table: &'t Table,
    frame_names: &[&str],
    time_names: &[&str],
    prefer: KeyKind,
) -> Option<(KeyKind, Column<'t>)> {
    let frame = table.column(frame_names).map(|c| (KeyKind::Frame, c));
    let time = table.column(time_names).map(|c| (KeyKind::Time, c));
    match prefer {
        KeyKind::Time => time.or(frame),
        KeyKind::Frame => frame.or(time),
    }
}

fn read_plain_table(
    path: &Path,
    table: &Table,
    options: &ReadOptions,
) -> Result<Annotations, AnnotationError> {
    let columns_found = || table.columns.join(",");
    let Some(boxes) = box_columns(table) else {
        return Err(AnnotationError::file(
            path,
            format!(
                "expected box columns x1,y1,x2,y2 (or xmin,ymin,xmax,ymax) or x,y,w,h; found columns {}",
                columns_found()
            ),
        ));
    };
    let Some((kind, key_col)) = key_column(table, FRAME_COLUMNS, TIME_COLUMNS, options.prefer_keys)
    else {
        return Err(AnnotationError::file(
            path,
            format!(
                "expected a frame column (frame, frame_index) or a time column (time, timestamp); found columns {}",
                columns_found()
            ),
        ));
    };
    let id_col = table.column(ID_COLUMNS);
    let label_col = table.column(LABEL_COLUMNS);
    let score_col = table.column(SCORE_COLUMNS);
    let absent_col = table.column(&["absent"]);

    let mut set = TrackSet::new(path);
    let mut filter = SpanFilter::new(options);
    for row in table.rows() {
        let row = row?;
        let key = match kind {
            KeyKind::Frame => Key::Frame(row.index(path, key_col)?),
            KeyKind::Time => Key::Time(row.time(path, key_col)?),
        };
        let absent = match absent_col {
            Some(c) => row.flag(path, c)?,
            None => false,
        };
        let entry = if absent {
            Entry::Absent
        } else {
            let bbox = match &boxes {
                BoxColumns::Corners(c) => BBox::new(
                    row.number(path, c[0])?,
                    row.number(path, c[1])?,
                    row.number(path, c[2])?,
                    row.number(path, c[3])?,
                ),
                BoxColumns::Xywh(c) => BBox::from_xywh(
                    row.number(path, c[0])?,
                    row.number(path, c[1])?,
                    row.number(path, c[2])?,
                    row.number(path, c[3])?,
                ),
            };
            set.note_box(&bbox, &row.at);
            Entry::from_box(bbox)
        };
        let mut extras = Extras::new();
        if let Some(c) = score_col {
            if row.text(Some(c)).is_some() {
                extras.insert("score", row.number(path, c)?);
            }
        }
        let id = row.text(id_col).unwrap_or("1");
        filter.add(
            &mut set,
            id,
            row.text(label_col),
            key,
            entry,
            extras,
            row.at.clone(),
        )?;
    }
    let counts = filter.finish(&mut set)?;

    let mut annotations = Annotations::new(Coords::Pixels);
    let unusable = set.unusable_warning();
    annotations.tracks = set.into_tracks();
    annotations.coords = decide_coords(options.units, &annotations.tracks);
    annotations.meta = Meta {
        source_format: Some(Format::Plain),
        source_path: Some(path.to_path_buf()),
        ..Meta::default()
    };
    counts.apply(&mut annotations.tracks, &mut annotations.meta);
    push_read_warning(&mut annotations.meta, unusable);
    Ok(annotations)
}

/// `Units::Auto`: normalised only when there is a box and every coordinate is within `[0, 1]`.
pub(crate) fn decide_coords(units: Units, tracks: &[Track]) -> Coords {
    match units {
        Units::Pixels => Coords::Pixels,
        Units::Normalized => Coords::Normalized,
        Units::Auto => {
            let mut boxes = tracks
                .iter()
                .flat_map(|t| t.keys.values())
                .filter_map(Entry::bbox)
                .peekable();
            let in_unit = |v: f64| (0.0..=1.0).contains(&v);
            if boxes.peek().is_some()
                && boxes.all(|b| in_unit(b.x1) && in_unit(b.y1) && in_unit(b.x2) && in_unit(b.y2))
            {
                Coords::Normalized
            } else {
                Coords::Pixels
            }
        }
    }
}

/// Plain CSV or JSON box lists: `x1,y1,x2,y2` or `x,y,w,h` columns keyed by frame or time.
/// Registered in [`super::FORMATS`].
pub(crate) struct PlainFormat;

impl super::AnnotationFormat for PlainFormat {
    fn name(&self) -> &'static str {
        "plain"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["csv", "json"]
    }
    fn recognise(&self, file: &Sniffed) -> Recognised {
        let table = match file.shape {
            Shape::Csv(table) => table,
            Shape::Json {
                records: Some(table),
                ..
            } => table,
            Shape::Json { records: None, .. } => {
                return Recognised::No("not a list of records".to_string())
            }
            Shape::NumberLines(_) => return Recognised::No("no header row".to_string()),
            _ => return Recognised::NotApplicable,
        };
        if has_box_columns(table) {
            Recognised::Yes
        } else {
            Recognised::No("no x1,y1,x2,y2 or x,y,w,h columns".to_string())
        }
    }
    fn read(&self, path: &Path, options: &ReadOptions) -> Result<Annotations, AnnotationError> {
        read_plain(path, options)
    }

    fn read_text(
        &self,
        path: &Path,
        text: &str,
        options: &ReadOptions,
    ) -> Result<Annotations, AnnotationError> {
        read_plain_table(path, &table_of_text(path, text)?, options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::annotations::test_support::fixture;
    use crate::annotations::{read, Format};

    #[test]
    fn unusable_boxes_are_read_as_absent_and_named_by_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.csv");
        std::fs::write(
            &path,
            "frame,id,x,y,w,h\n0,a,NaN,1,2,3\n1,a,1,2,3,4\n2,a,1,1e308,2,3\n3,a,1,1,-2,3\n",
        )
        .unwrap();
        let ann = read(&path, Format::Plain, &ReadOptions::default()).unwrap();
        let warnings = ann.meta.fields[crate::annotations::READ_WARNINGS].to_string();
        assert!(warnings.contains("3 box(es)"), "{warnings}");
        assert!(warnings.contains("line 2, line 4, line 5"), "{warnings}");
        let track = &ann.tracks[0];
        assert_eq!(
            track.keys.values().filter(|e| e.bbox().is_some()).count(),
            1
        );
    }
    use crate::vocab::time::Time;

    #[test]
    fn reads_csv_with_corners_ids_and_labels() {
        let a = read_plain(&fixture("plain/boxes.csv"), &ReadOptions::default()).unwrap();
        assert_eq!(a.coords, Coords::Pixels);
        assert_eq!(a.tracks.len(), 2);
        let car = &a.tracks[0];
        assert_eq!(
            (car.id.as_str(), car.label.as_deref()),
            ("car1", Some("car"))
        );
        assert_eq!(
            car.keys[&Key::Frame(0)],
            Entry::Present(BBox::new(10.0, 20.0, 50.0, 60.0))
        );
        assert_eq!(
            car.keys[&Key::Frame(10)],
            Entry::Present(BBox::new(20.0, 20.0, 60.0, 60.0))
        );
        assert_eq!(car.extras[&Key::Frame(0)]["score"], 0.9);
        let person = &a.tracks[1];
        assert_eq!(person.label.as_deref(), Some("person, adult"));
        assert_eq!(person.keys[&Key::Frame(5)], Entry::Absent);
    }

    #[test]
    fn reads_normalised_json_with_times_and_xywh() {
        let a = read_plain(
            &fixture("plain/boxes_normalized.json"),
            &ReadOptions::default(),
        )
        .unwrap();
        assert_eq!(a.coords, Coords::Normalized);
        let t = &a.tracks[0];
        assert_eq!(t.id, "1");
        assert_eq!(
            t.keys[&Key::Time(Time::new(1, 2))],
            Entry::Present(BBox::new(0.25, 0.5, 0.75, 1.0))
        );
        assert_eq!(
            t.keys[&Key::Time(Time::new(21, 5))],
            Entry::Present(BBox::new(0.0, 0.0, 0.5, 0.5))
        );
        // normalised -> pixels of a 640x360 frame
        let p = a.to_pixels(640, 360);
        assert_eq!(
            p.tracks[0].keys[&Key::Time(Time::new(1, 2))],
            Entry::Present(BBox::new(160.0, 180.0, 480.0, 360.0))
        );
        // forced pixels
        let px = read_plain(
            &fixture("plain/boxes_normalized.json"),
            &ReadOptions {
                units: Units::Pixels,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(px.coords, Coords::Pixels);
    }

    #[test]
    fn bad_rows_name_file_line_and_expectation() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("b.csv");
        let cases = [
            ("frame,x1,y1,x2,y2\n0,1,2,3\n", "line 2: expected 5 comma-separated values (frame,x1,y1,x2,y2) as in the header, found 4"),
            ("frame,x1,y1,x2,y2\n0,1,2,3,4\n1,1,two,3,4\n", "line 3: column \"y1\": expected a number, found \"two\""),
            ("frame,x1,y1,x2,y2\n-1,1,2,3,4\n", "line 2: column \"frame\": expected a frame index (0, 1, 2, ...), found \"-1\""),
            (
                "frame,id,x,y,w,h\n3,a,1,2,3,4\n\n3,a,1,2,3,4\n",
                "line 4: track \"a\" has a second box for frame 3 (the first is at line 2); expected one box per track and frame",
            ),
        ];
        for (text, want) in cases {
            std::fs::write(&p, text).unwrap();
            let err = read_plain(&p, &ReadOptions::default())
                .unwrap_err()
                .to_string();
            assert_eq!(err, format!("{} {want}", p.display()));
        }
        std::fs::write(&p, "frame,a,b\n0,1,2\n").unwrap();
        let err = read_plain(&p, &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!(
                "{}: expected box columns x1,y1,x2,y2 (or xmin,ymin,xmax,ymax) or x,y,w,h; found columns frame,a,b",
                p.display()
            )
        );
        std::fs::write(&p, "x1,y1,x2,y2\n0,1,2,3\n").unwrap();
        let err = read_plain(&p, &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(err.ends_with("expected a frame column (frame, frame_index) or a time column (time, timestamp); found columns x1,y1,x2,y2"), "{err}");
        let j = dir.path().join("b.json");
        std::fs::write(&j, r#"[{"time": "0.5", "x1": 1, "x2": 2, "y1": 1}]"#).unwrap();
        let err = read_plain(&j, &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!(
                "{}: expected box columns x1,y1,x2,y2 (or xmin,ymin,xmax,ymax) or x,y,w,h; found columns time,x1,x2,y1",
                j.display()
            )
        );
        std::fs::write(
            &j,
            r#"[{"time": "0.5", "x1": 1, "y1": 1, "x2": 2, "y2": null}]"#,
        )
        .unwrap();
        let err = read_plain(&j, &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!(
                "{} [0]: column \"y2\" is empty; expected a value",
                j.display()
            )
        );
    }

    #[test]
    fn auto_detects_plain() {
        for name in ["plain/boxes.csv", "plain/boxes_normalized.json"] {
            let a = read(&fixture(name), Format::Auto, &ReadOptions::default()).unwrap();
            assert_eq!(a.meta.source_format, Some(Format::Plain), "{name}");
        }
    }
}
