//! Annotations: the format-neutral model of boxes over a video, the readers and writers of the
//! dataset formats, and resolution of boxes onto a video's frames. Pure Rust, no media code.
//!
//! - the model: [`BBox`] (pixel `x1,y1,x2,y2` on the upright stored grid, see [`Grid`]),
//!   [`Track`]s of [`Key`] -> [`Entry`], untracked [`Detection`]s, [`Annotations`] with [`Meta`].
//! - readers, chosen by [`Format`] through [`read`]: [`read_got10k`], [`read_mot`],
//!   [`read_vstar`], [`read_waymo`], [`read_plain`] (CSV/JSON), [`read_native`] (vidprep's own
//!   versioned JSON, also written by [`write_native`]). Each format converts to the model's
//!   conventions (0-based frames, corners, pixels or normalised) at its edge.
//! - clocks and resolution: the [`FrameClock`] a video offers; [`Annotations::resolve`] gives
//!   the boxes of every frame ([`ResolvedBoxes`]) with gaps filled as [`Fill`] says.
//! - [`vstar_item`] writes one track over a clock as a V-STaR benchmark item.
//!
//! All errors are [`AnnotationError`]s naming the file, the line or JSON item, and what was
//! expected.

pub(crate) mod bbox;
pub(crate) mod clock;
pub(crate) mod error;
mod file;
pub(crate) mod got10k;
pub(crate) mod ini;
pub(crate) mod json_list;
pub(crate) mod model;
pub(crate) mod mot;
pub(crate) mod native;
pub(crate) mod plain;
pub(crate) mod resolve;
mod span;
pub(crate) mod vstar;
pub(crate) mod waymo;

#[cfg(test)]
mod test_support;
mod text;

use std::fmt;
use std::path::Path;
use std::str::FromStr;

pub use bbox::BBox;
pub use clock::{ConstantRateClock, FrameClock, TimestampClock};
pub use error::AnnotationError;
pub use got10k::open_sequence;
pub use model::{Annotations, Coords, Detection, Entry, Key, Meta, Track, READ_WARNINGS};
pub use native::{from_native_str, read_native, to_native_string};
pub use resolve::{BoxSource, DrawBox, Fill, ResolvedBoxes, TrackerKind};
pub(crate) use vstar::index_time_parting;
pub use vstar::{vstar_item, VstarItem};
// Only the unit tests name it by this path.
#[cfg(test)]
pub use model::TimeOrigin;

use text::{split_numeric_line, Table};

/// One annotation file format in the registry: its names, how to recognise its files, and
/// its reader. Each format implements this in its own file (a unit struct beside its reader).
pub(crate) trait AnnotationFormat: Sync + 'static {
    /// The canonical name (command line, manifests, sidecars).
    fn name(&self) -> &'static str;
    /// Other spellings accepted on input (`mot17`, `csv`, ...).
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }
    /// Whether `file` is in this format, for auto-detection.
    fn recognise(&self, file: &Sniffed) -> Recognised;
    /// Reads the file (or folder) into the format-neutral model.
    fn read(&self, path: &Path, options: &ReadOptions) -> Result<Annotations, AnnotationError>;
    /// Reads the file from its text, which auto-detection has already read (a leading
    /// byte-order mark dropped), so the file is read once. By default it is read again.
    fn read_text(
        &self,
        path: &Path,
        _text: &str,
        options: &ReadOptions,
    ) -> Result<Annotations, AnnotationError> {
        self.read(path, options)
    }
}

/// Every annotation format, in the order auto-detection tries them. Adding a format is its own
/// file (a reader and a unit struct implementing [`AnnotationFormat`]), one line here, and a
/// line in `docs/annotations.md`.
const FORMATS: &[&dyn AnnotationFormat] = &[
    &got10k::Got10kFormat,
    &mot::MotFormat,
    &native::NativeFormat,
    &vstar::VstarFormat,
    &waymo::WaymoFormat,
    &plain::PlainFormat,
];

/// What auto-detection saw of a file, for [`AnnotationFormat::recognise`].
pub(crate) struct Sniffed<'a> {
    /// The file or folder.
    pub path: &'a Path,
    /// Its shape.
    pub shape: Shape<'a>,
}

/// The shape of an annotation file as auto-detection sees it.
pub(crate) enum Shape<'a> {
    /// A folder.
    Folder,
    /// A file with no content but blank and comment lines.
    Empty,
    /// JSON: its outline, and its records as a table when it is a list of records.
    Json {
        outline: &'a json_list::JsonOutline,
        records: Option<&'a Table<'a>>,
    },
    /// Text whose first line is `n` numbers.
    NumberLines(usize),
    /// Text with a header row (CSV).
    Csv(&'a Table<'a>),
}

/// A format's answer to [`AnnotationFormat::recognise`].
pub(crate) enum Recognised {
    /// The file is in this format.
    Yes,
    /// It is not, and why (listed in the error when no format fits).
    No(String),
    /// Files of this shape are never in this format (not listed).
    NotApplicable,
}

/// An annotation file format: `auto` (detect it) or one of the registered formats
/// (`got10k`, `mot`, `vidprep`, `vstar`, `waymo`, `plain`).
#[derive(Clone, Copy)]
pub struct Format(Option<&'static dyn AnnotationFormat>);

#[allow(non_upper_case_globals)]
impl Format {
    /// Detect from the path and content (each registered format is asked in turn).
    pub const Auto: Format = Format(None);
    /// A GOT-10k sequence folder or its `groundtruth.txt`.
    pub const Got10k: Format = Format(Some(&got10k::Got10kFormat));
    /// MOT Challenge `gt.txt` / `det.txt`.
    pub const Mot: Format = Format(Some(&mot::MotFormat));
    /// V-STaR benchmark JSON.
    pub const Vstar: Format = Format(Some(&vstar::VstarFormat));
    /// Waymo-style camera boxes (CSV or JSON records).
    pub const Waymo: Format = Format(Some(&waymo::WaymoFormat));
    /// Plain CSV or JSON box lists.
    pub const Plain: Format = Format(Some(&plain::PlainFormat));
    /// vidprep's own JSON.
    pub const Vidprep: Format = Format(Some(&native::NativeFormat));

    /// The canonical name.
    pub fn name(self) -> &'static str {
        self.0.map_or("auto", |f| f.name())
    }

    /// Every registered format (not `auto`), in detection order.
    pub fn all() -> impl Iterator<Item = Format> {
        FORMATS.iter().map(|f| Format(Some(*f)))
    }
}

impl Default for Format {
    fn default() -> Self {
        Format::Auto
    }
}

impl PartialEq for Format {
    fn eq(&self, other: &Format) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Format {}

impl std::hash::Hash for Format {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name().hash(state)
    }
}

impl fmt::Debug for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

crate::vocab::textual::serde_as_text!(Format);

impl schemars::JsonSchema for Format {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Format".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        // `auto`, each format's name and its aliases, in any case (`FromStr` trims and
        // lower-cases).
        let mut names = vec!["auto"];
        for f in FORMATS {
            names.push(f.name());
            names.extend(f.aliases());
        }
        crate::vocab::textual::pattern(
            "An annotation format: `auto` (detected) or a format's name or alias, in any case.",
            &crate::vocab::textual::caseless(&names),
        )
    }
}

/// Names: `auto` or a registered format's name or alias, in any case.
impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Format, String> {
        let wanted = s.trim().to_ascii_lowercase();
        if wanted == "auto" {
            return Ok(Format::Auto);
        }
        FORMATS
            .iter()
            .find(|f| f.name() == wanted || f.aliases().contains(&wanted.as_str()))
            .map(|f| Format(Some(*f)))
            .ok_or_else(|| {
                let names: Vec<&str> = FORMATS.iter().map(|f| f.name()).collect();
                format!(
                    "unknown annotation format {wanted:?}; expected auto, {}",
                    names.join(", ")
                )
            })
    }
}

/// The unit of coordinates in plain and Waymo files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Units {
    /// Normalised when every coordinate is within `[0, 1]`, else pixels.
    #[default]
    Auto,
    /// Pixels of the frame (on the stored grid, see `Grid`).
    Pixels,
    /// Fractions `0..1` of the frame's width and height (`normalised` is accepted too).
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

crate::vocab::textual::serde_as_text!(Units);
crate::vocab::textual::json_schema_as!(
    Units,
    "Units",
    crate::vocab::textual::names(
        "Coordinates of plain and Waymo files: `auto`, `pixels` or `normalized` (`normalised`).",
        &["auto", "pixels", "normalized", "normalised"]
    )
);

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

crate::vocab::textual::serde_as_text!(KeyKind);
crate::vocab::textual::json_schema_as!(
    KeyKind,
    "KeyKind",
    crate::vocab::textual::names(
        "Which key a record with both is read by: `time` or `frame`.",
        &["time", "frame"]
    )
);

/// The pixel grid box coordinates are on, for video whose pixels are not square (a DVD's
/// 720x480 at 8:9) or that is rotated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Grid {
    /// The upright stored pictures, before the pixel shape is corrected: 720x480 for a
    /// 720x480 8:9 video, as `ffmpeg -i SRC f%d.png`, OpenCV and decord give its frames and
    /// as annotation tools that label those frames see them. The default.
    #[default]
    Stored,
    /// The picture as players show it, with square pixels (640x480 for 720x480 at 8:9): as
    /// vidprep's `export frames` images and a player's screenshots are.
    Display,
}

impl Grid {
    /// The factors that take a point of this grid to the stored grid, for a video whose
    /// upright stored pictures are `stored` and whose square-pixel size is `display`.
    pub fn to_stored(self, stored: (u32, u32), display: (u32, u32)) -> (f64, f64) {
        match self {
            Grid::Stored => (1.0, 1.0),
            Grid::Display => (
                f64::from(stored.0) / f64::from(display.0.max(1)),
                f64::from(stored.1) / f64::from(display.1.max(1)),
            ),
        }
    }
}

impl fmt::Display for Grid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Grid::Stored => "stored",
            Grid::Display => "display",
        })
    }
}

impl FromStr for Grid {
    type Err = String;
    fn from_str(s: &str) -> Result<Grid, String> {
        match s {
            "stored" => Ok(Grid::Stored),
            "display" => Ok(Grid::Display),
            other => Err(format!(
                "unknown pixel grid {other:?}; expected stored (the stored pictures, as \
                 `ffmpeg -i SRC f%d.png` writes them) or display (square pixels, as players show)"
            )),
        }
    }
}

crate::vocab::textual::serde_as_text!(Grid);
crate::vocab::textual::json_schema_as!(
    Grid,
    "Grid",
    crate::vocab::textual::names(
        "The pixel grid box coordinates are on: `stored` (the upright stored pictures, as `ffmpeg -i SRC f%d.png` writes them; default) or `display` (square pixels, as players show non-square-pixel video).",
        &["stored", "display"]
    )
);

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
    /// MOT: the frame count of the video the boxes are for; rows past it are counted, not
    /// kept (see [`mot::read_mot`]). `None`: every row is kept.
    pub frame_count: Option<usize>,
    /// MOT: the frames the request keeps (its span, `start..end`); a track's rows outside
    /// them are counted (`rows_outside_the_span`), not kept, but for its last row before the
    /// span and its first after it (what filling a gap that reaches into the span needs), so
    /// that memory follows the boxes in the span, not the file. `None`: every frame.
    pub span: Option<std::ops::Range<usize>>,
    /// MOT: keep the boxes only, not the per-key extras (`conf`, `class`, `visibility`): what
    /// drawing and remapping boxes need, at about half the memory per box.
    pub boxes_only: bool,
}

/// Reads an annotation file (or GOT-10k folder) in `format`, detecting it when `Auto`.
pub fn read(
    path: &Path,
    format: Format,
    options: &ReadOptions,
) -> Result<Annotations, AnnotationError> {
    match format.0 {
        Some(f) => f.read(path, options),
        None => {
            let (format, opened) = detect(path)?;
            let format = format.0.expect("detection answers a registered format");
            // What detection opened or read: the file is opened once.
            match opened {
                Opened::Text(text) => format.read_text(path, &text, options),
                Opened::VstarList(reader) => vstar::read_vstar_stream(path, reader, options),
                Opened::Nothing => format.read(path, options),
            }
        }
    }
}

/// What auto-detection left of the file for its reader.
enum Opened {
    /// Nothing (a folder).
    Nothing,
    /// The file's text, read whole.
    Text(String),
    /// A list of V-STaR items, opened (at its start) and not read: its reader streams it.
    VstarList(std::io::BufReader<std::fs::File>),
}

/// Tells the format of an annotation file or folder from its path and content: each
/// registered format is asked in turn. The error lists each format tried and why it did not fit.
#[cfg(test)]
pub fn detect_format(path: &Path) -> Result<Format, AnnotationError> {
    detect(path).map(|(format, _)| format)
}

/// [`detect_format`], and what it opened or read of the file, for its reader.
fn detect(path: &Path) -> Result<(Format, Opened), AnnotationError> {
    use std::io::Seek as _;
    let metadata = std::fs::metadata(path).map_err(|e| AnnotationError::read(path, e))?;
    let mut text = String::new();
    let mut reader = None;
    if !metadata.is_dir() {
        let mut opened = text::open_text(path)?;
        // A list of V-STaR items (a whole benchmark file, read by every item of a manifest)
        // is told from its first item, and not read here: its reader streams it, keeping only
        // the item asked for. (GOT-10k takes any file named groundtruth.txt, before V-STaR.)
        let vstar_list = path.file_name().is_none_or(|n| n != "groundtruth.txt")
            && vstar::is_item_list(&mut opened);
        opened
            .rewind()
            .map_err(|e| AnnotationError::read(path, e))?;
        if vstar_list {
            return Ok((Format::Vstar, Opened::VstarList(opened)));
        }
        reader = Some(opened);
    }
    let outline;
    let table;
    let shape = if metadata.is_dir() {
        Shape::Folder
    } else {
        let mut opened = reader.expect("a file was opened");
        // Lines of 4 or 8 numbers (GOT-10k's boxes, one line per frame: a file that may be
        // large) are told from the first line, and the file is left to its reader, which
        // reads it a line at a time; anything else is read whole here.
        if let Some(n) = first_line_of_box_numbers(&mut opened) {
            let file = Sniffed {
                path,
                shape: Shape::NumberLines(n),
            };
            let format = recognise_format(&file)?;
            return Ok((format, Opened::Nothing));
        }
        // JSON is outlined from the file and its records' columns gathered one record at a
        // time: neither the text nor the value is held (each reader reads the file again).
        if matches!(text::first_byte_in(&mut opened), Some(b'[' | b'{')) {
            drop(opened);
            outline = json_list::JsonOutline::read(path)?;
            // A vidprep file (an object with its marker member; formats before it take no
            // JSON) is told without its records.
            if !outline.list && outline.member(native::NATIVE_MARKER).is_some() {
                return Ok((Format::Vidprep, Opened::Nothing));
            }
            table = Table::from_json_outline(path, &outline).ok();
            let file = Sniffed {
                path,
                shape: Shape::Json {
                    outline: &outline,
                    records: table.as_ref(),
                },
            };
            return Ok((recognise_format(&file)?, Opened::Nothing));
        }
        opened
            .rewind()
            .map_err(|e| AnnotationError::read(path, e))?;
        text = text::read_text_from(path, opened)?;
        {
            let first = text
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty() && !l.starts_with('#'));
            match first {
                None => Shape::Empty,
                Some(first) => {
                    let fields = split_numeric_line(first);
                    if fields.iter().all(|f| text::parse_f64(f).is_some()) {
                        Shape::NumberLines(fields.len())
                    } else {
                        table = Some(Table::from_csv(path, first)?);
                        Shape::Csv(table.as_ref().expect("just set"))
                    }
                }
            }
        }
    };
    let file = Sniffed { path, shape };
    let format = recognise_format(&file)?;
    let opened = if metadata.is_dir() {
        Opened::Nothing
    } else {
        Opened::Text(text)
    };
    Ok((format, opened))
}

/// The first registered format that recognises `file`; else the error that lists each format
/// tried and why it did not fit.
fn recognise_format(file: &Sniffed) -> Result<Format, AnnotationError> {
    let mut tried = Vec::new();
    for format in FORMATS {
        match format.recognise(file) {
            Recognised::Yes => return Ok(Format(Some(*format))),
            Recognised::No(why) => tried.push((format.name().to_string(), why)),
            Recognised::NotApplicable => {}
        }
    }
    if matches!(file.shape, Shape::Empty) {
        tried = vec![("any".to_string(), "the file is empty".to_string())];
    }
    Err(AnnotationError::UnknownFormat {
        path: file.path.to_path_buf(),
        tried,
    })
}

/// The number of values on the file's first line when it is not blank and holds 4 or 8
/// numbers (GOT-10k's `x,y,w,h` or a polygon), read from `reader`'s start; else `None`
/// (the caller rewinds).
fn first_line_of_box_numbers(reader: &mut impl std::io::BufRead) -> Option<usize> {
    let mut bytes = Vec::new();
    let mut first = true;
    loop {
        bytes.clear();
        if reader.read_until(b'\n', &mut bytes).ok()? == 0 {
            return None;
        }
        let line = std::str::from_utf8(&bytes).ok()?;
        let line = match first {
            true => line.strip_prefix('\u{feff}').unwrap_or(line),
            false => line,
        };
        first = false;
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let fields = split_numeric_line(line);
        let numbers = fields.iter().all(|f| text::parse_f64(f).is_some());
        return (numbers && matches!(fields.len(), 4 | 8)).then_some(fields.len());
    }
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
            ("MOT17", Format::Mot),
            ("native", Format::Vidprep),
        ] {
            assert_eq!(name.parse::<Format>(), Ok(f));
        }
        // Every registered format round-trips through its name, and names are unique.
        let names: Vec<&str> = Format::all().map(|f| f.name()).collect();
        let unique: std::collections::HashSet<&&str> = names.iter().collect();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        for f in Format::all() {
            assert_eq!(f.name().parse::<Format>(), Ok(f));
            let json = serde_json::to_string(&f).unwrap();
            assert_eq!(serde_json::from_str::<Format>(&json).unwrap(), f);
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
                err.starts_with(&format!(
                    "{}: file not found; check the path",
                    missing.display()
                )),
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
                 plain (no x1,y1,x2,y2 or x,y,w,h columns)",
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
            err.starts_with(&format!(
                "{}: file not found; check the path",
                missing.display()
            )),
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
                            let clock = ConstantRateClock::new(10, crate::vocab::time::Time::from_secs(25), 64, 48).unwrap();
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
