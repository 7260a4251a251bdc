//! Which layout an image sequence has and its rate: a MOT sequence (`seqinfo.ini`: image
//! folder, `frameRate`, `seqLength`, `imExt`), a GOT-10k sequence (`meta_info.ini`
//! `anno_fps`, 10 Hz by default), any folder of images, or a printf pattern; a rate given by
//! the request that contradicts the sequence's own is refused.

use std::path::{Path, PathBuf};

use super::names::{
    is_image_name, list_images, naming_of, natural_cmp, numbered_run, Naming, Printf,
};
use super::{folder_of, printf_pattern, ImageSequence, Layout, IMAGE_EXTENSIONS};
use crate::error::{Error, Result};
use crate::vocab::FrameRate;

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

/// Reads `seqinfo.ini` ([`crate::annotations::ini`] with its `SEQINFO` dialect: `key=value`,
/// sections and `;`/`#` comment lines skipped, keys in any case, the last of a key wins).
pub(crate) fn read_seqinfo(path: &Path) -> Result<SeqInfo> {
    use crate::annotations::ini;
    let bytes = std::fs::read(path).map_err(|e| Error::read(path, e))?;
    let text = String::from_utf8_lossy(&bytes);
    let entries = ini::parse(&text, &ini::SEQINFO)
        .map_err(|bad| Error::bad_file(path, Some(bad.line), bad.message))?;
    let mut info = SeqInfo::default();
    for ini::Entry {
        line, key, value, ..
    } in entries
    {
        let value = value.as_str();
        match key.as_str() {
            "imdir" if !value.is_empty() => info.im_dir = Some(value.to_string()),
            "framerate" => {
                let rate = value
                    .parse::<FrameRate>()
                    .map_err(|e| Error::bad_file(path, Some(line), format!("frameRate: {e}")))?;
                info.frame_rate = Some((rate, line));
            }
            "seqlength" => {
                let n = value.parse::<usize>().map_err(|_| {
                    Error::bad_file(
                        path,
                        Some(line),
                        format!("seqLength: expected a frame count, found {value:?}"),
                    )
                })?;
                info.seq_length = Some((n, line));
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
    use crate::media::images::tests::{mot_sequence, rate, touch};
    use crate::vocab::Ratio;

    #[test]
    fn mot_and_got10k_layouts_bring_their_rates() {
        let d = tempfile::tempdir().unwrap();
        let seq = mot_sequence(d.path());
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
    }
}
