//! Every byte the CLI prints goes through here, so that a closed pipe or a full disk ends the
//! command with an exit status instead of a panic (`println!` panics, exit 101, when standard
//! output cannot be written).
//!
//! The policy:
//! * standard output (the report): written in one piece and flushed, and the error checked. A
//!   reader that closed the pipe (`dptune … | head -0`, EPIPE) ends the command quietly with
//!   status 141, the status a shell reports for a program killed by SIGPIPE: what `cat` or `seq`
//!   give in the same pipeline, so `set -o pipefail` scripts treat dptune like any other
//!   producer, and the status still says the report was not read in full (0 would claim it
//!   was). Any other write error (a full disk, an I/O error) prints a message on standard error
//!   and exits 2.
//! * standard error (messages, progress): best effort. When it cannot be written there is
//!   nowhere left to report that, and losing a progress line must not stop a run.
//!
//! Nothing here undoes work already done: a `--budget` charge is committed before the
//! mechanism runs and the report is printed, so a report that cannot be written still counts
//! against the budget (the release happened; only its delivery failed). For the same reason
//! `main` prints the report before it writes a `--plot` file (`plot_file`): a plot that cannot
//! be written ends the command with status 2 after the report, never instead of it.

use std::io::{self, ErrorKind, Write};
use std::process::ExitCode;

/// The status of a command whose reader closed standard output early (128 + SIGPIPE).
pub const BROKEN_PIPE: u8 = 141;

/// Writes `text` and a newline to standard output and flushes it.
pub fn report(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.write_all(b"\n")?;
    out.flush()
}

/// Writes `text` and a newline to standard error, ignoring failure (see the module doc).
pub fn note(text: &str) {
    let mut err = io::stderr().lock();
    let _ = err
        .write_all(text.as_bytes())
        .and_then(|()| err.write_all(b"\n"));
}

/// The exit status after standard output could not be written: quiet 141 for a closed pipe,
/// else a message and 2.
pub fn failed(e: &io::Error) -> ExitCode {
    if e.kind() == ErrorKind::BrokenPipe {
        return ExitCode::from(BROKEN_PIPE);
    }
    note(&format!("error: cannot write to standard output: {e}"));
    ExitCode::from(2)
}

/// Prints clap's help, version or usage error (help and version go to standard output, which
/// is flushed and checked like a report) and returns its status.
pub fn clap(e: &clap::Error) -> ExitCode {
    match e.print().and_then(|()| io::stdout().flush()) {
        Err(w) if !e.use_stderr() => failed(&w),
        // A usage error that could not be shown on standard error still has its status.
        _ => ExitCode::from(e.exit_code() as u8),
    }
}
