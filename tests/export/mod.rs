//! Exports: clips (`cut`, `truncate`, stream copies, smart cuts), capped videos, sampled frames
//! and the request payloads built from them, each against the ffmpeg CLI.

// cut and truncate, frame-exact (was tests/cut_truncate.rs)
mod cut_truncate;
// frames chosen by the user or by a package (was tests/frames_given.rs)
mod frames_given;
// model-input export: sampled frames, orders, payloads (was tests/export.rs)
mod model_input;
// image payloads' times, native-video request bodies (was tests/payload_requests.rs)
mod payload_requests;
// `--payload vllm` (was tests/payload_vllm.rs)
mod payload_vllm;
// smart cuts (`--smart`) (was tests/smart.rs)
mod smart;
// the smart cut's tail encoded beside its head (was tests/smart_parallel.rs)
mod smart_parallel;
// a capped `video` export is byte-reproducible (was tests/video_reproducible.rs)
mod video_reproducible;
