//! The `brain` binary: parses the command line and hands over to the application.

fn main() -> std::process::ExitCode {
    brain::cli::run()
}
