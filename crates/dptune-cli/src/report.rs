//! What a subcommand hands back to `main`: a JSON object for `--json`, serialised from the
//! library's report type of the command ([`Report::of`]), and a human rendering, or a failure
//! with its exit code (0 ok, 2 bad input, 3 refused; library errors are mapped in `flags`,
//! which names the flag the user typed).

use serde_json::Value;

/// A finished command's output in both forms.
pub struct Report {
    /// The object printed by `--json` (exactly one JSON object, a library report by serde).
    pub json: Value,
    /// What a person reads by default.
    pub human: String,
}

impl Report {
    /// The report of a library report type `r`: its JSON by serde (the one spelling of every
    /// field, `dptune::*::report`), and `human`, the text a person reads.
    pub fn of(r: &impl serde::Serialize, human: String) -> Result<Self, Failure> {
        let json = serde_json::to_value(r)
            .map_err(|e| Failure::input(format!("cannot render the report: {e}")))?;
        Ok(Self { json, human })
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

/// Formats a number for people: the one rule for numbers in text output and messages
/// ([`dptune::privacy::fmt_number`], which the library's own texts use too). JSON keeps the full
/// value as a number.
pub fn fmt_param(x: f64) -> String {
    dptune::privacy::fmt_number(x)
}

#[cfg(test)]
mod tests {
    use super::fmt_param;

    #[test]
    fn numbers_have_a_bounded_length() {
        let cases = [
            (0.0, "0"),
            (1.0, "1"),
            (-1.0, "-1"),
            (0.5, "0.5"),
            (38.673_189_4, "38.673189"),
            (1e-5, "1e-5"),
            (1.23456e-5, "1.2346e-5"),
            (1e-300, "1e-300"),
            (1e300, "1e300"),
            (123_456.7, "123456.7"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "inf"),
        ];
        for (x, want) in cases {
            assert_eq!(fmt_param(x), want, "{x}");
        }
    }
}
