//! MD5 (RFC 1321, the `md-5` crate) so that decoded frames can be checksummed in memory and
//! compared with ffmpeg's own `framemd5` output (the self-test checks both agree on the same
//! raw frame bytes).

use ::md5::{Digest, Md5};

/// MD5 digest of `data` as 16 raw bytes.
pub fn md5(data: &[u8]) -> [u8; 16] {
    Md5::digest(data).into()
}

/// MD5 digest of `data` as 32 lowercase hex characters (the form ffmpeg's
/// `framemd5`/`md5` muxers print).
pub fn md5_hex(data: &[u8]) -> String {
    md5(data).iter().map(|b| format!("{b:02x}")).collect()
}
