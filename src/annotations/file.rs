//! Opening an annotation file: the checks every reader makes first (a regular file, at most
//! 1 GiB), a byte-order mark skipped, and a look at its first byte (JSON or not) without
//! moving the reader.

use std::path::Path;

use super::error::AnnotationError;

/// Skips a byte-order mark at the start of `reader` (Windows editors write one; it is not
/// part of the JSON).
pub(crate) fn skip_byte_order_mark(reader: &mut impl std::io::BufRead) -> std::io::Result<()> {
    const BOM: &[u8] = "\u{feff}".as_bytes();
    let mut start = Vec::with_capacity(BOM.len());
    while start.len() < BOM.len() {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let take = (BOM.len() - start.len()).min(buf.len());
        if buf[..take] != BOM[start.len()..start.len() + take] {
            // Not a mark: nothing consumed yet but a prefix of one, which cannot be JSON.
            return Ok(());
        }
        start.extend_from_slice(&buf[..take]);
        reader.consume(take);
    }
    Ok(())
}

/// The file opened for reading line by line (readers that stream: their memory follows what
/// they keep, not the file's size), after the same checks as [`read_text`].
pub(crate) fn open_text(path: &Path) -> Result<std::io::BufReader<std::fs::File>, AnnotationError> {
    // A FIFO or device would block or never end; a file larger than any annotation file is
    // refused before it is read into memory.
    let meta = std::fs::metadata(path).map_err(|e| AnnotationError::read(path, e))?;
    if !meta.is_file() {
        return Err(AnnotationError::File {
            path: path.to_path_buf(),
            message:
                "is not a regular file (a folder, FIFO or device); expected an annotation file"
                    .into(),
        });
    }
    if meta.len() > MAX_ANNOTATION_BYTES {
        return Err(AnnotationError::File {
            path: path.to_path_buf(),
            message: format!(
                "is {} bytes; annotation files of more than 1 GiB are refused",
                meta.len()
            ),
        });
    }
    let file = std::fs::File::open(path).map_err(|e| AnnotationError::read(path, e))?;
    Ok(std::io::BufReader::with_capacity(1 << 16, file))
}

/// The largest annotation file read.
const MAX_ANNOTATION_BYTES: u64 = 1 << 30;

/// The file's first byte that is not white space (after a byte-order mark): `{` or `[` for a
/// JSON object or list. `None` when the file is empty or cannot be read (its reader says why).
pub(crate) fn first_byte(path: &Path) -> Option<u8> {
    first_byte_in(&mut open_text(path).ok()?)
}

/// [`first_byte`] of the file `reader` reads, which is left at its start.
pub(crate) fn first_byte_in(reader: &mut std::io::BufReader<std::fs::File>) -> Option<u8> {
    use std::io::{BufRead as _, Seek as _};
    reader.rewind().ok()?;
    skip_byte_order_mark(reader).ok()?;
    let first = loop {
        let buf = reader.fill_buf().ok()?;
        if buf.is_empty() {
            break None;
        }
        if let Some(at) = buf.iter().position(|b| !b.is_ascii_whitespace()) {
            break Some(buf[at]);
        }
        let n = buf.len();
        reader.consume(n);
    };
    reader.rewind().ok()?;
    first
}
