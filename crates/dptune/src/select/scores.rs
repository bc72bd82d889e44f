//! [`Scores`]: the public description of one selection (the scores, which direction is better,
//! and how far one neighbour can move each score), validated once before any mechanism is built
//! on it.

use crate::error::{Error, Result};

use super::{Goal, Sensitivity, Snapped};

/// The candidates of one selection: their scores, the [`Goal`], and the [`Sensitivity`] of each
/// score. Every mechanism that reads a per-candidate Δ is built from one (with the allowance it
/// may spend), so the checks that are common to all of them (the rules in the module docs:
/// at least two candidates, no NaN, no score that would always win, at least one that can win,
/// Δ > 0) are made once, here, and each constructor checks only what is its own (the
/// allowance's currency, k, the L2 bound).
///
/// It borrows the scores: several mechanisms built on one `Scores` (as the utility study's
/// permute-and-flip arm does) share one validation, and each copies only what it keeps.
#[derive(Debug, Clone, Copy)]
pub struct Scores<'a> {
    raw: &'a [f64],
    goal: Goal,
    sensitivity: Sensitivity,
    finite: usize,
}

impl<'a> Scores<'a> {
    /// Validates `scores` for `goal` (errors name `scores`; the sensitivity was checked when it
    /// was made).
    pub fn new(scores: &'a [f64], goal: Goal, sensitivity: Sensitivity) -> Result<Self> {
        let finite = validate(scores, goal)?;
        Ok(Self {
            raw: scores,
            goal,
            sensitivity,
            finite,
        })
    }

    /// The number of candidates that are not excluded (can be selected).
    pub fn selectable(&self) -> usize {
        self.finite
    }

    /// The per-candidate sensitivity.
    pub fn sensitivity(&self) -> Sensitivity {
        self.sensitivity
    }

    /// The scores oriented so that higher is better (excluded candidates are −∞).
    pub(crate) fn oriented(&self) -> Vec<f64> {
        orient(self.raw, self.goal).collect()
    }

    /// The oriented scores snapped to the default grid for Δ, in one pass (no oriented copy:
    /// at 10⁶ candidates a separate pass and copy were about a quarter of a permute-and-flip
    /// draw).
    pub(crate) fn snapped(&self) -> Snapped {
        Snapped::new(orient(self.raw, self.goal), self.sensitivity.delta())
    }
}

/// Validates a score vector and orients it so that higher is better: for mechanisms that take
/// per-candidate sensitivities instead of one [`Sensitivity`] (GEM).
pub(crate) fn oriented_scores(scores: &[f64], goal: Goal) -> Result<Vec<f64>> {
    validate(scores, goal)?;
    Ok(orient(scores, goal).collect())
}

/// The scores with higher better (minimising negates them; −∞ stays "excluded").
fn orient(scores: &[f64], goal: Goal) -> impl ExactSizeIterator<Item = f64> + '_ {
    let sign = sign(goal);
    scores.iter().map(move |&s| sign * s)
}

fn sign(goal: Goal) -> f64 {
    match goal {
        Goal::Maximize => 1.0,
        Goal::Minimize => -1.0,
    }
}

/// The checks of the module docs; returns the number of selectable candidates.
fn validate(scores: &[f64], goal: Goal) -> Result<usize> {
    if scores.is_empty() {
        return Err(Error::invalid(
            "scores",
            "[]",
            "no candidates to select from",
        ));
    }
    if scores.len() == 1 {
        return Err(Error::invalid(
            "scores",
            format!("{scores:?}"),
            "a single candidate: there is nothing private to choose; release it without a \
             mechanism",
        ));
    }
    let sign = sign(goal);
    let mut finite = 0;
    for (i, &s) in scores.iter().enumerate() {
        let v = sign * s;
        if v.is_nan() || v == f64::INFINITY {
            return Err(Error::invalid(
                "scores",
                s,
                format!(
                    "candidate {i}: scores must be finite or mark a never-selected candidate \
                     with {}",
                    if sign > 0.0 {
                        "-inf"
                    } else {
                        "+inf when minimising"
                    }
                ),
            ));
        }
        finite += usize::from(v.is_finite());
    }
    if finite == 0 {
        return Err(Error::invalid(
            "scores",
            "all excluded",
            "every candidate is excluded (infinite); at least one must be finite",
        ));
    }
    Ok(finite)
}
