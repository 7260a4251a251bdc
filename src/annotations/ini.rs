//! The one INI reader of the dataset files vidprep reads: MOT's `seqinfo.ini` and GOT-10k's
//! `meta_info.ini`. They differ only in the separators they allow, so each is a [`Dialect`]
//! of [`parse`]. The rules, for every dialect:
//!
//! - **Lines**: split at `\n` (a `\r` before it is dropped); a leading byte-order mark is
//!   ignored; every line is trimmed of surrounding whitespace before anything else.
//! - **Blank lines** are skipped.
//! - **Comments** are whole lines starting with `;` or `#`. There are no inline comments: a
//!   `;` or `#` after a key is part of the value.
//! - **Sections**: a line `[name]` starts section `name` (trimmed inside the brackets); each
//!   entry records the section it is in (`None` before the first), but callers look keys up
//!   regardless of section (both files have one section).
//! - **Entries**: every other line is `key SEP value`, split at the first separator of the
//!   dialect (`=` for `seqinfo.ini`; `:` or `=`, whichever comes first, for
//!   `meta_info.ini`); a line with none is an error naming its line and the expected form.
//!   The key is trimmed and lower-cased (ASCII), the value trimmed (it may be empty and may
//!   hold further separators: `a: b: c` has the value `b: c`).
//! - **Duplicate keys** are all returned, in file order; both callers let the last one win.

/// How one INI file spells its entries.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dialect {
    /// The characters that may separate a key from its value (the first one in a line wins).
    pub separators: &'static [char],
    /// The expected form, for the error on a line that is not an entry
    /// (`key=value (e.g. frameRate=30)`).
    pub expected: &'static str,
}

/// MOT's `seqinfo.ini`: `key=value`.
pub(crate) const SEQINFO: Dialect = Dialect {
    separators: &['='],
    expected: "key=value (e.g. frameRate=30)",
};

/// GOT-10k's `meta_info.ini`: `key: value` (or `key = value`).
pub(crate) const META_INFO: Dialect = Dialect {
    separators: &[':', '='],
    expected: "\"key: value\" (e.g. anno_fps: 10Hz)",
};

/// One `key SEP value` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// 1-based line number.
    pub line: usize,
    /// The section the entry is in (`None` before the first `[section]`).
    pub section: Option<String>,
    /// The key, trimmed and lower-cased.
    pub key: String,
    /// The value, trimmed.
    pub value: String,
}

/// A line that is neither blank, a comment, a section nor an entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BadLine {
    /// 1-based line number.
    pub line: usize,
    /// What was expected and what was found.
    pub message: String,
}

/// The entries of an INI text in file order, by the rules in the module doc.
pub(crate) fn parse(text: &str, dialect: &Dialect) -> Result<Vec<Entry>, BadLine> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut section = None;
    let mut entries = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with(';') || l.starts_with('#') {
            continue;
        }
        if let Some(name) = l.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            section = Some(name.trim().to_string());
            continue;
        }
        let Some(at) = l.find(dialect.separators) else {
            return Err(BadLine {
                line: i + 1,
                message: format!("expected {}, found {l:?}", dialect.expected),
            });
        };
        let sep_len = l[at..].chars().next().map_or(1, char::len_utf8);
        entries.push(Entry {
            line: i + 1,
            section: section.clone(),
            key: l[..at].trim().to_ascii_lowercase(),
            value: l[at + sep_len..].trim().to_string(),
        });
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(entries: &[Entry]) -> Vec<(usize, &str, &str, &str)> {
        entries
            .iter()
            .map(|e| {
                (
                    e.line,
                    e.section.as_deref().unwrap_or("-"),
                    e.key.as_str(),
                    e.value.as_str(),
                )
            })
            .collect()
    }

    #[test]
    fn sections_comments_blank_lines_and_whitespace() {
        let text = "\u{feff}top = 1\r\n\r\n; a comment\n  # another\n[ Sequence ]\n  frameRate =  30 \nimDir=img1\nname=a;b # not a comment\n";
        let e = parse(text, &SEQINFO).unwrap();
        assert_eq!(
            kv(&e),
            [
                (1, "-", "top", "1"),
                (6, "Sequence", "framerate", "30"),
                (7, "Sequence", "imdir", "img1"),
                (8, "Sequence", "name", "a;b # not a comment"),
            ]
        );
    }

    #[test]
    fn separators_follow_the_dialect() {
        let text = "[METAINFO]\nanno_fps: 10Hz\nobject_class = car\nurl: http://x/y=z\nempty:\n";
        let e = parse(text, &META_INFO).unwrap();
        assert_eq!(
            kv(&e),
            [
                (2, "METAINFO", "anno_fps", "10Hz"),
                (3, "METAINFO", "object_class", "car"),
                (4, "METAINFO", "url", "http://x/y=z"),
                (5, "METAINFO", "empty", ""),
            ]
        );
        // `seqinfo.ini` takes `=` only: a `key: value` line is refused with its line.
        let err = parse("[Sequence]\nframeRate: 30\n", &SEQINFO).unwrap_err();
        assert_eq!(err.line, 2);
        assert_eq!(
            err.message,
            "expected key=value (e.g. frameRate=30), found \"frameRate: 30\""
        );
        let err = parse("anno_fps 10\n", &META_INFO).unwrap_err();
        assert_eq!(
            (err.line, err.message.as_str()),
            (
                1,
                "expected \"key: value\" (e.g. anno_fps: 10Hz), found \"anno_fps 10\""
            )
        );
        // An unclosed section header is not a section.
        assert_eq!(parse("[Sequence\n", &SEQINFO).unwrap_err().line, 1);
    }

    #[test]
    fn duplicate_keys_are_all_kept_in_order() {
        let e = parse("a=1\nA=2\n[s]\na=3\n", &SEQINFO).unwrap();
        assert_eq!(
            kv(&e),
            [(1, "-", "a", "1"), (2, "-", "a", "2"), (4, "s", "a", "3")]
        );
    }
}
