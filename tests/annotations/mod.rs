//! Annotations and boxes: reading annotation files (CSV), drawing boxes on video (`overlay`, non-
//! square pixels), and filling keyframes with OpenCV's trackers (`--fill track`, `vidprep track`;
//! the `tracking` feature).

// plain CSV annotations (was tests/csv_annotations.rs)
mod csv_annotations;
// boxes drawn on video (`overlay`) (was tests/overlay.rs)
mod overlay;
// boxes on non-square pixels (was tests/pixel_grid.rs)
mod pixel_grid;
// where `vidprep track` may write (was tests/track_output.rs)
mod track_output;
// keyframe propagation with OpenCV trackers (`tracking` feature) (was tests/tracking.rs)
mod tracking;
// KCF and the noise-aware blend (was tests/tracking_speed.rs)
mod tracking_speed;
