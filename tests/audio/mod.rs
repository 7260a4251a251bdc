//! Audio: soundtracks whose channel layout the container does not state, and `--no-audio` on every
//! clip path.

// `--no-audio` on every clip path (was tests/copy_audio.rs)
mod copy_audio;
// soundtracks whose layout the container does not state (was tests/field_audio.rs)
mod field_cases;
