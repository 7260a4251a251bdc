//! vidprep: frame-accurate video preparation for multimodal-LLM video benchmarks.
pub mod time;
