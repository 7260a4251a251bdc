//! Decoding and seeking: every frame vidprep decodes is the frame the ffmpeg CLI decodes, on
//! synthetic sources, every format and codec, field footage and the real footage in
//! `../shared/data`; sparse reading (only the frames targets depend on); colour description,
//! full range and variable frame rates.

mod colour_description;
mod field_cases;
mod format_matrix;
mod full_range;
mod real_footage;
mod seek;
mod sparse_refs;
mod sparse_skip;
mod variable_rate;
