//! Non-private baselines, for evaluation only: random search that picks by exact scores, and
//! the exact-best oracle over given candidates. Their results are wrapped in [`NonPrivate`],
//! which has no guarantee to report and renders as "NOT PRIVATE" (DESIGN.md rule 6).

use std::fmt;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::noise::SecureRng;
use crate::privacy::Guarantee;

use super::candidate::{Learner, PrivateStep};
use super::space::{Config, SearchSpace};
use crate::data::Records;

/// A value computed without any privacy guarantee.
#[derive(Debug, Clone)]
pub struct NonPrivate<T> {
    /// The value.
    pub value: T,
}

impl<T> fmt::Display for NonPrivate<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NOT PRIVATE (non-private baseline, no guarantee)")
    }
}

/// A non-private quality metric (higher is better), for baselines and evaluation.
pub trait ExactScorer<L: Learner>: Sync {
    /// The exact score of `model` on `data`.
    fn exact_score(&self, model: &L::Model, data: &L::Data) -> f64;
}

/// A configuration with its exact score.
#[derive(Debug, Clone)]
pub struct Scored {
    /// The configuration.
    pub config: Config,
    /// Its exact score.
    pub score: f64,
}

/// Trains every configuration with the same per-run allowance as the private tuners, scores it
/// exactly on `eval`, and returns the exact best (ties to the earlier configuration).
pub fn oracle_best<L: Learner, S: ExactScorer<L>>(
    learner: &L,
    scorer: &S,
    configs: &[Config],
    train: &L::Data,
    eval: &L::Data,
    per_run: &Guarantee,
    rng: &mut SecureRng,
) -> Result<NonPrivate<Scored>> {
    if configs.is_empty() || train.is_empty() || eval.is_empty() {
        return Err(Error::invalid(
            "configs",
            configs.len(),
            "need configurations and data",
        ));
    }
    let streams = rng.streams();
    let scored: Vec<Option<Scored>> = configs
        .par_iter()
        .enumerate()
        .map(|(i, c)| {
            let mut r = streams.get(i as u64);
            match learner.fit(c, PrivateStep::new(train, per_run, &mut r)) {
                Ok(m) => Ok(Some(Scored {
                    config: c.clone(),
                    score: scorer.exact_score(&m.value, eval),
                })),
                Err(Error::InvalidParameter { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        })
        .collect::<Result<_>>()?;
    scored
        .into_iter()
        .flatten()
        .reduce(|a, b| if b.score > a.score { b } else { a })
        .map(|value| NonPrivate { value })
        .ok_or_else(|| Error::NoRelease {
            reason: "no configuration could be fitted".into(),
        })
}

/// Non-private random search: `runs` configurations sampled from `space`, picked by exact score.
#[allow(clippy::too_many_arguments)]
pub fn random_search<L: Learner, S: ExactScorer<L>>(
    learner: &L,
    scorer: &S,
    space: &SearchSpace,
    runs: usize,
    train: &L::Data,
    eval: &L::Data,
    per_run: &Guarantee,
    rng: &mut SecureRng,
) -> Result<NonPrivate<Scored>> {
    let configs: Vec<Config> = (0..runs).map(|_| space.sample(rng)).collect();
    oracle_best(learner, scorer, &configs, train, eval, per_run, rng)
}
