//! The `vidprep` command line: parses arguments into plain values, calls the library, prints
//! results and errors, and maps outcomes to exit codes (0 ok, 1 some items failed, 2 bad usage).

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
