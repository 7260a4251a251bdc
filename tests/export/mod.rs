//! Exports: clips (`cut`, `truncate`, stream copies, smart cuts), capped videos, sampled frames
//! and the request payloads built from them, each against the ffmpeg CLI.

mod cut_truncate;
mod frames_given;
mod model_input;
mod payload_requests;
mod payload_vllm;
mod smart;
mod smart_parallel;
mod video_reproducible;
