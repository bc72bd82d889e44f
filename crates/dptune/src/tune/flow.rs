//! Split–tune–final (THEORY.md §10), the one flow that `dptune tune` runs
//! ([`crate::learn::pipeline`] plans it for the bundled learners): split the data by coins into
//! a tuning part and a final part, tune on the first, fit the chosen configuration on the
//! second. The parts are disjoint, so both may spend the whole parts' allowance and the total
//! is their parallel composition.
//!
//! Both spends are checked against the allowance before anything of theirs is released: the
//! tuning's whole cost before any candidate runs (its ledger), the final fit's spend before its
//! model is returned (the final part's ledger).

use crate::error::{Error, Result};
use crate::noise::SecureRng;
use crate::privacy::{Guarantee, Ledger, Release};

use super::candidate::{Learner, PrivateStep, Scorer};
use super::space::Config;
use super::split::{split_by_coin, Fractions};
use super::tuner::{TuneOptions, Tuner};
use crate::data::Records;

/// A privately tuned and fitted model.
#[derive(Debug)]
pub struct Tuned<M> {
    /// The chosen configuration (a release of the tuning).
    pub config: Config,
    /// What the tuning spent (all runs and the selection).
    pub tuning: Guarantee,
    /// The final fit (its value and what it spent).
    pub fitted: Release<M>,
    /// Tuning and final fit together: their parallel composition, each also stated in (ε, δ)
    /// at the `delta` the flow was given (the maximum of the parts' ε, which can be much
    /// tighter than converting the pointwise maximum of two RDP curves whose best orders
    /// differ).
    pub parts: Guarantee,
}

/// Tunes with `tuner` (its per-run budget already calibrated so that its cost fits
/// `allowance`) on one coin-split part of `data` and fits the chosen configuration with
/// `final_fit` on the other, each part under `allowance`. A configuration that `final_fit`
/// refuses as invalid is a [`Error::NoRelease`] (the choice is a release: the refusal must not
/// read as bad input). Returns `Ok(None)`, with nothing else released, when the tuning
/// released ⊥.
#[allow(clippy::too_many_arguments)]
pub fn split_tune_final<L, S, M>(
    tuner: &Tuner<'_>,
    learner: &L,
    scorer: &S,
    final_fit: impl FnOnce(&Config, PrivateStep<'_, L::Data>) -> Result<Release<M>>,
    data: &L::Data,
    allowance: &Guarantee,
    fractions: Fractions,
    delta: f64,
    options: &TuneOptions<'_>,
    rng: &mut SecureRng,
) -> Result<Option<Tuned<M>>>
where
    L: Learner,
    S: Scorer<L> + ?Sized,
{
    // The whole tuning is checked against its part's allowance before any candidate runs.
    Ledger::new(allowance.clone())?.charge(&tuner.cost(options)?)?;
    let outer = split_by_coin(data.len(), fractions.tune, rng)?;
    let tuning_data = data.select(&outer.first);
    let inner = split_by_coin(tuning_data.len(), fractions.train, rng)?;
    let selected = tuner.run(learner, scorer, &tuning_data, &inner, options, rng)?;
    let Some(best) = selected.value else {
        return Ok(None);
    };
    let final_data = data.select(&outer.second);
    let final_step = PrivateStep::new(&final_data, allowance, rng);
    let fitted = final_fit(&best.config, final_step).map_err(|e| match e {
        Error::InvalidParameter { .. } => Error::NoRelease {
            reason: format!("the chosen configuration could not be fitted: {e}"),
        },
        other => other,
    })?;
    Ledger::new(allowance.clone())?.charge(&fitted.spent)?;
    let with_approx = |g: &Guarantee| -> Result<Guarantee> {
        let eps = g.epsilon(delta)?;
        g.clone()
            .and(Guarantee::approx(eps, delta, g.neighbours())?)
    };
    // Parallel composition: each record is in one part only.
    let parts = Guarantee::parallel(&[with_approx(&selected.spent)?, with_approx(&fitted.spent)?])?;
    Ok(Some(Tuned {
        config: best.config,
        tuning: selected.spent,
        fitted,
        parts,
    }))
}
