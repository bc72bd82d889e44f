//! The one ending of the JSON-line timing examples: the line on stdout and exit 0, or the
//! error on stderr and exit 2 (what the `bench/*/run.sh` scripts check).

use std::process::ExitCode;

/// Prints `result` (a JSON line, or an error prefixed with `prefix`) and returns the exit code.
pub fn report(result: Result<String, String>, prefix: &str) -> ExitCode {
    match result {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{prefix}: {e}");
            ExitCode::from(2)
        }
    }
}
