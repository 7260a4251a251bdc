//! JSON documents read from their file without building them whole: the [`JsonOutline`]
//! auto-detection asks of a file (its top level's kind, member names, and where its list of
//! records is), and that list's records one at a time ([`Records`]). A reader builds one
//! record at a time, so its memory follows what it keeps, not the file (issue 51: a 69 MB JSON
//! box list took 2.07 GB as one value, and a 60 MB one is now read in about 60 MB whatever its
//! size).
//!
//! The outline's pass checks the whole document with `serde_json`; [`Records`] then only
//! finds each record's bytes (strings, brackets and the bytes between) in a document known to
//! be JSON, and `serde_json` builds each record from them.

use std::borrow::Cow;
use std::io::BufRead;
use std::path::Path;

use serde::de::{Deserializer as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::error::AnnotationError;
use super::file::{open_text, skip_byte_order_mark};

/// The kind of a JSON value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum JsonKind {
    List,
    Object,
    Other,
}

impl JsonKind {
    /// The kind of the JSON text `raw` (a value, leading white space allowed), from its first
    /// character.
    pub(crate) fn of(raw: &str) -> JsonKind {
        match raw.trim_start().as_bytes().first() {
            Some(b'[') => JsonKind::List,
            Some(b'{') => JsonKind::Object,
            _ => JsonKind::Other,
        }
    }
}

/// The names under which a top-level object holds its list of records, tried in this order.
pub(crate) const RECORD_LIST_NAMES: [&str; 4] = ["annotations", "boxes", "records", "labels"];

/// Where a document's list of records is: the document itself (`name` empty), or occurrence
/// `occurrence` (0-based: the last, when a name is repeated) of the top-level member `name`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RecordList {
    pub name: String,
    occurrence: usize,
}

/// What auto-detection asks of a JSON document: the top level's kind, the members (name and
/// kind, the last of a repeated name, in the order first written) of the top-level object or,
/// for a list, of its first element when that is an object, and where its list of records is.
#[derive(Debug, Default)]
pub(crate) struct JsonOutline {
    /// Whether the top level is a list.
    pub list: bool,
    /// The members of the top-level object, or of a list's first element.
    pub members: Vec<(String, JsonKind)>,
    /// The list of records: the document when it is a list, else the first of
    /// [`RECORD_LIST_NAMES`] that the top-level object holds as a list (the last of a
    /// repeated name); `None` when there is none.
    pub records: Option<RecordList>,
}

impl JsonOutline {
    /// The outline of the JSON file `path` (a leading byte-order mark skipped), checked whole
    /// (a syntax error is the answer, located as parsing it would); memory: the member names.
    pub(crate) fn read(path: &Path) -> Result<JsonOutline, AnnotationError> {
        JsonOutline::from_reader(open_json(path)?).map_err(|e| match e.io_error_kind() {
            Some(_) => AnnotationError::read(path, std::io::Error::other(e.to_string())),
            None => AnnotationError::json(path, &e),
        })
    }

    /// [`JsonOutline::read`] of the JSON `reader` reads.
    fn from_reader(reader: impl std::io::Read) -> Result<JsonOutline, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_reader(reader);
        let outline = (&mut de).deserialize_any(OutlineVisitor { top: true })?;
        de.end()?;
        Ok(outline)
    }

    /// The kind of member `name`, if there is one.
    pub(crate) fn member(&self, name: &str) -> Option<JsonKind> {
        self.members
            .iter()
            .find_map(|(n, kind)| (n == name).then_some(*kind))
    }
}

/// The file opened for reading as JSON: [`open_text`]'s checks, a byte-order mark skipped.
fn open_json(path: &Path) -> Result<std::io::BufReader<std::fs::File>, AnnotationError> {
    let mut reader = open_text(path)?;
    skip_byte_order_mark(&mut reader).map_err(|e| AnnotationError::read(path, e))?;
    Ok(reader)
}

/// Reads a value's outline: at the top, a list's first element is outlined too, and the
/// list of records found.
struct OutlineVisitor {
    top: bool,
}

impl<'de> serde::de::DeserializeSeed<'de> for OutlineVisitor {
    type Value = JsonOutline;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<JsonOutline, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for OutlineVisitor {
    type Value = JsonOutline;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<JsonOutline, A::Error> {
        let mut members: Vec<(String, JsonKind)> = Vec::new();
        // Of each record-list name: its occurrences so far and the kind of the last.
        let mut lists = [(0usize, JsonKind::Other); RECORD_LIST_NAMES.len()];
        while let Some(name) = map.next_key::<Cow<'de, str>>()? {
            let kind = map.next_value::<KindOf>()?.0;
            if let Some(rank) = RECORD_LIST_NAMES.iter().position(|n| *n == name) {
                lists[rank] = (lists[rank].0 + 1, kind);
            }
            match members.iter_mut().find(|(n, _)| *n == name) {
                Some(member) => member.1 = kind,
                None => members.push((name.into_owned(), kind)),
            }
        }
        let records = lists
            .iter()
            .position(|(count, kind)| *count > 0 && *kind == JsonKind::List)
            .filter(|_| self.top)
            .map(|rank| RecordList {
                name: RECORD_LIST_NAMES[rank].to_string(),
                occurrence: lists[rank].0 - 1,
            });
        Ok(JsonOutline {
            list: false,
            members,
            records,
        })
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<JsonOutline, A::Error> {
        let mut outline = JsonOutline {
            list: true,
            members: Vec::new(),
            records: Some(RecordList {
                name: String::new(),
                occurrence: 0,
            }),
        };
        if self.top {
            if let Some(first) = seq.next_element_seed(OutlineVisitor { top: false })? {
                if !first.list {
                    outline.members = first.members;
                }
            }
        }
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(outline)
    }
    fn visit_bool<E>(self, _: bool) -> Result<JsonOutline, E> {
        Ok(JsonOutline::default())
    }
    fn visit_i64<E>(self, _: i64) -> Result<JsonOutline, E> {
        Ok(JsonOutline::default())
    }
    fn visit_u64<E>(self, _: u64) -> Result<JsonOutline, E> {
        Ok(JsonOutline::default())
    }
    fn visit_f64<E>(self, _: f64) -> Result<JsonOutline, E> {
        Ok(JsonOutline::default())
    }
    fn visit_str<E>(self, _: &str) -> Result<JsonOutline, E> {
        Ok(JsonOutline::default())
    }
    fn visit_unit<E>(self) -> Result<JsonOutline, E> {
        Ok(JsonOutline::default())
    }
}

/// A value's [`JsonKind`], the value itself skipped.
struct KindOf(JsonKind);

impl<'de> serde::Deserialize<'de> for KindOf {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<KindOf, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = KindOf;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<KindOf, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(KindOf(JsonKind::Object))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<KindOf, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(KindOf(JsonKind::List))
            }
            fn visit_bool<E>(self, _: bool) -> Result<KindOf, E> {
                Ok(KindOf(JsonKind::Other))
            }
            fn visit_i64<E>(self, _: i64) -> Result<KindOf, E> {
                Ok(KindOf(JsonKind::Other))
            }
            fn visit_u64<E>(self, _: u64) -> Result<KindOf, E> {
                Ok(KindOf(JsonKind::Other))
            }
            fn visit_f64<E>(self, _: f64) -> Result<KindOf, E> {
                Ok(KindOf(JsonKind::Other))
            }
            fn visit_str<E>(self, _: &str) -> Result<KindOf, E> {
                Ok(KindOf(JsonKind::Other))
            }
            fn visit_unit<E>(self) -> Result<KindOf, E> {
                Ok(KindOf(JsonKind::Other))
            }
        }
        d.deserialize_any(V)
    }
}

/// The elements of a document's list of records, read from its file one at a time, each
/// built as a [`Value`] (the document was checked whole by [`JsonOutline::read`]).
pub(crate) struct Records<R: BufRead> {
    reader: R,
    /// The next element's index; `None` once the list has ended (or failed).
    next: Option<usize>,
    bytes: Vec<u8>,
}

impl Records<std::io::BufReader<std::fs::File>> {
    /// The records of `list` in the JSON file `path`.
    pub(crate) fn open(path: &Path, list: &RecordList) -> Result<Self, AnnotationError> {
        Records::at(open_json(path)?, list).map_err(|e| AnnotationError::read(path, e))
    }
}

impl<'t> Records<std::io::Cursor<&'t [u8]>> {
    /// The elements of the JSON list `text` (a list checked as JSON, leading white space
    /// allowed).
    pub(crate) fn of_list(text: &'t str) -> Self {
        let list = RecordList {
            name: String::new(),
            occurrence: 0,
        };
        Records::at(std::io::Cursor::new(text.as_bytes()), &list).unwrap_or(Records {
            reader: std::io::Cursor::new(&[]),
            next: None,
            bytes: Vec::new(),
        })
    }
}

impl<R: BufRead> Records<R> {
    /// The records of `list` in the JSON document `reader` reads from its start.
    fn at(mut reader: R, list: &RecordList) -> std::io::Result<Self> {
        let records = |reader| Records {
            reader,
            next: Some(0),
            bytes: Vec::new(),
        };
        skip_space(&mut reader)?;
        if list.name.is_empty() {
            expect(&mut reader, b'[')?;
            return Ok(records(reader));
        }
        expect(&mut reader, b'{')?;
        let mut seen = 0usize;
        let mut key = Vec::new();
        loop {
            skip_space(&mut reader)?;
            key.clear();
            raw_value(&mut reader, Some(&mut key))?;
            let name: String = serde_json::from_slice(&key).map_err(std::io::Error::other)?;
            skip_space(&mut reader)?;
            expect(&mut reader, b':')?;
            skip_space(&mut reader)?;
            if name == list.name {
                if seen == list.occurrence {
                    expect(&mut reader, b'[')?;
                    return Ok(records(reader));
                }
                seen += 1;
            }
            raw_value(&mut reader, None)?;
            skip_space(&mut reader)?;
            if peek(&mut reader)? != Some(b',') {
                return Err(not_found());
            }
            reader.consume(1);
        }
    }
}

impl<R: BufRead> Iterator for Records<R> {
    /// The element's index and value.
    type Item = std::io::Result<(usize, Value)>;

    fn next(&mut self) -> Option<Self::Item> {
        let index = self.next?;
        let step = (|| -> std::io::Result<Option<Value>> {
            skip_space(&mut self.reader)?;
            if index > 0 {
                match peek(&mut self.reader)? {
                    Some(b',') => {
                        self.reader.consume(1);
                        skip_space(&mut self.reader)?;
                    }
                    _ => return Ok(None),
                }
            } else if peek(&mut self.reader)? == Some(b']') {
                return Ok(None);
            }
            self.bytes.clear();
            raw_value(&mut self.reader, Some(&mut self.bytes))?;
            let value = serde_json::from_slice(&self.bytes).map_err(std::io::Error::other)?;
            // A list of large records does not keep the largest one's buffer.
            if self.bytes.capacity() > 1 << 20 {
                self.bytes = Vec::new();
            }
            Ok(Some(value))
        })();
        match step {
            Ok(Some(value)) => {
                self.next = Some(index + 1);
                Some(Ok((index, value)))
            }
            Ok(None) => {
                self.next = None;
                None
            }
            Err(e) => {
                self.next = None;
                Some(Err(e))
            }
        }
    }
}

fn not_found() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        "the list of records is not where the outline found it (the file changed while it was read?)",
    )
}

fn peek(reader: &mut impl BufRead) -> std::io::Result<Option<u8>> {
    Ok(reader.fill_buf()?.first().copied())
}

fn expect(reader: &mut impl BufRead, byte: u8) -> std::io::Result<()> {
    if peek(reader)? != Some(byte) {
        return Err(not_found());
    }
    reader.consume(1);
    Ok(())
}

/// Skips JSON white space.
fn skip_space(reader: &mut impl BufRead) -> std::io::Result<()> {
    loop {
        let buf = reader.fill_buf()?;
        let n = buf
            .iter()
            .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            .count();
        let all = n == buf.len() && n > 0;
        reader.consume(n);
        if !all {
            return Ok(());
        }
    }
}

/// Reads the JSON value that starts at the reader (no white space before it) to its last
/// byte, appending its bytes to `keep` when given: a string to its closing quote, a list or
/// object to its closing bracket (strings inside skipped as strings), anything else to the
/// next white space, comma or bracket (not consumed).
fn raw_value(reader: &mut impl BufRead, mut keep: Option<&mut Vec<u8>>) -> std::io::Result<()> {
    let Some(first) = peek(reader)? else {
        return Err(not_found());
    };
    let scalar = !matches!(first, b'"' | b'[' | b'{');
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut started = false;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return if scalar { Ok(()) } else { Err(not_found()) };
        }
        let mut used = buf.len();
        let mut done = false;
        for (i, &b) in buf.iter().enumerate() {
            if scalar {
                if matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b',' | b']' | b'}') {
                    used = i;
                    done = true;
                    break;
                }
                continue;
            }
            if in_string {
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == b'"' {
                    in_string = false;
                    if depth == 0 {
                        used = i + 1;
                        done = true;
                        break;
                    }
                }
                continue;
            }
            match b {
                b'"' if !started || depth > 0 => in_string = true,
                b'[' | b'{' => depth += 1,
                b']' | b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        used = i + 1;
                        done = true;
                        break;
                    }
                }
                _ => {}
            }
            started = true;
        }
        if let Some(keep) = keep.as_deref_mut() {
            keep.extend_from_slice(&buf[..used]);
        }
        reader.consume(used);
        if done {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(text: &str, list: &RecordList) -> Vec<Value> {
        Records::at(std::io::Cursor::new(text.as_bytes()), list)
            .unwrap()
            .map(|r| r.unwrap().1)
            .collect()
    }

    fn outline(text: &str) -> JsonOutline {
        JsonOutline::from_reader(text.as_bytes()).unwrap()
    }

    #[test]
    fn records_are_each_element_in_turn() {
        let top = RecordList {
            name: String::new(),
            occurrence: 0,
        };
        let text =
            " [ {\"a\": [1, 2], \"s\": \"]}\\\"[{\"} ,\n 3,\"x,]\" , [ ] , null,-1.5e3,true ] ";
        assert_eq!(
            records(text, &top),
            vec![
                serde_json::json!({"a": [1, 2], "s": "]}\"[{"}),
                serde_json::json!(3),
                serde_json::json!("x,]"),
                serde_json::json!([]),
                Value::Null,
                serde_json::json!(-1500.0),
                serde_json::json!(true),
            ]
        );
        assert!(records("[]", &top).is_empty());
        assert!(records(" [ \n ] ", &top).is_empty());
        // Read in small pieces: the same.
        let small = std::io::BufReader::with_capacity(3, text.as_bytes());
        assert_eq!(Records::at(small, &top).unwrap().count(), 7);
    }

    #[test]
    fn outlines_name_members_and_find_the_records() {
        let o = outline(r#"{"bboxes": [1], "fps": 30, "bboxes": {"x": 1}, "meta": {}}"#);
        assert!(!o.list);
        // The last of a repeated name, in the place first written.
        assert_eq!(
            o.members,
            vec![
                ("bboxes".to_string(), JsonKind::Object),
                ("fps".to_string(), JsonKind::Other),
                ("meta".to_string(), JsonKind::Object)
            ]
        );
        assert_eq!(o.records, None);
        let l = outline(r#"[{"bboxes": []}, 1, {"other": 2}]"#);
        assert!(l.list);
        assert_eq!(l.member("bboxes"), Some(JsonKind::List));
        assert_eq!(l.member("other"), None);
        assert_eq!(l.records.unwrap().name, "");
        assert!(outline("[[1], {\"bboxes\": []}]").members.is_empty());
        assert!(outline("7").records.is_none());
        // The whole document is checked.
        let err = JsonOutline::from_reader("[{\"a\": 1}, {\"b\": }]".as_bytes()).unwrap_err();
        assert_eq!((err.line(), err.column()), (1, 18));
        // By rank, a member that is a list; the last of a repeated name.
        let text = r#"{"labels": [{"l": 1}], "boxes": {"no": 1}, "records": [{"r": 2}], "n": 1, "records": [{"r": 3}, {"r": 4}]}"#;
        let o = outline(text);
        let list = o.records.unwrap();
        assert_eq!((list.name.as_str(), list.occurrence), ("records", 1));
        assert_eq!(
            records(text, &list),
            vec![serde_json::json!({"r": 3}), serde_json::json!({"r": 4})]
        );
        // A name escaped in the file is its text.
        let text = r#"{"x": "boxes", "bo\u0078es": [{"b": 1}]}"#;
        let list = outline(text).records.unwrap();
        assert_eq!(records(text, &list), vec![serde_json::json!({"b": 1})]);
        assert!(outline(r#"{"boxes": 3}"#).records.is_none());
    }
}
