//! vidprep's temporary names: how they are made (`.vidprep-tmp-<tag>-<pid>-<n>.<what>`,
//! [`TEMP_PREFIX`], [`temp_name`]), and how a later run removes what a killed one left under
//! them (only when its writer is provably dead, [`remove_dead_temporaries`]). The output group
//! writes under these names; ownership counts them as vidprep's.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Prefix of every temporary name vidprep writes.
pub const TEMP_PREFIX: &str = ".vidprep-tmp-";

/// Removes a file, or a folder and everything in it (nothing when `p` is missing).
pub(crate) fn remove_path(p: &Path) {
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.is_dir() => {
            let _ = std::fs::remove_dir_all(p);
        }
        Ok(_) => {
            let _ = std::fs::remove_file(p);
        }
        Err(_) => {}
    }
}

/// A short, unique temporary name in `dir` (short, so a long output name never makes its
/// temporary name too long for the file system).
pub(crate) fn temp_name(dir: &Path, what: &str) -> PathBuf {
    static SERIAL: AtomicU64 = AtomicU64::new(0);
    let n = SERIAL.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(
        "{TEMP_PREFIX}{}-{}-{n}.{what}",
        crate::call::host::tag(),
        std::process::id()
    ))
}

/// The newest modification time of `p` and everything below it.
fn newest_change(p: &Path) -> Option<std::time::SystemTime> {
    walkdir::WalkDir::new(p)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter_map(|e| e.metadata().ok()?.modified().ok())
        .max()
}

/// Removes what dead processes left under temporary names in `dir`: a temporary of this
/// host (and PID namespace) whose writer is gone (`kill -9`, a crash), and a temporary of
/// another host, or of an older vidprep that named no host, untouched (itself and
/// everything in it) for [`crate::call::host::STALE_TEMPORARY`]. A live writer's temporaries,
/// here or elsewhere, are never touched.
pub(crate) fn remove_dead_temporaries(dir: &Path) {
    if !cfg!(target_os = "linux") {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mine = crate::call::host::tag();
    for e in entries.filter_map(|e| e.ok()) {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(TEMP_PREFIX) else {
            continue;
        };
        let Some((tag, pid)) = crate::call::host::temp_owner(rest) else {
            continue;
        };
        let dead = if tag == Some(mine) {
            !crate::call::host::process_alive(pid)
        } else {
            newest_change(&e.path())
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > crate::call::host::STALE_TEMPORARY)
        };
        if dead {
            remove_path(&e.path());
        }
    }
}

/// Removes the temporaries in `dir` written by process `pid` of the host tagged `tag` (a
/// lock holder found dead and taken over). Returns how many.
pub(crate) fn remove_temporaries_of(dir: &Path, tag: &str, pid: u32) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut n = 0;
    for e in entries.filter_map(|e| e.ok()) {
        let name = e.file_name().to_string_lossy().into_owned();
        let owner = name
            .strip_prefix(TEMP_PREFIX)
            .and_then(crate::call::host::temp_owner);
        let me = tag == crate::call::host::tag() && pid == std::process::id();
        if owner == Some((Some(tag), pid)) && !me {
            remove_path(&e.path());
            n += 1;
        }
    }
    n
}

/// Removes temporary files and folders left in `dir` by a killed run (not recursive). A
/// `dir` that is a symbolic link is left alone: nothing is deleted through a link.
pub fn remove_stale_temporaries(dir: &Path) -> usize {
    if std::fs::symlink_metadata(dir).map_or(true, |m| !m.is_dir()) {
        return 0;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(TEMP_PREFIX))
        .map(|e| remove_path(&e.path()))
        .count()
}
