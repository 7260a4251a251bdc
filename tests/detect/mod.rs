//! `vidprep detect`: shot boundaries and activity, on generated edits and field footage.

mod end_to_end;
mod field_cases;
