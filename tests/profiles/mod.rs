//! Model profiles (`--profile`, docs/profiles.md) and `vidprep parity`: each profile's frames
//! against the real package's (PyPI parity venv, `VIDPREP_PYTHON`), resizes, odd sizes and vLLM's
//! video loaders. `parity` holds the helpers the others use.

// InternVL's model-card `load_video`, VLMEvalKit (was tests/profiles_internvl.rs)
mod internvl_card;
// lmms-eval's `read_video`, llava-onevision (was tests/profiles_more.rs)
mod more;
// odd picture sizes through decord and PyAV (was tests/profiles_odd_size.rs)
mod odd_size;
// small profile defects (was tests/profiles_papercuts.rs)
mod papercuts;
// qwen profiles and refusals, and the helpers the others use (was tests/profiles.rs)
pub(crate) mod parity;
// the profiles' 8-bit resizes (was tests/profiles_resize.rs)
mod resize;
// transformers-processor profiles (glm-4.6v, qwen3.5) (was tests/profiles_transformers.rs)
mod transformers;
// `vidprep parity --loader`: vLLM's video loaders (was tests/parity_loaders.rs)
mod vllm_loaders;
// the `vlmevalkit` profile (was tests/profiles_vlmeval.rs)
mod vlmeval;
