//! The library's error type: every variant names the file (and the frame, line or item) it is
//! about and says what was expected, so a batch report or a terminal message is actionable
//! without a debugger.

use std::path::{Path, PathBuf};

/// Result with the library's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}: file not found", path.display())]
    NotFound { path: PathBuf },

    #[error("{}: cannot open as a video ({source}); is it a video file that ffmpeg can read?", path.display())]
    Open {
        path: PathBuf,
        #[source]
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
        #[source]
        source: ffmpeg_next::Error,
    },

    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
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
