//! Annotations and boxes: reading annotation files (CSV), drawing boxes on video (`overlay`, non-square
//! pixels), and filling keyframes with OpenCV's trackers (`--fill track`, `vidprep track`; the
//! `tracking` feature).

mod csv_annotations;
mod overlay;
mod pixel_grid;
mod track_output;
mod tracking;
mod tracking_speed;
