//! The images of a folder and how their names map to frames: listing (image files only, one
//! kind, hidden files left out), natural order, one numbered run without gaps or mixed
//! padding, a sorted list when names are not numbered, and printf patterns (`%06d.jpg`).
//! Anything else is refused with the reason, since frame `i` would not be file `i`.

use std::cmp::Ordering;
use std::path::Path;

use super::IMAGE_EXTENSIONS;
use crate::error::{Error, Result};

/// A printf file pattern: `prefix %0Nd suffix` (`%d` unpadded; `%Nd` pads with zeros as
/// FFmpeg does; `%%` is a literal `%`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Printf {
    pub(super) prefix: String,
    pub(super) width: usize,
    pub(super) suffix: String,
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

/// The conversion of a zero-padded width (`%06d`; `%d` when unpadded).
pub(super) fn conversion(width: usize) -> String {
    if width <= 1 {
        "%d".into()
    } else {
        format!("%0{width}d")
    }
}

/// The extension of a file name (after the last dot), as written.
pub(super) fn extension_of(name: &str) -> Option<&str> {
    let (stem, ext) = name.rsplit_once('.')?;
    (!stem.is_empty() && !ext.is_empty()).then_some(ext)
}

pub(super) fn is_image_name(name: &str) -> bool {
    extension_of(name).is_some_and(|e| IMAGE_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

/// The image files of `folder` (names, natural order): regular files (or links to them) with
/// an image extension (only `ext` when given), hidden files left out. Refuses a folder with
/// none, or with several kinds of image (frames would be ambiguous).
pub(super) fn list_images(folder: &Path, ext: Option<&str>) -> Result<Vec<String>> {
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
pub(super) fn naming_of(folder: &Path, names: &[String]) -> Result<Naming> {
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
pub(super) fn numbered_run(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::images::tests::{rate, touch};
    use crate::media::images::ImageSequence;
    use crate::vocab::FrameRate;

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
}
