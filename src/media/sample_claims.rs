//! What an MP4/MOV file's sample tables claim, checked against what the file can hold before
//! FFmpeg opens it. FFmpeg's `mov` demuxer sizes its index by the sample count of each
//! track's `stsz`/`stz2` (and of each fragment's `trun`), and vidprep's frame table follows
//! the index: a 5 KB file whose `stsz` claims 50 million samples (a constant sample size needs
//! no table) cost FFmpeg 1.2 GB and 4 s before a packet was read. A sample holds at least one
//! byte, so no file holds more samples than bytes: one that claims more is refused here,
//! naming the box, the claim and the file's size, before anything is allocated from it.
//!
//! Only box headers and these counts are read (a few reads per box; `mdat` is skipped by its
//! size), and only files that start like ISO BMFF (`ftyp`, `moov`, `mdat`, `free`, `skip`,
//! `wide`); anything else is left to FFmpeg.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use crate::error::{Error, Result};

/// Boxes holding the boxes this looks for.
const CONTAINERS: [&[u8; 4]; 8] = [
    b"moov", b"trak", b"mdia", b"minf", b"stbl", b"moof", b"traf", b"edts",
];

/// Top-level box types an ISO BMFF file starts with.
const FIRST_BOXES: [&[u8; 4]; 6] = [b"ftyp", b"moov", b"mdat", b"free", b"skip", b"wide"];

/// Refuses `path` when a sample table claims more samples than the file has bytes.
pub(crate) fn check_sample_counts(path: &Path) -> Result<()> {
    let Ok(mut file) = std::fs::File::open(path) else {
        // Opening errors are FFmpeg's to report, with the words they always had.
        return Ok(());
    };
    let Ok(len) = file.metadata().map(|m| m.len()) else {
        return Ok(());
    };
    let mut head = [0u8; 8];
    if file.read_exact(&mut head).is_err() || !FIRST_BOXES.iter().any(|t| head[4..8] == t[..]) {
        return Ok(());
    }
    let mut claim = None;
    // A file whose boxes cannot be walked is FFmpeg's to judge: only a claim read whole counts.
    let _ = walk(&mut file, 0, len, 0, &mut |kind, count| {
        if count > len && claim.is_none() {
            claim = Some((kind, count));
        }
    });
    match claim {
        None => Ok(()),
        Some((kind, count)) => Err(Error::corrupt(
            path,
            format!("in its sample tables (its {kind} box)"),
            format!(
                "they claim {count} samples, but the file has {len} bytes and a sample holds at \
                 least one, so it can hold at most {len}: a damaged or hostile file, refused \
                 before anything was allocated for it"
            ),
        )),
    }
}

/// Walks the boxes in `start..end` (at nesting `depth`), calling `found` with each sample
/// count of an `stsz`, `stz2` or `trun` box.
fn walk(
    file: &mut std::fs::File,
    start: u64,
    end: u64,
    depth: usize,
    found: &mut impl FnMut(&'static str, u64),
) -> std::io::Result<()> {
    let mut at = start;
    while at + 8 <= end {
        file.seek(SeekFrom::Start(at))?;
        let mut head = [0u8; 16];
        file.read_exact(&mut head[..8])?;
        let size32 = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as u64;
        let kind: [u8; 4] = [head[4], head[5], head[6], head[7]];
        let (size, header) = match size32 {
            0 => (end - at, 8),
            1 => {
                file.read_exact(&mut head[8..16])?;
                let big = u64::from_be_bytes(head[8..16].try_into().expect("8 bytes"));
                (big, 16)
            }
            s => (s, 8),
        };
        if size < header || at.saturating_add(size) > end {
            return Ok(());
        }
        let body = at + header;
        if depth < 8 && CONTAINERS.iter().any(|c| **c == kind) {
            walk(file, body, at + size, depth + 1, found)?;
        } else {
            let field = |file: &mut std::fs::File, offset: u64| -> std::io::Result<u64> {
                if body + offset + 4 > at + size {
                    return Err(std::io::ErrorKind::UnexpectedEof.into());
                }
                file.seek(SeekFrom::Start(body + offset))?;
                let mut b = [0u8; 4];
                file.read_exact(&mut b)?;
                Ok(u32::from_be_bytes(b) as u64)
            };
            // After the version and flags (4 bytes): stsz has sample_size then sample_count,
            // stz2 reserved and field_size then sample_count, trun sample_count first.
            match &kind {
                b"stsz" => found("stsz", field(file, 8)?),
                b"stz2" => found("stz2", field(file, 8)?),
                b"trun" => found("trun", field(file, 4)?),
                _ => {}
            }
        }
        at += size;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boxed(kind: &[u8; 4], body: &[u8]) -> Vec<u8> {
        let mut v = ((body.len() + 8) as u32).to_be_bytes().to_vec();
        v.extend_from_slice(kind);
        v.extend_from_slice(body);
        v
    }

    #[test]
    fn a_sample_count_over_the_file_size_is_refused_naming_the_box() {
        let dir = tempfile::tempdir().unwrap();
        let stsz = |count: u32| {
            let mut b = vec![0u8; 4];
            b.extend(1u32.to_be_bytes());
            b.extend(count.to_be_bytes());
            boxed(b"stsz", &b)
        };
        let file = |count: u32| {
            let stbl = boxed(b"stbl", &stsz(count));
            let minf = boxed(b"minf", &stbl);
            let mdia = boxed(b"mdia", &minf);
            let trak = boxed(b"trak", &mdia);
            let mut v = boxed(b"ftyp", b"isom\0\0\0\0");
            v.extend(boxed(b"moov", &trak));
            v.extend(boxed(b"mdat", &[0u8; 100]));
            v
        };
        let ok = dir.path().join("ok.mp4");
        std::fs::write(&ok, file(100)).unwrap();
        check_sample_counts(&ok).unwrap();
        let bad = dir.path().join("bad.mp4");
        let bytes = file(50_000_000);
        std::fs::write(&bad, &bytes).unwrap();
        let e = check_sample_counts(&bad).unwrap_err().to_string();
        for part in [
            "bad.mp4",
            "its stsz box",
            "claim 50000000 samples",
            &format!("the file has {} bytes", bytes.len()),
        ] {
            assert!(e.contains(part), "{part:?} not in {e}");
        }
        // Not ISO BMFF: left alone.
        let other = dir.path().join("x.mkv");
        std::fs::write(&other, [0x1a, 0x45, 0xdf, 0xa3, 0, 0, 0, 0]).unwrap();
        check_sample_counts(&other).unwrap();
    }
}
