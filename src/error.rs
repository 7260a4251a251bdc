//! The library's error type: every variant names the file (and the frame, line or item) it is
//! about and says what was expected, so a batch report or a terminal message is actionable
//! without a debugger. Each error has a [`ErrorKind`] (usage, input, output, encode, internal, cancelled) that
//! the command line maps to exit codes. Messages are complete on their own: causes are part of
//! the text, not a separate chain, so nothing is printed twice.

use std::path::{Path, PathBuf};

/// What kind of fault an error is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The request itself is wrong (bad option, an output that would overwrite an input).
    Usage,
    /// An input is missing, unreadable, damaged or does not fit the request.
    Input,
    /// Writing an output failed (disk full, permissions, a folder in the way).
    Output,
    /// The encoder or muxer refused the frames or settings (an ffmpeg-side failure while
    /// writing, not the file system).
    Encode,
    /// A fault in vidprep (a bug).
    Internal,
    /// The caller stopped the work.
    Cancelled,
}

/// Result with the library's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}: file not found", path.display())]
    NotFound { path: PathBuf },

    #[error("{}: cannot open as a video ({source}); is it a video file that ffmpeg can read?", path.display())]
    Open {
        path: PathBuf,
        source: ffmpeg_next::Error,
    },

    #[error("{}: has no video stream", path.display())]
    NoVideo { path: PathBuf },

    /// The file opened but its data is damaged or cannot be decoded.
    #[error("{}: corrupt or unreadable video {at}: {detail}", path.display())]
    Corrupt {
        path: PathBuf,
        at: String,
        detail: String,
    },

    /// A request that does not fit the input (span outside the video, empty span, decision
    /// point outside the clip, ...).
    #[error("{}: {message}", path.display())]
    Request { path: PathBuf, message: String },

    /// A bad manifest, annotation or parameter file, with the line it is about.
    #[error("{}{}: {message}", path.display(), line.map(|l| format!(" line {l}")).unwrap_or_default())]
    BadFile {
        path: PathBuf,
        line: Option<usize>,
        message: String,
    },

    /// Invalid arguments that do not concern one file.
    #[error("{0}")]
    Usage(String),

    /// An ffmpeg call failed while working on a file.
    #[error("{}: {context}: {source}", path.display())]
    Ffmpeg {
        path: PathBuf,
        context: String,
        source: ffmpeg_next::Error,
    },

    /// Writing an output failed (an encoder, a muxer).
    #[error("{}: {context}: {source}", path.display())]
    Encode {
        path: PathBuf,
        context: String,
        source: ffmpeg_next::Error,
    },

    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },

    /// A bad annotation file (the message names the file and line or item).
    #[error(transparent)]
    Annotation(#[from] crate::annotations::AnnotationError),

    /// The decoder returned frames other than the frame table listed (a packet that does
    /// not decode, timestamps that lie). Jobs run again once with a table built by decoding.
    #[error("{}: the decoder disagrees with the frame table at frame {frame} (damaged packets or unreliable timestamps)", path.display())]
    TableMismatch { path: PathBuf, frame: usize },

    /// A fault in vidprep itself (a bug), with what was going on.
    #[error("internal error: {0}")]
    Internal(String),

    /// Work stopped because the caller's progress reporter asked to stop.
    #[error("cancelled")]
    Cancelled,
}

impl Error {
    /// What kind of fault this is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Usage(_) => ErrorKind::Usage,
            Error::NotFound { .. }
            | Error::Open { .. }
            | Error::NoVideo { .. }
            | Error::Corrupt { .. }
            | Error::Request { .. }
            | Error::BadFile { .. }
            | Error::Ffmpeg { .. }
            | Error::Annotation(_)
            | Error::TableMismatch { .. } => ErrorKind::Input,
            Error::Encode { .. } => ErrorKind::Encode,
            Error::Io { .. } => ErrorKind::Output,
            Error::Internal(_) => ErrorKind::Internal,
            Error::Cancelled => ErrorKind::Cancelled,
        }
    }

    /// An encoder or muxer failure while writing `path`.
    pub fn encode(path: &Path, context: impl Into<String>, source: ffmpeg_next::Error) -> Error {
        Error::Encode {
            path: path.to_path_buf(),
            context: context.into(),
            source,
        }
    }

    pub fn internal(message: impl Into<String>) -> Error {
        Error::Internal(message.into())
    }

    pub fn request(path: &Path, message: impl Into<String>) -> Error {
        Error::Request {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }

    pub fn ffmpeg(path: &Path, context: impl Into<String>, source: ffmpeg_next::Error) -> Error {
        Error::Ffmpeg {
            path: path.to_path_buf(),
            context: context.into(),
            source,
        }
    }

    pub fn io(path: &Path, source: std::io::Error) -> Error {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub fn bad_file(path: &Path, line: Option<usize>, message: impl Into<String>) -> Error {
        Error::BadFile {
            path: path.to_path_buf(),
            line,
            message: message.into(),
        }
    }

    pub fn corrupt(path: &Path, at: impl Into<String>, detail: impl Into<String>) -> Error {
        Error::Corrupt {
            path: path.to_path_buf(),
            at: at.into(),
            detail: detail.into(),
        }
    }
}
