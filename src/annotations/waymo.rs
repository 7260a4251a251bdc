//! Waymo-style camera boxes from CSV (header row) or JSON (list of records): a box per object
//! and frame as `center_x, center_y, length, width` in pixels, where `length` is the extent
//! along x and `width` along y (Waymo `Label.Box`).
//!
//! Column names accepted (case-insensitive; the Waymo v2 parquet decorations
//! `[CameraBoxComponent].` and `key.` are ignored, nested JSON objects give dotted names):
//! - box: `center_x`/`box.center_x`/`box.center.x`, `center_y`/..., `length`/`box.length`/
//!   `box.size.x`, `width`/`box.width`/`box.size.y`;
//! - key: `frame`/`frame_index` (0-based), or `timestamp`/`time` (seconds), or
//!   `timestamp_micros`/`frame_timestamp_micros` (microseconds; made relative to the smallest
//!   timestamp in the file, which becomes time 0 and is kept as the `time_origin_micros` field;
//!   these times count from the video's first frame, [`super::TimeOrigin::FirstFrame`]);
//! - object: `id`/`object_id`/`camera_object_id`/`track_id` (required);
//! - class (optional): `type`/`label`/`class`/`category` (Waymo type numbers 0..4 become
//!   `unknown`, `vehicle`, `pedestrian`, `sign`, `cyclist`);
//! - camera (optional): `camera_name`/`camera`; a file with several cameras needs
//!   `ReadOptions::camera` (a name like `FRONT` or its number).

use std::collections::BTreeSet;
use std::path::Path;

use super::bbox::BBox;
use super::error::AnnotationError;
use super::model::{push_read_warning, Annotations, Coords, Entry, Extras, Key, Meta, TrackSet};
use super::plain::{decide_coords, key_column, table_of_file, table_of_text, FRAME_COLUMNS};
use super::span::SpanFilter;
use super::text::{parse_integer, Table};
use super::{Format, KeyKind, ReadOptions, Recognised, Shape, Sniffed};
use crate::vocab::time::Time;

const CENTER_X: &[&str] = &["center_x", "box.center_x", "box.center.x", "cx"];
const CENTER_Y: &[&str] = &["center_y", "box.center_y", "box.center.y", "cy"];
const LENGTH: &[&str] = &["length", "box.length", "box.size.x"];
const WIDTH: &[&str] = &["width", "box.width", "box.size.y"];
const ID: &[&str] = &["id", "object_id", "camera_object_id", "track_id"];
const TIME: &[&str] = &["timestamp", "time", "timestamp_s"];
const MICROS: &[&str] = &["timestamp_micros", "frame_timestamp_micros", "time_micros"];
const TYPE: &[&str] = &["type", "label", "class", "category", "object_type"];
const CAMERA: &[&str] = &["camera_name", "camera", "camera.name"];

/// Waymo object type names by number (`Label.Type`).
pub fn waymo_type_name(number: i64) -> Option<&'static str> {
    Some(match number {
        0 => "unknown",
        1 => "vehicle",
        2 => "pedestrian",
        3 => "sign",
        4 => "cyclist",
        _ => return None,
    })
}

/// Waymo camera names by number (`CameraName.Name`).
fn camera_name(number: i64) -> Option<&'static str> {
    Some(match number {
        0 => "UNKNOWN",
        1 => "FRONT",
        2 => "FRONT_LEFT",
        3 => "FRONT_RIGHT",
        4 => "SIDE_LEFT",
        5 => "SIDE_RIGHT",
        _ => return None,
    })
}

/// The camera a cell names, as its canonical name (`1` and `front` are both `FRONT`).
fn canonical_camera(text: &str) -> String {
    parse_integer(text)
        .and_then(camera_name)
        .map(str::to_string)
        .unwrap_or_else(|| text.trim().to_ascii_uppercase())
}

/// True when the table has Waymo box columns (centre and length).
pub(crate) fn has_waymo_columns(table: &Table) -> bool {
    table.column(CENTER_X).is_some() && table.column(LENGTH).is_some()
}

/// Reads Waymo-style camera boxes.
pub fn read_waymo(
    path: &Path,
    options: &crate::annotations::ReadOptions,
) -> Result<Annotations, AnnotationError> {
    let mut text = String::new();
    read_waymo_table(path, &table_of_file(path, &mut text)?, options)
}

fn read_waymo_table(
    path: &Path,
    table: &Table,
    options: &ReadOptions,
) -> Result<Annotations, AnnotationError> {
    let found = || table.columns.join(",");
    let need = |names: &[&str], what: &str| {
        table.column(names).ok_or_else(|| {
            AnnotationError::file(
                path,
                format!(
                    "expected {what} column ({}); found columns {}",
                    names.join(", "),
                    found()
                ),
            )
        })
    };
    let cx = need(CENTER_X, "a box centre x")?;
    let cy = need(CENTER_Y, "a box centre y")?;
    let length = need(LENGTH, "a box length (extent along x)")?;
    let width = need(WIDTH, "a box width (extent along y)")?;
    let id_col = need(ID, "an object id")?;
    let type_col = table.column(TYPE);
    let camera_col = table.column(CAMERA);

    // Key column: frame or seconds per preference; microseconds when neither.
    let key = key_column(table, FRAME_COLUMNS, TIME, options.prefer_keys);
    let micros = table.column(MICROS);
    if key.is_none() && micros.is_none() {
        return Err(AnnotationError::file(
            path,
            format!(
                "expected a frame column (frame, frame_index) or a time column (timestamp, time, timestamp_micros); found columns {}",
                found()
            ),
        ));
    }

    // Camera selection.
    let wanted_camera = options.camera.as_deref().map(canonical_camera);
    if let Some(col) = camera_col {
        let mut cameras = BTreeSet::new();
        for row in table.rows() {
            if let Some(text) = row?.text(Some(col)) {
                cameras.insert(canonical_camera(text));
            }
        }
        if cameras.len() > 1 && wanted_camera.is_none() {
            return Err(AnnotationError::file(
                path,
                format!(
                    "has boxes from {} cameras ({}); choose one camera",
                    cameras.len(),
                    cameras.into_iter().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        if let Some(w) = &wanted_camera {
            if !cameras.contains(w) {
                return Err(AnnotationError::file(
                    path,
                    format!(
                        "has no boxes from camera {w}; its cameras are {}",
                        cameras.into_iter().collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
        }
    } else if let Some(w) = &wanted_camera {
        return Err(AnnotationError::file(
            path,
            format!("camera {w} was asked for, but the file has no camera column"),
        ));
    }

    // The micros origin: the smallest timestamp among the rows used.
    let use_micros = key.is_none();
    let mut origin: Option<i64> = None;
    if use_micros {
        if let Some(col) = micros {
            for row in table.rows() {
                let row = row?;
                if !camera_matches(row.text(camera_col), wanted_camera.as_deref()) {
                    continue;
                }
                let text = row.required(path, col)?;
                let us = parse_integer(text).ok_or_else(|| {
                    AnnotationError::invalid(
                        path,
                        row.at.clone(),
                        format!(
                            "column {:?}: expected whole microseconds, found {text:?}",
                            col.name
                        ),
                    )
                })?;
                origin = Some(origin.map_or(us, |o: i64| o.min(us)));
            }
        }
    }

    let mut set = TrackSet::new(path);
    let mut filter = SpanFilter::new(options);
    for row in table.rows() {
        let row = row?;
        if !camera_matches(row.text(camera_col), wanted_camera.as_deref()) {
            continue;
        }
        let k = match key {
            Some((KeyKind::Frame, c)) => Key::Frame(row.index(path, c)?),
            Some((KeyKind::Time, c)) => Key::Time(row.time(path, c)?),
            None => {
                // `micros` is Some here (checked above) and every row parsed in the origin pass.
                let (Some(col), Some(origin)) = (micros, origin) else {
                    continue;
                };
                let us = parse_integer(row.required(path, col)?).unwrap_or(origin);
                Key::Time(Time::new(us - origin, 1_000_000))
            }
        };
        let bbox = BBox::from_center(
            row.number(path, cx)?,
            row.number(path, cy)?,
            row.number(path, length)?,
            row.number(path, width)?,
        );
        let id = row.required(path, id_col)?;
        let label = row
            .text(type_col)
            .map(|t| match parse_integer(t).and_then(waymo_type_name) {
                Some(name) => name.to_string(),
                None => t.to_string(),
            });
        set.note_box(&bbox, &row.at);
        filter.add(
            &mut set,
            id,
            label.as_deref(),
            k,
            Entry::from_box(bbox),
            Extras::new(),
            row.at.clone(),
        )?;
    }

    let counts = filter.finish(&mut set)?;
    let mut annotations = Annotations::new(Coords::Pixels);
    let unusable = set.unusable_warning();
    annotations.tracks = set.into_tracks();
    annotations.coords = decide_coords(options.units, &annotations.tracks);
    let mut meta = Meta {
        source_format: Some(Format::Waymo),
        source_path: Some(path.to_path_buf()),
        ..Meta::default()
    };
    if let Some(o) = origin {
        meta.fields.insert("time_origin_micros".into(), o.into());
        // The earliest camera timestamp is the first frame.
        annotations.time_origin = super::model::TimeOrigin::FirstFrame;
    }
    if let Some(c) = wanted_camera {
        meta.fields.insert("camera".into(), c.into());
    }
    annotations.meta = meta;
    counts.apply(&mut annotations.tracks, &mut annotations.meta);
    push_read_warning(&mut annotations.meta, unusable);
    Ok(annotations)
}

fn camera_matches(cell: Option<&str>, wanted: Option<&str>) -> bool {
    match (wanted, cell) {
        (None, _) => true,
        (Some(w), Some(c)) => canonical_camera(c) == w,
        (Some(_), None) => false,
    }
}

/// Waymo-style camera boxes: CSV or JSON records with `center_x`, `length`, ... Registered in
/// [`super::FORMATS`].
pub(crate) struct WaymoFormat;

impl super::AnnotationFormat for WaymoFormat {
    fn name(&self) -> &'static str {
        "waymo"
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
            _ => return Recognised::NotApplicable,
        };
        if has_waymo_columns(table) {
            Recognised::Yes
        } else {
            Recognised::No("no center_x and length columns".to_string())
        }
    }
    fn read(&self, path: &Path, options: &ReadOptions) -> Result<Annotations, AnnotationError> {
        read_waymo(path, options)
    }

    fn read_text(
        &self,
        path: &Path,
        text: &str,
        options: &ReadOptions,
    ) -> Result<Annotations, AnnotationError> {
        let table = table_of_text(path, text)?;
        read_waymo_table(path, &table, options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::annotations::test_support::fixture;
    use crate::annotations::{read, Format};

    #[test]
    fn reads_csv_centre_length_width() {
        let a = read_waymo(&fixture("waymo/camera_boxes.csv"), &ReadOptions::default()).unwrap();
        assert_eq!(a.meta.source_format, Some(Format::Waymo));
        assert_eq!(a.tracks.len(), 2);
        let car = &a.tracks[0];
        assert_eq!(car.id, "veh_a");
        assert_eq!(car.label.as_deref(), Some("vehicle"));
        // centre (100, 50), length 40 along x, width 20 along y
        assert_eq!(
            car.keys[&Key::Frame(0)],
            Entry::Present(BBox::new(80.0, 40.0, 120.0, 60.0))
        );
        assert_eq!(
            car.keys[&Key::Frame(1)],
            Entry::Present(BBox::new(90.0, 40.0, 130.0, 60.0))
        );
        let ped = &a.tracks[1];
        assert_eq!(ped.label.as_deref(), Some("pedestrian"));
        assert_eq!(
            ped.keys[&Key::Frame(1)],
            Entry::Present(BBox::new(295.0, 180.0, 305.0, 220.0))
        );
    }

    #[test]
    fn reads_v2_style_json_with_micros_and_cameras() {
        let path = fixture("waymo/camera_boxes_v2.json");
        let err = read_waymo(&path, &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!(
                "{}: has boxes from 2 cameras (FRONT, FRONT_LEFT); choose one camera",
                path.display()
            )
        );
        let opts = ReadOptions {
            camera: Some("front".into()),
            ..Default::default()
        };
        let a = read_waymo(&path, &opts).unwrap();
        assert_eq!(
            a.meta.fields["time_origin_micros"],
            1_550_000_000_000_000i64
        );
        let t = &a.tracks[0];
        assert_eq!(t.id, "obj1");
        assert_eq!(t.label.as_deref(), Some("cyclist"));
        assert_eq!(
            t.keys[&Key::Time(Time::ZERO)],
            Entry::Present(BBox::new(5.0, 10.0, 15.0, 30.0))
        );
        assert_eq!(
            t.keys[&Key::Time(Time::new(1, 10))],
            Entry::Present(BBox::new(6.0, 10.0, 16.0, 30.0))
        );
        assert_eq!(t.keys.len(), 2);
        let auto = read(
            &path,
            Format::Auto,
            &ReadOptions {
                camera: Some("1".into()),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(auto.tracks, a.tracks);
        assert_eq!(auto.meta.source_format, Some(Format::Waymo));
    }

    #[test]
    fn bad_input_is_located() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("w.csv");
        std::fs::write(
            &p,
            "frame,id,center_x,center_y,length,width\n0,a,1,2,3,4\n1,a,1,2,x,4\n",
        )
        .unwrap();
        let err = read_waymo(&p, &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!(
                "{} line 3: column \"length\": expected a number, found \"x\"",
                p.display()
            )
        );
        std::fs::write(&p, "frame,center_x,center_y,length,width\n0,1,2,3,4\n").unwrap();
        let err = read_waymo(&p, &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!(
                "{}: expected an object id column (id, object_id, camera_object_id, track_id); found columns frame,center_x,center_y,length,width",
                p.display()
            )
        );
        std::fs::write(
            &p,
            "frame,id,center_x,center_y,length,width\n0,a,1,2,3,4\n0,a,1,2,3,4\n",
        )
        .unwrap();
        let err = read_waymo(&p, &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(err.ends_with("line 3: track \"a\" has a second box for frame 0 (the first is at line 2); expected one box per track and frame"), "{err}");
    }
}
