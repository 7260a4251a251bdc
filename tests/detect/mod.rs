//! `vidprep detect`: shot boundaries and activity, on generated edits and field footage.

// `vidprep detect` end to end: cuts, fades, dissolves, activity (was tests/detect.rs)
mod end_to_end;
// detect on field edits: letterbox, short shots, flashes (was tests/field_detect.rs)
mod field_cases;
