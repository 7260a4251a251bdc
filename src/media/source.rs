//! Sources of every shape: what a `source` path names and how FFmpeg opens it.
//!
//! - **A video file**: opened by its absolute path (so no part of a local name is ever taken
//!   for an FFmpeg protocol), reading local files only.
//! - **An image sequence**: a MOT sequence folder (or its `img1/`, rate from `seqinfo.ini`
//!   `frameRate`), a GOT-10k sequence folder (rate from `meta_info.ini` `anno_fps`, 10 Hz when it
//!   says none), any folder of images, or a printf pattern such as `dir/%06d.jpg`. Frame `i` is
//!   the `i`-th image in natural order (MOT and GOT-10k files are numbered from 1, so frame 0 is
//!   `000001.jpg`). A generic folder or a pattern has no rate of its own: the request gives it
//!   (`source_fps`). The folder is listed here and opened with FFmpeg's `image2` demuxer: a
//!   contiguous numbered run (one prefix, one suffix, one padding) as a printf pattern with its
//!   `start_number`; names that are not numbered but sort the same way alphabetically and
//!   naturally as a glob; anything else (gaps, mixed padding, mixed image types) is refused
//!   with the reason, since frame `i` would not be file `i`.
//! - **An http(s) URL**: opened through FFmpeg's network protocols (only `http`, `https`, `tls`
//!   and `tcp` are allowed), seeking with range requests, every socket operation bounded by a
//!   timeout ([`network_timeout`]). Other schemes are refused.
//!
//! See `docs/sources.md`.

use std::cmp::Ordering;
use std::ffi::CString;
use std::path::{Path, PathBuf};

use ffmpeg_next as ffmpeg;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::media::input::Ratio;
use crate::time::{decimal_text, Time};

/// File extensions read as images (any case).
pub const IMAGE_EXTENSIONS: [&str; 7] = ["jpg", "jpeg", "png", "bmp", "tif", "tiff", "webp"];

/// URL schemes vidprep opens.
pub const URL_SCHEMES: [&str; 2] = ["http", "https"];

/// FFmpeg protocols a URL source may use (https needs tls and tcp under it).
const NETWORK_PROTOCOLS: &str = "http,https,tls,tcp";

/// The network timeout when `VIDPREP_NETWORK_TIMEOUT` does not set one, in seconds.
pub const DEFAULT_NETWORK_TIMEOUT_S: u64 = 30;

/// How long a network operation (connect, a read, a write) may wait before the source fails:
/// `VIDPREP_NETWORK_TIMEOUT` seconds (a positive number), 30 s by default.
pub fn network_timeout() -> std::time::Duration {
    let secs = std::env::var("VIDPREP_NETWORK_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0 && *s <= 86_400.0)
        .unwrap_or(DEFAULT_NETWORK_TIMEOUT_S as f64);
    std::time::Duration::from_secs_f64(secs)
}

/// An exact, positive frame rate: `25`, `29.97`, `30000/1001` (also `25Hz`, `25fps`), between
/// 0.1 and 1000 frames per second. In JSON it is a number or that text; it is written as text
/// (`"25"`, `"29.97"`, `"30000/1001"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FrameRate {
    num: i32,
    den: i32,
}

impl FrameRate {
    /// `num / den` frames per second, checked.
    pub fn new(num: i64, den: i64) -> std::result::Result<FrameRate, String> {
        if den == 0 {
            return Err("a frame rate with a zero denominator".into());
        }
        Self::from_time(Time::new(num, den), &format!("{num}/{den}"))
    }

    fn from_time(t: Time, text: &str) -> std::result::Result<FrameRate, String> {
        if t < Time::new(1, 10) || t > Time::from_secs(1000) {
            return Err(format!(
                "frame rate {text} is outside 0.1..1000 frames per second"
            ));
        }
        match (i32::try_from(t.numer()), i32::try_from(t.denom())) {
            (Ok(num), Ok(den)) => Ok(FrameRate { num, den }),
            _ => Err(format!(
                "frame rate {text} is too fine a fraction (its numerator and denominator must fit 32 bits)"
            )),
        }
    }

    /// The rate as FFmpeg keeps it (`num/den`, reduced).
    pub fn as_ratio(self) -> Ratio {
        Ratio::new(self.num, self.den)
    }

    /// Frames per second, exactly.
    pub fn as_time(self) -> Time {
        Time::new(self.num as i64, self.den as i64)
    }
}

impl std::fmt::Display for FrameRate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&decimal_text(self.as_time()))
    }
}

impl std::str::FromStr for FrameRate {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<FrameRate, String> {
        let text = s.trim();
        let lower = text.to_ascii_lowercase();
        let body = lower
            .strip_suffix("hz")
            .or_else(|| lower.strip_suffix("fps"))
            .unwrap_or(&lower)
            .trim();
        let t: Time = body.parse().map_err(|_| {
            format!("expected a frame rate like 25, 29.97 or 30000/1001, found {text:?}")
        })?;
        Self::from_time(t, text)
    }
}

impl Serialize for FrameRate {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for FrameRate {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<FrameRate, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = FrameRate;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(
                    f,
                    "a frame rate: a number like 25 or 29.97, or text like \"30000/1001\""
                )
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<FrameRate, E> {
                v.parse().map_err(E::custom)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<FrameRate, E> {
                v.to_string().parse().map_err(E::custom)
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<FrameRate, E> {
                v.to_string().parse().map_err(E::custom)
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> std::result::Result<FrameRate, E> {
                // The shortest text that reads back as this number: 29.97, not 29.969999...
                if !v.is_finite() {
                    return Err(E::custom(format!("frame rate {v} is not a number")));
                }
                format!("{v}").parse().map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// A source as a request names it: a path (video file, image folder, printf pattern) or an
/// http(s) URL, with the frame rate the request gives it (`source_fps`, for image sequences
/// that have none of their own).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Source {
    path: PathBuf,
    fps: Option<FrameRate>,
}

impl Source {
    /// `path` with the rate given for it, if any.
    pub fn new(path: impl Into<PathBuf>, fps: Option<FrameRate>) -> Source {
        Source {
            path: path.into(),
            fps,
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
            crate::media::input::check_input_file(path)?;
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

/// The folder a path lies in (`.` for a bare name).
fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A printf file pattern: `prefix %0Nd suffix` (`%d` unpadded; `%Nd` pads with zeros as
/// FFmpeg does; `%%` is a literal `%`).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Printf {
    prefix: String,
    width: usize,
    suffix: String,
}

/// The printf pattern in `path`'s file name, if it has exactly one `%d` conversion.
fn printf_pattern(path: &Path) -> Option<Printf> {
    let name = path.file_name()?.to_str()?;
    let mut prefix = String::new();
    let mut suffix = String::new();
    let mut width = None;
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        let out = if width.is_some() {
            &mut suffix
        } else {
            &mut prefix
        };
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            out.push('%');
            continue;
        }
        let mut digits = String::new();
        while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
            digits.push(*d);
            chars.next();
        }
        if chars.next() != Some('d') || width.is_some() {
            return None;
        }
        width = Some(digits.parse::<usize>().unwrap_or(0).min(32));
    }
    Some(Printf {
        prefix,
        width: width?,
        suffix,
    })
}

/// Where a sequence came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// A MOT sequence (`seqinfo.ini`, images in `img1/`, numbered from 1).
    Mot,
    /// A GOT-10k sequence (`meta_info.ini`/`groundtruth.txt`, images numbered from 1).
    Got10k,
    /// Any folder of images.
    Folder,
    /// A printf pattern (`dir/%06d.jpg`).
    Pattern,
}

/// How frame `i` maps to a file name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Naming {
    /// `prefix + number + suffix`, numbers `first, first+1, ...` zero-padded to `width` digits
    /// (`0`: not padded).
    Numbered {
        /// Text before the number.
        prefix: String,
        /// Zero-padded width of the number (0: unpadded).
        width: usize,
        /// Text after the number (with the extension).
        suffix: String,
        /// The number of frame 0's file.
        first: u64,
    },
    /// The files in this order (not numbered; natural and byte order agree).
    Sorted(Vec<String>),
}

/// A resolved image sequence: its folder, how frame `i` maps to a file, its rate and where
/// the rate came from.
#[derive(Clone, Debug, PartialEq)]
pub struct ImageSequence {
    /// The folder holding the images (as given or derived from what was given).
    pub folder: PathBuf,
    /// Which layout the source was recognised as.
    pub layout: Layout,
    /// The mapping from frame index to file name.
    pub naming: Naming,
    /// The number of images (frames).
    pub count: usize,
    /// Frames per second.
    pub rate: FrameRate,
    /// Where the rate comes from, in words (`seqinfo.ini frameRate`, `source_fps`, ...).
    pub rate_from: String,
}

/// The image sequence facts a sidecar and `probe` record: with them, frame `i` names one file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ImagesRecord {
    /// The folder holding the images.
    pub folder: String,
    /// `mot`, `got10k`, `folder` or `pattern`.
    pub layout: Layout,
    /// `numbered` (frame `i` is `pattern` with number `first_number + i`) or `sorted` (frame
    /// `i` is `names[i]`).
    pub naming: &'static str,
    /// The printf pattern of the file names (numbered naming).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// The number in the file name of frame 0 (numbered naming).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_number: Option<u64>,
    /// The number of images.
    pub files: usize,
    /// The file of frame 0.
    pub first_file: String,
    /// The file of the last frame.
    pub last_file: String,
    /// Frames per second (exact text).
    pub rate: FrameRate,
    /// Where the rate comes from.
    pub rate_from: String,
    /// Every file in frame order (sorted naming only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
}

impl ImagesRecord {
    /// The layout in words (`MOT images`, `GOT-10k images`, `images`).
    pub fn layout_text(&self) -> &'static str {
        match self.layout {
            Layout::Mot => "MOT images",
            Layout::Got10k => "GOT-10k images",
            Layout::Folder | Layout::Pattern => "images",
        }
    }
}

impl ImageSequence {
    /// Resolves a folder or pattern with the rate the request gave (`fps`): lists and checks
    /// the images, finds the rate (and refuses a given rate that contradicts the sequence's
    /// own).
    pub fn resolve(path: &Path, fps: Option<FrameRate>) -> Result<ImageSequence> {
        if path.is_dir() {
            let seqinfo = path.join("seqinfo.ini");
            if seqinfo.is_file() {
                let info = read_seqinfo(&seqinfo)?;
                let folder = path.join(info.im_dir.as_deref().unwrap_or("img1"));
                if !folder.is_dir() {
                    return Err(Error::request(
                        path,
                        format!(
                            "is a MOT sequence (seqinfo.ini) but its image folder {} is missing",
                            folder.display()
                        ),
                    ));
                }
                return mot_sequence(folder, &seqinfo, &info, fps);
            }
            if let Some(seqinfo) = mot_parent_of(path) {
                let info = read_seqinfo(&seqinfo)?;
                return mot_sequence(path.to_path_buf(), &seqinfo, &info, fps);
            }
            let meta = path.join("meta_info.ini");
            if meta.is_file() || path.join("groundtruth.txt").is_file() {
                return got10k_sequence(path, &meta, fps);
            }
            let names = list_images(path, None)?;
            let naming = naming_of(path, &names)?;
            let (rate, rate_from) = settle_rate(path, None, fps, None, &names)?;
            return Ok(ImageSequence {
                folder: path.to_path_buf(),
                layout: Layout::Folder,
                count: names.len(),
                naming,
                rate,
                rate_from,
            });
        }
        let Some(printf) = printf_pattern(path) else {
            return Err(Error::request(
                path,
                "is neither a folder of images nor a pattern like DIR/%06d.jpg",
            ));
        };
        pattern_sequence(path, &printf, fps)
    }

    /// The file name of frame `index` (in [`ImageSequence::folder`]).
    pub fn file_name(&self, index: usize) -> String {
        match &self.naming {
            Naming::Numbered {
                prefix,
                width,
                suffix,
                first,
            } => format!(
                "{prefix}{:0width$}{suffix}",
                first + index as u64,
                width = *width
            ),
            Naming::Sorted(names) => names.get(index).cloned().unwrap_or_default(),
        }
    }

    /// The printf pattern of the names (`%06d.jpg`; `%` in the prefix or suffix as `%%`), for
    /// numbered naming.
    pub fn pattern(&self) -> Option<String> {
        match &self.naming {
            Naming::Numbered {
                prefix,
                width,
                suffix,
                ..
            } => Some(format!(
                "{}{}{}",
                prefix.replace('%', "%%"),
                conversion(*width),
                suffix.replace('%', "%%")
            )),
            Naming::Sorted(_) => None,
        }
    }

    /// The facts a sidecar records.
    pub fn record(&self) -> ImagesRecord {
        let (naming, first_number, names) = match &self.naming {
            Naming::Numbered { first, .. } => ("numbered", Some(*first), Vec::new()),
            Naming::Sorted(names) => ("sorted", None, names.clone()),
        };
        ImagesRecord {
            folder: self.folder.display().to_string(),
            layout: self.layout,
            naming,
            pattern: self.pattern(),
            first_number,
            files: self.count,
            first_file: self.file_name(0),
            last_file: self.file_name(self.count.saturating_sub(1)),
            rate: self.rate,
            rate_from: self.rate_from.clone(),
            names,
        }
    }

    /// The path of frame `index`'s file.
    pub fn file_path(&self, index: usize) -> PathBuf {
        self.folder.join(self.file_name(index))
    }

    /// Total bytes of the images (0 for files that cannot be read).
    pub fn total_bytes(&self) -> u64 {
        (0..self.count)
            .filter_map(|i| std::fs::metadata(self.file_path(i)).ok())
            .map(|m| m.len())
            .sum()
    }

    /// What FFmpeg opens: the `image2` demuxer on a printf pattern (absolute, `%` escaped) or a
    /// glob (metacharacters escaped), with the rate and first number.
    fn open_recipe(&self) -> Result<OpenRecipe> {
        let abs = std::path::absolute(&self.folder).map_err(|e| Error::read(&self.folder, e))?;
        let mut url = path_bytes(&abs);
        if url.last() != Some(&b'/') {
            url.push(b'/');
        }
        let mut options = vec![
            ("framerate".to_string(), self.rate.as_ratio().to_string()),
            ("protocol_whitelist".to_string(), "file".to_string()),
        ];
        match &self.naming {
            Naming::Numbered { first, .. } => {
                let mut escaped: Vec<u8> = Vec::with_capacity(url.len());
                for b in url {
                    if b == b'%' {
                        escaped.push(b'%');
                    }
                    escaped.push(b);
                }
                url = escaped;
                url.extend(self.pattern().unwrap_or_default().into_bytes());
                options.push(("pattern_type".into(), "sequence".into()));
                options.push(("start_number".into(), first.to_string()));
            }
            Naming::Sorted(names) => {
                let mut escaped: Vec<u8> = Vec::with_capacity(url.len());
                for b in url {
                    if b"\\*?[]{}".contains(&b) {
                        escaped.push(b'\\');
                    }
                    escaped.push(b);
                }
                url = escaped;
                let ext = extension_of(&names[0]).unwrap_or_default();
                url.extend(b"*.");
                for b in ext.bytes() {
                    if b"\\*?[]{}".contains(&b) {
                        url.push(b'\\');
                    }
                    url.push(b);
                }
                options.push(("pattern_type".into(), "glob".into()));
            }
        }
        Ok(OpenRecipe {
            url: CString::new(url).map_err(|_| {
                Error::request(
                    &self.folder,
                    "has a NUL byte in its path, which FFmpeg cannot open",
                )
            })?,
            format: Some("image2"),
            options,
        })
    }
}

/// The conversion of a zero-padded width (`%06d`; `%d` when unpadded).
fn conversion(width: usize) -> String {
    if width <= 1 {
        "%d".into()
    } else {
        format!("%0{width}d")
    }
}

#[cfg(unix)]
fn path_bytes(p: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    p.as_os_str().as_bytes().to_vec()
}

#[cfg(not(unix))]
fn path_bytes(p: &Path) -> Vec<u8> {
    p.to_string_lossy().into_owned().into_bytes()
}

/// The extension of a file name (after the last dot), as written.
fn extension_of(name: &str) -> Option<&str> {
    let (stem, ext) = name.rsplit_once('.')?;
    (!stem.is_empty() && !ext.is_empty()).then_some(ext)
}

fn is_image_name(name: &str) -> bool {
    extension_of(name).is_some_and(|e| IMAGE_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

/// The image files of `folder` (names, natural order): regular files (or links to them) with
/// an image extension (only `ext` when given), hidden files left out. Refuses a folder with
/// none, or with several kinds of image (frames would be ambiguous).
fn list_images(folder: &Path, ext: Option<&str>) -> Result<Vec<String>> {
    let entries = std::fs::read_dir(folder).map_err(|e| Error::read(folder, e))?;
    let mut names = Vec::new();
    let mut odd = None;
    for entry in entries {
        let entry = entry.map_err(|e| Error::read(folder, e))?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            odd = Some(entry.file_name().to_string_lossy().into_owned());
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        let wanted = match ext {
            Some(e) => extension_of(&name).is_some_and(|x| x.eq_ignore_ascii_case(e)),
            None => is_image_name(&name),
        };
        if !wanted {
            continue;
        }
        let is_file = match entry.file_type() {
            Ok(t) if t.is_file() => true,
            Ok(t) if t.is_symlink() => entry.path().is_file(),
            _ => false,
        };
        if is_file {
            names.push(name);
        }
    }
    if names.is_empty() {
        let looked = match ext {
            Some(e) => format!(".{e}"),
            None => IMAGE_EXTENSIONS
                .iter()
                .map(|e| format!(".{e}"))
                .collect::<Vec<_>>()
                .join(", "),
        };
        return Err(Error::request(
            folder,
            format!("holds no images (looked for {looked} files); expected a folder of frames such as 000001.jpg, 000002.jpg, ..."),
        ));
    }
    if let Some(name) = odd {
        return Err(Error::request(
            folder,
            format!("holds a file whose name is not UTF-8 ({name:?}); rename it so frame names can be recorded"),
        ));
    }
    let mut kinds: Vec<&str> = names.iter().filter_map(|n| extension_of(n)).collect();
    kinds.sort_unstable();
    kinds.dedup();
    if kinds.len() > 1 {
        return Err(Error::request(
            folder,
            format!(
                "mixes image types ({}); keep one kind of image in the folder, or name the frames with a pattern such as {}/%06d.{}",
                kinds.iter().map(|k| format!(".{k}")).collect::<Vec<_>>().join(", "),
                folder.display(),
                kinds[0]
            ),
        ));
    }
    names.sort_by(|a, b| natural_cmp(a, b));
    Ok(names)
}

/// Natural order: runs of digits compare as numbers (`2.jpg` before `10.jpg`), the rest byte
/// by byte; ties (`01` and `1`) fall back to byte order.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    fn chunks(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let bytes = s.as_bytes();
        let mut start = 0;
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (ca, cb) = (chunks(a), chunks(b));
    for (x, y) in ca.iter().zip(&cb) {
        let o = match (x, y) {
            ((true, p), (true, q)) => {
                let p = p.trim_start_matches('0');
                let q = q.trim_start_matches('0');
                p.len().cmp(&q.len()).then_with(|| p.cmp(q))
            }
            ((_, p), (_, q)) => p.cmp(q),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    ca.len().cmp(&cb.len()).then_with(|| a.cmp(b))
}

/// A name split around its last run of digits.
fn split_number(name: &str) -> Option<(&str, &str, &str)> {
    let bytes = name.as_bytes();
    let end = bytes.iter().rposition(|b| b.is_ascii_digit())? + 1;
    let start = bytes[..end]
        .iter()
        .rposition(|b| !b.is_ascii_digit())
        .map_or(0, |i| i + 1);
    Some((&name[..start], &name[start..end], &name[end..]))
}

/// How the files of `folder` (natural order) map to frames: one numbered run, else a sorted
/// list when natural and byte order agree; else an error saying why.
fn naming_of(folder: &Path, names: &[String]) -> Result<Naming> {
    let split: Option<Vec<(&str, &str, &str)>> = names.iter().map(|n| split_number(n)).collect();
    if let Some(parts) = split {
        let (prefix, _, suffix) = parts[0];
        if parts.iter().all(|(p, _, s)| *p == prefix && *s == suffix) {
            let digits: Vec<&str> = parts.iter().map(|(_, d, _)| *d).collect();
            return numbered_run(folder, prefix, suffix, &digits, None);
        }
    }
    let mut bytewise: Vec<&String> = names.iter().collect();
    bytewise.sort();
    if let Some(k) = (0..names.len()).find(|&k| *bytewise[k] != names[k]) {
        return Err(Error::request(
            folder,
            format!(
                "its images are neither numbered one after another (like 000001.jpg, 000002.jpg, ...) \
                 nor sorted the same way by name and by number ({} comes before {} by number but not by name), \
                 so which file is frame {k} is ambiguous; rename them with zero-padded numbers",
                names[k], bytewise[k]
            ),
        ));
    }
    Ok(Naming::Sorted(names.to_vec()))
}

/// Checks that `digits` (the numbers of files `prefix + digits + suffix`, any order) run
/// without gaps, with one zero padding (`width`: the pattern's, or inferred), and returns the
/// naming.
fn numbered_run(
    folder: &Path,
    prefix: &str,
    suffix: &str,
    digits: &[&str],
    width: Option<usize>,
) -> Result<Naming> {
    let name = |d: &str| format!("{prefix}{d}{suffix}");
    let mut numbered: Vec<(u64, &str)> = Vec::with_capacity(digits.len());
    for d in digits {
        let n = d
            .parse::<u64>()
            .ok()
            .filter(|n| *n <= i32::MAX as u64)
            .ok_or_else(|| {
                Error::request(
                    folder,
                    format!(
                        "{}: the frame number is larger than FFmpeg reads (2147483647)",
                        name(d)
                    ),
                )
            })?;
        numbered.push((n, d));
    }
    numbered.sort_unstable();
    if let Some(w) = numbered.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(Error::request(
            folder,
            format!(
                "{} and {} both number frame {}: the images mix zero padding; name every frame with the same number of digits",
                name(w[0].1),
                name(w[1].1),
                w[0].0
            ),
        ));
    }
    let width = width.unwrap_or_else(|| digits.iter().map(|d| d.len()).min().unwrap_or(1));
    if let Some((_, d)) = numbered.iter().find(|(n, d)| format!("{n:0width$}") != **d) {
        return Err(Error::request(
            folder,
            format!(
                "{} is padded differently from {} (frame numbers must all have {width} digit{}, or more without leading zeros); rename the images with one zero padding",
                name(d),
                name(numbered[0].1),
                if width == 1 { "" } else { "s" }
            ),
        ));
    }
    let first = numbered[0].0;
    for (k, (n, d)) in numbered.iter().enumerate() {
        let want = first + k as u64;
        if *n != want {
            let missing = format!("{prefix}{want:0width$}{suffix}");
            let before = numbered[k - 1].1;
            return Err(Error::request(
                folder,
                format!(
                    "the images are numbered with a gap: {missing} is missing between {} and {} \
                     (frame i is the i-th image, so a missing file would shift every later frame); \
                     fill the gap or renumber the images",
                    name(before),
                    name(d)
                ),
            ));
        }
    }
    Ok(Naming::Numbered {
        prefix: prefix.to_string(),
        width: if width <= 1 { 0 } else { width },
        suffix: suffix.to_string(),
        first,
    })
}

/// The rate of a sequence: its own (`own`, with where it comes from), else the given one,
/// else a default; a given rate that contradicts the sequence's own is refused.
fn settle_rate(
    path: &Path,
    own: Option<(FrameRate, String)>,
    given: Option<FrameRate>,
    default: Option<(FrameRate, String)>,
    names: &[String],
) -> Result<(FrameRate, String)> {
    match (own, given, default) {
        (Some((o, from)), Some(g), _) if o != g => Err(Error::request(
            path,
            format!(
                "has its own frame rate ({o} from {from}) and `source_fps` says {g}; drop `source_fps`, \
                 or give the images as a pattern (FOLDER/%06d.jpg), which reads no sequence files, to choose another rate"
            ),
        )),
        (Some(own), _, _) => Ok(own),
        (None, Some(g), _) => Ok((g, "source_fps".into())),
        (None, None, Some(d)) => Ok(d),
        (None, None, None) => Err(Error::request(
            path,
            format!(
                "is a sequence of {} images ({} ... {}) with no frame rate of its own; give one with `source_fps` (e.g. 25 or 30000/1001)",
                names.len(),
                names.first().map(String::as_str).unwrap_or(""),
                names.last().map(String::as_str).unwrap_or("")
            ),
        )),
    }
}

/// What `seqinfo.ini` says.
#[derive(Debug, Default)]
struct SeqInfo {
    im_dir: Option<String>,
    frame_rate: Option<(FrameRate, usize)>,
    seq_length: Option<(usize, usize)>,
    im_ext: Option<String>,
}

fn read_seqinfo(path: &Path) -> Result<SeqInfo> {
    let bytes = std::fs::read(path).map_err(|e| Error::read(path, e))?;
    let text = String::from_utf8_lossy(&bytes);
    let mut info = SeqInfo::default();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with(';') || l.starts_with('#') || l.starts_with('[') {
            continue;
        }
        let Some((key, value)) = l.split_once('=') else {
            return Err(Error::bad_file(
                path,
                Some(i + 1),
                format!("expected key=value (e.g. frameRate=30), found {l:?}"),
            ));
        };
        let value = value.trim();
        match key.trim().to_ascii_lowercase().as_str() {
            "imdir" if !value.is_empty() => info.im_dir = Some(value.to_string()),
            "framerate" => {
                let rate = value
                    .parse::<FrameRate>()
                    .map_err(|e| Error::bad_file(path, Some(i + 1), format!("frameRate: {e}")))?;
                info.frame_rate = Some((rate, i + 1));
            }
            "seqlength" => {
                let n = value.parse::<usize>().map_err(|_| {
                    Error::bad_file(
                        path,
                        Some(i + 1),
                        format!("seqLength: expected a frame count, found {value:?}"),
                    )
                })?;
                info.seq_length = Some((n, i + 1));
            }
            "imext" if !value.is_empty() => {
                info.im_ext = Some(value.trim_start_matches('.').to_string())
            }
            _ => {}
        }
    }
    Ok(info)
}

/// The `seqinfo.ini` of the MOT sequence whose image folder `dir` is, if it is one.
fn mot_parent_of(dir: &Path) -> Option<PathBuf> {
    let (parent, name) = match (dir.parent(), dir.file_name()) {
        (Some(p), Some(n)) if !p.as_os_str().is_empty() => (p.to_path_buf(), n.to_os_string()),
        _ => {
            let abs = std::path::absolute(dir).ok()?;
            (abs.parent()?.to_path_buf(), abs.file_name()?.to_os_string())
        }
    };
    let seqinfo = parent.join("seqinfo.ini");
    let info = read_seqinfo(&seqinfo).ok()?;
    (info.im_dir.as_deref().unwrap_or("img1") == name.to_str()?).then_some(seqinfo)
}

fn first_numbered(folder: &Path, naming: &Naming, layout: &str) -> Result<()> {
    match naming {
        Naming::Numbered { first: 1, .. } => Ok(()),
        Naming::Numbered { first, .. } => Err(Error::request(
            folder,
            format!(
                "is a {layout} image folder whose images start at number {first}; {layout} frames are numbered from 1 (frame 0 is the image numbered 1), so annotations would not line up"
            ),
        )),
        Naming::Sorted(_) => Err(Error::request(
            folder,
            format!("is a {layout} image folder but its images are not numbered (expected 000001.jpg, 000002.jpg, ...)"),
        )),
    }
}

fn mot_sequence(
    folder: PathBuf,
    seqinfo: &Path,
    info: &SeqInfo,
    fps: Option<FrameRate>,
) -> Result<ImageSequence> {
    let names = list_images(&folder, info.im_ext.as_deref())?;
    let naming = naming_of(&folder, &names)?;
    first_numbered(&folder, &naming, "MOT")?;
    if let Some((n, line)) = info.seq_length {
        if n != names.len() {
            return Err(Error::bad_file(
                seqinfo,
                Some(line),
                format!(
                    "seqLength is {n} but {} holds {} images ({} to {}); the sequence is incomplete or the file is wrong",
                    folder.display(),
                    names.len(),
                    names[0],
                    names[names.len() - 1]
                ),
            ));
        }
    }
    let own = info
        .frame_rate
        .map(|(r, _)| (r, format!("{} frameRate", seqinfo.display())));
    let (rate, rate_from) = settle_rate(&folder, own, fps, None, &names)?;
    Ok(ImageSequence {
        folder,
        layout: Layout::Mot,
        count: names.len(),
        naming,
        rate,
        rate_from,
    })
}

fn got10k_sequence(dir: &Path, meta: &Path, fps: Option<FrameRate>) -> Result<ImageSequence> {
    let names = list_images(dir, None)?;
    let naming = naming_of(dir, &names)?;
    first_numbered(dir, &naming, "GOT-10k")?;
    let mut own = None;
    if meta.is_file() {
        for (line, key, value) in crate::annotations::got10k::read_meta_info(meta)? {
            if key == "anno_fps" {
                let rate = value
                    .parse::<FrameRate>()
                    .map_err(|e| Error::bad_file(meta, Some(line), format!("anno_fps: {e}")))?;
                own = Some((rate, format!("{} anno_fps", meta.display())));
            }
        }
    }
    let default = FrameRate::new(crate::annotations::got10k::DEFAULT_ANNO_FPS, 1)
        .map(|r| {
            (
                r,
                "the GOT-10k default (no anno_fps in meta_info.ini)".to_string(),
            )
        })
        .ok();
    let (rate, rate_from) = settle_rate(dir, own, fps, default, &names)?;
    Ok(ImageSequence {
        folder: dir.to_path_buf(),
        layout: Layout::Got10k,
        count: names.len(),
        naming,
        rate,
        rate_from,
    })
}

fn pattern_sequence(path: &Path, printf: &Printf, fps: Option<FrameRate>) -> Result<ImageSequence> {
    let folder = folder_of(path);
    if !folder.is_dir() {
        return Err(Error::NotFound { path: folder });
    }
    if !is_image_name(&format!("x{}", printf.suffix)) {
        return Err(Error::request(
            path,
            format!(
                "is a pattern for files that are not images (expected one of {})",
                IMAGE_EXTENSIONS
                    .iter()
                    .map(|e| format!(".{e}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    let entries = std::fs::read_dir(&folder).map_err(|e| Error::read(&folder, e))?;
    let mut matched: Vec<String> = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::read(&folder, e))?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        let Some(middle) = name
            .strip_prefix(printf.prefix.as_str())
            .and_then(|r| r.strip_suffix(printf.suffix.as_str()))
        else {
            continue;
        };
        let padded_ok = !middle.is_empty()
            && middle.bytes().all(|b| b.is_ascii_digit())
            && (middle.len() <= printf.width.max(1) || !middle.starts_with('0'))
            && middle.len() >= printf.width.max(1);
        if padded_ok && entry.path().is_file() {
            matched.push(middle.to_string());
        }
    }
    if matched.is_empty() {
        return Err(Error::request(
            path,
            format!(
                "no file in {} matches the pattern (for example {})",
                folder.display(),
                format_args!(
                    "{}{:0w$}{}",
                    printf.prefix,
                    1,
                    printf.suffix,
                    w = printf.width
                )
            ),
        ));
    }
    let digits: Vec<&str> = matched.iter().map(String::as_str).collect();
    let naming = numbered_run(
        &folder,
        &printf.prefix,
        &printf.suffix,
        &digits,
        Some(printf.width.max(1)),
    )?;
    let mut names: Vec<String> = matched
        .iter()
        .map(|d| format!("{}{d}{}", printf.prefix, printf.suffix))
        .collect();
    names.sort_by(|a, b| natural_cmp(a, b));
    let (rate, rate_from) = settle_rate(path, None, fps, None, &names)?;
    Ok(ImageSequence {
        folder,
        layout: Layout::Pattern,
        count: names.len(),
        naming,
        rate,
        rate_from,
    })
}

/// How FFmpeg opens a source: the URL or path it is given, a forced demuxer and options.
pub(crate) struct OpenRecipe {
    pub url: CString,
    pub format: Option<&'static str>,
    pub options: Vec<(String, String)>,
}

impl OpenRecipe {
    /// The options as an FFmpeg dictionary.
    pub fn dictionary(&self) -> ffmpeg::Dictionary<'static> {
        let mut d = ffmpeg::Dictionary::new();
        for (k, v) in &self.options {
            d.set(k, v);
        }
        d
    }
}

/// The recipe for a local file: its absolute path (a name with a colon is never a protocol),
/// local files only.
pub(crate) fn file_recipe(path: &Path) -> Result<OpenRecipe> {
    let abs = std::path::absolute(path).map_err(|e| Error::read(path, e))?;
    Ok(OpenRecipe {
        url: CString::new(path_bytes(&abs)).map_err(|_| {
            Error::request(path, "has a NUL byte in its path, which FFmpeg cannot open")
        })?,
        format: None,
        options: vec![("protocol_whitelist".into(), "file".into())],
    })
}

/// The recipe for an http(s) URL: network protocols only, every socket operation bounded by
/// [`network_timeout`].
pub(crate) fn url_recipe(path: &Path) -> Result<OpenRecipe> {
    let text = path.to_str().unwrap_or_default();
    let micros = network_timeout().as_micros().to_string();
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
        ],
    })
}

/// What an opened source is: the recipe, and for an image sequence its resolution.
pub(crate) struct Resolved {
    pub recipe: OpenRecipe,
    pub kind: SourceKind,
    pub sequence: Option<std::sync::Arc<ImageSequence>>,
}

/// Resolves `source` into what FFmpeg opens.
pub(crate) fn resolve(source: &Source) -> Result<Resolved> {
    let path = source.path();
    match classify(path)? {
        SourceKind::File => {
            crate::media::input::check_input_file(path)?;
            refuse_rate(path, source.fps(), "a media file")?;
            Ok(Resolved {
                recipe: file_recipe(path)?,
                kind: SourceKind::File,
                sequence: None,
            })
        }
        SourceKind::Url => {
            refuse_rate(path, source.fps(), "a URL")?;
            Ok(Resolved {
                recipe: url_recipe(path)?,
                kind: SourceKind::Url,
                sequence: None,
            })
        }
        SourceKind::Images => {
            let seq = ImageSequence::resolve(path, source.fps())?;
            Ok(Resolved {
                recipe: seq.open_recipe()?,
                kind: SourceKind::Images,
                sequence: Some(std::sync::Arc::new(seq)),
            })
        }
    }
}

/// The error for a URL that FFmpeg could not open or read: the server's answer, a refused
/// connection, a timeout, or data that is not a video.
pub(crate) fn network_error(path: &Path, e: ffmpeg::Error) -> Error {
    let timeout = network_timeout().as_secs_f64();
    let detail =
        match e {
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
        };
    Error::Network {
        url: path.display().to_string(),
        message: detail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(dir: &Path, names: &[&str]) {
        for n in names {
            std::fs::write(dir.join(n), b"x").unwrap();
        }
    }

    fn rate(s: &str) -> Option<FrameRate> {
        Some(s.parse().unwrap())
    }

    #[test]
    fn frame_rates_are_exact() {
        assert_eq!(
            "25".parse::<FrameRate>().unwrap().as_ratio(),
            Ratio::new(25, 1)
        );
        assert_eq!(
            "29.97".parse::<FrameRate>().unwrap().as_ratio(),
            Ratio::new(2997, 100)
        );
        assert_eq!(
            "30000/1001".parse::<FrameRate>().unwrap().to_string(),
            "30000/1001"
        );
        assert_eq!("10Hz".parse::<FrameRate>().unwrap().to_string(), "10");
        assert!("0".parse::<FrameRate>().is_err());
        assert!("-5".parse::<FrameRate>().is_err());
        assert!("5000".parse::<FrameRate>().is_err());
        assert!("fast".parse::<FrameRate>().is_err());
        let r: FrameRate = serde_json::from_str("29.97").unwrap();
        assert_eq!(r.to_string(), "29.97");
        let r: FrameRate = serde_json::from_str("25").unwrap();
        assert_eq!(serde_json::to_string(&r).unwrap(), "\"25\"");
        let r: FrameRate = serde_json::from_str("\"30000/1001\"").unwrap();
        assert_eq!(r.as_ratio(), Ratio::new(30000, 1001));
    }

    #[test]
    fn natural_order() {
        let mut v = vec!["10.jpg", "2.jpg", "1.jpg", "a10b.png", "a9b.png"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["1.jpg", "2.jpg", "10.jpg", "a9b.png", "a10b.png"]);
    }

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

    #[test]
    fn printf_patterns() {
        let p = printf_pattern(Path::new("d/img_%06d.jpg")).unwrap();
        assert_eq!(
            (p.prefix.as_str(), p.width, p.suffix.as_str()),
            ("img_", 6, ".jpg")
        );
        let p = printf_pattern(Path::new("100%%_%d.png")).unwrap();
        assert_eq!((p.prefix.as_str(), p.width), ("100%_", 0));
        assert!(printf_pattern(Path::new("%d_%d.png")).is_none());
        assert!(printf_pattern(Path::new("%s.png")).is_none());
        assert!(printf_pattern(Path::new("plain.png")).is_none());
    }

    #[test]
    fn numbered_folders_become_patterns() {
        let d = tempfile::tempdir().unwrap();
        touch(
            d.path(),
            &[
                "000002.png",
                "000003.png",
                "000001.png",
                "notes.txt",
                ".hidden.png",
            ],
        );
        let s = ImageSequence::resolve(d.path(), rate("25")).unwrap();
        assert_eq!(s.count, 3);
        assert_eq!(s.layout, Layout::Folder);
        assert_eq!(s.pattern().as_deref(), Some("%06d.png"));
        assert_eq!(s.file_name(0), "000001.png");
        assert_eq!(s.file_name(2), "000003.png");
        let r = s.open_recipe().unwrap();
        assert!(r.url.to_str().unwrap().ends_with("/%06d.png"));
        assert!(r.options.contains(&("start_number".into(), "1".into())));
        assert!(r.options.contains(&("framerate".into(), "25/1".into())));
        // Unpadded numbers, and numbers that outgrow their padding.
        let d = tempfile::tempdir().unwrap();
        touch(d.path(), &["f9.jpg", "f10.jpg", "f11.jpg"]);
        let s = ImageSequence::resolve(d.path(), rate("10")).unwrap();
        assert_eq!(s.pattern().as_deref(), Some("f%d.jpg"));
        assert_eq!(s.file_name(1), "f10.jpg");
        let d = tempfile::tempdir().unwrap();
        touch(d.path(), &["98.jpg", "99.jpg", "100.jpg"]);
        let s = ImageSequence::resolve(d.path(), rate("10")).unwrap();
        assert_eq!(s.pattern().as_deref(), Some("%02d.jpg"));
        // A folder with % in its path keeps it literal for FFmpeg.
        let d = tempfile::tempdir().unwrap();
        let odd = d.path().join("100%");
        std::fs::create_dir(&odd).unwrap();
        touch(&odd, &["1.jpg"]);
        let s = ImageSequence::resolve(&odd, rate("10")).unwrap();
        assert!(s
            .open_recipe()
            .unwrap()
            .url
            .to_str()
            .unwrap()
            .ends_with("100%%/%d.jpg"));
    }

    #[test]
    fn bad_folders_say_why() {
        let err = |names: &[&str], fps: Option<FrameRate>| {
            let d = tempfile::tempdir().unwrap();
            touch(d.path(), names);
            ImageSequence::resolve(d.path(), fps)
                .unwrap_err()
                .to_string()
        };
        assert!(err(&["a.txt"], rate("25")).contains("holds no images"));
        assert!(err(&["1.jpg", "2.png"], rate("25")).contains("mixes image types"));
        let gap = err(&["000001.jpg", "000002.jpg", "000004.jpg"], rate("25"));
        assert!(
            gap.contains("000003.jpg is missing between 000002.jpg and 000004.jpg"),
            "{gap}"
        );
        let pad = err(&["1.jpg", "02.jpg", "3.jpg"], rate("25"));
        assert!(pad.contains("padded differently"), "{pad}");
        let dup = err(&["1.jpg", "01.jpg", "2.jpg"], rate("25"));
        assert!(dup.contains("both number frame 1"), "{dup}");
        let norate = err(&["000001.jpg", "000002.jpg"], None);
        assert!(
            norate.contains("`source_fps`") && norate.contains("2 images"),
            "{norate}"
        );
        let amb = err(&["x2.jpg", "x10.jpg", "y.jpg"], rate("25"));
        assert!(amb.contains("ambiguous"), "{amb}");
    }

    #[test]
    fn unnumbered_names_in_agreeing_order_are_globbed() {
        let d = tempfile::tempdir().unwrap();
        touch(d.path(), &["beta.jpg", "alpha.jpg", "gamma.jpg"]);
        let s = ImageSequence::resolve(d.path(), rate("5")).unwrap();
        assert_eq!(
            s.naming,
            Naming::Sorted(vec![
                "alpha.jpg".into(),
                "beta.jpg".into(),
                "gamma.jpg".into()
            ])
        );
        let r = s.open_recipe().unwrap();
        assert!(r.url.to_str().unwrap().ends_with("/*.jpg"));
        assert!(r.options.contains(&("pattern_type".into(), "glob".into())));
        assert_eq!(s.record().names.len(), 3);
    }

    #[test]
    fn mot_and_got10k_layouts_bring_their_rates() {
        let d = tempfile::tempdir().unwrap();
        let seq = d.path().join("MOT-01");
        std::fs::create_dir_all(seq.join("img1")).unwrap();
        std::fs::write(
            seq.join("seqinfo.ini"),
            "[Sequence]\nname=MOT-01\nimDir=img1\nframeRate=30\nseqLength=2\nimExt=.jpg\n",
        )
        .unwrap();
        touch(&seq.join("img1"), &["000001.jpg", "000002.jpg"]);
        for p in [seq.clone(), seq.join("img1")] {
            let s = ImageSequence::resolve(&p, None).unwrap();
            assert_eq!(
                (s.layout, s.count, s.rate.to_string()),
                (Layout::Mot, 2, "30".into())
            );
            assert!(s.rate_from.contains("frameRate"));
        }
        assert!(
            ImageSequence::resolve(&seq, rate("30")).is_ok(),
            "the same rate is fine"
        );
        let e = ImageSequence::resolve(&seq, rate("25"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("own frame rate (30"), "{e}");
        touch(&seq.join("img1"), &["000003.jpg"]);
        let e = ImageSequence::resolve(&seq, None).unwrap_err().to_string();
        assert!(e.contains("seqLength is 2"), "{e}");
        assert_eq!(input_paths(&seq), vec![seq.clone(), seq.join("img1")]);

        let got = d.path().join("GOT-10k_Train_000001");
        std::fs::create_dir(&got).unwrap();
        touch(&got, &["00000001.jpg", "00000002.jpg", "00000003.jpg"]);
        std::fs::write(got.join("groundtruth.txt"), "1,2,3,4\n").unwrap();
        let s = ImageSequence::resolve(&got, None).unwrap();
        assert_eq!(
            (s.layout, s.rate.to_string()),
            (Layout::Got10k, "10".into())
        );
        let s = ImageSequence::resolve(&got, rate("25")).unwrap();
        assert_eq!(
            (s.rate.to_string(), s.rate_from.as_str()),
            ("25".into(), "source_fps")
        );
        std::fs::write(got.join("meta_info.ini"), "[METAINFO]\nanno_fps: 25Hz\n").unwrap();
        let s = ImageSequence::resolve(&got, None).unwrap();
        assert_eq!(s.rate.to_string(), "25");
        assert!(ImageSequence::resolve(&got, rate("10")).is_err());
        std::fs::rename(got.join("00000001.jpg"), got.join("00000004.jpg")).unwrap();
        let e = ImageSequence::resolve(&got, None).unwrap_err().to_string();
        assert!(e.contains("start at number 2"), "{e}");
    }

    #[test]
    fn patterns_pick_their_files() {
        let d = tempfile::tempdir().unwrap();
        touch(
            d.path(),
            &["000001.png", "000002.png", "000003.png", "x.png", "1.png"],
        );
        let p = d.path().join("%06d.png");
        let s = ImageSequence::resolve(&p, rate("30000/1001")).unwrap();
        assert_eq!((s.count, s.layout), (3, Layout::Pattern));
        assert_eq!(s.rate.as_ratio(), Ratio::new(30000, 1001));
        assert!(ImageSequence::resolve(&p, None)
            .unwrap_err()
            .to_string()
            .contains("`source_fps`"));
        let e = ImageSequence::resolve(&d.path().join("%04d.png"), rate("1")).unwrap_err();
        assert!(e.to_string().contains("no file"), "{e}");
        assert_eq!(input_paths(&p), vec![d.path().to_path_buf()]);
    }
}
