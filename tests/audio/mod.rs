//! Audio: soundtracks whose channel layout the container does not state, and `--no-audio` on
//! every clip path.

mod copy_audio;
mod field_cases;
