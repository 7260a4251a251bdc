//! Safe output files: every output is written to a temporary name beside its final path and
//! renamed into place only when complete, so an interrupted run never leaves a half-written
//! file under a real name; and no output may be one of the job's inputs.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Marker in the names of temporary files (so a resumed run can recognise and remove them).
pub const TEMP_MARKER: &str = ".vidprep-tmp";

/// A file being written under a temporary name until [`PendingFile::commit`].
#[derive(Debug)]
pub struct PendingFile {
    final_path: PathBuf,
    temp_path: PathBuf,
    committed: bool,
}

impl PendingFile {
    /// Prepares to write `final_path` (its folder must exist or is created).
    pub fn new(final_path: &Path) -> Result<PendingFile> {
        let parent = final_path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        let name = final_path
            .file_name()
            .ok_or_else(|| Error::Usage(format!("{} is not a file path", final_path.display())))?
            .to_string_lossy()
            .into_owned();
        let unique = format!("{}-{}", std::process::id(), next_serial());
        let temp_path = parent.join(format!(".{name}{TEMP_MARKER}-{unique}"));
        Ok(PendingFile {
            final_path: final_path.to_path_buf(),
            temp_path,
            committed: false,
        })
    }

    /// Where to write now.
    pub fn path(&self) -> &Path {
        &self.temp_path
    }

    pub fn final_path(&self) -> &Path {
        &self.final_path
    }

    /// Moves the finished file to its final name.
    pub fn commit(mut self) -> Result<PathBuf> {
        std::fs::rename(&self.temp_path, &self.final_path)
            .map_err(|e| Error::io(&self.final_path, e))?;
        self.committed = true;
        Ok(self.final_path.clone())
    }

    /// Writes `bytes` and commits in one go.
    pub fn write_all(final_path: &Path, bytes: &[u8]) -> Result<PathBuf> {
        let pending = PendingFile::new(final_path)?;
        std::fs::write(pending.path(), bytes).map_err(|e| Error::io(final_path, e))?;
        pending.commit()
    }
}

impl Drop for PendingFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.temp_path);
        }
    }
}

fn next_serial() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SERIAL: AtomicU64 = AtomicU64::new(0);
    SERIAL.fetch_add(1, Ordering::Relaxed)
}

/// Fails when `output` is the same file as one of `inputs` (by path or by inode).
pub fn ensure_not_an_input(output: &Path, inputs: &[&Path]) -> Result<()> {
    let out_abs = absolute(output);
    for input in inputs {
        let same = absolute(input) == out_abs || same_inode(output, input);
        if same {
            return Err(Error::Usage(format!(
                "output {} is the input {}: refusing to overwrite an input",
                output.display(),
                input.display()
            )));
        }
    }
    Ok(())
}

fn absolute(p: &Path) -> PathBuf {
    std::fs::canonicalize(p)
        .unwrap_or_else(|_| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()))
}

#[cfg(unix)]
fn same_inode(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_inode(_a: &Path, _b: &Path) -> bool {
    false
}

/// The sidecar path of an output: `clip.mp4` -> `clip.json`.
pub fn sidecar_path(output: &Path) -> PathBuf {
    output.with_extension("json")
}

/// Removes temporary files left in `dir` by interrupted runs; returns how many.
pub fn remove_stale_temporaries(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(TEMP_MARKER))
        .filter(|e| std::fs::remove_file(e.path()).is_ok())
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uncommitted_files_disappear_and_committed_ones_appear() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.mp4");
        {
            let p = PendingFile::new(&target).unwrap();
            std::fs::write(p.path(), b"half").unwrap();
        }
        assert!(!target.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let p = PendingFile::new(&target).unwrap();
        std::fs::write(p.path(), b"whole").unwrap();
        p.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"whole");
    }

    #[test]
    fn refuses_to_overwrite_an_input() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.mp4");
        std::fs::write(&input, b"x").unwrap();
        let alias = dir.path().join(".").join("in.mp4");
        assert!(ensure_not_an_input(&alias, &[&input]).is_err());
        assert!(ensure_not_an_input(&dir.path().join("out.mp4"), &[&input]).is_ok());
    }
}
