//! The library's error type: every variant names the file (and the frame, line or item) it is
//! about and says what was expected, so a batch report or a terminal message is actionable
//! without a debugger. Each error has an [`ErrorKind`] (usage, input, output, encode, internal,
//! cancelled) that the command line maps to exit codes. Messages are complete on their own:
//! causes are part of the text, not a separate chain, so nothing is printed twice.

use std::path::{Path, PathBuf};

/// What kind of fault an error is.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
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
    /// OpenCV's tracker failed while it ran (`--fill track`, `vidprep track`): a failure of
    /// the tracking library at run time, not a bad request.
    Tracker,
    /// A fault in vidprep (a bug).
    Internal,
    /// The caller stopped the work.
    Cancelled,
}

/// Result with the library's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in vidprep. [`Error::kind`] sorts a variant into an
/// [`ErrorKind`]; the `Display` text is the whole message, cause included.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An input file (video, still image, cached frame table) does not exist.
    #[error("{}: file not found; check the path (a relative one is taken from the current folder, or from a manifest's folder)", path.display())]
    NotFound {
        /// The missing file, as given.
        path: PathBuf,
    },

    /// ffmpeg cannot open the file as a media container (not a video, truncated header,
    /// unknown format).
    #[error("{}: cannot open as a video ({source}); is it a video file that ffmpeg can read?", path.display())]
    Open {
        /// The file that would not open.
        path: PathBuf,
        /// ffmpeg's reason.
        source: FfmpegError,
    },

    /// An http(s) source that could not be opened or read: the server's answer (404, 403), a
    /// refused connection, a timeout, or data that is not a video.
    #[error("{url}: {message}")]
    Network {
        /// The URL, as given.
        url: String,
        /// What went wrong, in words.
        message: String,
    },

    /// The file opened as a container but holds no video stream (audio only, subtitles).
    #[error("{}: has no video stream", path.display())]
    NoVideo {
        /// The file without a video stream.
        path: PathBuf,
    },

    /// The file opened but its data is damaged or cannot be decoded.
    #[error("{}: corrupt or unreadable video {at}: {detail}", path.display())]
    Corrupt {
        /// The damaged video.
        path: PathBuf,
        /// Where the damage is, as words that follow "video" in the message: "at frame 12"
        /// (0-based frame index), "in its header", "in the audio stream", "(strict)".
        at: String,
        /// What is wrong there.
        detail: String,
    },

    /// A request that does not fit the input (span outside the video, empty span, decision
    /// point outside the clip, ...).
    #[error("{}: {message}", path.display())]
    Request {
        /// The input the request is about.
        path: PathBuf,
        /// What does not fit, in words.
        message: String,
    },

    /// A bad manifest, annotation or parameter file, with the line it is about.
    #[error("{}{}: {message}", path.display(), line.map(|l| format!(" line {l}")).unwrap_or_default())]
    BadFile {
        /// The bad file.
        path: PathBuf,
        /// The 1-based line the fault is on; `None` when it concerns the whole file (too
        /// large, empty, not a list).
        line: Option<usize>,
        /// What is wrong.
        message: String,
    },

    /// Invalid arguments that do not concern one file.
    #[error("{0}")]
    Usage(String),

    /// An ffmpeg call failed while working on a file.
    #[error("{}: {context}: {source}", path.display())]
    Ffmpeg {
        /// The file being worked on (mostly an input; stream copies also report their
        /// output this way).
        path: PathBuf,
        /// What vidprep was doing ("opening the audio decoder", "writing the header", ...).
        context: String,
        /// ffmpeg's error.
        source: FfmpegError,
    },

    /// Writing an output failed (an encoder, a muxer).
    #[error("{}: {context}: {source}", path.display())]
    Encode {
        /// The output being written.
        path: PathBuf,
        /// What vidprep was doing ("writing the header", "sending a frame", ...).
        context: String,
        /// ffmpeg's error.
        source: FfmpegError,
    },

    /// Reading an input failed (permissions, an I/O error): a video, a manifest, a still image,
    /// a list file. Its kind is [`ErrorKind::Input`].
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        /// The file or folder that could not be read.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },

    /// Writing an output failed (disk full, permissions, a folder in the way). Its kind is
    /// [`ErrorKind::Output`].
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder the call was about.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },

    /// Another process or a person acted on an output while this request wrote it (files
    /// appeared in a folder it replaces, an output was replaced by another writer, the run's
    /// lock was taken over): nothing half-made is left, and the message says what to do.
    /// Its kind is [`ErrorKind::Output`].
    #[error("{}: {what}", path.display())]
    Concurrent {
        /// The output or folder concerned.
        path: PathBuf,
        /// What happened, and what to do.
        what: String,
    },

    /// An input changed while vidprep read it (a recording still being written, a file
    /// replaced or edited meanwhile): nothing made from it is kept. Its kind is
    /// [`ErrorKind::Input`].
    #[error("{}: the file changed while vidprep read it ({what}); nothing made from it was kept: run again once it is complete (a recording still being written cannot be prepared yet)", path.display())]
    InputChanged {
        /// The input that changed.
        path: PathBuf,
        /// How it changed ("its size went from 1000 to 2000 bytes").
        what: String,
    },

    /// A bad annotation file (the message names the file and line or item).
    #[error(transparent)]
    Annotation(#[from] crate::annotations::AnnotationError),

    /// The decoder returned frames other than the frame table listed (a packet that does
    /// not decode, timestamps that lie). Jobs run again once with a table built by decoding.
    #[error("{}: the decoder disagrees with the frame table at frame {frame} (damaged packets or unreliable timestamps)", path.display())]
    TableMismatch {
        /// The video whose table is wrong.
        path: PathBuf,
        /// The 0-based frame index (in the table's display order) where they disagree.
        frame: usize,
    },

    /// A request or an input needs more memory than vidprep's budget for it: checked from
    /// sizes before anything that large is allocated, or an allocation that failed.
    #[error("{}: {what} needs {} but the limit is {}; {advice}", path.display(), amount_text(*needed, *pixels), amount_text(*limit, *pixels))]
    OverBudget {
        /// The input (or request) that asks for it.
        path: PathBuf,
        /// What would be allocated (`"200000 frames of 320x240 RGB"`).
        what: String,
        /// Bytes (or pixels, when `pixels`) needed.
        needed: u64,
        /// Whether `needed` and `limit` count pixels rather than bytes.
        pixels: bool,
        /// The limit those are compared with.
        limit: u64,
        /// What to do instead.
        advice: String,
    },

    /// The system refused an allocation this large (less memory is free, or a limit such as
    /// `ulimit -v` allows less): an error naming it instead of an abort.
    #[error("{}: {what} needs {} of memory and the system refused it (less is free, or allowed by a limit such as ulimit -v); {advice}", path.display(), bytes_text(*needed))]
    OutOfMemory {
        /// The input (or output) being worked on.
        path: PathBuf,
        /// What would be allocated (`"frame 3 as 8000x8000 RGB"`).
        what: String,
        /// Bytes asked for.
        needed: u64,
        /// What to do instead.
        advice: String,
    },

    /// OpenCV's tracker raised an error (the `tracking` feature): which tracker, what it was
    /// doing, and the frame and video when known. Its kind is [`ErrorKind::Tracker`].
    #[error("{}OpenCV's {tracker} tracker failed {doing}{}: {message}; try the other tracker (fill track-kcf or track-csrt) or fill this gap with cubic or linear", path.as_ref().map(|p| format!("{}: ", p.display())).unwrap_or_default(), frame.map(|f| format!(" on frame {f}")).unwrap_or_default())]
    Tracker {
        /// The video being tracked, when known.
        path: Option<PathBuf>,
        /// The tracker, as named in `fill` (`CSRT`, `KCF`).
        tracker: String,
        /// What it was doing ("to start on its box", "to follow its box").
        doing: String,
        /// The 0-based frame of the source it was given, when known.
        frame: Option<usize>,
        /// OpenCV's message.
        message: String,
    },

    /// A fault in vidprep itself (a bug), with what was going on.
    #[error("internal error: {0}")]
    Internal(String),

    /// Work stopped because the caller's progress reporter asked to stop.
    #[error("cancelled")]
    Cancelled,
}

/// A count of bytes or pixels for messages.
fn amount_text(n: u64, pixels: bool) -> String {
    if pixels {
        format!("{n} pixels")
    } else {
        bytes_text(n)
    }
}

/// A byte count for messages: `1.5 GiB (1610612736 bytes)`.
pub(crate) fn bytes_text(n: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} bytes")
    } else {
        format!("{v:.1} {} ({n} bytes)", UNITS[u])
    }
}

/// Refuses a path whose name is not UTF-8 (legal on Linux) before any work: vidprep records
/// every path it reads or writes in JSON sidecars, reports and `item.json`, and JSON holds
/// only Unicode. `role` says which path it is (`"source"`, `"--out-dir"`).
pub fn require_utf8(path: &Path, role: &str) -> Result<()> {
    if path.to_str().is_some() {
        return Ok(());
    }
    Err(Error::Usage(format!(
        "{role} {:?}: the name is not valid UTF-8; vidprep records every path in its JSON \
         sidecars and reports, which can only hold UTF-8: rename it (for example with convmv) \
         or give a UTF-8 symbolic link to it",
        path.as_os_str()
    )))
}

impl From<crate::vocab::InvalidEncodeSettings> for Error {
    fn from(e: crate::vocab::InvalidEncodeSettings) -> Error {
        Error::Usage(e.0)
    }
}

impl Error {
    /// What kind of fault this is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Usage(_) => ErrorKind::Usage,
            Error::NotFound { .. }
            | Error::Open { .. }
            | Error::Network { .. }
            | Error::NoVideo { .. }
            | Error::Corrupt { .. }
            | Error::Request { .. }
            | Error::BadFile { .. }
            | Error::Ffmpeg { .. }
            | Error::Annotation(_)
            | Error::Read { .. }
            | Error::OverBudget { .. }
            | Error::OutOfMemory { .. }
            | Error::InputChanged { .. }
            | Error::TableMismatch { .. } => ErrorKind::Input,
            Error::Encode { .. } => ErrorKind::Encode,
            Error::Tracker { .. } => ErrorKind::Tracker,
            Error::Io { .. } | Error::Concurrent { .. } => ErrorKind::Output,
            Error::Internal(_) => ErrorKind::Internal,
            Error::Cancelled => ErrorKind::Cancelled,
        }
    }

    /// An encoder or muxer failure while writing `path`.
    pub(crate) fn encode(
        path: &Path,
        context: impl Into<String>,
        source: impl Into<FfmpegError>,
    ) -> Error {
        let source = source.into();
        // The file system refused the write (a full disk, a quota, a read-only mount, an I/O
        // error): an output error, not the encoder's.
        if let Some(errno) = source.errno() {
            const FILE_SYSTEM: [i32; 6] = [28, 122, 30, 5, 13, 27]; // ENOSPC EDQUOT EROFS EIO EACCES EFBIG
            if FILE_SYSTEM.contains(&errno) {
                let os = std::io::Error::from_raw_os_error(errno);
                return Error::Io {
                    path: path.to_path_buf(),
                    source: std::io::Error::new(os.kind(), format!("{}: {os}", context.into())),
                };
            }
        }
        Error::Encode {
            path: path.to_path_buf(),
            context: context.into(),
            source,
        }
    }

    /// An output that does not hold what it should, found by reading it back (`context`
    /// says what was checked and what was found).
    pub(crate) fn bad_output(path: &Path, context: impl Into<String>) -> Error {
        Error::encode(path, context, FfmpegError::invalid_data())
    }

    /// A bug in vidprep, with what was going on.
    pub(crate) fn internal(message: impl Into<String>) -> Error {
        Error::Internal(message.into())
    }

    /// A request that does not fit the input `path`.
    pub(crate) fn request(path: &Path, message: impl Into<String>) -> Error {
        Error::Request {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }

    /// An ffmpeg call on `path` failed while doing `context`.
    pub(crate) fn ffmpeg(
        path: &Path,
        context: impl Into<String>,
        source: impl Into<FfmpegError>,
    ) -> Error {
        Error::Ffmpeg {
            path: path.to_path_buf(),
            context: context.into(),
            source: source.into(),
        }
    }

    /// Reading the input `path` failed.
    pub(crate) fn read(path: &Path, source: std::io::Error) -> Error {
        if source.kind() == std::io::ErrorKind::NotFound {
            return Error::NotFound {
                path: path.to_path_buf(),
            };
        }
        Error::Read {
            path: path.to_path_buf(),
            source,
        }
    }

    /// A file-system call on `path` failed.
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Error {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// A bad manifest, annotation or list file; `line` is 1-based, `None` for the whole
    /// file.
    pub(crate) fn bad_file(path: &Path, line: Option<usize>, message: impl Into<String>) -> Error {
        Error::BadFile {
            path: path.to_path_buf(),
            line,
            message: message.into(),
        }
    }

    /// This error with the video and frame it happened on, where a tracker error does not
    /// name them yet (the tracker sees pictures, not files).
    pub(crate) fn on_frame(self, video: Option<&Path>, at: usize) -> Error {
        match self {
            Error::Tracker {
                path,
                tracker,
                doing,
                frame,
                message,
            } => Error::Tracker {
                path: path.or_else(|| video.map(Path::to_path_buf)),
                tracker,
                doing,
                frame: frame.or(Some(at)),
                message,
            },
            other => other,
        }
    }

    /// Damage in the video `path`; `at` says where ("at frame 12"), `detail` what.
    pub(crate) fn corrupt(path: &Path, at: impl Into<String>, detail: impl Into<String>) -> Error {
        Error::Corrupt {
            path: path.to_path_buf(),
            at: at.into(),
            detail: detail.into(),
        }
    }
}
/// An error FFmpeg reported: its message and `AVERROR` code. Its own type, so that the
/// library's API does not name the FFmpeg binding's types (they change with its versions);
/// `media/` makes it from the binding's error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FfmpegError {
    code: i32,
    message: String,
}

/// FFmpeg's `AVERROR_INVALIDDATA` (`FFERRTAG('I','N','D','A')`).
const AVERROR_INVALIDDATA: i32 = -(i32::from_le_bytes(*b"INDA"));

/// The POSIX error numbers FFmpeg's own codes never reach (`AVERROR(e)` is `-e`; its tagged
/// codes are four-character tags, far below).
const MAX_ERRNO: i32 = 4095;

impl FfmpegError {
    /// FFmpeg's error code (a negative `AVERROR` value).
    pub fn code(&self) -> i32 {
        self.code
    }

    /// The error FFmpeg reported as `code`, which it describes as `message`.
    pub(crate) fn new(code: i32, message: impl Into<String>) -> FfmpegError {
        FfmpegError {
            code,
            message: message.into(),
        }
    }

    /// FFmpeg's `AVERROR(errno)`, described as the system describes `errno`.
    pub(crate) fn from_errno(errno: i32) -> FfmpegError {
        let text = std::io::Error::from_raw_os_error(errno).to_string();
        let message = text
            .strip_suffix(&format!(" (os error {errno})"))
            .unwrap_or(&text)
            .to_string();
        FfmpegError::new(-errno, message)
    }

    /// FFmpeg's `AVERROR_INVALIDDATA`.
    pub(crate) fn invalid_data() -> FfmpegError {
        FfmpegError::new(
            AVERROR_INVALIDDATA,
            "Invalid data found when processing input",
        )
    }

    /// The system error an `AVERROR(errno)` code carries, if it is one.
    pub(crate) fn errno(&self) -> Option<i32> {
        (-MAX_ERRNO..0).contains(&self.code).then_some(-self.code)
    }

    /// Whether this is FFmpeg's out-of-memory error (`AVERROR(ENOMEM)`).
    pub(crate) fn is_out_of_memory(&self) -> bool {
        self.errno() == Some(ENOMEM)
    }
}

/// POSIX `ENOMEM`, as Linux, the BSDs and macOS number it.
pub(crate) const ENOMEM: i32 = 12;

impl std::fmt::Display for FfmpegError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FfmpegError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_while_writing_is_an_output_error_naming_the_step() {
        for errno in [28, 122, 30] {
            let e = Error::encode(
                Path::new("o.mp4"),
                "finishing the MP4 file",
                FfmpegError::from_errno(errno),
            );
            assert_eq!(e.kind(), ErrorKind::Output, "{e}");
            assert!(
                e.to_string().starts_with("o.mp4: finishing the MP4 file: "),
                "{e}"
            );
        }
        let e = Error::encode(
            Path::new("o.mp4"),
            "encoding frame 3",
            FfmpegError::invalid_data(),
        );
        assert_eq!(e.kind(), ErrorKind::Encode);
    }

    #[test]
    fn a_tracker_failure_is_a_runtime_failure_naming_the_tracker_and_frame() {
        let e = Error::Tracker {
            path: None,
            tracker: "KCF".into(),
            doing: "to follow its box".into(),
            frame: None,
            message: "OpenCV(4.6.0) assertion failed".into(),
        };
        assert_eq!(e.kind(), ErrorKind::Tracker);
        let e = e.on_frame(Some(Path::new("v.mp4")), 12);
        let text = e.to_string();
        assert!(
            text.starts_with("v.mp4: OpenCV's KCF tracker failed to follow its box on frame 12: "),
            "{text}"
        );
        assert!(text.contains("assertion failed"), "{text}");
        // A frame already named is kept; other errors pass unchanged.
        let e = e.on_frame(Some(Path::new("w.mp4")), 40).to_string();
        assert!(e.starts_with("v.mp4: ") && e.contains("frame 12"), "{e}");
        let other = Error::Usage("x".into()).on_frame(None, 3);
        assert_eq!(other.to_string(), "x");
        assert_eq!(
            serde_json::to_string(&ErrorKind::Tracker).unwrap(),
            "\"tracker\""
        );
    }
}
