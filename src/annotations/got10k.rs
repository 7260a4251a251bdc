//! GOT-10k sequence folders: `groundtruth.txt` (`x,y,w,h` per line; line 1 is frame 0),
//! `absence.label` (1 = object absent), `cover.label` (visible-ratio level 0..8, kept as the
//! `cover` extra), `meta_info.ini` (`[METAINFO]` with `anno_fps: 10Hz`, `object_class`, ...;
//! 10 Hz when it does not say), and the image list `00000001.jpg`, ... .
//!
//! Reading keeps what exists (the test split has only a first-frame box). The stricter
//! [`check_sequence`] / [`open_sequence`] are for jobs that insert a sequence's frames into a
//! video and need exactly one box line per image.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use super::bbox::BBox;
use super::error::{AnnotationError, Location};
use super::model::{Annotations, Coords, Entry, Extras, Key, Meta, TrackSet};
use super::span::SpanFilter;
use super::text::{for_each_used_line, parse_f64, parse_integer, read_text, split_numeric_line};
use super::{Format, ReadOptions, Recognised, Shape, Sniffed};
use crate::vocab::time::Time;

/// The annotation rate GOT-10k uses when `meta_info.ini` gives none.
pub const DEFAULT_ANNO_FPS: i64 = 10;

/// A checked sequence: its images in order (image `i` is frame `i`) and its annotations.
#[derive(Clone, Debug)]
pub struct Got10kSequence {
    /// The image files `00000001.jpg`, ... in frame order: `images[i]` is frame `i`
    /// (0-based) and has exactly one box line.
    pub images: Vec<PathBuf>,
    /// The sequence's annotations as [`read_got10k`] reads them: one track keyed by frame
    /// index.
    pub annotations: Annotations,
}

/// The sequence folder and groundtruth file for a path that is either.
fn locate(path: &Path) -> (Option<PathBuf>, PathBuf) {
    if path.is_dir() {
        (Some(path.to_path_buf()), path.join("groundtruth.txt"))
    } else if path.file_name().is_some_and(|n| n == "groundtruth.txt") {
        (path.parent().map(Path::to_path_buf), path.to_path_buf())
    } else {
        // A bare box file: read its boxes, no label files.
        (None, path.to_path_buf())
    }
}

/// Reads a GOT-10k sequence folder or its `groundtruth.txt` (labels and `meta_info.ini` are
/// read from the same folder when present). One track, id = the folder name, keyed by frame.
pub fn read_got10k(path: &Path) -> Result<Annotations, AnnotationError> {
    read_got10k_with(path, &ReadOptions::default())
}

/// [`read_got10k`] keeping only the boxes `options` can use ([`ReadOptions::frame_count`],
/// [`ReadOptions::span`]: the rule of [`super::span`]): the lines are read one at a time, so
/// memory follows the frames kept, not the file.
pub fn read_got10k_with(
    path: &Path,
    options: &ReadOptions,
) -> Result<Annotations, AnnotationError> {
    let (dir, gt_path) = locate(path);
    if !gt_path.exists() {
        return Err(AnnotationError::file(
            path,
            "no groundtruth.txt; expected a GOT-10k sequence folder (groundtruth.txt, absence.label, \
             cover.label, meta_info.ini, 00000001.jpg, ...) or its groundtruth.txt",
        ));
    }
    let may_keep = may_keep(options);
    let mut boxes = Vec::new();
    let count = for_each_box(&gt_path, |frame, line, entry| {
        if may_keep(frame) {
            boxes.push((frame, line, entry));
        }
    })?;
    let absence = match &dir {
        Some(d) => read_label_file(&d.join("absence.label"), count, &gt_path, &may_keep)?,
        None => None,
    };
    let cover = match &dir {
        Some(d) => read_label_file(&d.join("cover.label"), count, &gt_path, &may_keep)?,
        None => None,
    };
    let meta_info = match &dir {
        Some(d) if d.join("meta_info.ini").exists() => read_meta_info(&d.join("meta_info.ini"))?,
        _ => Vec::new(),
    };

    let mut fields: BTreeMap<String, serde_json::Value> = BTreeMap::new();
    let mut fps = Time::from_secs(DEFAULT_ANNO_FPS);
    let mut label = None;
    let ini_path = dir.as_ref().map(|d| d.join("meta_info.ini"));
    for (line, key, value) in &meta_info {
        fields.insert(key.clone(), serde_json::Value::String(value.clone()));
        match key.as_str() {
            "anno_fps" => {
                let ini = ini_path.as_deref().unwrap_or(path);
                fps = parse_rate(value).ok_or_else(|| {
                    AnnotationError::at_line(
                        ini,
                        *line,
                        format!("anno_fps: expected a rate like 10Hz, found {value:?}"),
                    )
                })?;
                // A rate outside what cameras record would make absurd durations (days of
                // needle for a few frames): refuse it before anything is sized from it.
                if fps < Time::new(1, 10) || fps > Time::from_secs(1000) {
                    return Err(AnnotationError::at_line(
                        ini,
                        *line,
                        format!(
                            "anno_fps: {value:?} is outside 0.1..1000 Hz (a frame rate sequences are annotated at)"
                        ),
                    ));
                }
            }
            "object_class" if !is_unset(value) => label = Some(value.clone()),
            _ => {}
        }
    }

    let track_id = dir
        .as_ref()
        .and_then(|d| d.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "1".to_string());
    let mut set = TrackSet::new(&gt_path);
    let mut filter = SpanFilter::new(options);
    let mut boxes = boxes.into_iter().peekable();
    for frame in 0..count {
        let Some((_, line, entry)) = boxes.next_if(|(f, _, _)| *f == frame) else {
            filter.count_dropped(&track_id, frame);
            continue;
        };
        let absent = absence.as_ref().is_some_and(|a| a[&frame] != 0);
        let entry = if absent { Entry::Absent } else { entry };
        let mut extras = Extras::new();
        if let Some(cover) = &cover {
            extras.insert("cover", cover[&frame] as f64);
        }
        filter.add(
            &mut set,
            &track_id,
            label.as_deref(),
            Key::Frame(frame),
            entry,
            extras,
            Location::Line(line),
        )?;
    }
    let counts = filter.finish(&mut set)?;

    let mut annotations = Annotations::new(Coords::Pixels);
    annotations.tracks = set.into_tracks();
    annotations.meta = Meta {
        source_format: Some(Format::Got10k),
        source_path: Some(dir.unwrap_or(gt_path)),
        fps: Some(fps),
        fields,
        ..Meta::default()
    };
    counts.apply(&mut annotations.tracks, &mut annotations.meta);
    Ok(annotations)
}

/// Whether [`SpanFilter`] may keep frame `f` of a track with a box on every frame: the span's
/// frames inside the video and the nearest frame on either side (past the video's end: its
/// first frame after it). The frames it cannot keep are only counted.
fn may_keep(options: &ReadOptions) -> impl Fn(usize) -> bool {
    let mut end = options.span.as_ref().map(|s| s.end);
    if let Some(n) = options.frame_count {
        end = Some(end.map_or(n, |e| e.min(n)));
    }
    let start = options
        .span
        .as_ref()
        .map_or(0, |s| end.map_or(s.start, |e| s.start.min(e)))
        .saturating_sub(1);
    move |f| f >= start && end.is_none_or(|e| f <= e)
}

/// `n/a`, empty: values GOT-10k uses for "not given".
fn is_unset(value: &str) -> bool {
    let v = value.trim();
    v.is_empty() || v.eq_ignore_ascii_case("n/a") || v.eq_ignore_ascii_case("none")
}

/// `10Hz`, `25 Hz`, `29.97hz`, `10` -> exact rate.
fn parse_rate(value: &str) -> Option<Time> {
    let v = value.trim();
    let v = v
        .strip_suffix("Hz")
        .or_else(|| v.strip_suffix("hz"))
        .or_else(|| v.strip_suffix("HZ"))
        .unwrap_or(v);
    let t: Time = v.trim().parse().ok()?;
    (t > Time::ZERO).then_some(t)
}

/// The boxes of a groundtruth file, read a line at a time. Trailing empty lines are ignored;
/// NaN or zero-area boxes become `Absent`. 8 numbers (a VOT polygon) give its bounds.
/// `each(frame, line_no, entry)` is called for each; returns how many.
fn for_each_box(
    path: &Path,
    mut each: impl FnMut(usize, usize, Entry),
) -> Result<usize, AnnotationError> {
    let mut count = 0usize;
    for_each_used_line(path, |line_no, line| {
        each(count, line_no, parse_box_line(path, line_no, line)?);
        count += 1;
        Ok(())
    })?;
    Ok(count)
}

/// One groundtruth line's box.
fn parse_box_line(path: &Path, line_no: usize, line: &str) -> Result<Entry, AnnotationError> {
    let fields = split_numeric_line(line.trim());
    let expected =
        "expected 4 numbers x,y,w,h separated by commas, tabs or spaces (or 8 polygon corner coordinates)";
    if line.trim().is_empty() {
        return Err(AnnotationError::at_line(
            path,
            line_no,
            format!("{expected}, found an empty line"),
        ));
    }
    if fields.len() != 4 && fields.len() != 8 {
        return Err(AnnotationError::at_line(
            path,
            line_no,
            format!("{expected}, found {}", fields.len()),
        ));
    }
    let mut values = Vec::with_capacity(fields.len());
    for (k, f) in fields.iter().enumerate() {
        let v = parse_f64(f).ok_or_else(|| {
            AnnotationError::at_line(
                path,
                line_no,
                format!("value {}: expected a number, found {f:?}", k + 1),
            )
        })?;
        values.push(v);
    }
    let bbox = if values.len() == 4 {
        BBox::from_xywh(values[0], values[1], values[2], values[3])
    } else {
        let xs = values.iter().step_by(2);
        let ys = values.iter().skip(1).step_by(2);
        let (x1, x2) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
        let (y1, y2) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &y| {
            (a.min(y), b.max(y))
        });
        if values.iter().any(|v| v.is_nan()) {
            BBox::new(f64::NAN, f64::NAN, f64::NAN, f64::NAN)
        } else {
            BBox::new(x1, y1, x2, y2)
        }
    };
    Ok(Entry::from_box(bbox))
}

/// One integer per line (`absence.label`, `cover.label`); `None` when the file does not exist.
/// Its line count must match the groundtruth's.
/// Only the values of the frames `keep` names are kept (all are checked).
fn read_label_file(
    path: &Path,
    expected: usize,
    gt_path: &Path,
    keep: &dyn Fn(usize) -> bool,
) -> Result<Option<HashMap<usize, i64>>, AnnotationError> {
    if !path.exists() {
        return Ok(None);
    }
    let mut values = HashMap::new();
    let mut count = 0usize;
    for_each_used_line(path, |line_no, line| {
        let v = parse_integer(line).ok_or_else(|| {
            AnnotationError::at_line(
                path,
                line_no,
                format!("expected one integer per frame, found {:?}", line.trim()),
            )
        })?;
        if keep(count) {
            values.insert(count, v);
        }
        count += 1;
        Ok(())
    })?;
    if count != expected {
        return Err(AnnotationError::file(
            path,
            format!(
                "has {count} lines but {} has {expected}; expected one value per frame",
                gt_path.display()
            ),
        ));
    }
    Ok(Some(values))
}

/// The `key: value` (or `key = value`) pairs of `meta_info.ini`, with their line numbers, in
/// file order, keys lower-cased: [`crate::annotations::ini`] with its `META_INFO` dialect
/// (sections and `;`/`#` comment lines skipped).
pub fn read_meta_info(path: &Path) -> Result<Vec<(usize, String, String)>, AnnotationError> {
    let text = read_text(path)?;
    let entries = super::ini::parse(&text, &super::ini::META_INFO)
        .map_err(|bad| AnnotationError::at_line(path, bad.line, bad.message))?;
    Ok(entries
        .into_iter()
        .map(|e| (e.line, e.key, e.value))
        .collect())
}

/// The sequence's images (`*.jpg`, `*.jpeg`, any case), sorted by file name.
pub fn sequence_images(dir: &Path) -> Result<Vec<PathBuf>, AnnotationError> {
    let entries = std::fs::read_dir(dir).map_err(|e| AnnotationError::read(dir, e))?;
    let mut images = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| AnnotationError::read(dir, e))?;
        let path = entry.path();
        let is_jpeg = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("jpg") || e.eq_ignore_ascii_case("jpeg"));
        if is_jpeg && path.is_file() {
            images.push(path);
        }
    }
    images.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    Ok(images)
}

/// Checks that a sequence folder can be played frame by frame: it has images, numbered
/// `00000001.jpg` upwards without gaps (when the names are numbers), and `groundtruth.txt` has
/// exactly one box line per image. Returns the images in frame order.
pub fn check_sequence(dir: &Path) -> Result<Vec<PathBuf>, AnnotationError> {
    if !dir.is_dir() {
        return Err(AnnotationError::file(
            dir,
            "is not a folder; expected a GOT-10k sequence folder",
        ));
    }
    let images = sequence_images(dir)?;
    if images.is_empty() {
        return Err(AnnotationError::file(
            dir,
            "has no .jpg images; expected 00000001.jpg, 00000002.jpg, ...",
        ));
    }
    let name = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let numbers: Option<Vec<u64>> = images
        .iter()
        .map(|p| {
            p.file_stem()
                .and_then(|s| s.to_str())
                .and_then(|s| s.parse::<u64>().ok())
        })
        .collect();
    if let Some(numbers) = numbers {
        for (i, n) in numbers.iter().enumerate() {
            let want = i as u64 + 1;
            if *n != want {
                let width = images[i].file_stem().map_or(8, |s| s.len());
                return Err(AnnotationError::file(
                    dir,
                    format!(
                        "images are not numbered consecutively from 1: found {} where {:0width$}.jpg was expected",
                        name(&images[i]),
                        want
                    ),
                ));
            }
        }
    }
    let gt_path = dir.join("groundtruth.txt");
    if !gt_path.exists() {
        return Err(AnnotationError::file(
            dir,
            "has no groundtruth.txt; expected one x,y,w,h line per image",
        ));
    }
    let lines = for_each_box(&gt_path, |_, _, _| {})?;
    if lines != images.len() {
        let relation = if lines < images.len() {
            "fewer"
        } else {
            "more"
        };
        return Err(AnnotationError::file(
            &gt_path,
            format!(
                "has {lines} box lines but the folder has {} images ({} to {}): {relation} boxes than frames; \
                 expected one x,y,w,h line per image",
                images.len(),
                name(&images[0]),
                name(&images[images.len() - 1])
            ),
        ));
    }
    Ok(images)
}

/// [`check_sequence`] and [`read_got10k`] together: the images and the boxes of a sequence
/// that is complete enough to insert into a video.
pub fn open_sequence(dir: &Path) -> Result<Got10kSequence, AnnotationError> {
    let images = check_sequence(dir)?;
    let annotations = read_got10k(dir)?;
    Ok(Got10kSequence {
        images,
        annotations,
    })
}

/// GOT-10k: a sequence folder, or its `groundtruth.txt` (`x,y,w,h` per frame, 1-based lines).
/// Registered in [`super::FORMATS`].
pub(crate) struct Got10kFormat;

impl super::AnnotationFormat for Got10kFormat {
    fn name(&self) -> &'static str {
        "got10k"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["got-10k"]
    }
    fn recognise(&self, file: &Sniffed) -> Recognised {
        if file
            .path
            .file_name()
            .is_some_and(|n| n == "groundtruth.txt")
        {
            return Recognised::Yes;
        }
        match file.shape {
            Shape::Folder if file.path.join("groundtruth.txt").is_file() => Recognised::Yes,
            Shape::Folder => Recognised::No(
                "the folder has no groundtruth.txt (other formats are files)".to_string(),
            ),
            Shape::NumberLines(4 | 8) => Recognised::Yes,
            Shape::NumberLines(n) => {
                Recognised::No(format!("lines have {n} numbers, not 4 (x,y,w,h)"))
            }
            Shape::Csv(_) => Recognised::No("the first line is not numbers".to_string()),
            Shape::Json { .. } | Shape::Empty => Recognised::NotApplicable,
        }
    }
    fn read(&self, path: &Path, options: &ReadOptions) -> Result<Annotations, AnnotationError> {
        read_got10k_with(path, options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::annotations::test_support::{fixture, shared_data};
    use std::fs;

    fn write(dir: &Path, name: &str, text: &str) {
        fs::write(dir.join(name), text).unwrap();
    }

    #[test]
    fn reads_fixture_sequence() {
        let a = read_got10k(&fixture("got10k/seq_a")).unwrap();
        assert_eq!(a.tracks.len(), 1);
        let t = &a.tracks[0];
        assert_eq!(t.id, "seq_a");
        assert_eq!(t.label.as_deref(), Some("cat"));
        assert_eq!(a.meta.fps, Some(Time::from_secs(25)));
        assert_eq!(a.meta.fields["motion_class"], "walking");
        assert_eq!(a.meta.source_format, Some(Format::Got10k));
        // line 1 -> frame 0, x,y,w,h -> corners
        assert_eq!(
            t.keys[&Key::Frame(0)],
            Entry::Present(BBox::new(10.0, 20.0, 40.0, 60.0))
        );
        // tab- and space-separated lines
        assert_eq!(
            t.keys[&Key::Frame(1)],
            Entry::Present(BBox::new(11.5, 20.0, 41.5, 60.0))
        );
        assert_eq!(
            t.keys[&Key::Frame(2)],
            Entry::Present(BBox::new(12.0, 21.0, 42.0, 61.0))
        );
        // absence.label = 1
        assert_eq!(t.keys[&Key::Frame(3)], Entry::Absent);
        // NaN box
        assert_eq!(t.keys[&Key::Frame(4)], Entry::Absent);
        assert_eq!(t.keys.len(), 5);
        assert_eq!(t.extras[&Key::Frame(0)]["cover"], 8.0);
        assert_eq!(t.extras[&Key::Frame(3)]["cover"], 0.0);
        // groundtruth.txt path works the same
        let b = read_got10k(&fixture("got10k/seq_a/groundtruth.txt")).unwrap();
        assert_eq!(b.tracks, a.tracks);
        // 5 lines and 5 images
        assert_eq!(check_sequence(&fixture("got10k/seq_a")).unwrap().len(), 5);
    }

    #[test]
    fn default_rate_and_first_frame_only() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "groundtruth.txt", "1,2,3,4\n\n");
        for i in 1..=3 {
            write(dir.path(), &format!("{i:08}.jpg"), "");
        }
        let a = read_got10k(dir.path()).unwrap();
        assert_eq!(a.meta.fps, Some(Time::from_secs(10)));
        assert_eq!(a.tracks[0].keys.len(), 1);
        assert_eq!(a.tracks[0].label, None);
        let err = check_sequence(dir.path()).unwrap_err().to_string();
        assert!(
            err.ends_with(
                "groundtruth.txt: has 1 box lines but the folder has 3 images (00000001.jpg to 00000003.jpg): \
                 fewer boxes than frames; expected one x,y,w,h line per image"
            ),
            "{err}"
        );
        assert!(err.starts_with(&dir.path().display().to_string()), "{err}");
    }

    #[test]
    fn gaps_in_image_numbers_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "groundtruth.txt", "1,2,3,4\n1,2,3,4\n");
        write(dir.path(), "00000001.jpg", "");
        write(dir.path(), "00000003.jpg", "");
        let err = check_sequence(dir.path()).unwrap_err().to_string();
        assert!(
            err.ends_with("found 00000003.jpg where 00000002.jpg was expected"),
            "{err}"
        );
    }

    #[test]
    fn bad_lines_name_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "groundtruth.txt", "1,2,3,4\n1,2,3\n");
        let err = read_got10k(dir.path()).unwrap_err().to_string();
        let gt = dir.path().join("groundtruth.txt").display().to_string();
        assert_eq!(
            err,
            format!(
                "{gt} line 2: expected 4 numbers x,y,w,h separated by commas, tabs or spaces \
                 (or 8 polygon corner coordinates), found 3"
            )
        );
        write(dir.path(), "groundtruth.txt", "1,2,3,4\n1,2,abc,4\n");
        let err = read_got10k(dir.path()).unwrap_err().to_string();
        assert_eq!(
            err,
            format!("{gt} line 2: value 3: expected a number, found \"abc\"")
        );
        write(dir.path(), "groundtruth.txt", "1,2,3,4\n1,2,3,4\n");
        write(dir.path(), "absence.label", "0\n");
        let err = read_got10k(dir.path()).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "{}: has 1 lines but {gt} has 2; expected one value per frame",
                dir.path().join("absence.label").display()
            )
        );
        fs::remove_file(dir.path().join("absence.label")).unwrap();
        write(dir.path(), "meta_info.ini", "[METAINFO]\nanno_fps: fast\n");
        let err = read_got10k(dir.path()).unwrap_err().to_string();
        assert!(
            err.ends_with(
                "meta_info.ini line 2: anno_fps: expected a rate like 10Hz, found \"fast\""
            ),
            "{err}"
        );
    }

    #[test]
    fn missing_folder_or_file() {
        let err = read_got10k(Path::new("/nonexistent/seq"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(
                "/nonexistent/seq: no groundtruth.txt; expected a GOT-10k sequence folder"
            ),
            "{err}"
        );
        let err = check_sequence(Path::new("/nonexistent/seq"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "/nonexistent/seq: is not a folder; expected a GOT-10k sequence folder"
        );
    }

    #[test]
    fn polygon_lines_give_bounds() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "groundtruth.txt", "10,5,30,8,28,40,8,37\n");
        let a = read_got10k(dir.path()).unwrap();
        assert_eq!(
            a.tracks[0].keys[&Key::Frame(0)],
            Entry::Present(BBox::new(8.0, 5.0, 30.0, 40.0))
        );
    }

    #[test]
    fn real_sequences() {
        let Some(data) = shared_data("got10k") else {
            return;
        };
        let bag = open_sequence(&data.join("got10k/VOT_bag")).unwrap();
        assert_eq!(bag.images.len(), 196);
        let t = &bag.annotations.tracks[0];
        assert_eq!(t.keys.len(), 196);
        assert_eq!(t.present_count(), 196);
        assert_eq!(t.label.as_deref(), Some("bag"));
        assert_eq!(bag.annotations.meta.fps, Some(Time::from_secs(25)));
        assert_eq!(
            t.keys[&Key::Frame(0)],
            Entry::Present(BBox::from_xywh(292.23, 128.36, 145.96, 132.47))
        );
        let crossing = open_sequence(&data.join("got10k/OTB_Crossing")).unwrap();
        assert_eq!(crossing.images.len(), 120);
        assert_eq!(crossing.annotations.tracks[0].keys.len(), 120);
        assert_eq!(crossing.annotations.meta.fps, Some(Time::from_secs(30)));
        assert_eq!(
            crossing.annotations.tracks[0].label.as_deref(),
            Some("person")
        );
    }
}
