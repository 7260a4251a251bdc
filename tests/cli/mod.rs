//! The command line as newcomers meet it: guessed flag names, and small defects each pinned by a
//! test (`papercuts`).

// flag names newcomers guess (was tests/field_cli.rs)
mod field_cases;
// small defects, each pinned by a test (was tests/papercuts.rs)
mod papercuts;
