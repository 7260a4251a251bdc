//! The `vidprep` command line (`src/cli/`, compiled into the library with the `cli` feature):
//! parses arguments into plain values, calls the library, prints results and errors, and maps
//! outcomes to exit codes (0 ok, 1 some items failed, 2 bad usage).

fn main() -> std::process::ExitCode {
    vidprep::cli_main()
}
