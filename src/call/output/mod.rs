//! Outputs: the all-or-nothing output group every request writes through ([`group`], which
//! also writes one file atomically outside an item's group), which existing folders vidprep
//! may replace ([`ownership`]), and vidprep's temporary names ([`temporaries`]). Here, what
//! they all use: JSON written to a file ([`write_json`]) and an advisory lock ([`FileLock`]).

pub(crate) mod group;
pub(crate) mod ownership;
pub(crate) mod temporaries;

use std::path::Path;

use serde::Serialize;

use crate::error::{Error, Result};

/// An advisory lock (`flock(2)`, exclusive) on a lock file, held until dropped: what lets two
/// drivers of one output folder (two `vidprep.ray` runs, a driver and `vidprep run`) update
/// its report one after the other, each reading what the other wrote. The kernel drops it
/// when the holder dies, so a killed driver never leaves it held. (Linux maps `flock` on NFS
/// to byte-range locks the server arbitrates.) The holder removes the file before it lets go,
/// so nothing is left beside the outputs; a waiter that then wins the lock of the removed file
/// sees that the name is no longer its file and starts again.
pub(crate) struct FileLock {
    path: std::path::PathBuf,
    /// Holds the lock: closing it lets go.
    _file: std::fs::File,
}

impl FileLock {
    /// Waits for and takes the lock of `path` (created if missing, never truncated).
    pub(crate) fn exclusive(path: &Path) -> Result<FileLock> {
        loop {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| Error::io(path, e))?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::MetadataExt as _;
                loop {
                    match rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive) {
                        Ok(()) => break,
                        Err(rustix::io::Errno::INTR) => continue,
                        Err(e) => return Err(Error::io(path, e.into())),
                    }
                }
                let held = file.metadata().map_err(|e| Error::io(path, e))?;
                let named = match std::fs::metadata(path) {
                    Ok(m) => Some((m.dev(), m.ino())),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                    Err(e) => return Err(Error::io(path, e)),
                };
                if named != Some((held.dev(), held.ino())) {
                    continue; // its holder removed it while we waited: take the new one
                }
            }
            return Ok(FileLock {
                path: path.to_path_buf(),
                _file: file,
            });
        }
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // Removed while still held (the lock goes with the descriptor, closed after this).
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Writes `value` as pretty-printed JSON with a final newline (a sidecar, `frames.json`, a
/// marker).
pub(crate) fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    use std::io::Write as _;
    // Streamed: a sidecar holding millions of boxes is never held as text.
    let file = std::fs::File::create(path).map_err(|e| crate::error::Error::io(path, e))?;
    let mut out = std::io::BufWriter::new(file);
    serde_json::to_writer_pretty(&mut out, value).map_err(|e| {
        if e.is_io() {
            crate::error::Error::io(path, e.into())
        } else {
            crate::error::Error::internal(format!("cannot write JSON: {e}"))
        }
    })?;
    out.write_all(b"\n")
        .and_then(|()| out.flush())
        .map_err(|e| crate::error::Error::io(path, e))
}
