//! The one integration test binary (as ripgrep has it): every end-to-end test module of
//! `tests/` is a module here, grouped by feature (a folder per feature: `decode/`, `time/`,
//! `audio/`, `detect/`, `export/`, `annotations/`, `profiles/`, `review/`, `batch/`, `sources/`,
//! `reliability/`, `cli/`; a file where one is enough: `check.rs`, `insert.rs`, `schema.rs`,
//! `architecture.rs`, `oracle_selftest.rs`), with the shared toolkits `common` (the independent
//! ffmpeg/ffprobe oracle, the synthetic video generator and [`common::skip`]; never uses vidprep)
//! and `support` (running the `vidprep` binary, real footage, sidecars, the HTTP server, the
//! WebDriver client). One binary links vidprep once instead of once per file (about 165 MB and a
//! link each). A new test file goes into its feature's folder and that folder's `mod.rs`
//! (cli/Cargo.toml sets `autotests = false`); run one feature's tests with
//! `cargo test --test integration decode::`, one file's with `cargo test --test integration
//! decode::seek::`.
//!
//! The binary is the command line package's test target (`cli/Cargo.toml`: cargo builds a
//! package's binary, `CARGO_BIN_EXE_vidprep`, only for its own tests), so its
//! `CARGO_MANIFEST_DIR` is `cli/`: the tests find the repository's files from [`repo_root`].

mod common;
mod support;

/// The repository's root (fixtures/, docs/, scripts/, src/): the folder above the command line
/// package whose test binary this is.
pub fn repo_root() -> &'static std::path::Path {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("cli/ is in the repository")
}

// The tests by what they test: one folder per feature (its `mod.rs` says what is in it), and a
// file for a feature whose tests fit in one.
mod annotations;
mod architecture;
mod audio;
mod batch;
mod check;
mod cli;
mod decode;
mod detect;
mod export;
mod insert;
mod oracle_selftest;
mod profiles;
mod reliability;
mod review;
mod schema;
mod sources;
mod time;
