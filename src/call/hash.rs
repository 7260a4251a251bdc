//! FNV-1a, 64 bits: the stable hash of shard assignment, change detection (`item.json`'s plan
//! hash and its side inputs' contents), review ids and host tags. Stable across runs, machines and Rust versions (unlike
//! `std`'s `DefaultHasher`), which is all these need; not a cryptographic hash.

/// FNV-1a, 64 bits, of `bytes`.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// FNV-1a, 64 bits, of the bytes of the file at `path`, read in chunks.
pub(crate) fn fnv1a_file(path: &std::path::Path) -> std::io::Result<u64> {
    use std::io::Read as _;
    let mut file = std::fs::File::open(path)?;
    let mut h: u64 = 0xcbf29ce484222325;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(h);
        }
        for &b in &buf[..n] {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_file_hashes_as_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let bytes: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&p, &bytes).unwrap();
        assert_eq!(super::fnv1a_file(&p).unwrap(), super::fnv1a(&bytes));
        std::fs::write(&p, b"").unwrap();
        assert_eq!(super::fnv1a_file(&p).unwrap(), super::fnv1a(b""));
    }
}
