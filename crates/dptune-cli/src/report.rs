//! What a subcommand hands back to `main`: a JSON object for `--json` and a human rendering
//! (and a plot to write after them), plus the mapping from library errors to exit codes (0 ok,
//! 2 bad input, 3 refused).

use serde_json::Value;

use crate::plot_file::Pending;

/// A finished command's output in both forms.
pub struct Report {
    /// The object printed by `--json` (exactly one JSON object).
    pub json: Value,
    /// What a person reads by default.
    pub human: String,
}

/// What a command hands back to `main`: its report, and a plot to write after the report is
/// printed (`plot_file`: a plot that cannot be written must not lose the report).
pub struct Delivery {
    /// Printed first.
    pub report: Report,
    /// Written after the report (`--plot`).
    pub plot: Option<Pending>,
}

impl From<Report> for Delivery {
    fn from(report: Report) -> Self {
        Self { report, plot: None }
    }
}

/// A failed command: the message and the exit code.
#[derive(Debug)]
pub struct Failure {
    /// Printed to stderr after `error: `.
    pub message: String,
    /// 2 for bad input, 3 for a privacy refusal (budget exceeded, no release).
    pub code: i32,
}

impl Failure {
    /// Bad input that the library did not see (e.g. an unreadable file).
    pub fn input(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            code: 2,
        }
    }
}

impl From<dptune::Error> for Failure {
    fn from(e: dptune::Error) -> Self {
        Self {
            code: if e.is_refusal() { 3 } else { 2 },
            message: e.to_string(),
        }
    }
}

/// Formats a privacy parameter for people: enough digits to compare with papers.
pub fn fmt_param(x: f64) -> String {
    if x == 0.0 || (1e-3..1e6).contains(&x.abs()) {
        format!("{x:.6}")
    } else {
        format!("{x:.4e}")
    }
}
