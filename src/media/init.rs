//! Starting FFmpeg: once per process, with its logging quiet, and the level a door may set.

use ffmpeg_next as ffmpeg;

/// Starts ffmpeg once per process and keeps its logging quiet (errors are reported through
/// our own messages; a door may raise FFmpeg's level with [`crate::media::set_ffmpeg_log`]).
pub fn init() {
    static INIT: std::sync::Once = std::sync::Once::new();
    INIT.call_once(|| {
        let _ = ffmpeg::init();
        ffmpeg::log::set_level(ffmpeg::log::Level::Fatal);
        crate::media::compat::init_logging();
    });
}

/// Sets FFmpeg's log level for the whole process (FFmpeg keeps it globally; a door calls this
/// once, at its start: the command line and the Python package from `VIDPREP_FFMPEG_LOG`).
pub fn set_ffmpeg_log(level: crate::call::settings::FfmpegLog) {
    use crate::call::settings::FfmpegLog;
    init();
    ffmpeg::log::set_level(match level {
        FfmpegLog::Debug => ffmpeg::log::Level::Debug,
        FfmpegLog::Info => ffmpeg::log::Level::Info,
        FfmpegLog::Warning => ffmpeg::log::Level::Warning,
        FfmpegLog::Error => ffmpeg::log::Level::Error,
        FfmpegLog::Quiet => ffmpeg::log::Level::Fatal,
    });
}
