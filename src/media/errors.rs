//! The binding's errors into vidprep's own [`FfmpegError`], which names no FFmpeg type: every
//! `?` on an FFmpeg call inside `media/` converts through here.

use ffmpeg_next as ffmpeg;

use crate::error::FfmpegError;

impl From<ffmpeg::Error> for FfmpegError {
    fn from(e: ffmpeg::Error) -> FfmpegError {
        FfmpegError::new(i32::from(e), e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// vidprep's own codes and texts are FFmpeg's (the binding is the oracle here).
    #[test]
    fn ffmpegs_errors_keep_their_code_and_text() {
        for errno in [5, 12, 13, 27, 28, 30, 122] {
            let theirs = FfmpegError::from(ffmpeg::Error::Other { errno });
            assert_eq!(theirs, FfmpegError::from_errno(errno), "errno {errno}");
            assert_eq!(theirs.errno(), Some(errno));
        }
        let enomem = ffmpeg::Error::Other {
            errno: ffmpeg::util::error::ENOMEM,
        };
        assert!(FfmpegError::from(enomem).is_out_of_memory());
        let invalid = FfmpegError::from(ffmpeg::Error::InvalidData);
        assert_eq!(invalid, FfmpegError::invalid_data());
        assert_eq!(invalid.errno(), None);
        assert_eq!(FfmpegError::from(ffmpeg::Error::Eof).errno(), None);
        assert_eq!(ffmpeg::util::error::ENOMEM, crate::error::ENOMEM);
    }
}
