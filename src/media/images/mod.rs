//! Image sequences as video sources: a MOT sequence folder (or its `img1/`, rate from
//! `seqinfo.ini` `frameRate`), a GOT-10k sequence folder (rate from `meta_info.ini` `anno_fps`,
//! 10 Hz when it says none), any folder of images, or a printf pattern such as `dir/%06d.jpg`.
//! Frame `i` is the `i`-th image in natural order (MOT and GOT-10k files are numbered from 1,
//! so frame 0 is `000001.jpg`). A generic folder or a pattern has no rate of its own: the
//! request gives it (`source_fps`).
//!
//! The folder is listed and checked here, then opened with FFmpeg's `image2` demuxer: a
//! contiguous numbered run (one prefix, one suffix, one zero padding) as a printf pattern with
//! its `start_number`; names that are not numbered but sort the same way by name and by
//! number as a glob; anything else (gaps, mixed padding, mixed image types) is refused with the
//! reason, since frame `i` would not be file `i`.

use std::cmp::Ordering;
use std::ffi::CString;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::media::source::{FrameRate, OpenRecipe};

/// File extensions read as images (any case).
pub const IMAGE_EXTENSIONS: [&str; 7] = ["jpg", "jpeg", "png", "bmp", "tif", "tiff", "webp"];

/// The folder a path lies in (`.` for a bare name).
pub(crate) fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A printf file pattern: `prefix %0Nd suffix` (`%d` unpadded; `%Nd` pads with zeros as
/// FFmpeg does; `%%` is a literal `%`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Printf {
    prefix: String,
    width: usize,
    suffix: String,
}

/// The printf pattern in `path`'s file name, if it has exactly one `%d` conversion.
pub(crate) fn printf_pattern(path: &Path) -> Option<Printf> {
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
    pub(crate) fn open_recipe(&self) -> Result<OpenRecipe> {
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
pub(crate) fn path_bytes(p: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    p.as_os_str().as_bytes().to_vec()
}

#[cfg(not(unix))]
pub(crate) fn path_bytes(p: &Path) -> Vec<u8> {
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
pub(crate) struct SeqInfo {
    pub(crate) im_dir: Option<String>,
    frame_rate: Option<(FrameRate, usize)>,
    seq_length: Option<(usize, usize)>,
    im_ext: Option<String>,
}

pub(crate) fn read_seqinfo(path: &Path) -> Result<SeqInfo> {
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
pub(crate) fn mot_parent_of(dir: &Path) -> Option<PathBuf> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::input::Ratio;
    use crate::media::source::input_paths;

    fn touch(dir: &Path, names: &[&str]) {
        for n in names {
            std::fs::write(dir.join(n), b"x").unwrap();
        }
    }

    fn rate(s: &str) -> Option<FrameRate> {
        Some(s.parse().unwrap())
    }

    #[test]
    fn natural_order() {
        let mut v = vec!["10.jpg", "2.jpg", "1.jpg", "a10b.png", "a9b.png"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["1.jpg", "2.jpg", "10.jpg", "a9b.png", "a10b.png"]);
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
