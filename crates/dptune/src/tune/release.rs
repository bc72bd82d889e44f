//! What a tuning releases: the private half of [`super::Tuner::run`], scores in, winner out.
//!
//! Drawn together with the [`super::schedule::Schedule`], the rule holds what must not leave
//! it: the number of runs K (only the first min(K, T) executed runs count), the method's
//! threshold, and the whole tuning's guarantee (public: computed before any run). Given the
//! runs' private scores it names the winner: the best score among the runs that count (ties to
//! the lower run index), or with a threshold the lowest-index run whose score reaches it; no
//! winner (⊥) when no run qualifies. A run whose configuration was refused as unusable has no
//! score and never wins.

use crate::error::{Error, Result};
use crate::privacy::{Guarantee, Release};

use super::candidate::Candidate;

/// What a tuning releases: the best candidate, or `None` (⊥) where the method can end without
/// one, together with the whole tuning's guarantee. Never the number of runs.
pub type Selected<M> = Release<Option<Candidate<M>>>;

/// The release rule of one drawn tuning (see the module doc).
#[derive(Debug, Clone)]
pub struct ReleaseRule {
    /// K: runs at index ≥ K were executed only to hide K (capped tuning) and never count.
    counted: u64,
    /// The number of executed runs, i.e. of scores expected.
    executed: u64,
    threshold: Option<f64>,
    spent: Guarantee,
}

impl ReleaseRule {
    pub(super) fn new(
        counted: u64,
        executed: u64,
        threshold: Option<f64>,
        spent: Guarantee,
    ) -> Self {
        Self {
            counted: counted.min(executed),
            executed,
            threshold,
            spent,
        }
    }

    /// What the whole tuning spends (public: computed before any run).
    pub fn spent(&self) -> &Guarantee {
        &self.spent
    }

    /// Whether run `index` with `score` may win: it counts and, with a threshold, reaches it.
    pub(super) fn admits(&self, index: u64, score: f64) -> bool {
        index < self.counted && !score.is_nan() && self.threshold.is_none_or(|t| score >= t)
    }

    /// Whether admitted run `a` = (index, score) beats admitted run `b`: the lower index with a
    /// threshold (the first run that reaches it), else the higher score, ties to the lower index.
    pub(super) fn prefers(&self, a: (u64, f64), b: (u64, f64)) -> bool {
        match self.threshold {
            Some(_) => a.0 < b.0,
            None => a.1 > b.1 || (a.1 == b.1 && a.0 < b.0),
        }
    }

    /// The winner's index among the executed runs' scores (in task order; `None` for a run whose
    /// configuration was unusable), or `None` (⊥). One score per executed task is required.
    pub fn winner(&self, scores: &[Option<f64>]) -> Result<Option<u64>> {
        if scores.len() as u64 != self.executed {
            return Err(Error::invalid(
                "scores",
                scores.len(),
                "need one score per task of the schedule",
            ));
        }
        let mut best: Option<(u64, f64)> = None;
        for (i, s) in scores.iter().enumerate() {
            let Some(s) = *s else { continue };
            let run = (i as u64, s);
            if self.admits(run.0, s) && best.is_none_or(|b| self.prefers(run, b)) {
                best = Some(run);
            }
        }
        Ok(best.map(|(i, _)| i))
    }

    /// The release of the winning candidate (or ⊥) with the whole tuning's guarantee.
    pub fn release<M>(&self, winner: Option<Candidate<M>>) -> Selected<M> {
        Release {
            value: winner,
            spent: self.spent.clone(),
        }
    }
}
