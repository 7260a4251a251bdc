//! How FFmpeg opens a source: the URL or path it is given, a forced demuxer and its options
//! (a local file's recipe here; a URL's, which needs the call's network settings, in
//! `media::source`; an image sequence's in `media::images`).

use std::ffi::CString;
use std::path::Path;

use ffmpeg_next as ffmpeg;

use crate::error::{Error, Result};

/// How FFmpeg opens a source: the URL or path it is given, a forced demuxer and options.
pub(crate) struct OpenRecipe {
    pub url: CString,
    pub format: Option<&'static str>,
    pub options: Vec<(String, String)>,
}

impl OpenRecipe {
    /// The options as an FFmpeg dictionary.
    pub fn dictionary(&self) -> ffmpeg::Dictionary<'static> {
        let mut d = ffmpeg::Dictionary::new();
        for (k, v) in &self.options {
            d.set(k, v);
        }
        d
    }
}

/// The recipe for a local file: its absolute path (a name with a colon is never a protocol),
/// local files only.
pub(crate) fn file_recipe(path: &Path) -> Result<OpenRecipe> {
    let abs = std::path::absolute(path).map_err(|e| Error::read(path, e))?;
    Ok(OpenRecipe {
        url: CString::new(path_bytes(&abs)).map_err(|_| {
            Error::request(path, "has a NUL byte in its path, which FFmpeg cannot open")
        })?,
        format: None,
        options: vec![("protocol_whitelist".into(), "file".into())],
    })
}

/// A path's bytes, as FFmpeg is given it.
#[cfg(unix)]
pub(crate) fn path_bytes(p: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    p.as_os_str().as_bytes().to_vec()
}

#[cfg(not(unix))]
pub(crate) fn path_bytes(p: &Path) -> Vec<u8> {
    p.to_string_lossy().into_owned().into_bytes()
}
