//! Sources of every shape: what a `source` path names and how FFmpeg opens it.
//!
//! - **A video file**: opened by its absolute path (so no part of a local name is ever taken
//!   for an FFmpeg protocol), reading local files only.
//! - **An image sequence**: a MOT or GOT-10k sequence folder, any folder of images, or a printf
//!   pattern such as `dir/%06d.jpg`, read with FFmpeg's `image2` demuxer; frame `i` is the
//!   `i`-th image (see [`crate::media::images`]).
//! - **An http(s) URL**: opened through FFmpeg's network protocols (only `http`, `https`, `tls`
//!   and `tcp` are allowed), seeking with range requests, every socket operation bounded by a
//!   timeout ([`NetworkSettings::timeout`](crate::call::NetworkSettings::timeout)), checked against the validators of its first open, or
//!   downloaded whole when its server ignores ranges ([`crate::call::net::remote`]). Other
//!   schemes are refused.
//!
//! See `docs/sources.md`.

use std::ffi::CString;
use std::path::{Path, PathBuf};

use ffmpeg_next as ffmpeg;
use serde::Serialize;

use crate::call::context::CallContext;
use crate::call::net::remote::Remote;
use crate::call::settings::NetworkSettings;
use crate::error::{Error, Result};
use crate::media::ffi::NetworkVerdict;
pub use crate::media::images::ImageSequence;
use crate::media::images::{folder_of, mot_parent_of, printf_pattern, read_seqinfo};
use crate::media::recipe::{file_recipe, OpenRecipe};
use crate::vocab::FrameRate;

/// URL schemes vidprep opens.
pub const URL_SCHEMES: [&str; 2] = ["http", "https"];

/// FFmpeg protocols a URL source may use (https needs tls and tcp under it).
const NETWORK_PROTOCOLS: &str = "http,https,tls,tcp";

/// A source as a request names it: a path (video file, image folder, printf pattern) or an
/// http(s) URL, with the frame rate the request gives it (`source_fps`, for image sequences
/// that have none of their own).
///
/// A URL source carries what vidprep learnt when it was first opened (its validators, the
/// download of a file whose server ignores ranges: `crate::call::net::remote`), and every
/// source what its first open saw of its container header (`Learnt`), shared by its clones;
/// two sources are equal when they name the same thing at the same rate. (The inputs its
/// readers share are their stream's: `crate::media::pool`.)
#[derive(Clone, Debug)]
pub struct Source {
    path: PathBuf,
    fps: Option<FrameRate>,
    remote: Option<std::sync::Arc<Remote>>,
    learnt: std::sync::Arc<Learnt>,
}

/// What opening a source taught, so that it is not opened again to learn it (issue 25): what
/// the first open's container header said ([`Header`]).
#[derive(Debug, Default)]
pub(crate) struct Learnt {
    header: std::sync::OnceLock<Header>,
}

/// What a source's container header says beyond its video stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    /// The demuxer's name (`mov,mp4,m4a,3gp,3g2,mj2`, ...).
    pub format_name: String,
    /// The sample rate and channels of the best audio stream (`None`: no usable one).
    pub audio: Option<(u32, u16)>,
    /// The codec of every audio stream, in stream order.
    pub audio_codecs: Vec<ffmpeg_next::codec::Id>,
}

impl Header {
    /// FFmpeg's name for the first audio stream's codec that is not AAC (what an MP4 for a
    /// video model cannot carry by copying), if any.
    pub(crate) fn audio_other_than_aac(&self) -> Option<&'static str> {
        self.audio_codecs
            .iter()
            .find(|&&id| id != ffmpeg_next::codec::Id::AAC)
            .map(|id| id.name())
    }
}

impl PartialEq for Source {
    fn eq(&self, other: &Source) -> bool {
        self.path == other.path && self.fps == other.fps
    }
}

impl Eq for Source {}

impl std::hash::Hash for Source {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.path.hash(state);
        self.fps.hash(state);
    }
}

impl Source {
    /// `path` with the rate given for it, if any.
    pub fn new(path: impl Into<PathBuf>, fps: Option<FrameRate>) -> Source {
        let path = path.into();
        let remote = is_url(&path).then(Default::default);
        Source {
            path,
            fps,
            remote,
            learnt: Default::default(),
        }
    }

    /// What the first open of this source read in its container header; `None` before any
    /// open (or for an image sequence).
    pub(crate) fn header(&self) -> Option<&Header> {
        self.learnt.header.get()
    }

    /// Records what an open read in the header (only the first open's is kept).
    pub(crate) fn learn_header(&self, header: impl FnOnce() -> Header) {
        if self.learnt.header.get().is_none() {
            let _ = self.learnt.header.set(header());
        }
    }

    /// For a URL: what its first open learnt (shared by the clones of this source).
    pub(crate) fn remote(&self) -> Option<&Remote> {
        self.remote.as_deref()
    }

    /// For a URL that was opened: its validators (ETag, Last-Modified, size) as first seen.
    pub(crate) fn seen_validators(&self) -> Option<crate::call::net::remote::Validators> {
        self.remote.as_ref()?.seen()
    }

    /// For a URL: fails when the resource is no longer the one its first open saw (its ETag,
    /// Last-Modified or size changed), so outputs never mix two versions. Other sources: Ok.
    pub fn check_unchanged(&self) -> Result<()> {
        self.check_unchanged_in(&CallContext::new())
    }

    /// [`Source::check_unchanged`] with the call's settings (the network timeout) and token.
    pub(crate) fn check_unchanged_in(&self, ctx: &CallContext) -> Result<()> {
        match &self.remote {
            Some(r) => r.check_unchanged(&self.path, ctx),
            None => Ok(()),
        }
    }

    /// The source as given (it names the source in messages and sidecars).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The frame rate the request gave.
    pub fn fps(&self) -> Option<FrameRate> {
        self.fps
    }

    /// What kind of source this is (without opening it).
    pub fn kind(&self) -> Result<SourceKind> {
        classify(&self.path)
    }
}

impl From<&Path> for Source {
    fn from(p: &Path) -> Source {
        Source::new(p, None)
    }
}

impl From<&PathBuf> for Source {
    fn from(p: &PathBuf) -> Source {
        Source::new(p.clone(), None)
    }
}

impl From<PathBuf> for Source {
    fn from(p: PathBuf) -> Source {
        Source::new(p, None)
    }
}

impl From<&str> for Source {
    fn from(p: &str) -> Source {
        Source::new(p, None)
    }
}

impl From<&Source> for Source {
    fn from(s: &Source) -> Source {
        s.clone()
    }
}

/// The kinds of source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// A local media file (or a path that does not exist: opening it says so).
    File,
    /// A folder of images or a printf pattern.
    Images,
    /// An http:// or https:// URL.
    Url,
}

/// The URL scheme `text` starts with (`http` in `http://...`, `concat` in `concat:a|b`),
/// lower-cased, if it looks like one (two or more scheme characters, then `:`).
fn url_scheme(text: &str) -> Option<String> {
    let (scheme, _) = text.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (scheme.len() >= 2
        && first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then(|| scheme.to_ascii_lowercase())
}

/// True when `path` starts like a URL (`scheme:`), supported or not.
pub fn has_scheme(path: &Path) -> bool {
    path.to_str().and_then(url_scheme).is_some()
}

/// True when `path` is an http:// or https:// URL.
pub fn is_url(path: &Path) -> bool {
    path.to_str().is_some_and(|t| {
        url_scheme(t).is_some_and(|s| URL_SCHEMES.contains(&s.as_str()))
            && t[t.find(':').unwrap_or(0)..].starts_with("://")
    })
}

/// What `path` names, without opening it: an http(s) URL, a folder or printf pattern of
/// images, or a file. Any other `scheme:` prefix on a path that does not exist locally is an
/// error naming the supported schemes.
pub fn classify(path: &Path) -> Result<SourceKind> {
    let local = std::fs::metadata(path);
    if let (Err(_), Some(text)) = (&local, path.to_str()) {
        if let Some(scheme) = url_scheme(text) {
            if is_url(path) {
                return Ok(SourceKind::Url);
            }
            return Err(Error::request(
                path,
                format!(
                    "`{scheme}:` is not a supported source; vidprep reads local video files, \
                     image folders and patterns, and {} URLs",
                    URL_SCHEMES
                        .iter()
                        .map(|s| format!("{s}://"))
                        .collect::<Vec<_>>()
                        .join(" or ")
                ),
            ));
        }
    }
    match local {
        Ok(m) if m.is_dir() => Ok(SourceKind::Images),
        Ok(_) => Ok(SourceKind::File),
        Err(_) if printf_pattern(path).is_some() => Ok(SourceKind::Images),
        Err(_) => Ok(SourceKind::File),
    }
}

/// True when `path` names an image sequence (a folder or a printf pattern).
pub fn is_image_sequence(path: &Path) -> bool {
    matches!(classify(path), Ok(SourceKind::Images))
}

/// A short name for outputs derived from a source: a file's stem, a folder's name (a MOT
/// `img1/` folder: its sequence's), a pattern's folder, a URL's last path segment (without its
/// query or extension, else its host).
pub fn display_name(path: &Path) -> String {
    if is_url(path) {
        let text = path.to_string_lossy();
        let rest = text.split_once("://").map_or(&*text, |(_, r)| r);
        let rest = rest.split(['?', '#']).next().unwrap_or(rest);
        let (host, tail) = rest.split_once('/').unwrap_or((rest, ""));
        let segment = tail.trim_end_matches('/').rsplit('/').next().unwrap_or("");
        let segment = Path::new(segment)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = if segment.is_empty() { host } else { &segment };
        return name
            .chars()
            .map(|c| {
                if c.is_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
    }
    let named = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "source".into())
    };
    if path.is_dir() {
        let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        if mot_parent_of(&abs).is_some() {
            if let Some(seq) = abs.parent() {
                return named(seq);
            }
        }
        return named(&abs);
    }
    if printf_pattern(path).is_some() && !path.exists() {
        let parent = folder_of(path);
        let abs = std::path::absolute(&parent).unwrap_or(parent);
        return named(&abs);
    }
    path.file_stem()
        .or(path.file_name())
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "source".into())
}

/// The local files and folders a source reads (for output checks and `--resume`
/// fingerprints): a file; a sequence's image folder (and its `seqinfo.ini`); nothing for a URL.
pub fn input_paths(path: &Path) -> Vec<PathBuf> {
    match classify(path) {
        Ok(SourceKind::Url) => Vec::new(),
        Ok(SourceKind::Images) if path.is_dir() => {
            let mut out = vec![path.to_path_buf()];
            if let Some(info) = mot_parent_of(path) {
                out.push(info);
            } else if let Ok(info) = read_seqinfo(&path.join("seqinfo.ini")) {
                out.push(path.join(info.im_dir.as_deref().unwrap_or("img1")));
            }
            out
        }
        Ok(SourceKind::Images) => vec![folder_of(path)],
        _ => vec![path.to_path_buf()],
    }
}

/// Checks a source before any work starts (manifest validation): a file must be a readable
/// regular file; an image sequence must resolve (images, numbering, a rate); a URL must have
/// a supported scheme and no `source_fps` (it is not contacted here).
pub fn check_source(path: &Path, fps: Option<FrameRate>) -> Result<()> {
    match classify(path)? {
        SourceKind::File => {
            check_input_file(path)?;
            Ok(())
        }
        SourceKind::Url => refuse_rate(path, fps, "a URL"),
        SourceKind::Images => ImageSequence::resolve(path, fps).map(|_| ()),
    }
}

fn refuse_rate(path: &Path, fps: Option<FrameRate>, what: &str) -> Result<()> {
    match fps {
        Some(r) => Err(Error::request(
            path,
            format!(
                "is {what} with its own frame timing; `source_fps` ({r}) is only for image sequences (folders and patterns): drop it"
            ),
        )),
        None => Ok(()),
    }
}

/// The recipe for an http(s) URL: network protocols only, every socket operation bounded by
/// the call's network timeout.
pub(crate) fn url_recipe(
    path: &Path,
    settings: &crate::call::settings::Settings,
) -> Result<OpenRecipe> {
    let text = path.to_str().unwrap_or_default();
    let scheme = text.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    if let Some(scheme) = scheme.filter(|s| s == "http" || s == "https") {
        if !crate::media::ffi::input_protocols()
            .iter()
            .any(|p| *p == scheme)
        {
            return Err(Error::Network {
                url: text.to_string(),
                message: format!(
                    "this build's FFmpeg ({}) has no {scheme} protocol{} (`vidprep probe --build` \
                     lists its protocols): use an FFmpeg built with TLS (Debian's is), or \
                     download the file first and give its path",
                    crate::media::ffi::ffmpeg_build(),
                    if scheme == "https" {
                        " (it was built without TLS)"
                    } else {
                        ""
                    },
                ),
            });
        }
    }
    let micros = settings.network.timeout.as_micros().to_string();
    Ok(OpenRecipe {
        url: CString::new(text)
            .map_err(|_| Error::request(path, "has a NUL byte, which FFmpeg cannot open"))?,
        format: None,
        options: vec![
            ("protocol_whitelist".into(), NETWORK_PROTOCOLS.into()),
            // The generic I/O timeout, and http's `timeout`, which it hands to tcp (connect,
            // reads and writes of the socket).
            ("rw_timeout".into(), micros.clone()),
            ("timeout".into(), micros),
            (
                "user_agent".into(),
                format!("vidprep/{}", env!("CARGO_PKG_VERSION")),
            ),
            // The bytes as they are: FFmpeg's http unpacks a gzip body without bound (a 1 MB
            // body can unpack to 1 GiB), and the first contact refuses a server that encodes
            // anyway (`net::remote`).
            ("headers".into(), "Accept-Encoding: identity\r\n".into()),
        ]
        .into_iter()
        // https: the server's certificate verified, against the system's authorities.
        .chain(
            text.get(..8)
                .is_some_and(|s| s.eq_ignore_ascii_case("https://"))
                .then(|| crate::call::net::trust::Trust::of(settings).ffmpeg_options())
                .unwrap_or_default(),
        )
        .collect(),
    })
}

/// What an opened source is: the recipe, and for an image sequence its resolution.
pub(crate) struct Resolved {
    pub recipe: OpenRecipe,
    pub kind: SourceKind,
    pub sequence: Option<std::sync::Arc<ImageSequence>>,
    /// A URL read from its downloaded copy (its server ignores range requests).
    pub downloaded: bool,
}

/// Resolves `source` into what FFmpeg opens (a URL with the call's settings).
pub(crate) fn resolve(source: &Source, ctx: &CallContext) -> Result<Resolved> {
    let path = source.path();
    match classify(path)? {
        SourceKind::File => {
            check_input_file(path)?;
            refuse_rate(path, source.fps(), "a media file")?;
            Ok(Resolved {
                recipe: file_recipe(path)?,
                kind: SourceKind::File,
                sequence: None,
                downloaded: false,
            })
        }
        SourceKind::Url => {
            refuse_rate(path, source.fps(), "a URL")?;
            let copy = match source.remote() {
                Some(r) => r.open(path, ctx)?,
                None => None,
            };
            Ok(Resolved {
                recipe: match &copy {
                    // A server without range requests: its file, downloaded whole.
                    Some(local) => file_recipe(local)?,
                    None => url_recipe(path, &ctx.settings)?,
                },
                kind: SourceKind::Url,
                sequence: None,
                downloaded: copy.is_some(),
            })
        }
        SourceKind::Images => {
            let seq = ImageSequence::resolve(path, source.fps())?;
            Ok(Resolved {
                recipe: seq.open_recipe()?,
                kind: SourceKind::Images,
                sequence: Some(std::sync::Arc::new(seq)),
                downloaded: false,
            })
        }
    }
}

/// The error for `source`, a URL, that FFmpeg could not open or read: that the file changed
/// since vidprep first saw it when it did, else [`network_error`]'s reading of `e` (and of
/// `verdict`, the input's interrupt callback's).
pub(crate) fn url_error(
    source: &Source,
    e: ffmpeg::Error,
    verdict: Option<NetworkVerdict>,
    ctx: &CallContext,
) -> Error {
    if let Some(changed) = source
        .remote()
        .and_then(|r| r.change_behind_failure(source.path(), ctx))
    {
        return changed;
    }
    network_error(source.path(), e, verdict, ctx)
}

/// What a transfer past its deadline is told.
fn deadline_text(n: &NetworkSettings) -> String {
    format!(
        "the transfer did not finish within the {} s deadline (a server sending too slowly?); \
         VIDPREP_NETWORK_DEADLINE sets it",
        n.deadline.as_secs_f64()
    )
}

/// The error for a URL that FFmpeg could not open or read: the server's answer, a refused
/// connection, a timeout, or data that is not a video. `verdict`: why the input's interrupt
/// callback gave up, if it did.
pub(crate) fn network_error(
    path: &Path,
    e: ffmpeg::Error,
    verdict: Option<NetworkVerdict>,
    ctx: &CallContext,
) -> Error {
    let n = &ctx.settings.network;
    let timeout = n.timeout.as_secs_f64();
    // A wait that gave up for the minimum rate or the deadline is said as such, whatever
    // FFmpeg made of the failed read (a demuxer may report it as bad data).
    let verdict = verdict.filter(|_| !ctx.cancelled());
    let detail = match verdict {
        Some(NetworkVerdict::TooSlow { bytes, waited }) => {
            crate::call::net::remote::too_slow_text(bytes, waited, n)
        }
        Some(NetworkVerdict::Deadline) => deadline_text(n),
        None => match e {
            ffmpeg::Error::Exit if !ctx.cancelled() => deadline_text(n),
            ffmpeg::Error::HttpNotFound => "the server answered 404 Not Found".to_string(),
            ffmpeg::Error::HttpBadRequest
            | ffmpeg::Error::HttpUnauthorized
            | ffmpeg::Error::HttpForbidden
            | ffmpeg::Error::HttpOther4xx
            | ffmpeg::Error::HttpServerError => format!("the server refused the request ({e})"),
            ffmpeg::Error::Other { errno } => {
                match std::io::Error::from_raw_os_error(errno).kind() {
                std::io::ErrorKind::ConnectionRefused => {
                    "the connection was refused (is the server running, is the port right?)"
                        .to_string()
                }
                std::io::ErrorKind::TimedOut => format!(
                    "the server did not answer within {timeout} s (the network timeout; VIDPREP_NETWORK_TIMEOUT sets it)"
                ),
                _ => format!("cannot read it over the network ({e})"),
            }
            }
            ffmpeg::Error::Exit => "interrupted".to_string(),
            ffmpeg::Error::InvalidData => {
                "what the server sent is not a video FFmpeg can read".to_string()
            }
            other => format!("cannot read it over the network ({other})"),
        },
    };
    Error::Network {
        url: path.display().to_string(),
        message: detail,
    }
}

/// Checks that `path` names a regular file we can read, before anything opens it: a folder,
/// a FIFO or a device would block or mislead the demuxer.
pub fn check_input_file(path: &Path) -> Result<()> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Error::NotFound {
            path: path.to_path_buf(),
        }),
        Err(e) => Err(Error::read(path, e)),
        Ok(m) if m.is_dir() => Err(Error::request(
            path,
            "is a directory, expected a video file",
        )),
        Ok(m) if !m.is_file() => Err(Error::request(
            path,
            "is not a regular file (a FIFO, socket or device); expected a video file",
        )),
        Ok(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes_and_kinds() {
        assert!(is_url(Path::new("http://127.0.0.1:8000/x.mp4")));
        assert!(is_url(Path::new("HTTPS://example.org/a/b.mp4?x=1")));
        assert!(!is_url(Path::new("ftp://example.org/x.mp4")));
        assert!(!is_url(Path::new("http:x.mp4")));
        for bad in [
            "ftp://h/x.mp4",
            "rtmp://h/live",
            "file:x.mp4",
            "concat:a.mp4|b.mp4",
            "subfile:,,start,0,end,0,:x.mp4",
        ] {
            let e = classify(Path::new(bad)).unwrap_err().to_string();
            assert!(
                e.contains("not a supported source") && e.contains("https://"),
                "{bad}: {e}"
            );
        }
        assert_eq!(
            classify(Path::new("missing.mp4")).unwrap(),
            SourceKind::File
        );
        assert_eq!(
            classify(Path::new("dir/%06d.jpg")).unwrap(),
            SourceKind::Images
        );
        assert_eq!(
            display_name(Path::new("https://h.org/v/clip.mp4?sig=1")),
            "clip"
        );
        assert_eq!(display_name(Path::new("http://h.org/")), "h.org");
        assert_eq!(display_name(Path::new("a/b/%06d.png")), "b");
    }

    /// The paths a source's reads touch (a MOT sequence: its folder and its image folder; a
    /// pattern: its folder), as the images module resolves them.
    #[test]
    fn input_paths_of_image_sequences_are_their_folders() {
        use crate::media::images::tests::{mot_sequence, touch};
        let d = tempfile::tempdir().unwrap();
        let seq = mot_sequence(d.path());
        assert_eq!(input_paths(&seq), vec![seq.clone(), seq.join("img1")]);
        touch(d.path(), &["000001.png", "000002.png"]);
        let p = d.path().join("%06d.png");
        assert_eq!(input_paths(&p), vec![d.path().to_path_buf()]);
    }
}
