//! FNV-1a, 64 bits: the stable hash of shard assignment, change detection (`item.json`'s plan
//! hash), review ids and host tags. Stable across runs, machines and Rust versions (unlike
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
