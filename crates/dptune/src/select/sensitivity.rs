//! [`Sensitivity`]: how far one neighbour can move each candidate's score, and [`Goal`]: which
//! direction is better.

use serde::Serialize;

use crate::error::{check_positive, Result};

/// Per-candidate sensitivity Δ (sup over neighbours of ‖u(D) − u(D′)‖_∞) plus the `monotonic`
/// flag (for every neighbouring pair all score differences have the same sign).
///
/// Argmax-type selection pays the *range* sensitivity R (THEORY.md §0.2): R = Δ if monotonic,
/// else 2Δ.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Sensitivity {
    delta: f64,
    monotonic: bool,
}

impl Sensitivity {
    /// Δ must be finite and > 0 (error names `sensitivity`).
    pub fn new(delta: f64, monotonic: bool) -> Result<Self> {
        check_positive("sensitivity", delta)?;
        Ok(Self { delta, monotonic })
    }

    /// Non-monotone scores with per-candidate bound Δ (R = 2Δ).
    pub fn general(delta: f64) -> Result<Self> {
        Self::new(delta, false)
    }

    /// Monotone scores with per-candidate bound Δ (R = Δ), e.g. correct-prediction counts under
    /// add/remove-one.
    pub fn monotonic(delta: f64) -> Result<Self> {
        Self::new(delta, true)
    }

    /// The per-candidate bound Δ.
    pub fn delta(&self) -> f64 {
        self.delta
    }

    /// Whether the scores are monotone.
    pub fn is_monotonic(&self) -> bool {
        self.monotonic
    }

    /// The range sensitivity R = Δ (monotone) or 2Δ (general); exact in floating point.
    pub fn range(&self) -> f64 {
        if self.monotonic {
            self.delta
        } else {
            2.0 * self.delta
        }
    }
}

/// Whether higher or lower scores are better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Goal {
    /// Higher is better (the default).
    #[default]
    Maximize,
    /// Lower is better (e.g. losses): scores are negated before selection.
    Minimize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_rule() {
        assert_eq!(Sensitivity::general(1.5).unwrap().range(), 3.0);
        assert_eq!(Sensitivity::monotonic(1.5).unwrap().range(), 1.5);
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = Sensitivity::general(bad).unwrap_err();
            assert!(e.to_string().contains("`sensitivity`"), "{e}");
        }
    }
}
