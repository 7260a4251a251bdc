//! Shared parsing helpers for the readers: reading a text file, splitting lines, exact numbers
//! and times from text and JSON, and a small "table of records" ([`Table`]) that CSV files with a
//! header row and JSON lists of records both become (used by the plain and Waymo readers).

use std::io::Read;
use std::path::Path;

use serde_json::Value;

use super::error::{AnnotationError, Location};
pub(crate) use super::file::{first_byte, first_byte_in, open_text, skip_byte_order_mark};
use super::json_list;
use crate::vocab::time::Time;

/// The whole file as text (a leading UTF-8 byte-order mark is dropped).
pub(crate) fn read_text(path: &Path) -> Result<String, AnnotationError> {
    read_text_from(path, open_text(path)?)
}

/// [`read_text`] of the file `path` opened as `reader` ([`open_text`]).
pub(crate) fn read_text_from(
    path: &Path,
    mut reader: impl Read,
) -> Result<String, AnnotationError> {
    let mut text = String::new();
    reader
        .read_to_string(&mut text)
        .map_err(|e| AnnotationError::read(path, e))?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

/// The lines of `path` as [`read_text`]`(path).lines()` gives them, up to the last one that is
/// not blank, one at a time (memory: one line): `each(line_no, line)` (1-based) is called for
/// each, a blank line only once a later line is not blank. The first error `each` returns is
/// the answer, unless a later byte is not UTF-8: then, as [`read_text`] would, the file's
/// read error.
pub(crate) fn for_each_used_line(
    path: &Path,
    mut each: impl FnMut(usize, &str) -> Result<(), AnnotationError>,
) -> Result<(), AnnotationError> {
    use std::io::BufRead;
    let mut reader = open_text(path)?;
    let mut bytes = Vec::new();
    let mut line_no = 0usize;
    // Blank lines not yet passed on: the first one's number and how many.
    let mut blank: Option<(usize, usize)> = None;
    let mut failed: Option<AnnotationError> = None;
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
            return Err(AnnotationError::read(
                path,
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "stream did not contain valid UTF-8",
                ),
            ));
        };
        if failed.is_some() {
            continue;
        }
        let raw = if line_no == 1 {
            raw.strip_prefix('\u{feff}').unwrap_or(raw)
        } else {
            raw
        };
        let line = raw.strip_suffix('\n').unwrap_or(raw);
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.trim().is_empty() {
            match &mut blank {
                Some((_, count)) => *count += 1,
                None => blank = Some((line_no, 1)),
            }
            continue;
        }
        let mut result = Ok(());
        if let Some((first, count)) = blank.take() {
            for k in first..first + count {
                result = result.and_then(|()| each(k, ""));
            }
        }
        if let Err(e) = result.and_then(|()| each(line_no, line)) {
            failed = Some(e);
        }
    }
    failed.map_or(Ok(()), Err)
}

/// Fields of a numeric line: split on commas when there is one, else on tabs/spaces.
pub(crate) fn split_numeric_line(line: &str) -> Vec<&str> {
    if line.contains(',') {
        line.split(',').map(str::trim).collect()
    } else {
        line.split_whitespace().collect()
    }
}

/// A float from text; accepts `nan`/`NaN` (datasets use it for "no box").
pub(crate) fn parse_f64(text: &str) -> Option<f64> {
    text.trim().parse::<f64>().ok()
}

/// An integer written as `12`, `-1` or `12.0`.
pub(crate) fn parse_integer(text: &str) -> Option<i64> {
    let t = text.trim();
    if let Ok(i) = t.parse::<i64>() {
        return Some(i);
    }
    let f = t.parse::<f64>().ok()?;
    (f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e15).then_some(f as i64)
}

/// `true` for `1`, `true`, `yes` (any case); `false` for `0`, `false`, `no`, empty.
pub(crate) fn parse_flag(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "1.0" | "true" | "yes" | "y" => Some(true),
        "0" | "0.0" | "false" | "no" | "n" | "" => Some(false),
        _ => None,
    }
}

/// Exact seconds from text: `4.2`, `21/5`, `-0.5`; numbers with an exponent (`1e-3`) are read
/// as floats and rounded to the nanosecond.
pub(crate) fn parse_time(text: &str) -> Option<Time> {
    let t = text.trim();
    if let Ok(time) = t.parse::<Time>() {
        return Some(time);
    }
    let f = t.parse::<f64>().ok()?;
    Time::from_secs_f64(f, 1_000_000_000)
}

/// Exact seconds from a JSON number (by the decimal text serde_json keeps, so `0.1` is exactly
/// `1/10`) or a string.
pub(crate) fn json_time(value: &Value) -> Option<Time> {
    match value {
        Value::Number(n) => parse_time(&n.to_string()),
        Value::String(s) => parse_time(s),
        _ => None,
    }
}

/// A frame rate from JSON or text; decimal NTSC-style rates (`29.97`, `23.976`, `59.94`) become
/// the exact `k*1000/1001` they stand for.
pub(crate) fn snap_fps(fps: Time) -> Time {
    if fps.denom() == 1 || fps <= Time::ZERO {
        return fps;
    }
    // k = round(fps * 1.001)
    let k = (fps.scale(1001, 1000) + Time::new(1, 2)).div_floor(Time::from_secs(1));
    if k <= 0 {
        return fps;
    }
    let ntsc = Time::new(k * 1000, 1001);
    let diff = if fps > ntsc { fps - ntsc } else { ntsc - fps };
    if diff <= Time::new(1, 2000) {
        ntsc
    } else {
        fps
    }
}

/// A short, quoted rendering of a JSON value for error messages.
pub(crate) fn show_json(value: &Value) -> String {
    let s = value.to_string();
    if s.chars().count() > 40 {
        let cut: String = s.chars().take(37).collect();
        format!("{cut}...")
    } else {
        s
    }
}

/// Records with named columns, from a CSV file with a header row or a JSON list of objects.
/// The rows are not held: [`Table::rows`] reads them from the text each time (so a reader's
/// memory follows what it keeps of them, not the file).
#[derive(Debug)]
pub(crate) struct Table<'t> {
    /// Column names as written.
    pub columns: Vec<String>,
    rows: Rows<'t>,
}

/// Where a [`Table`]'s rows are.
#[derive(Debug)]
enum Rows<'t> {
    /// In a JSON list's text, checked whole when the table was made.
    Json {
        path: &'t Path,
        list: json_list::RecordList,
    },
    /// In CSV text, checked whole when the table was made.
    Csv {
        path: &'t Path,
        text: &'t str,
        delimiter: char,
        separator: &'static str,
    },
}

#[derive(Clone, Debug)]
pub(crate) struct Row {
    pub at: Location,
    /// One cell per column; `None` when empty or absent.
    pub cells: Vec<Option<String>>,
}

/// A column found by one of its accepted names.
#[derive(Clone, Copy)]
pub(crate) struct Column<'t> {
    pub index: usize,
    pub name: &'t str,
}

/// Lower case, with Waymo v2 decorations removed: `[CameraBoxComponent].box.center.x` ->
/// `box.center.x`, `key.camera_object_id` -> `camera_object_id`.
pub(crate) fn normalize_column_name(name: &str) -> String {
    let mut n = name.trim().to_ascii_lowercase();
    if n.starts_with('[') {
        if let Some(end) = n.find("].") {
            n = n[end + 2..].to_string();
        }
    }
    if let Some(rest) = n.strip_prefix("key.") {
        n = rest.to_string();
    }
    n
}

/// The records of CSV text, in file order, each with the line it starts on; the first is the
/// header (see [`Table::from_csv`]).
struct CsvRecords<'t> {
    path: &'t Path,
    text: &'t str,
    records: csv::StringRecordsIntoIter<&'t [u8]>,
    /// (byte, line) counted so far.
    counted: (usize, usize),
    columns: Option<Vec<String>>,
    separator: &'static str,
    failed: bool,
}

impl<'t> CsvRecords<'t> {
    fn new(path: &'t Path, text: &'t str, delimiter: char, separator: &'static str) -> Self {
        let records = csv::ReaderBuilder::new()
            .has_headers(false)
            .delimiter(delimiter as u8)
            .comment(Some(b'#'))
            .flexible(true)
            .trim(csv::Trim::All)
            .from_reader(text.as_bytes())
            .into_records();
        CsvRecords {
            path,
            text,
            records,
            counted: (0, 1),
            columns: None,
            separator,
            failed: false,
        }
    }

    /// The line of the record the reader left at `byte`. Line numbers come from the records'
    /// byte offsets (the reader's own line count skips comment lines), counted forward once:
    /// records come in file order.
    fn line_at(&mut self, byte: u64) -> usize {
        let text = self.text;
        // A record's position is where the reader left the previous one: the blank and
        // comment lines before it are not part of it.
        let bytes = text.as_bytes();
        let mut byte = (byte as usize).min(text.len());
        loop {
            match bytes.get(byte) {
                Some(b'\n' | b'\r') => byte += 1,
                Some(b'#') => {
                    byte = bytes[byte..]
                        .iter()
                        .position(|&b| b == b'\n')
                        .map_or(bytes.len(), |at| byte + at + 1)
                }
                _ => break,
            }
        }
        let (from, line) = self.counted;
        let more = bytes[from.min(byte)..byte]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        self.counted = (byte.max(from), line + more);
        self.counted.1
    }
}

impl Iterator for CsvRecords<'_> {
    type Item = Result<Row, AnnotationError>;

    /// The next row after the header, or the error that stops the file.
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        loop {
            let record = match self.records.next()? {
                Ok(record) => record,
                Err(e) => {
                    self.failed = true;
                    let line = e.position().map_or(0, |p| self.line_at(p.byte()));
                    return Some(Err(AnnotationError::at_line(
                        self.path,
                        line,
                        format!("is not readable as CSV: {e}"),
                    )));
                }
            };
            let line_no = record.position().map_or(0, |p| self.line_at(p.byte()));
            let blank = record.len() == 1 && record[0].is_empty();
            if blank || record.get(0).is_some_and(|f| f.starts_with('#')) {
                continue;
            }
            let Some(columns) = &self.columns else {
                self.columns = Some(record.iter().map(str::to_string).collect());
                continue;
            };
            if record.len() != columns.len() {
                self.failed = true;
                return Some(Err(AnnotationError::at_line(
                    self.path,
                    line_no,
                    format!(
                        "expected {} {} values ({}) as in the header, found {}",
                        columns.len(),
                        self.separator,
                        columns.join(","),
                        record.len()
                    ),
                )));
            }
            let cells = record
                .iter()
                .map(|c| (!c.is_empty()).then(|| c.to_string()))
                .collect();
            return Some(Ok(Row {
                at: Location::Line(line_no),
                cells,
            }));
        }
    }
}

impl<'t> Table<'t> {
    /// The first column whose normalised name is one of `names` (tried in order).
    pub(crate) fn column(&self, names: &[&str]) -> Option<Column<'_>> {
        let normalized: Vec<String> = self
            .columns
            .iter()
            .map(|c| normalize_column_name(c))
            .collect();
        names.iter().find_map(|want| {
            normalized
                .iter()
                .position(|n| n == want)
                .map(|index| Column {
                    index,
                    name: self.columns[index].as_str(),
                })
        })
    }

    /// The rows, in file order, read again from the text or the file each time (checked
    /// already, so they are all `Ok` unless the file changed).
    pub(crate) fn rows(
        &self,
    ) -> Box<dyn Iterator<Item = Result<std::borrow::Cow<'_, Row>, AnnotationError>> + '_> {
        match &self.rows {
            Rows::Json { path, list } => match json_list::Records::open(path, list) {
                Ok(records) => Box::new(
                    records
                        .map(|element| json_row(path, &list.name, &self.columns, element))
                        .map(|r| r.map(std::borrow::Cow::Owned)),
                ),
                Err(e) => Box::new(std::iter::once(Err(e))),
            },
            Rows::Csv {
                path,
                text,
                delimiter,
                separator,
            } => Box::new(
                CsvRecords::new(path, text, *delimiter, separator)
                    .map(|r| r.map(std::borrow::Cow::Owned)),
            ),
        }
    }

    /// Reads a CSV (or TSV / semicolon) file whose first record is the header, through the
    /// `csv` crate (RFC 4180 quoting: a field in double quotes may hold the delimiter, a
    /// newline and `""`). The delimiter is the one the header line uses most. Blank lines and
    /// comment lines (starting with `#`, after any indentation) are skipped; cells are
    /// trimmed, and an empty cell is `None`. Each row records the line its record starts on,
    /// and a row with more or fewer cells than the header is refused naming that line. The
    /// whole text is checked here; its rows are not kept (see [`Table::rows`]).
    pub(crate) fn from_csv(path: &'t Path, text: &'t str) -> Result<Table<'t>, AnnotationError> {
        let Some(header) = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('#'))
        else {
            return Err(AnnotationError::file(
                path,
                "is empty; expected a header row and records",
            ));
        };
        let (delimiter, separator) = detect_delimiter(header);
        let mut records = CsvRecords::new(path, text, delimiter, separator);
        for row in &mut records {
            row?;
        }
        let columns = records.columns.unwrap_or_default();
        Ok(Table {
            columns,
            rows: Rows::Csv {
                path,
                text,
                delimiter,
                separator,
            },
        })
    }

    /// Reads a JSON file's list of flat or nested records (nested objects become dotted
    /// names: `{"box": {"center_x": 1}}` has a column `box.center_x`). The list may be the
    /// whole document or the `annotations`, `boxes`, `records` or `labels` member of an
    /// object ([`json_list::JsonOutline`]). The file is checked whole and each record read
    /// once, for the columns (every name any record has, in the order first seen); the rows
    /// are not kept (see [`Table::rows`]).
    pub(crate) fn from_json(path: &'t Path) -> Result<Table<'t>, AnnotationError> {
        Table::from_json_outline(path, &json_list::JsonOutline::read(path)?)
    }

    /// [`Table::from_json`] of a file whose outline has been read.
    pub(crate) fn from_json_outline(
        path: &'t Path,
        outline: &json_list::JsonOutline,
    ) -> Result<Table<'t>, AnnotationError> {
        let Some(list) = outline.records.clone() else {
            let message =
                if outline.list || !outline.members.is_empty() || first_byte(path) == Some(b'{') {
                    "expected a JSON list of records, or an object with an \"annotations\", \
                 \"boxes\", \"records\" or \"labels\" list"
                        .to_string()
                } else {
                    let value: Value =
                        serde_json::from_reader(open_text(path)?).unwrap_or(Value::Null);
                    format!(
                        "expected a JSON list of records, found {}",
                        show_json(&value)
                    )
                };
            return Err(AnnotationError::file(path, message));
        };
        let mut columns: Vec<String> = Vec::new();
        let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
        let mut flat = Vec::new();
        for element in json_list::Records::open(path, &list)? {
            let (i, value) = element.map_err(|e| AnnotationError::read(path, e))?;
            let record = json_record(path, &list.name, i, value)?;
            flat.clear();
            flatten("", &record, &mut flat);
            for (name, _) in flat.drain(..) {
                if !seen.contains(&name) {
                    seen.insert(name.clone());
                    columns.push(name);
                }
            }
        }
        Ok(Table {
            columns,
            rows: Rows::Json { path, list },
        })
    }
}

/// Element `i` of the JSON list `list_name` as a record: a JSON object, else the error naming
/// it.
fn json_record(
    path: &Path,
    list_name: &str,
    i: usize,
    record: Value,
) -> Result<Value, AnnotationError> {
    if !record.is_object() {
        return Err(AnnotationError::at_item(
            path,
            format!("{list_name}[{i}]"),
            format!(
                "expected a record (a JSON object), found {}",
                show_json(&record)
            ),
        ));
    }
    Ok(record)
}

/// The row of element `i` of a JSON list of records, its cells in `columns`' order.
fn json_row(
    path: &Path,
    list_name: &str,
    columns: &[String],
    element: std::io::Result<(usize, Value)>,
) -> Result<Row, AnnotationError> {
    let (i, value) = element.map_err(|e| AnnotationError::read(path, e))?;
    let record = json_record(path, list_name, i, value)?;
    let mut flat = Vec::new();
    flatten("", &record, &mut flat);
    let mut cells = vec![None; columns.len()];
    for (name, value) in flat {
        if let Some(c) = columns.iter().position(|c| *c == name) {
            cells[c] = value;
        }
    }
    Ok(Row {
        at: Location::Item(format!("{list_name}[{i}]")),
        cells,
    })
}

fn flatten(prefix: &str, value: &Value, out: &mut Vec<(String, Option<String>)>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let name = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&name, v, out);
            }
        }
        Value::Null => out.push((prefix.to_string(), None)),
        Value::String(s) => out.push((prefix.to_string(), (!s.is_empty()).then(|| s.clone()))),
        other => out.push((prefix.to_string(), Some(other.to_string()))),
    }
}

fn detect_delimiter(header: &str) -> (char, &'static str) {
    let count = |c: char| header.matches(c).count();
    let (tabs, commas, semicolons) = (count('\t'), count(','), count(';'));
    if tabs > commas && tabs >= semicolons {
        ('\t', "tab-separated")
    } else if semicolons > commas {
        (';', "semicolon-separated")
    } else {
        (',', "comma-separated")
    }
}

impl Row {
    pub(crate) fn text(&self, column: Option<Column<'_>>) -> Option<&str> {
        column.and_then(|c| self.cells[c.index].as_deref())
    }

    /// The number in a required column.
    pub(crate) fn number(&self, path: &Path, column: Column<'_>) -> Result<f64, AnnotationError> {
        let text = self.required(path, column)?;
        parse_f64(text).ok_or_else(|| {
            AnnotationError::invalid(
                path,
                self.at.clone(),
                format!(
                    "column {:?}: expected a number, found {text:?}",
                    column.name
                ),
            )
        })
    }

    /// A non-negative integer (frame index) in a required column.
    pub(crate) fn index(&self, path: &Path, column: Column<'_>) -> Result<usize, AnnotationError> {
        let text = self.required(path, column)?;
        parse_integer(text)
            .and_then(|i| usize::try_from(i).ok())
            .ok_or_else(|| {
                AnnotationError::invalid(
                    path,
                    self.at.clone(),
                    format!(
                        "column {:?}: expected a frame index (0, 1, 2, ...), found {text:?}",
                        column.name
                    ),
                )
            })
    }

    /// Exact seconds in a required column.
    pub(crate) fn time(&self, path: &Path, column: Column<'_>) -> Result<Time, AnnotationError> {
        let text = self.required(path, column)?;
        parse_time(text).ok_or_else(|| {
            AnnotationError::invalid(
                path,
                self.at.clone(),
                format!(
                    "column {:?}: expected a time in seconds (4.2 or 21/5), found {text:?}",
                    column.name
                ),
            )
        })
    }

    /// A yes/no column (`absent`); empty counts as no.
    pub(crate) fn flag(&self, path: &Path, column: Column<'_>) -> Result<bool, AnnotationError> {
        let text = self.text(Some(column)).unwrap_or("");
        parse_flag(text).ok_or_else(|| {
            AnnotationError::invalid(
                path,
                self.at.clone(),
                format!(
                    "column {:?}: expected 0/1 or true/false, found {text:?}",
                    column.name
                ),
            )
        })
    }

    pub(crate) fn required(
        &self,
        path: &Path,
        column: Column<'_>,
    ) -> Result<&str, AnnotationError> {
        self.cells[column.index].as_deref().ok_or_else(|| {
            AnnotationError::invalid(
                path,
                self.at.clone(),
                format!("column {:?} is empty; expected a value", column.name),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table's rows, all read.
    fn rows(t: &Table) -> Vec<Row> {
        t.rows().map(|r| r.unwrap().into_owned()).collect()
    }

    #[test]
    fn numbers_and_times() {
        assert_eq!(parse_integer("12"), Some(12));
        assert_eq!(parse_integer("-1"), Some(-1));
        assert_eq!(parse_integer("3.0"), Some(3));
        assert_eq!(parse_integer("3.5"), None);
        assert!(parse_f64("NaN").unwrap().is_nan());
        assert_eq!(parse_time("4.2"), Some(Time::new(21, 5)));
        assert_eq!(parse_time("21/5"), Some(Time::new(21, 5)));
        assert_eq!(parse_time("1e-3"), Some(Time::new(1, 1000)));
        assert_eq!(parse_time("x"), None);
        let v: Value = serde_json::from_str("[0.1, 3, \"21/5\"]").unwrap();
        assert_eq!(json_time(&v[0]), Some(Time::new(1, 10)));
        assert_eq!(json_time(&v[1]), Some(Time::from_secs(3)));
        assert_eq!(json_time(&v[2]), Some(Time::new(21, 5)));
    }

    #[test]
    fn ntsc_rates_snap() {
        assert_eq!(snap_fps(Time::new(2997, 100)), Time::new(30000, 1001));
        assert_eq!(snap_fps(Time::new(23976, 1000)), Time::new(24000, 1001));
        assert_eq!(
            snap_fps("29.97002997002997".parse().unwrap()),
            Time::new(30000, 1001)
        );
        assert_eq!(snap_fps(Time::from_secs(25)), Time::from_secs(25));
        assert_eq!(snap_fps(Time::new(25, 2)), Time::new(25, 2));
    }

    #[test]
    fn numeric_lines_split_on_spaces_tabs_and_commas() {
        assert_eq!(split_numeric_line("1\t2  3"), vec!["1", "2", "3"]);
        assert_eq!(split_numeric_line("1, 2,3"), vec!["1", "2", "3"]);
    }

    #[test]
    fn csv_quoted_fields_hold_delimiters_newlines_and_quotes() {
        // The oracle is the text written here: each cell as it was quoted.
        let text = "frame,label,note\n\
                    0,\"car, red\",plain\n\
                    1,\"two\nlines\",\"say \"\"hi\"\"\"\n\
                    \n\
                    # a comment, with a comma\n\
                    \x20 # an indented comment\n\
                    2,bus,\n\
                    # a comment right before a record\n\
                    3,van,x\n";
        let t = Table::from_csv(Path::new("q.csv"), text).unwrap();
        assert_eq!(t.columns, ["frame", "label", "note"]);
        let all = rows(&t);
        let cells: Vec<Vec<Option<&str>>> = all
            .iter()
            .map(|r| r.cells.iter().map(|c| c.as_deref()).collect())
            .collect();
        assert_eq!(
            cells,
            [
                vec![Some("0"), Some("car, red"), Some("plain")],
                vec![Some("1"), Some("two\nlines"), Some("say \"hi\"")],
                vec![Some("2"), Some("bus"), None],
                vec![Some("3"), Some("van"), Some("x")],
            ]
        );
        // Each row names the line its record starts on (the quoted newline spans lines 3-4).
        let all = rows(&t);
        let lines: Vec<&Location> = all.iter().map(|r| &r.at).collect();
        assert_eq!(
            lines,
            [
                &Location::Line(2),
                &Location::Line(3),
                &Location::Line(8),
                &Location::Line(10)
            ]
        );
        // Tabs and semicolons, found from the header.
        let t = Table::from_csv(Path::new("t.tsv"), "frame\tlabel\n0\t\"a\tb\"\n").unwrap();
        assert_eq!(rows(&t)[0].cells[1].as_deref(), Some("a\tb"));
        let t = Table::from_csv(Path::new("s.csv"), "frame;label\n0;\"a;b\"\n").unwrap();
        assert_eq!(rows(&t)[0].cells[1].as_deref(), Some("a;b"));
    }

    #[test]
    fn csv_malformed_lines_name_file_and_line() {
        // A record after a quoted newline: the line count still follows the file.
        let err = Table::from_csv(Path::new("m.csv"), "frame,label\n0,\"a\nb\"\n1,x,extra\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "m.csv line 4: expected 2 comma-separated values (frame,label) as in the header, found 3"
        );
        let err = Table::from_csv(Path::new("e.csv"), "# only a comment\n\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("e.csv") && err.contains("is empty"), "{err}");
    }

    #[test]
    fn column_names_are_normalised() {
        assert_eq!(
            normalize_column_name("[CameraBoxComponent].box.center.x"),
            "box.center.x"
        );
        assert_eq!(
            normalize_column_name(" key.camera_object_id"),
            "camera_object_id"
        );
        assert_eq!(normalize_column_name("X1"), "x1");
    }

    #[test]
    fn csv_table_checks_row_width() {
        let path = Path::new("t.csv");
        let t = Table::from_csv(path, "# comment\nframe,x1\n\n0,1.5\n1,\n").unwrap();
        assert_eq!(rows(&t).len(), 2);
        assert_eq!(rows(&t)[1].cells[1], None);
        assert_eq!(rows(&t)[0].at, Location::Line(4));
        let err = Table::from_csv(path, "frame,x1\n0\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "t.csv line 2: expected 2 comma-separated values (frame,x1) as in the header, found 1"
        );
    }

    #[test]
    fn json_table_flattens_records() {
        // Members in sorted order, so the column order is the same with or without serde_json's
        // preserve_order feature.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json");
        std::fs::write(
            &path,
            r#"{"boxes": [{"box": {"cx": 2.5}, "id": 1}, {"id": "b", "label": null}]}"#,
        )
        .unwrap();
        let t = Table::from_json(&path).unwrap();
        assert_eq!(t.columns, vec!["box.cx", "id", "label"]);
        assert_eq!(
            rows(&t)[0].cells,
            vec![Some("2.5".into()), Some("1".into()), None]
        );
        assert_eq!(rows(&t)[1].at, Location::Item("boxes[1]".into()));
        std::fs::write(&path, "\u{feff}[1]").unwrap();
        let err = Table::from_json(&path).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "{} [0]: expected a record (a JSON object), found 1",
                path.display()
            )
        );
        for (text, found) in [
            (
                "{\"boxes\": 1}",
                "or an object with an \"annotations\", \"boxes\", \"records\" or \"labels\" list",
            ),
            (" 12", "found 12"),
        ] {
            std::fs::write(&path, text).unwrap();
            let err = Table::from_json(&path).unwrap_err().to_string();
            assert!(err.ends_with(found), "{err}");
        }
    }
}
