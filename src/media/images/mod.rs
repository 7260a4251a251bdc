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
//! reason, since frame `i` would not be file `i`.//!
//! One job a file: this one holds what a resolved sequence is ([`ImageSequence`], its
//! record, the file of frame `i`, the `image2` recipe FFmpeg opens); `names.rs` lists a
//! folder's images and checks their naming (natural order, numbered runs, printf patterns);
//! `layouts.rs` recognises the layout (MOT, GOT-10k, folder, pattern) and settles the rate;
//! `header.rs` reads an image's size from its header, before anything decodes it; `whole.rs`
//! tells an image file cut short.

mod header;
mod layouts;
mod names;
pub(crate) mod whole;

use std::ffi::CString;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::media::recipe::{path_bytes, OpenRecipe};
use crate::vocab::FrameRate;
pub(crate) use header::header_size;
pub(crate) use layouts::{mot_parent_of, read_seqinfo};
pub(crate) use names::printf_pattern;
pub use names::Naming;

/// How a folder holding files named `names` maps frames to files (or why it cannot): the
/// listing's checks without the folder, for the fuzzing entry (`crate::fuzzing`).
pub(crate) fn check_names(mut files: Vec<String>) {
    files.retain(|n| !n.starts_with('.') && names::is_image_name(n));
    if files.is_empty() {
        return;
    }
    files.sort_by(|a, b| names::natural_cmp(a, b));
    let _ = names::naming_of(Path::new("folder"), &files);
}
use names::{conversion, extension_of};

/// File extensions read as images (any case): those FFmpeg's `image2` reader names a decoder
/// for that cameras, datasets and tools write frames as (JPEG, PNG, BMP, TIFF, WebP, the
/// Netpbm family, JPEG 2000, TGA).
pub const IMAGE_EXTENSIONS: [&str; 14] = [
    "jpg", "jpeg", "png", "bmp", "tif", "tiff", "webp", "pgm", "ppm", "pbm", "pam", "jp2", "j2k",
    "tga",
];

/// The folder a path lies in (`.` for a bare name).
pub(crate) fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Where a sequence came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
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
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
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
    pub(crate) fn layout_text(&self) -> &'static str {
        match self.layout {
            Layout::Mot => "MOT images",
            Layout::Got10k => "GOT-10k images",
            Layout::Folder | Layout::Pattern => "images",
        }
    }
}

impl ImageSequence {
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn touch(dir: &Path, names: &[&str]) {
        for n in names {
            std::fs::write(dir.join(n), b"x").unwrap();
        }
    }

    pub(crate) fn rate(s: &str) -> Option<FrameRate> {
        Some(s.parse().unwrap())
    }

    /// A MOT sequence `MOT-01` in `dir` (30 fps, `seqLength=2`) with its two images.
    pub(crate) fn mot_sequence(dir: &Path) -> std::path::PathBuf {
        let seq = dir.join("MOT-01");
        std::fs::create_dir_all(seq.join("img1")).unwrap();
        std::fs::write(
            seq.join("seqinfo.ini"),
            "[Sequence]\nname=MOT-01\nimDir=img1\nframeRate=30\nseqLength=2\nimExt=.jpg\n",
        )
        .unwrap();
        touch(&seq.join("img1"), &["000001.jpg", "000002.jpg"]);
        seq
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
}
