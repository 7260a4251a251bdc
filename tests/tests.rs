//! The one integration test binary (as ripgrep has it): every end-to-end test module of
//! `tests/` is a module here, with the shared toolkits `common` (the independent ffmpeg/ffprobe
//! oracle and the synthetic video generator; never uses vidprep) and `support` (running the
//! `vidprep` binary, real footage, sidecars, the HTTP server, the WebDriver client). One binary
//! links vidprep once instead of once per file (about 165 MB and a link each). A new test file
//! `tests/NAME.rs` is added to the list below (cli/Cargo.toml sets `autotests = false`); run one
//! module with `cargo test --test integration NAME::`.
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

mod architecture;
mod bad_input;
mod beside;
mod browser_harness;
mod browser_seek;
mod check;
mod colour_description;
mod copy_audio;
mod csv_annotations;
mod cut_truncate;
mod decision_percent;
mod decode_seek;
mod detect;
mod door_parity;
mod export;
mod fault_corpus;
mod fault_hostile;
mod field_audio;
mod field_cli;
mod field_decode;
mod field_detect;
mod field_review;
mod field_time;
mod fleet_memory;
mod format_matrix;
mod frames_given;
mod full_range;
mod fuzz_replay;
mod hostile_memory;
mod insert;
mod model_outputs;
mod net_sources;
mod net_tls;
mod opens_once;
mod oracle_selftest;
mod overlay;
mod papercuts;
mod parity_loaders;
mod payload_requests;
mod payload_vllm;
mod pixel_grid;
mod profiles;
mod profiles_internvl;
mod profiles_more;
mod profiles_odd_size;
mod profiles_papercuts;
mod profiles_resize;
mod profiles_transformers;
mod profiles_vlmeval;
mod real_footage;
mod report_drivers;
mod review;
mod review_boxes;
mod review_hostile;
mod review_model;
mod run;
mod schema;
mod smart;
mod smart_parallel;
mod source_changes;
mod sources;
mod sparse_refs;
mod sparse_skip;
mod track_output;
mod tracking;
mod tracking_speed;
mod variable_rate;
mod video_reproducible;
mod work_once;
