//! Model profiles (`--profile`, docs/profiles.md) and `vidprep parity`: each profile's frames against
//! the real package's (PyPI parity venv, `VIDPREP_PYTHON`), resizes, odd sizes and vLLM's video
//! loaders. `parity` holds the helpers the others use.

mod internvl_card;
mod more;
mod odd_size;
mod papercuts;
pub(crate) mod parity;
mod resize;
mod transformers;
mod vllm_loaders;
mod vlmeval;
