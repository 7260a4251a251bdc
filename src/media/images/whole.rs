//! Whether an image file holds its whole picture. FFmpeg's JPEG decoder conceals a file cut
//! short without flagging the picture (it emulates the missing end-of-image marker and paints
//! what the data lacks), so a sequence reader checks each JPEG's structure itself: the markers
//! are walked from the start of image, segment lengths skipped (an Exif thumbnail's own
//! end-of-image marker lies inside its segment), compressed data scanned to the next marker,
//! until the end-of-image marker; the file running out first is a truncation. A PNG is walked
//! chunk by chunk to its `IEND`. Bytes after the end are not looked at (trailers are common).
//! Anything else the walk does not understand is left to the decoder. A file whose last
//! bytes are the end marker (a JPEG's `FF D9`, a PNG's `IEND` chunk) is taken as whole without
//! reading the rest, so checking a sequence costs one short read per file.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use crate::error::{Error, Result};

/// What is missing from the image file at `path` (a JPEG or PNG by its first bytes), or
/// `None` when it is whole or of another type.
pub(crate) fn file_truncation(path: &Path) -> Result<Option<&'static str>> {
    const PNG_END: [u8; 12] = [0, 0, 0, 0, b'I', b'E', b'N', b'D', 0xAE, 0x42, 0x60, 0x82];
    let mut file = std::fs::File::open(path).map_err(|e| Error::read(path, e))?;
    let mut head = [0u8; 8];
    let got = read_up_to(&mut file, &mut head).map_err(|e| Error::read(path, e))?;
    let codec = if head[..got].starts_with(&[0xFF, 0xD8]) {
        "mjpeg"
    } else if got == 8 && head[1..4] == *b"PNG" {
        "png"
    } else {
        return Ok(None);
    };
    let len = file.metadata().map_err(|e| Error::read(path, e))?.len();
    let mut tail = [0u8; 12];
    if len >= 20 {
        file.seek(SeekFrom::End(-12))
            .and_then(|_| file.read_exact(&mut tail))
            .map_err(|e| Error::read(path, e))?;
        let whole = match codec {
            "mjpeg" => tail[10..] == [0xFF, 0xD9],
            _ => tail == PNG_END,
        };
        if whole {
            return Ok(None);
        }
    }
    let data = std::fs::read(path).map_err(|e| Error::read(path, e))?;
    Ok(truncation(codec, &data))
}

fn read_up_to(file: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// What is missing from an image file's bytes (`codec`: FFmpeg's codec name), or `None` when
/// it is whole or not a JPEG or PNG this walk understands.
pub(crate) fn truncation(codec: &str, data: &[u8]) -> Option<&'static str> {
    match codec {
        "mjpeg" | "jpegls" => jpeg_truncation(data),
        "png" => png_truncation(data),
        _ => None,
    }
}

fn jpeg_truncation(data: &[u8]) -> Option<&'static str> {
    const ENDS: &str = "the file ends before the JPEG's end-of-image marker (cut short)";
    const ENDS_IN_DATA: &str =
        "the file ends inside the JPEG's compressed picture data, before its end-of-image marker (cut short)";
    if !data.starts_with(&[0xFF, 0xD8]) {
        return None;
    }
    let mut i = 2;
    loop {
        if data.get(i) != Some(&0xFF) {
            // Out of bytes, or not a marker where one must be (left to the decoder).
            return (i >= data.len()).then_some(ENDS);
        }
        // Fill bytes before a marker.
        while data.get(i + 1) == Some(&0xFF) {
            i += 1;
        }
        let Some(&marker) = data.get(i + 1) else {
            return Some(ENDS);
        };
        match marker {
            0xD9 => return None,
            // Markers without a length.
            0x01 | 0xD0..=0xD8 => {
                i += 2;
                continue;
            }
            _ => {}
        }
        let Some(len) = data.get(i + 2..i + 4) else {
            return Some(ENDS);
        };
        let len = usize::from(u16::from_be_bytes([len[0], len[1]]));
        if len < 2 {
            return None;
        }
        let next = i + 2 + len;
        if next > data.len() {
            return Some(ENDS);
        }
        i = next;
        if marker == 0xDA {
            // Compressed data up to the next marker (0xFF 0x00 is a stuffed byte, 0xFF
            // 0xD0..0xD7 a restart marker, 0xFF 0xFF fill).
            loop {
                let Some(at) = data[i..].iter().position(|&b| b == 0xFF) else {
                    return Some(ENDS_IN_DATA);
                };
                i += at;
                match data.get(i + 1) {
                    None => return Some(ENDS_IN_DATA),
                    Some(0x00 | 0xD0..=0xD7) => i += 2,
                    Some(_) => break,
                }
            }
        }
    }
}

fn png_truncation(data: &[u8]) -> Option<&'static str> {
    const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
    if !data.starts_with(&SIGNATURE) {
        return None;
    }
    let mut i = SIGNATURE.len();
    loop {
        let Some(head) = data.get(i..i + 8) else {
            return Some("the file ends before the PNG's IEND chunk (cut short)");
        };
        let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
        let next = i.saturating_add(12).saturating_add(len);
        if next > data.len() {
            return Some("the file ends inside a PNG chunk, before its IEND chunk (cut short)");
        }
        if &head[4..8] == b"IEND" {
            return None;
        }
        i = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small JPEG: SOI, an APP1 holding a thumbnail with its own EOI, DQT, SOS with stuffed
    /// bytes and a restart marker, EOI.
    fn jpeg() -> Vec<u8> {
        let mut j = vec![0xFF, 0xD8];
        j.extend([0xFF, 0xE1, 0x00, 0x08, 0xFF, 0xD8, 0xFF, 0xD9, 0x00, 0x00]);
        j.extend([0xFF, 0xDB, 0x00, 0x04, 0x01, 0x02]);
        j.extend([0xFF, 0xDA, 0x00, 0x03, 0x01]);
        j.extend([0x12, 0xFF, 0x00, 0x34, 0xFF, 0xD0, 0x56, 0x78]);
        j.extend([0xFF, 0xD9]);
        j
    }

    #[test]
    fn a_whole_jpeg_is_whole_and_every_cut_of_it_is_not() {
        let j = jpeg();
        assert_eq!(truncation("mjpeg", &j), None);
        let mut trailer = j.clone();
        trailer.extend(b"trailing bytes");
        assert_eq!(truncation("mjpeg", &trailer), None);
        for cut in 2..j.len() {
            assert!(
                truncation("mjpeg", &j[..cut]).is_some(),
                "cut at {cut} of {}",
                j.len()
            );
        }
        // Not a JPEG: left to the decoder.
        assert_eq!(truncation("mjpeg", b"GIF89a"), None);
    }

    #[test]
    fn a_whole_png_is_whole_and_every_cut_of_it_is_not() {
        let mut p = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
        for (kind, body) in [(b"IHDR", &[0u8; 13][..]), (b"IDAT", &[1, 2, 3][..])] {
            p.extend((body.len() as u32).to_be_bytes());
            p.extend(kind);
            p.extend(body);
            p.extend([0, 0, 0, 0]);
        }
        p.extend([0, 0, 0, 0]);
        p.extend(b"IEND");
        p.extend([0xAE, 0x42, 0x60, 0x82]);
        assert_eq!(truncation("png", &p), None);
        for cut in 8..p.len() {
            assert!(truncation("png", &p[..cut]).is_some(), "cut at {cut}");
        }
        assert_eq!(truncation("bmp", &p[..10]), None);
    }
}
