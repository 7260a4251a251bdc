//! An image's size from its header alone, before anything decodes it: JPEG and PNG through
//! the `image` crate's header readers, TIFF (and BigTIFF), BMP and WebP read here (the crate is
//! built without their decoders). A folder source's images are checked this way, so that a
//! 12000x12000 TIFF is refused from its first bytes instead of after FFmpeg decoded it.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use crate::error::{Error, Result};

/// The width and height `path`'s header gives, or `None` for a type this does not read (left
/// to the decoder). A header that cannot be read is an error naming the file.
pub(crate) fn header_size(path: &Path) -> Result<Option<(u32, u32)>> {
    let mut file = std::fs::File::open(path).map_err(|e| Error::read(path, e))?;
    let mut head = [0u8; 32];
    let n = read_up_to(&mut file, &mut head).map_err(|e| Error::read(path, e))?;
    let head = &head[..n];
    let corrupt = |what: &str| Error::corrupt(path, "in the image header", what.to_string());
    if head.starts_with(b"II") || head.starts_with(b"MM") {
        return tiff_size(&mut file, head)
            .map_err(|e| corrupt(&format!("cannot read the TIFF header ({e})")))?
            .map(Some)
            .ok_or_else(|| corrupt("the TIFF header gives no ImageWidth and ImageLength"));
    }
    if head.starts_with(b"BM") {
        return bmp_size(head)
            .map(Some)
            .ok_or_else(|| corrupt("the BMP header is too short"));
    }
    if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        return webp_size(head)
            .map(Some)
            .ok_or_else(|| corrupt("the WebP header is too short or of an unknown kind"));
    }
    let reader = image::ImageReader::open(path)
        .and_then(|r| r.with_guessed_format())
        .map_err(|e| Error::read(path, e))?;
    if !reader.format().is_some_and(|f| f.reading_enabled()) {
        return Ok(None);
    }
    reader
        .into_dimensions()
        .map(Some)
        .map_err(|e| Error::corrupt(path, "in the image header", e.to_string()))
}

/// Reads until `buf` is full or the file ends; how many bytes were read.
fn read_up_to(file: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// ImageWidth (256) and ImageLength (257) of a TIFF's first directory.
fn tiff_size(file: &mut (impl Read + Seek), head: &[u8]) -> std::io::Result<Option<(u32, u32)>> {
    let short = || std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "too short");
    let little = head.starts_with(b"II");
    let num = |b: &[u8]| -> u64 {
        let mut v = 0u64;
        for (i, &x) in b.iter().enumerate() {
            let shift = if little { i } else { b.len() - 1 - i };
            v |= (x as u64) << (8 * shift);
        }
        v
    };
    if head.len() < 8 {
        return Err(short());
    }
    let big = match num(&head[2..4]) {
        42 => false,
        43 => true,
        v => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("version {v}, neither 42 (TIFF) nor 43 (BigTIFF)"),
            ))
        }
    };
    let offset = if big {
        head.get(8..16).map(num).ok_or_else(short)?
    } else {
        num(&head[4..8])
    };
    file.seek(SeekFrom::Start(offset))?;
    let (count_len, entry_len, value_at) = if big { (8, 20, 12) } else { (2, 12, 8) };
    let mut count = [0u8; 8];
    file.read_exact(&mut count[..count_len])?;
    // A directory has at most 65535 entries (BigTIFF's count is wider, not its use).
    let count = num(&count[..count_len]).min(65_535);
    let (mut width, mut height) = (None, None);
    let mut entry = [0u8; 20];
    for _ in 0..count {
        file.read_exact(&mut entry[..entry_len])?;
        let tag = num(&entry[..2]);
        let kind = num(&entry[2..4]);
        let value = match kind {
            3 => num(&entry[value_at..value_at + 2]),
            4 => num(&entry[value_at..value_at + 4]),
            16 => num(&entry[value_at..value_at + 8]),
            _ => continue,
        };
        let value = u32::try_from(value).unwrap_or(u32::MAX);
        match tag {
            256 => width = Some(value),
            257 => height = Some(value),
            _ => {}
        }
        if let (Some(w), Some(h)) = (width, height) {
            return Ok(Some((w, h)));
        }
    }
    Ok(None)
}

/// A BMP's width and height (a negative height is a top-down image).
fn bmp_size(head: &[u8]) -> Option<(u32, u32)> {
    let u32_at = |i: usize| Some(u32::from_le_bytes(head.get(i..i + 4)?.try_into().ok()?));
    let u16_at = |i: usize| Some(u16::from_le_bytes(head.get(i..i + 2)?.try_into().ok()?));
    if u32_at(14)? == 12 {
        // BITMAPCOREHEADER: 16-bit sizes.
        return Some((u16_at(18)? as u32, u16_at(20)? as u32));
    }
    let w = u32_at(18)? as i32;
    let h = u32_at(22)? as i32;
    Some((w.unsigned_abs(), h.unsigned_abs()))
}

/// A WebP's canvas size: from its `VP8X` chunk, or its only image (`VP8 ` or `VP8L`).
fn webp_size(head: &[u8]) -> Option<(u32, u32)> {
    let at = |i: usize| head.get(i).copied().map(u32::from);
    match head.get(12..16)? {
        b"VP8X" => Some((
            1 + (at(24)? | at(25)? << 8 | at(26)? << 16),
            1 + (at(27)? | at(28)? << 8 | at(29)? << 16),
        )),
        b"VP8 " => Some((
            (at(26)? | at(27)? << 8) & 0x3fff,
            (at(28)? | at(29)? << 8) & 0x3fff,
        )),
        b"VP8L" => {
            let bits = at(21)? | at(22)? << 8 | at(23)? << 16 | at(24)? << 24;
            Some((1 + (bits & 0x3fff), 1 + ((bits >> 14) & 0x3fff)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiff_bmp_and_webp_sizes_come_from_their_headers() {
        // A little-endian TIFF whose directory (at 8) has ImageWidth SHORT 300 and
        // ImageLength LONG 12000.
        let mut tiff = b"II*\0\x08\0\0\0".to_vec();
        tiff.extend([2, 0]);
        tiff.extend([0, 1, 3, 0, 1, 0, 0, 0, 44, 1, 0, 0]);
        tiff.extend([1, 1, 4, 0, 1, 0, 0, 0, 0xe0, 0x2e, 0, 0]);
        let mut f = std::io::Cursor::new(tiff.clone());
        assert_eq!(tiff_size(&mut f, &tiff).unwrap(), Some((300, 12000)));
        // The same, big-endian.
        let mut tiff = b"MM\0*\0\0\0\x08".to_vec();
        tiff.extend([0, 2]);
        tiff.extend([1, 0, 0, 3, 0, 0, 0, 1, 1, 44, 0, 0]);
        tiff.extend([1, 1, 0, 4, 0, 0, 0, 1, 0, 0, 0x2e, 0xe0]);
        let mut f = std::io::Cursor::new(tiff.clone());
        assert_eq!(tiff_size(&mut f, &tiff).unwrap(), Some((300, 12000)));
        let mut bmp = vec![0u8; 26];
        bmp[..2].copy_from_slice(b"BM");
        bmp[14] = 40;
        bmp[18..22].copy_from_slice(&640i32.to_le_bytes());
        bmp[22..26].copy_from_slice(&(-480i32).to_le_bytes());
        assert_eq!(bmp_size(&bmp), Some((640, 480)));
        let mut webp = vec![0u8; 30];
        webp[..4].copy_from_slice(b"RIFF");
        webp[8..16].copy_from_slice(b"WEBPVP8X");
        webp[24..27].copy_from_slice(&[0x7f, 0x02, 0]); // 640 - 1
        webp[27..30].copy_from_slice(&[0xdf, 0x01, 0]); // 480 - 1
        assert_eq!(webp_size(&webp), Some((640, 480)));
    }
}
