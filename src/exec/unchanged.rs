//! The inputs of a plan as the executor found them when it started, checked again before
//! anything made from them is committed: a recording still being written, a source replaced
//! or edited, a boxes file saved meanwhile fails the plan ([`Error::InputChanged`]) instead of
//! giving outputs made from one version whose records (the sidecar's size, `item.json`'s
//! fingerprints) name another, which `--resume` would then never redo.
//!
//! Every input file (the source, boxes, subtitles, a needle sequence's files) is compared by
//! identity (device and inode: a file renamed over it), size and modification time (nothing
//! is read twice); a folder (an image sequence, a needle sequence) by the list of its files
//! too. `item.json` records the fingerprints taken at the start (side inputs by content), so
//! a change after the check still redoes the item on resume.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::records::item_json::FileFingerprint;

/// One input file as seen at one moment.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Seen {
    fingerprint: FileFingerprint,
    /// Device and inode (0 where the system does not say).
    identity: (u64, u64),
}

/// The inputs of a plan as seen when its work started.
#[derive(Clone, Debug)]
pub(crate) struct InputsSeen {
    seen: Vec<Seen>,
    /// The fingerprints `item.json` records (side inputs by content), when asked for.
    record: Vec<FileFingerprint>,
}

impl InputsSeen {
    /// Looks at every local input of `plan` now (a URL source is checked by its validators
    /// elsewhere); `for_record`: also fingerprint them as `item.json` records them (a side
    /// input's content is hashed: a batch item's only).
    pub(crate) fn take(plan: &Plan, for_record: bool) -> InputsSeen {
        let seen = Self::look(plan);
        let record = if for_record {
            crate::records::item_json::input_fingerprints(plan)
        } else {
            Vec::new()
        };
        InputsSeen { seen, record }
    }

    /// Every input by identity, size and time (no file is read).
    fn look(plan: &Plan) -> Vec<Seen> {
        crate::records::item_json::input_fingerprints_with(plan, false)
            .into_iter()
            .map(|fingerprint| Seen {
                identity: identity(&fingerprint.path),
                fingerprint,
            })
            .collect()
    }

    /// The fingerprints `item.json` records: those of the start.
    pub(crate) fn record(&self) -> Vec<FileFingerprint> {
        self.record.clone()
    }

    /// Fails with [`Error::InputChanged`] when an input of `plan` is not what it was when
    /// `self` was taken, naming the first that changed and how.
    pub(crate) fn check_unchanged(&self, plan: &Plan) -> Result<()> {
        let now = InputsSeen::look(plan);
        for before in &self.seen {
            let path = &before.fingerprint.path;
            match now.iter().find(|s| &s.fingerprint.path == path) {
                None => return Err(changed(path, "it was removed or renamed")),
                Some(after) if after != before => {
                    return Err(changed(path, &how(before, after)));
                }
                Some(_) => {}
            }
        }
        if let Some(new) = now.iter().find(|s| {
            !self
                .seen
                .iter()
                .any(|b| b.fingerprint.path == s.fingerprint.path)
        }) {
            let path = &new.fingerprint.path;
            let folder = path.parent().unwrap_or(Path::new("."));
            return Err(changed(
                folder,
                &format!(
                    "{} appeared in it",
                    path.file_name().unwrap_or_default().to_string_lossy()
                ),
            ));
        }
        Ok(())
    }
}

fn changed(path: &Path, what: &str) -> Error {
    Error::InputChanged {
        path: path.to_path_buf(),
        what: what.to_string(),
    }
}

/// How `after` differs from `before`, in words.
fn how(before: &Seen, after: &Seen) -> String {
    let (b, a) = (&before.fingerprint, &after.fingerprint);
    if before.identity != after.identity {
        "another file was put in its place".into()
    } else if b.bytes != a.bytes {
        format!("its size went from {} to {} bytes", b.bytes, a.bytes)
    } else {
        format!(
            "it was written to: its size stayed {} bytes, its modification time changed",
            a.bytes
        )
    }
}

#[cfg(unix)]
fn identity(path: &PathBuf) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path)
        .map(|m| (m.dev(), m.ino()))
        .unwrap_or((0, 0))
}

#[cfg(not(unix))]
fn identity(_: &PathBuf) -> (u64, u64) {
    (0, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(dir: &Path) -> Plan {
        serde_json::from_value(serde_json::json!({
            "id": "a",
            "source": dir.join("v.ts"),
            "boxes": {"path": dir.join("b.json")},
            "exports": [{"kind": "clip"}],
        }))
        .unwrap()
    }

    #[test]
    fn every_kind_of_change_is_named_and_an_untouched_input_passes() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let write = |name: &str, bytes: &[u8]| std::fs::write(d.join(name), bytes).unwrap();
        write("v.ts", b"0123456789");
        write("b.json", b"[1]");
        let plan = plan(d);
        let seen = InputsSeen::take(&plan, true);
        assert_eq!(seen.record().len(), 2);
        assert!(seen.record()[1].content.is_some(), "{:?}", seen.record());
        seen.check_unchanged(&plan).unwrap();

        // Appended (a recording still being written).
        std::fs::OpenOptions::new()
            .append(true)
            .open(d.join("v.ts"))
            .and_then(|mut f| std::io::Write::write_all(&mut f, b"more"))
            .unwrap();
        let e = seen.check_unchanged(&plan).unwrap_err().to_string();
        assert!(
            e.contains("v.ts") && e.contains("from 10 to 14 bytes"),
            "{e}"
        );
        assert!(e.contains("changed while vidprep read it"), "{e}");

        // Replaced by a rename, same size.
        write("v.ts", b"0123456789");
        let seen = InputsSeen::take(&plan, false);
        write("new.ts", b"abcdefghij");
        std::fs::rename(d.join("new.ts"), d.join("v.ts")).unwrap();
        let e = seen.check_unchanged(&plan).unwrap_err().to_string();
        assert!(e.contains("another file was put in its place"), "{e}");

        // A side input edited, same size (after a clock tick: file times are coarse).
        let seen = InputsSeen::take(&plan, false);
        std::thread::sleep(std::time::Duration::from_millis(50));
        write("b.json", b"[2]");
        let e = seen.check_unchanged(&plan).unwrap_err().to_string();
        assert!(
            e.contains("b.json") && e.contains("size stayed 3 bytes"),
            "{e}"
        );

        // Removed.
        let seen = InputsSeen::take(&plan, false);
        std::fs::remove_file(d.join("b.json")).unwrap();
        let e = seen.check_unchanged(&plan).unwrap_err().to_string();
        assert!(e.contains("removed"), "{e}");
        assert_eq!(
            seen.check_unchanged(&plan).unwrap_err().kind(),
            crate::ErrorKind::Input
        );
    }
}
