//! The command line as newcomers meet it: guessed flag names, and small defects each pinned by a
//! test (`papercuts`).

mod field_cases;
mod papercuts;
