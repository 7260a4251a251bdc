//! Decoding and seeking: every frame vidprep decodes is the frame the ffmpeg CLI decodes, on
//! synthetic sources, every format and codec, field footage and the real footage in
//! `../shared/data`; sparse reading (only the frames targets depend on); colour description, full
//! range and variable frame rates.

// a source's YCbCr matrix and range reach swscale (was tests/colour_description.rs)
mod colour_description;
// field footage: RGB codecs, palettes, damaged and odd streams (was tests/field_decode.rs)
mod field_cases;
// frame identity on every codec and container (was tests/format_matrix.rs)
mod format_matrix;
// full-range sources give ffmpeg's RGB (was tests/full_range.rs)
mod full_range;
// the real footage in ../shared/data (was tests/real_footage.rs)
mod real_footage;
// every frame and seek against the ffmpeg CLI, CFR and VFR (was tests/decode_seek.rs)
mod seek;
// sparse reading leaves out unneeded H.264 reference frames (was tests/sparse_refs.rs)
mod sparse_refs;
// sparse reading decodes only what its targets depend on (was tests/sparse_skip.rs)
mod sparse_skip;
// whether `probe` calls a rate variable (was tests/variable_rate.rs)
mod variable_rate;
