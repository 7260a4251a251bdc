//! The `vidprep` binary: one call into the command line (`cli/src/lib.rs`), which parses
//! arguments into plain values, calls the library (`vidprep`) by its public API, prints results
//! and errors, and maps outcomes to exit codes (0 ok, 1 some items failed, 2 bad usage).

fn main() -> std::process::ExitCode {
    vidprep_cli::main()
}
