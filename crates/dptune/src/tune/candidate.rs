//! The Learner and Scorer traits, and the private candidate that combines them.
//!
//! A candidate run trains on one side of a coin split and scores on the other (THEORY.md §0.3:
//! the score must be private too). The two sides are disjoint, so the run's guarantee is the
//! parallel composition of the fit's and the score's, and each may spend the whole per-run
//! allowance. The framework checks every spend against the allowance with a [`Ledger`]: a learner
//! or scorer that over-spends is an error, never silently accepted.

use crate::data::Records;
use crate::error::{Error, Result};
use crate::noise::SecureRng;
use crate::privacy::{Guarantee, Ledger, Release};

use super::space::Config;
use super::split::Split;

/// One private step (a fit or a score): the records it reads, what it may spend on them, and
/// where its noise comes from. The three always travel together: the allowance's neighbour
/// relation is about these records, and the noise must come from the caller's stream (so that a
/// seeded run gives the same result on 1 or N threads). A private step takes them as one value;
/// a non-private one (an [`super::baseline::ExactScorer`]) takes the records alone.
pub struct PrivateStep<'a, D> {
    /// The records the step reads (private).
    pub data: &'a D,
    /// What the step may spend on them, in the allowance's currency and neighbour relation: the
    /// caller checks what the step reports as spent against it.
    pub allowance: &'a Guarantee,
    /// Where the step's noise comes from.
    pub rng: &'a mut SecureRng,
}

impl<'a, D> PrivateStep<'a, D> {
    /// A step on `data` within `allowance`, drawing from `rng`.
    pub fn new(data: &'a D, allowance: &'a Guarantee, rng: &'a mut SecureRng) -> Self {
        Self {
            data,
            allowance,
            rng,
        }
    }
}

/// A differentially private training algorithm with hyperparameters.
pub trait Learner: Sync {
    /// The data it trains on.
    type Data: Records;
    /// What it produces.
    type Model: Send;
    /// Fits `config` on the step's data, spending at most its allowance (in the allowance's
    /// currency), and returns the model with what it spent. An `Error::InvalidParameter` means
    /// the configuration itself is unusable (data-independent); any other error is treated as
    /// data-dependent.
    fn fit(
        &self,
        config: &Config,
        step: PrivateStep<'_, Self::Data>,
    ) -> Result<Release<Self::Model>>;
}

/// A differentially private quality metric of a fitted model on evaluation data (higher is
/// better).
pub trait Scorer<L: Learner>: Sync {
    /// Scores `model` on the step's data, spending at most its allowance.
    fn score(&self, model: &L::Model, step: PrivateStep<'_, L::Data>) -> Result<Release<f64>>;
}

/// One finished candidate run: the configuration, the model and its private score.
#[derive(Debug, Clone)]
pub struct Candidate<M> {
    /// The configuration that was trained.
    pub config: Config,
    /// The trained model.
    pub model: M,
    /// The private score (higher is better).
    pub score: f64,
}

/// How a candidate run ended.
#[derive(Debug)]
pub enum RunResult<M> {
    /// A model and its private score.
    Scored(Candidate<M>),
    /// The configuration was refused as invalid before touching data (a data-independent
    /// failure); it counts as a run with the worst possible score.
    Unusable,
}

/// A learner and a scorer run on the two sides of a split under one per-run allowance.
pub struct PrivateCandidate<'a, L: Learner, S: Scorer<L> + ?Sized> {
    learner: &'a L,
    scorer: &'a S,
}

impl<'a, L: Learner, S: Scorer<L> + ?Sized> PrivateCandidate<'a, L, S> {
    /// Combines a learner and a scorer.
    pub fn new(learner: &'a L, scorer: &'a S) -> Self {
        Self { learner, scorer }
    }

    /// Trains `config` on `split.first` and scores on `split.second` of `data`, each within
    /// `allowance`. Failures: `InvalidParameter` from the learner becomes
    /// [`RunResult::Unusable`] (safe because it does not depend on the data: the worst score is
    /// what any run could have produced); every other error aborts, since a data-dependent
    /// failure that was silently turned into a score would leak.
    pub fn run(
        &self,
        config: Config,
        data: &L::Data,
        split: &Split,
        allowance: &Guarantee,
        rng: &mut SecureRng,
    ) -> Result<RunResult<L::Model>> {
        if split.first.len() + split.second.len() != data.len() {
            return Err(Error::Data {
                location: "tuning split".into(),
                reason: format!(
                    "train ({}) + eval ({}) != tuning data size ({})",
                    split.first.len(),
                    split.second.len(),
                    data.len()
                ),
            });
        }
        let train = data.select(&split.first);
        let eval = data.select(&split.second);
        let fitted = match self
            .learner
            .fit(&config, PrivateStep::new(&train, allowance, rng))
        {
            Ok(f) => f,
            Err(Error::InvalidParameter { .. }) => return Ok(RunResult::Unusable),
            Err(e) => return Err(e),
        };
        Ledger::new(allowance.clone())?.charge(&fitted.spent)?;
        let scored = self
            .scorer
            .score(&fitted.value, PrivateStep::new(&eval, allowance, rng))?;
        Ledger::new(allowance.clone())?.charge(&scored.spent)?;
        if !scored.value.is_finite() {
            return Err(Error::Numerical {
                what: "candidate score",
                reason: "the scorer returned a non-finite score".into(),
            });
        }
        Ok(RunResult::Scored(Candidate {
            config,
            model: fitted.value,
            score: scored.value,
        }))
    }
}
