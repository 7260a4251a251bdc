//! The one error type of the annotation module ([`AnnotationError`]) and the place in a file
//! an error points at ([`Location`]).
//!
//! Every message names the file, the place in it (a 1-based line as an editor shows it, or a
//! JSON item) and what was expected, e.g.
//! `pets09/det.txt line 17: expected 10 comma-separated numbers (frame,id,x,y,w,h,conf,...) like line 1, found 4`.

use std::fmt;
use std::path::{Path, PathBuf};

/// Where in a file a problem is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// A 1-based line number.
    Line(usize),
    /// A 1-based line and column (JSON syntax errors).
    LineColumn(usize, usize),
    /// A JSON item, written as a path such as `item 2 (vid "abc") bboxes[3]` or
    /// `tracks[0].keys[5]`.
    Item(String),
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Line(line) => write!(f, "line {line}"),
            Location::LineColumn(line, column) => write!(f, "line {line} column {column}"),
            Location::Item(item) => f.write_str(item),
        }
    }
}

/// Everything that can go wrong while reading, writing or resolving annotations.
#[derive(Debug, thiserror::Error)]
pub enum AnnotationError {
    /// The file or folder could not be read or written.
    #[error("{}: {action}: {source}", .path.display())]
    Io {
        /// The file or folder that could not be read or written.
        path: PathBuf,
        /// What was being done, e.g. "cannot read" or "cannot write".
        action: &'static str,
        /// The operating system's error.
        source: std::io::Error,
    },

    /// Something at a known place in a file is not what the format expects.
    #[error("{} {at}: {message}", .path.display())]
    Invalid {
        /// The annotation file.
        path: PathBuf,
        /// The line, line and column, or JSON item at fault.
        at: Location,
        /// What the format expects there and what was found.
        message: String,
    },

    /// A problem with a file as a whole (missing part, wrong count, several items to choose
    /// from).
    #[error("{}: {message}", .path.display())]
    File {
        /// The annotation file or folder.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },

    /// `Format::Auto` could not tell the format; `tried` lists each format and why it did not
    /// fit.
    #[error("{}: cannot tell the annotation format; tried {}", .path.display(), tried_list(.tried))]
    UnknownFormat {
        /// The file or folder whose format is unknown.
        path: PathBuf,
        /// One `(format name, reason it does not fit)` pair per format tried, in the order
        /// tried.
        tried: Vec<(String, String)>,
    },

    /// A caller-supplied value (a clock, a track index) that cannot be used.
    #[error("{0}")]
    Usage(String),
}

fn tried_list(tried: &[(String, String)]) -> String {
    tried
        .iter()
        .map(|(format, why)| format!("{format} ({why})"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl AnnotationError {
    pub(crate) fn invalid(
        path: &Path,
        at: Location,
        message: impl Into<String>,
    ) -> AnnotationError {
        AnnotationError::Invalid {
            path: path.to_path_buf(),
            at,
            message: message.into(),
        }
    }

    pub(crate) fn at_line(path: &Path, line: usize, message: impl Into<String>) -> AnnotationError {
        AnnotationError::invalid(path, Location::Line(line), message)
    }

    pub(crate) fn at_item(
        path: &Path,
        item: impl Into<String>,
        message: impl Into<String>,
    ) -> AnnotationError {
        AnnotationError::invalid(path, Location::Item(item.into()), message)
    }

    pub(crate) fn file(path: &Path, message: impl Into<String>) -> AnnotationError {
        AnnotationError::File {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }

    pub(crate) fn read(path: &Path, source: std::io::Error) -> AnnotationError {
        if source.kind() == std::io::ErrorKind::NotFound {
            return AnnotationError::file(
                path,
                "file not found; check the path (a relative one is taken from the current \
                 folder, or from a manifest's folder)",
            );
        }
        AnnotationError::Io {
            path: path.to_path_buf(),
            action: "cannot read",
            source,
        }
    }

    #[cfg(test)]
    pub(crate) fn write(path: &Path, source: std::io::Error) -> AnnotationError {
        AnnotationError::Io {
            path: path.to_path_buf(),
            action: "cannot write",
            source,
        }
    }

    /// A `serde_json` syntax or schema error, placed at its line and column.
    pub(crate) fn json(path: &Path, err: &serde_json::Error) -> AnnotationError {
        let message = strip_serde_position(&err.to_string());
        if err.line() == 0 {
            AnnotationError::file(path, format!("invalid JSON: {message}"))
        } else {
            AnnotationError::invalid(
                path,
                Location::LineColumn(err.line(), err.column()),
                format!("invalid JSON: {message}"),
            )
        }
    }
}

/// `serde_json` appends " at line L column C"; the location is reported separately.
fn strip_serde_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_file_place_and_expectation() {
        let e = AnnotationError::at_line(
            Path::new("pets09/det.txt"),
            17,
            "expected 10 numbers, found 4",
        );
        assert_eq!(
            e.to_string(),
            "pets09/det.txt line 17: expected 10 numbers, found 4"
        );
        let e = AnnotationError::UnknownFormat {
            path: PathBuf::from("a.bin"),
            tried: vec![
                ("got10k".into(), "no groundtruth.txt".into()),
                ("mot".into(), "not text".into()),
            ],
        };
        assert_eq!(
            e.to_string(),
            "a.bin: cannot tell the annotation format; tried got10k (no groundtruth.txt), mot (not text)"
        );
    }

    #[test]
    fn json_errors_carry_line_and_column() {
        let err = serde_json::from_str::<serde_json::Value>("{\n  \"a\": ,\n}").unwrap_err();
        let e = AnnotationError::json(Path::new("x.json"), &err);
        let text = e.to_string();
        assert!(text.starts_with("x.json line 2 column "), "{text}");
        assert!(!text.contains(" at line "), "{text}");
    }
}
