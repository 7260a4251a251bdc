//! Which folders vidprep wrote, proven by their content. A folder output (a frames export, a
//! batch item, a review page's `assets/` and `data/`) replaces an existing folder as a whole,
//! so it may do so only when the folder is empty or a marker vidprep wrote there lists every
//! file the folder holds:
//!
//! - `frames.json` of a frames export: vidprep's schema (`vidprep_version`, `sources`,
//!   `total_frames`, `frames[].file`), listing its images, strip, payload and JSONL;
//! - `item.json` of a batch item: vidprep's schema (`id`, `plan_hash`, `vidprep_version`,
//!   `outputs[].path`), listing every file of the item;
//! - `.vidprep-review` of a review page's folders: `{"vidprep_review": VERSION, "files": [...]}`.
//!
//! A single file output may carry its own proof (a boxes file of `vidprep track` records its
//! tracked gaps): [`OutputGroup::owned_file`](crate::call::output::group::OutputGroup::owned_file)
//! replaces it only then, refusing with [`file_refusal`] otherwise.
//!
//! A file *named* like a marker proves nothing; a file no valid marker lists is someone
//! else's ([`foreign_files`]), and the folder is never replaced (the caller refuses, naming
//! them). vidprep's own temporaries (`.vidprep-tmp-...`) and empty folders count as vidprep's.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::call::output::temporaries::TEMP_PREFIX;
use crate::error::Error;

/// The marker a review page's `assets/` and `data/` carry.
pub(crate) const REVIEW_MARKER: &str = ".vidprep-review";

/// The markers vidprep writes into folders it owns.
const MARKERS: [&str; 3] = ["frames.json", "item.json", REVIEW_MARKER];

/// The review marker of vidprep 0.1.0 before it listed its files.
const LEGACY_REVIEW_MARKER: &str = "written by vidprep review\n";

/// The files such a page's `assets/` and `data/` held: `review.js`, `review.css`,
/// `index.js`, `items/NNNNN.js`.
fn legacy_page_file(rel: &Path) -> bool {
    let text = rel.to_string_lossy();
    if ["review.js", "review.css", "index.js"].contains(&text.as_ref()) {
        return true;
    }
    text.strip_prefix("items/")
        .and_then(|n| n.strip_suffix(".js"))
        .is_some_and(|n| n.len() == 5 && n.bytes().all(|b| b.is_ascii_digit()))
}

/// A string field of a JSON object.
fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key)?.as_str()
}

/// The files a marker's content says vidprep wrote in its folder (relative paths, the
/// marker itself included), or `None` when the content is not vidprep's record.
fn listed_by(marker: &str, content: &str) -> Option<Vec<PathBuf>> {
    let v: Value = serde_json::from_str(content).ok()?;
    let mut files = vec![PathBuf::from(marker)];
    match marker {
        "frames.json" => {
            text(&v, "vidprep_version")?;
            v.get("sources")?.as_array()?;
            v.get("total_frames")?.as_u64()?;
            for f in v.get("frames")?.as_array()? {
                files.push(PathBuf::from(text(f, "file")?));
            }
            for key in ["strip", "payload", "jsonl"] {
                match v.get(key) {
                    None | Some(Value::Null) => {}
                    Some(Value::String(s)) => files.push(PathBuf::from(s)),
                    Some(_) => return None,
                }
            }
            // `audio.wav` (`--audio`): its record names its file.
            match v.get("audio") {
                None | Some(Value::Null) => {}
                Some(a) => files.push(PathBuf::from(text(a, "file")?)),
            }
        }
        "item.json" => {
            text(&v, "id")?;
            text(&v, "plan_hash")?;
            text(&v, "vidprep_version")?;
            for o in v.get("outputs")?.as_array()? {
                o.get("bytes")?.as_u64()?;
                files.push(PathBuf::from(text(o, "path")?));
            }
        }
        _ => {
            text(&v, "vidprep_review")?;
            for f in v.get("files")?.as_array()? {
                files.push(PathBuf::from(f.as_str()?));
            }
        }
    }
    Some(files)
}

/// What the markers of `dir` prove vidprep wrote there.
struct Listing {
    listed: HashSet<PathBuf>,
    /// A review page of the version before markers listed their files.
    legacy_page: bool,
}

impl Listing {
    fn of(dir: &Path) -> Listing {
        let mut listed: HashSet<PathBuf> = HashSet::new();
        let mut legacy_page = false;
        for m in MARKERS {
            let p = dir.join(m);
            if !p.is_file() {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&p) else {
                continue;
            };
            if m == REVIEW_MARKER && text == LEGACY_REVIEW_MARKER {
                legacy_page = true;
                listed.insert(PathBuf::from(m));
            }
            if let Some(files) = listed_by(m, &text) {
                listed.extend(files);
            }
        }
        Listing {
            listed,
            legacy_page,
        }
    }

    fn holds(&self, rel: &Path) -> bool {
        self.listed.contains(rel) || (self.legacy_page && legacy_page_file(rel))
    }
}

/// Every file below `dir` (not a folder; links and special files included) that no valid
/// marker of `dir` lists, relative to `dir`, sorted. Empty when vidprep may replace the
/// folder (an empty folder, or one whose every file a marker lists).
pub(crate) fn foreign_files(dir: &Path) -> Vec<PathBuf> {
    let listing = Listing::of(dir);
    let mut foreign: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .filter_entry(|e| !e.file_name().to_string_lossy().starts_with(TEMP_PREFIX))
        .filter_map(|e| match e {
            Ok(e) if e.file_type().is_dir() => None,
            Ok(e) => {
                let rel = e.path().strip_prefix(dir).ok()?.to_path_buf();
                (!listing.holds(&rel)).then_some(rel)
            }
            // Unreadable: not provably vidprep's.
            Err(e) => Some(
                e.path()
                    .and_then(|p| p.strip_prefix(dir).ok())
                    .map(Path::to_path_buf)
                    .unwrap_or_else(|| PathBuf::from("?")),
            ),
        })
        .collect();
    foreign.sort();
    foreign
}

/// Removes the folder `dir` by what its markers list (and vidprep's temporaries and the
/// folders that are then empty), never anything else: a file that appeared in it after it
/// was looked at, or one vidprep cannot remove, stays, and the error names what is left.
pub(crate) fn remove_owned(dir: &Path) -> std::io::Result<()> {
    let listing = Listing::of(dir);
    let mut first_error: Option<std::io::Error> = None;
    let mut note = |e: std::io::Error| {
        first_error.get_or_insert(e);
    };
    let mut folders = Vec::new();
    let mut walk = walkdir::WalkDir::new(dir).min_depth(1).into_iter();
    while let Some(entry) = walk.next() {
        let Ok(e) = entry else { continue };
        let temp = e.file_name().to_string_lossy().starts_with(TEMP_PREFIX);
        if temp {
            super::temporaries::remove_path(e.path());
            if e.file_type().is_dir() {
                walk.skip_current_dir();
            }
            continue;
        }
        if e.file_type().is_dir() {
            folders.push(e.path().to_path_buf());
            continue;
        }
        let Ok(rel) = e.path().strip_prefix(dir) else {
            continue;
        };
        if listing.holds(rel) {
            if let Err(err) = std::fs::remove_file(e.path()) {
                if err.kind() != std::io::ErrorKind::NotFound {
                    note(err);
                }
            }
        }
    }
    // The deepest first; a folder still holding something stays.
    folders.sort_by_key(|f| std::cmp::Reverse(f.components().count()));
    for f in folders {
        let _ = std::fs::remove_dir(&f);
    }
    match std::fs::remove_dir(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => {
            let left = foreign_files(dir);
            let what = if left.is_empty() {
                first_error
                    .map(|e| e.to_string())
                    .unwrap_or_else(|| e.to_string())
            } else {
                format!(
                    "it holds what vidprep did not write or could not remove: {}",
                    some_of(&left)
                )
            };
            Err(std::io::Error::other(what))
        }
    }
}

/// A few of `files`, for a message: `a, b, c and 4 more`.
pub(crate) fn some_of(files: &[PathBuf]) -> String {
    const SHOWN: usize = 5;
    let mut text = files
        .iter()
        .take(SHOWN)
        .map(|f| f.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if files.len() > SHOWN {
        text.push_str(&format!(" and {} more", files.len() - SHOWN));
    }
    text
}

/// The refusal for a folder that holds files vidprep did not write.
pub(crate) fn refusal(dir: &Path, foreign: &[PathBuf]) -> Error {
    Error::Usage(format!(
        "{} holds files vidprep did not write ({}); it would be replaced as a whole, so give an empty or new folder, or move those files away",
        dir.display(),
        some_of(foreign)
    ))
}

/// The failure of a commit that found, in the earlier folder `dir` it had just set aside,
/// files vidprep did not write (made while the request worked): the folder is put back
/// untouched.
pub(crate) fn refusal_during_commit(dir: &Path, foreign: &[PathBuf]) -> Error {
    Error::Concurrent {
        path: dir.to_path_buf(),
        what: format!(
            "files vidprep did not write appeared in it while this request worked ({}); it was              left as it was and nothing of this request was put in place: move those files              away (or write into another folder) and run the request again",
            some_of(foreign)
        ),
    }
}

/// The refusal to replace the file `target` that `writer` (vidprep's command or export that
/// writes such files) did not write.
pub(crate) fn file_refusal(target: &Path, writer: &str) -> Error {
    Error::Usage(format!(
        "{} exists and was not written by {writer}; vidprep does not replace files it did not write: move it, or name the output differently",
        target.display()
    ))
}

/// Writes the review marker into `dir` (a page folder being written, at its temporary
/// path), listing every file in it: call it last.
pub(crate) fn write_review_marker(dir: &Path) -> crate::error::Result<()> {
    let mut files: Vec<String> = walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| !e.file_type().is_dir())
        .filter_map(|e| {
            let rel = e.path().strip_prefix(dir).ok()?;
            (rel != Path::new(REVIEW_MARKER)).then(|| rel.to_string_lossy().into_owned())
        })
        .collect();
    files.sort();
    let marker = serde_json::json!({
        "vidprep_review": env!("CARGO_PKG_VERSION"),
        "files": files,
    });
    super::write_json(&dir.join(REVIEW_MARKER), &marker)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_proves_only_what_it_lists() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert!(foreign_files(d).is_empty());
        // A file merely named frames.json proves nothing.
        std::fs::write(d.join("frames.json"), "{}").unwrap();
        std::fs::write(d.join("README.txt"), "mine").unwrap();
        assert_eq!(
            foreign_files(d),
            vec![PathBuf::from("README.txt"), PathBuf::from("frames.json")]
        );
        // vidprep's schema, listing its files: only the others are foreign.
        std::fs::write(
            d.join("frames.json"),
            r#"{"vidprep_version": "0.1.0", "sources": [], "total_frames": 3,
                "frames": [{"file": "00.jpg"}], "strip": "strip.jpg", "payload": null}"#,
        )
        .unwrap();
        std::fs::write(d.join("00.jpg"), "x").unwrap();
        std::fs::write(d.join("strip.jpg"), "x").unwrap();
        std::fs::create_dir(d.join("annotations")).unwrap();
        std::fs::write(d.join("annotations/a.txt"), "mine").unwrap();
        assert_eq!(
            foreign_files(d),
            vec![
                PathBuf::from("README.txt"),
                PathBuf::from("annotations/a.txt")
            ]
        );
        std::fs::remove_file(d.join("README.txt")).unwrap();
        std::fs::remove_dir_all(d.join("annotations")).unwrap();
        // `--audio`'s file is named in its record (a rerun into the folder was refused,
        // naming vidprep's own audio.wav).
        std::fs::write(d.join("audio.wav"), "x").unwrap();
        assert_eq!(foreign_files(d), vec![PathBuf::from("audio.wav")]);
        std::fs::write(
            d.join("frames.json"),
            r#"{"vidprep_version": "0.1.0", "sources": [], "total_frames": 3,
                "frames": [{"file": "00.jpg"}], "strip": "strip.jpg", "payload": null,
                "audio": {"file": "audio.wav", "samples": 16000}}"#,
        )
        .unwrap();
        assert!(foreign_files(d).is_empty());
        std::fs::write(d.join(format!("{TEMP_PREFIX}1-2.tmp")), "x").unwrap();
        assert!(foreign_files(d).is_empty());
        // An item record lists the item's files, folders below included.
        let item = tempfile::tempdir().unwrap();
        let i = item.path();
        std::fs::create_dir(i.join("frames")).unwrap();
        std::fs::write(i.join("frames/0.jpg"), "x").unwrap();
        std::fs::write(i.join("thesis.tex"), "mine").unwrap();
        std::fs::write(
            i.join("item.json"),
            r#"{"id": "a", "plan_hash": "0", "vidprep_version": "0.1.0",
                "outputs": [{"path": "frames/0.jpg", "bytes": 1}], "inputs": []}"#,
        )
        .unwrap();
        assert_eq!(foreign_files(i), vec![PathBuf::from("thesis.tex")]);
        // A review marker, written last, lists its folder.
        let page = tempfile::tempdir().unwrap();
        std::fs::create_dir(page.path().join("items")).unwrap();
        std::fs::write(page.path().join("items/0.js"), "x").unwrap();
        std::fs::write(page.path().join("index.js"), "x").unwrap();
        write_review_marker(page.path()).unwrap();
        assert!(foreign_files(page.path()).is_empty());
        std::fs::write(page.path().join("notes.txt"), "mine").unwrap();
        assert_eq!(foreign_files(page.path()), vec![PathBuf::from("notes.txt")]);
        // A page of the version before markers listed their files: its known layout only.
        std::fs::write(page.path().join(REVIEW_MARKER), LEGACY_REVIEW_MARKER).unwrap();
        std::fs::write(page.path().join("items/00000.js"), "x").unwrap();
        assert_eq!(
            foreign_files(page.path()),
            vec![PathBuf::from("items/0.js"), PathBuf::from("notes.txt")]
        );
    }
}
