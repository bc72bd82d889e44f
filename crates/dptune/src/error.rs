//! The one error type of the library.
//!
//! Bad input is always an [`Error::InvalidParameter`] that names the parameter, never a panic and
//! never a silent fallback to a different mechanism (DESIGN.md, "Error"). Refusals that protect
//! privacy are their own variants so that callers (and the CLI's exit code 3) can tell them apart
//! from mistakes.

use std::fmt;

/// Result alias used throughout the library.
pub type Result<T> = std::result::Result<T, Error>;

/// Everything that can go wrong in dptune.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// A caller-supplied value is outside what the mechanism or formula accepts.
    #[error("invalid parameter `{name}` = {value}: {reason}")]
    InvalidParameter {
        /// The parameter's name as the caller knows it (e.g. `epsilon`, `sampling_rate`).
        name: &'static str,
        /// The offending value, rendered for humans.
        value: String,
        /// Why it is refused.
        reason: String,
    },
    /// A charge would push a ledger past its allowance; nothing was released.
    #[error(
        "budget exceeded: charging {requested} to a ledger that has spent {spent} of {allowance}"
    )]
    BudgetExceeded {
        /// The allowance, rendered.
        allowance: String,
        /// What was already spent, rendered.
        spent: String,
        /// The refused charge, rendered.
        requested: String,
    },
    /// The mechanism cannot release anything under the given public inputs (e.g. an empty
    /// split, or a selection overhead that alone exceeds the allowance).
    #[error("no release: {reason}")]
    NoRelease {
        /// Why nothing was released.
        reason: String,
    },
    /// Two guarantees proved under different neighbour relations were combined.
    #[error("neighbour relations differ: {left} vs {right}; convert explicitly first")]
    NeighboursMismatch {
        /// Relation of the first guarantee.
        left: String,
        /// Relation of the second guarantee.
        right: String,
    },
    /// A guarantee cannot be expressed in the requested currency (conversions only go toward
    /// weaker guarantees).
    #[error("cannot convert {from} into {to}: {reason}")]
    Conversion {
        /// The source currency.
        from: String,
        /// The requested currency.
        to: String,
        /// Why the conversion is not available.
        reason: String,
    },
    /// Malformed or inconsistent data (files, schemas, records).
    #[error("data error in {location}: {reason}")]
    Data {
        /// File, line or field.
        location: String,
        /// What is wrong.
        reason: String,
    },
    /// The persistent budget store cannot be used as it is (missing, not a dptune store,
    /// truncated or corrupted, written by a newer dptune, locked too long); nothing was charged
    /// and the file was left as it was.
    #[error("budget store {path}: {reason}")]
    Store {
        /// The store file.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A numerical procedure did not converge or met a non-finite intermediate value.
    #[error("numerical error in {what}: {reason}")]
    Numerical {
        /// The procedure.
        what: &'static str,
        /// What happened.
        reason: String,
    },
}

impl Error {
    /// Shorthand for [`Error::InvalidParameter`].
    pub fn invalid(
        name: &'static str,
        value: impl fmt::Display,
        reason: impl Into<String>,
    ) -> Self {
        Error::InvalidParameter {
            name,
            value: value.to_string(),
            reason: reason.into(),
        }
    }

    /// Shorthand for [`Error::Data`]. A `reason` that quotes file content quotes it through
    /// [`excerpt`].
    pub fn data(location: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Data {
            location: location.into(),
            reason: reason.into(),
        }
    }

    /// True for refusals that protect privacy (budget, no release), as opposed to bad input.
    pub fn is_refusal(&self) -> bool {
        matches!(self, Error::BudgetExceeded { .. } | Error::NoRelease { .. })
    }
}

/// The most characters of file content that an error message quotes (see [`excerpt`]).
pub const EXCERPT_CHARS: usize = 40;

/// The one rule for quoting file content (a field, a key, a column name) in an error message:
/// at most [`EXCERPT_CHARS`] characters, escaped (line breaks, quotes and control characters
/// as Rust escapes, so a message stays one line), and a `…` when the text is longer.
///
/// Why: data files hold private records, and error messages end up in logs. An unterminated
/// quote makes the rest of a file one field; a parser that quotes the offending field whole would
/// print every record after it. An excerpt is enough to find the mistake; the length of what
/// was cut is not shown either (it measures the private data after the mistake).
pub fn excerpt(text: &str) -> String {
    let mut out = String::new();
    let mut shown = 0;
    for c in text.chars() {
        let escaped = c.escape_debug();
        if shown + escaped.len() > EXCERPT_CHARS {
            out.push('…');
            return out;
        }
        shown += escaped.len();
        out.extend(escaped);
    }
    out
}

/// Checks that `value` is finite and strictly positive.
pub fn check_positive(name: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(Error::invalid(name, value, "must be finite and > 0"))
    }
}

/// Checks that `value` is finite and non-negative.
pub fn check_non_negative(name: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(Error::invalid(name, value, "must be finite and >= 0"))
    }
}

/// Checks that a failure probability `delta` lies in [0, 1).
pub fn check_delta(name: &'static str, value: f64) -> Result<f64> {
    if (0.0..1.0).contains(&value) {
        Ok(value)
    } else {
        Err(Error::invalid(name, value, "must lie in [0, 1)"))
    }
}

/// Checks that a probability lies in the open interval (0, 1).
pub fn check_open_unit(name: &'static str, value: f64) -> Result<f64> {
    if value > 0.0 && value < 1.0 {
        Ok(value)
    } else {
        Err(Error::invalid(name, value, "must lie in (0, 1)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_name_the_parameter() {
        let e = check_positive("epsilon", f64::NAN).unwrap_err();
        assert!(e.to_string().contains("`epsilon`"), "{e}");
        assert!(check_positive("epsilon", 0.0).is_err());
        assert!(check_positive("epsilon", f64::INFINITY).is_err());
        assert_eq!(check_positive("epsilon", 0.5), Ok(0.5));
        assert!(check_delta("delta", 1.0).is_err());
        assert!(check_delta("delta", -1e-9).is_err());
        assert_eq!(check_delta("delta", 0.0), Ok(0.0));
        assert!(check_open_unit("gamma", 1.0).is_err());
        assert!(!check_delta("delta", 2.0).unwrap_err().is_refusal());
    }

    #[test]
    fn excerpts_are_short_escaped_and_marked_when_cut() {
        assert_eq!(excerpt("0.5"), "0.5");
        assert_eq!(excerpt("a\"b\nc"), "a\\\"b\\nc");
        let exact = "x".repeat(EXCERPT_CHARS);
        assert_eq!(excerpt(&exact), exact, "exactly the limit is shown whole");
        let long = format!("{exact}SECRET");
        assert_eq!(excerpt(&long), format!("{exact}…"));
        // Escapes count toward the limit: 40 line breaks show as 20 `\n`.
        let lines = "\n".repeat(40);
        assert_eq!(excerpt(&lines), format!("{}…", "\\n".repeat(20)));
        let big = "y".repeat(2_000_000);
        assert_eq!(excerpt(&big).chars().count(), EXCERPT_CHARS + 1);
    }
}
