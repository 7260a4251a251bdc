//! MOT Challenge text files (`gt.txt`, `det.txt`): one box per line,
//! `frame,id,x,y,w,h,conf,...` with 1-based frames. Rows with `id >= 0` become tracks (id as
//! text), rows with `id < 0` (public detections) become [`Detection`]s.
//!
//! Columns after `conf` follow the file's generation: 9 columns are MOT16/17/20 ground truth
//! (`class`, `visibility`, kept as extras and the class name as label); 10 columns are MOT15
//! (`world_x,world_y,world_z`, usually -1, kept as extras when set). `conf` is the detector
//! score in `det.txt` and the "consider this entry" flag (1/0) in `gt.txt`; it is kept as the
//! `conf` extra, and `ReadOptions::min_confidence` drops rows below it.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use super::bbox::BBox;
use super::error::{AnnotationError, Location};
use super::model::{
    push_read_warning, Annotations, Coords, Detection, Entry, Extras, Key, Meta, TrackSet,
};
use super::text::{open_text, parse_f64, split_numeric_line};
use super::{Format, ReadOptions, Recognised, Shape, Sniffed};

const NAMES_9: [&str; 9] = [
    "frame",
    "id",
    "x",
    "y",
    "w",
    "h",
    "conf",
    "class",
    "visibility",
];
const NAMES_10: [&str; 10] = [
    "frame", "id", "x", "y", "w", "h", "conf", "world_x", "world_y", "world_z",
];

/// The MOT16/17/20 class names by class id.
pub fn mot_class_name(class: i64) -> Option<&'static str> {
    Some(match class {
        1 => "pedestrian",
        2 => "person on vehicle",
        3 => "car",
        4 => "bicycle",
        5 => "motorbike",
        6 => "non motorized vehicle",
        7 => "static person",
        8 => "distractor",
        9 => "occluder",
        10 => "occluder on the ground",
        11 => "occluder full",
        12 => "reflection",
        13 => "crowd",
        _ => return None,
    })
}

fn column_name(count: usize, index: usize) -> &'static str {
    if count == 10 {
        NAMES_10[index]
    } else {
        NAMES_9[index]
    }
}

/// The [`Meta::fields`] entry counting rows that were not kept because their frame is past
/// the video's last ([`ReadOptions::frame_count`]); they count as keys outside the video.
pub const ROWS_PAST_THE_VIDEO: &str = "rows_past_the_video";

/// The [`Meta::fields`] entry counting rows inside the video but outside the frames the
/// request keeps ([`ReadOptions::span`]), not kept.
pub const ROWS_OUTSIDE_THE_SPAN: &str = "rows_outside_the_span";

/// A track's row past the video's end, kept until a nearer one turns up.
struct Beyond {
    frame: usize,
    label: Option<&'static str>,
    bbox: BBox,
    extras: Extras,
    line: usize,
}

/// Reads a MOT `gt.txt` / `det.txt`, line by line: memory follows the rows kept, not the
/// file. With [`ReadOptions::frame_count`], rows of frames past the video's end are counted
/// ([`ROWS_PAST_THE_VIDEO`]) and dropped, except each track's first key after the end (a gap
/// at the end of the video may be filled towards it). With [`ReadOptions::span`], rows
/// outside the span are counted ([`ROWS_OUTSIDE_THE_SPAN`]) and dropped, except each track's
/// last key before the span and first key after it; the tracks keep the order of their first
/// rows inside the video, as if every row had been kept.
pub fn read_mot(path: &Path, options: &ReadOptions) -> Result<Annotations, AnnotationError> {
    read_mot_from(path, open_text(path)?, options)
}

/// [`read_mot`] of the file's bytes as `reader` gives them.
fn read_mot_from(
    path: &Path,
    mut reader: impl BufRead,
    options: &ReadOptions,
) -> Result<Annotations, AnnotationError> {
    let mut set = TrackSet::new(path);
    let mut detections = Vec::new();
    let mut first: Option<(usize, usize)> = None; // (line, column count)
    let mut below_confidence = 0usize;
    let mut empty_detections = 0usize;
    // Rows past the video's last frame are counted, not kept, but for each track's first key
    // after the end (what filling the track's last gap inside the video may need).
    let mut beyond = 0usize;
    let mut next_after_end: HashMap<String, Beyond> = HashMap::new();
    // Rows inside the video but outside the span: counted, but for each track's nearest keys
    // on either side; and the line of each track's first row inside the video (its place).
    let span = options.span.clone();
    let mut outside_span = 0usize;
    let mut last_before: HashMap<String, Beyond> = HashMap::new();
    let mut first_after: HashMap<String, Beyond> = HashMap::new();
    let mut first_line: HashMap<String, usize> = HashMap::new();

    let mut bytes = Vec::new();
    let mut line_no = 0usize;
    loop {
        bytes.clear();
        let n = reader
            .read_until(b'\n', &mut bytes)
            .map_err(|e| AnnotationError::read(path, e))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let Ok(raw) = std::str::from_utf8(&bytes) else {
            return Err(AnnotationError::at_line(
                path,
                line_no,
                "is not valid UTF-8 text; expected comma-separated numbers",
            ));
        };
        let raw = if line_no == 1 {
            raw.strip_prefix('\u{feff}').unwrap_or(raw)
        } else {
            raw
        };
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields = split_numeric_line(line);
        let count = match first {
            None => {
                if !(6..=10).contains(&fields.len()) {
                    return Err(AnnotationError::at_line(
                        path,
                        line_no,
                        format!(
                            "expected 6 to 10 comma-separated numbers (frame,id,x,y,w,h,conf,...), found {}",
                            fields.len()
                        ),
                    ));
                }
                first = Some((line_no, fields.len()));
                fields.len()
            }
            Some((first_line, count)) => {
                if fields.len() != count {
                    return Err(AnnotationError::at_line(
                        path,
                        line_no,
                        format!(
                            "expected {count} comma-separated numbers (frame,id,x,y,w,h,conf,...) like line {first_line}, found {}",
                            fields.len()
                        ),
                    ));
                }
                count
            }
        };
        let mut v = [0f64; 10];
        for (k, f) in fields.iter().enumerate() {
            v[k] = parse_f64(f).ok_or_else(|| {
                AnnotationError::at_line(
                    path,
                    line_no,
                    format!(
                        "column {} ({}): expected a number, found {f:?}",
                        k + 1,
                        column_name(count, k)
                    ),
                )
            })?;
        }
        let frame = v[0];
        if !(frame.fract() == 0.0 && (1.0..1e15).contains(&frame)) {
            return Err(AnnotationError::at_line(
                path,
                line_no,
                format!(
                    "column 1 (frame): expected a frame number 1, 2, ... (MOT frames are 1-based), found {}",
                    fields[0]
                ),
            ));
        }
        let frame = frame as usize - 1;
        let id = v[1];
        if !(id.fract() == 0.0 && id.abs() < 1e15) {
            return Err(AnnotationError::at_line(
                path,
                line_no,
                format!(
                    "column 2 (id): expected an integer track id (-1 for detections), found {}",
                    fields[1]
                ),
            ));
        }
        let conf = (count >= 7).then_some(v[6]);
        if let (Some(min), Some(conf)) = (options.min_confidence, conf) {
            if conf < min {
                below_confidence += 1;
                continue;
            }
        }
        let bbox = BBox::from_xywh(v[2], v[3], v[4], v[5]);
        set.note_box(&bbox, &Location::Line(line_no));
        let class = (count == 8 || count == 9).then_some(v[7]);
        let label: Option<&'static str> = class.and_then(|c| {
            if c.fract() == 0.0 {
                mot_class_name(c as i64)
            } else {
                None
            }
        });

        let past_end = options.frame_count.is_some_and(|n| frame >= n);
        if id < 0.0 {
            if !bbox.has_area() {
                empty_detections += 1;
                continue;
            }
            if past_end {
                beyond += 1;
                continue;
            }
            if span.as_ref().is_some_and(|s| !s.contains(&frame)) {
                outside_span += 1;
                continue;
            }
            detections.push(Detection {
                key: Key::Frame(frame),
                bbox,
                score: conf,
                label: label.map(str::to_string),
            });
            continue;
        }

        let mut extras = Extras::new();
        if !options.boxes_only {
            if let Some(conf) = conf {
                extras.insert("conf", conf);
            }
            if let Some(class) = class {
                extras.insert("class", class);
            }
            if count == 9 {
                extras.insert("visibility", v[8]);
            }
            if count == 10 {
                for (k, name) in [(7, "world_x"), (8, "world_y"), (9, "world_z")] {
                    if v[k] != -1.0 {
                        extras.insert(name, v[k]);
                    }
                }
            }
        }
        let id_text = (id as i64).to_string();
        if past_end {
            beyond += 1;
            let row = Beyond {
                frame,
                label,
                bbox,
                extras,
                line: line_no,
            };
            match next_after_end.get_mut(&id_text) {
                Some(kept) if kept.frame <= frame => {}
                Some(kept) => *kept = row,
                None => {
                    next_after_end.insert(id_text, row);
                }
            }
            continue;
        }
        if span.is_some() {
            first_line.entry(id_text.clone()).or_insert(line_no);
        }
        if let Some(s) = span.as_ref().filter(|s| !s.contains(&frame)) {
            outside_span += 1;
            let row = Beyond {
                frame,
                label,
                bbox,
                extras,
                line: line_no,
            };
            // The nearest row on its side (the first in the file of equals).
            let (map, nearer): (&mut HashMap<String, Beyond>, fn(usize, usize) -> bool) =
                if frame < s.start {
                    (&mut last_before, |kept: usize, f: usize| f > kept)
                } else {
                    (&mut first_after, |kept: usize, f: usize| f < kept)
                };
            match map.get_mut(&id_text) {
                Some(kept) if !nearer(kept.frame, frame) => {}
                Some(kept) => *kept = row,
                None => {
                    map.insert(id_text, row);
                }
            }
            continue;
        }
        set.add(
            &id_text,
            label,
            Key::Frame(frame),
            Entry::from_box(bbox),
            extras,
            Location::Line(line_no),
        )?;
    }
    let mut neighbours: Vec<(String, Beyond)> =
        last_before.into_iter().chain(first_after).collect();
    neighbours.sort_by_key(|(_, row)| row.line);
    for (id, row) in neighbours {
        outside_span -= 1;
        set.add(
            &id,
            row.label,
            Key::Frame(row.frame),
            Entry::from_box(row.bbox),
            row.extras,
            Location::Line(row.line),
        )?;
    }
    // In file order, so that tracks keep the order of their first rows.
    let mut kept: Vec<(String, Beyond)> = next_after_end.into_iter().collect();
    kept.sort_by_key(|(_, row)| row.line);
    for (id, row) in kept {
        beyond -= 1;
        set.add(
            &id,
            row.label,
            Key::Frame(row.frame),
            Entry::from_box(row.bbox),
            row.extras,
            Location::Line(row.line),
        )?;
    }

    let mut annotations = Annotations::new(Coords::Pixels);
    let unusable = set.unusable_warning();
    annotations.tracks = set.into_tracks();
    push_read_warning(&mut annotations.meta, unusable);
    if span.is_some() {
        // Each track in the place of its first row inside the video (a stable sort: tracks
        // seen only past the video's end stay last, in their order).
        annotations
            .tracks
            .sort_by_key(|t| first_line.get(&t.id).map_or((1, 0), |&l| (0, l)));
    }
    annotations.detections = detections;
    let mut meta = Meta {
        source_format: Some(Format::Mot),
        source_path: Some(path.to_path_buf()),
        ..Meta::default()
    };
    if let Some((_, count)) = first {
        meta.fields.insert("columns".into(), count.into());
    }
    if options.min_confidence.is_some() {
        meta.fields
            .insert("rows_below_min_confidence".into(), below_confidence.into());
    }
    if beyond > 0 {
        meta.fields
            .insert(ROWS_PAST_THE_VIDEO.into(), beyond.into());
    }
    if outside_span > 0 {
        meta.fields
            .insert(ROWS_OUTSIDE_THE_SPAN.into(), outside_span.into());
    }
    if empty_detections > 0 {
        meta.fields
            .insert("empty_detections_skipped".into(), empty_detections.into());
    }
    annotations.meta = meta;
    Ok(annotations)
}

/// MOT Challenge: `frame,id,x,y,w,h,conf,...` rows (1-based frames). Registered in
/// [`super::FORMATS`].
pub(crate) struct MotFormat;

impl super::AnnotationFormat for MotFormat {
    fn name(&self) -> &'static str {
        "mot"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["mot15", "mot16", "mot17", "mot20"]
    }
    fn recognise(&self, file: &Sniffed) -> Recognised {
        match file.shape {
            Shape::NumberLines(6..=10) => Recognised::Yes,
            Shape::NumberLines(n) => Recognised::No(format!(
                "lines have {n} numbers, not 6 to 10 (frame,id,x,y,w,h,conf,...)"
            )),
            Shape::Csv(_) => Recognised::No("the first line is not numbers".to_string()),
            _ => Recognised::NotApplicable,
        }
    }
    fn read(&self, path: &Path, options: &ReadOptions) -> Result<Annotations, AnnotationError> {
        read_mot(path, options)
    }

    fn read_text(
        &self,
        path: &Path,
        text: &str,
        options: &ReadOptions,
    ) -> Result<Annotations, AnnotationError> {
        read_mot_from(path, text.as_bytes(), options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::annotations::test_support::{fixture, shared_data};
    use crate::annotations::{read, Format};

    #[test]
    fn reads_ground_truth_fixture() {
        let a = read_mot(&fixture("mot/gt.txt"), &ReadOptions::default()).unwrap();
        assert_eq!(a.tracks.len(), 2);
        assert_eq!(a.detections.len(), 0);
        let t = &a.tracks[0];
        assert_eq!(t.id, "1");
        assert_eq!(t.label.as_deref(), Some("pedestrian"));
        // frame 1 -> 0, x,y,w,h -> corners
        assert_eq!(
            t.keys[&Key::Frame(0)],
            Entry::Present(BBox::new(100.0, 50.0, 120.0, 90.0))
        );
        assert_eq!(
            t.keys[&Key::Frame(1)],
            Entry::Present(BBox::new(102.0, 50.0, 122.0, 90.0))
        );
        assert_eq!(t.extras[&Key::Frame(0)]["visibility"], 0.75);
        assert_eq!(t.extras[&Key::Frame(0)]["conf"], 1.0);
        let car = &a.tracks[1];
        assert_eq!(car.id, "2");
        assert_eq!(car.label.as_deref(), Some("car"));
        assert_eq!(car.keys.len(), 2);
        // the consider-flag filter
        let kept = read_mot(
            &fixture("mot/gt.txt"),
            &ReadOptions {
                min_confidence: Some(1.0),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(kept.tracks[1].keys.len(), 1);
        assert_eq!(kept.meta.fields["rows_below_min_confidence"], 1);
        // Boxes only: the same tracks and boxes, no extras (the confidence filter still holds).
        let boxes = read_mot(
            &fixture("mot/gt.txt"),
            &ReadOptions {
                boxes_only: true,
                min_confidence: Some(1.0),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(boxes.tracks.len(), kept.tracks.len());
        for (b, k) in boxes.tracks.iter().zip(&kept.tracks) {
            assert_eq!((&b.id, &b.label, &b.keys), (&k.id, &k.label, &k.keys));
            assert!(b.extras.is_empty());
        }
    }

    #[test]
    fn reads_detections_fixture() {
        let a = read_mot(&fixture("mot/det.txt"), &ReadOptions::default()).unwrap();
        assert!(a.tracks.is_empty());
        assert_eq!(a.detections.len(), 3);
        assert_eq!(
            a.detections[0],
            Detection {
                key: Key::Frame(0),
                bbox: BBox::new(649.5, 231.5, 694.0, 318.0),
                score: Some(0.9),
                label: None
            }
        );
        assert_eq!(a.detections[2].key, Key::Frame(1));
        let auto = read(
            &fixture("mot/det.txt"),
            Format::Auto,
            &ReadOptions::default(),
        )
        .unwrap();
        assert_eq!(auto.meta.source_format, Some(Format::Mot));
    }

    #[test]
    fn bad_rows_name_file_line_and_expectation() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("det.txt");
        let cases = [
            (
                "1,-1,1,2,3,4,0.9,-1,-1,-1\n1,-1,1,2\n",
                "line 2: expected 10 comma-separated numbers (frame,id,x,y,w,h,conf,...) like line 1, found 4",
            ),
            ("1,-1,1,2,3\n", "line 1: expected 6 to 10 comma-separated numbers (frame,id,x,y,w,h,conf,...), found 5"),
            ("1,-1,1,2,3,4,0.9,-1,-1,-1\n2,-1,1,y,3,4,0.9,-1,-1,-1\n", "line 2: column 4 (y): expected a number, found \"y\""),
            (
                "0,-1,1,2,3,4,0.9,-1,-1,-1\n",
                "line 1: column 1 (frame): expected a frame number 1, 2, ... (MOT frames are 1-based), found 0",
            ),
            (
                "1,1.5,1,2,3,4,0.9,-1,-1,-1\n",
                "line 1: column 2 (id): expected an integer track id (-1 for detections), found 1.5",
            ),
            (
                "1,3,1,2,3,4,1,1,1\n2,3,1,2,3,4,1,1,1\n2,3,5,2,3,4,1,1,1\n",
                "line 3: track \"3\" has a second box for frame 1 (the first is at line 2); expected one box per track and frame",
            ),
        ];
        for (text, want) in cases {
            std::fs::write(&p, text).unwrap();
            let err = read_mot(&p, &ReadOptions::default())
                .unwrap_err()
                .to_string();
            assert_eq!(err, format!("{} {want}", p.display()));
        }
        let err = read_mot(&dir.path().join("missing.txt"), &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(&format!(
                "{}: file not found; check the path",
                dir.path().join("missing.txt").display()
            )),
            "{err}"
        );
    }

    #[test]
    fn real_pets09_detections() {
        let Some(data) = shared_data("pets09") else {
            return;
        };
        let path = data.join("pets09/det.txt");
        let a = read(&path, Format::Auto, &ReadOptions::default()).unwrap();
        assert_eq!(a.meta.source_format, Some(Format::Mot));
        assert!(a.tracks.is_empty());
        assert_eq!(a.detections.len(), 4359);
        let frames: Vec<usize> = a
            .detections
            .iter()
            .map(|d| match d.key {
                Key::Frame(f) => f,
                Key::Time(_) => unreachable!("MOT keys are frames"),
            })
            .collect();
        assert_eq!(frames.iter().min(), Some(&0));
        assert_eq!(frames.iter().max(), Some(&794));
        let mut distinct = frames.clone();
        distinct.dedup();
        assert_eq!(distinct.len(), 795);
        assert_eq!(
            a.detections[0].bbox,
            BBox::from_xywh(649.441, 231.502, 44.417, 86.13)
        );
        assert_eq!(a.detections[0].score, Some(0.995474));
        let filtered = read(
            &path,
            Format::Mot,
            &ReadOptions {
                min_confidence: Some(0.9),
                ..Default::default()
            },
        )
        .unwrap();
        assert!(filtered.detections.len() < 4359 && !filtered.detections.is_empty());
        assert!(filtered.detections.iter().all(|d| d.score.unwrap() >= 0.9));
        assert_eq!(
            filtered.meta.fields["rows_below_min_confidence"],
            serde_json::json!(4359 - filtered.detections.len())
        );
    }

    /// With a span, only the rows inside it are kept, and each track's nearest row on either
    /// side (what a gap reaching into the span needs); the rest are counted. The tracks keep
    /// the order of their first rows, and the kept keys are the unfiltered read's.
    #[test]
    fn rows_outside_the_span_are_not_kept_but_each_tracks_nearest_on_either_side() {
        use std::fmt::Write as _;
        // Track 1 on every frame 1..=100 (MOT frames), track 2 only on frames 1..=5 and
        // 95..=100 (a gap across the span), track 3 only on frames 90..=100 (first seen after
        // the span, but listed before track 2's late rows), detections on every frame.
        let mut text = String::new();
        for f in 1..=100 {
            writeln!(text, "{f},1,{f},0,10,10,1,1,1").unwrap();
            if f <= 5 || f >= 95 {
                writeln!(text, "{f},2,{f},5,10,10,1,1,1").unwrap();
            }
            if f >= 90 {
                writeln!(text, "{f},3,{f},9,10,10,1,1,1").unwrap();
            }
            writeln!(text, "{f},-1,{f},1,10,10,0.5,-1,-1").unwrap();
        }
        let path = Path::new("gt.txt");
        let all = read_mot_from(path, text.as_bytes(), &ReadOptions::default()).unwrap();
        let read = |span| {
            read_mot_from(
                path,
                text.as_bytes(),
                &ReadOptions {
                    span: Some(span),
                    ..ReadOptions::default()
                },
            )
            .unwrap()
        };
        // Frames 40..50 (0-based): MOT frames 41..=50.
        let a = read(40..50);
        let ids: Vec<&str> = a.tracks.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["1", "2", "3"]);
        let frames = |t: &super::super::model::Track| -> Vec<usize> {
            t.keys
                .keys()
                .map(|k| match k {
                    Key::Frame(f) => *f,
                    other => panic!("{other:?}"),
                })
                .collect()
        };
        assert_eq!(
            frames(&a.tracks[0]),
            [39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50]
        );
        assert_eq!(frames(&a.tracks[1]), [4, 94]);
        assert_eq!(frames(&a.tracks[2]), [89]);
        // Every kept key is the unfiltered read's, extras included.
        for (t, u) in a.tracks.iter().zip(&all.tracks) {
            for (k, e) in &t.keys {
                assert_eq!(Some(e), u.keys.get(k), "track {} {k:?}", t.id);
                assert_eq!(t.extras.get(k), u.extras.get(k), "track {} {k:?}", t.id);
            }
        }
        assert_eq!(a.detections.len(), 10);
        // Rows: 100 + 11 + 11 + 100 detections; kept: 12 + 2 + 1 + 10.
        assert_eq!(a.meta.fields[ROWS_OUTSIDE_THE_SPAN], 222 - 25);
        // Without a span, or one over every frame, nothing is counted.
        assert!(!all.meta.fields.contains_key(ROWS_OUTSIDE_THE_SPAN));
        let whole = read(0..100);
        assert!(!whole.meta.fields.contains_key(ROWS_OUTSIDE_THE_SPAN));
        assert_eq!(whole.tracks, all.tracks);
    }
}
