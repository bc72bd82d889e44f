//! DP learners worth tuning, and DP quality metrics.
//!
//! Learners ([`crate::tune::Learner`] on [`crate::data::Dataset`]):
//! * [`OutputPerturbation`] (and [`ObjectivePerturbation`], its replace-one form that
//!   `--learner objpert` runs): logistic regression by output perturbation of a certified
//!   minimiser (Chaudhuri, Monteleoni & Sarwate 2011), hyperparameter `regularization`;
//! * [`DpSgd`]: DP-SGD for logistic/softmax regression or a small MLP, hyperparameters
//!   `learning_rate`, `clip_norm`, `epochs`, `batch_size` (and optionally `noise_multiplier`;
//!   by default it is calibrated from the per-run allowance);
//! * [`RidgeSsp`]: ridge regression by sufficient-statistics perturbation, hyperparameter
//!   `regularization`.
//!
//! Scorers ([`crate::tune::Scorer`]): [`NoisyAccuracy`] (noisy correct count, Δ = 1, monotone
//! under add/remove) and [`NoisyClippedLoss`] (noisy clipped log-loss or squared error);
//! exact, non-private scorers for baselines: [`ExactAccuracy`], [`ExactNegRmse`].
//!
//! Every learner spends at most its allowance, checked in the allowance's own currency with
//! the same comparison the [`crate::privacy::Ledger`] uses ([`crate::tune::cost::fits`]).

mod certified;
mod dpsgd;
mod metrics;
mod model;
mod objpert;
pub mod pipeline;
mod resources;
mod ridge;

pub use dpsgd::{Architecture, DpSgd, Schedule, DPSGD_KEYS};
pub use metrics::{ExactAccuracy, ExactNegRmse, NoisyAccuracy, NoisyClippedLoss};
pub use model::{Link, Model, Scratch};
pub use objpert::{ObjectivePerturbation, OutputPerturbation, NEWTON_STEPS, OBJPERT_KEYS};
pub use ridge::{RidgeSsp, RIDGE_KEYS};

use crate::error::{Error, Result};
use crate::privacy::Guarantee;
use crate::tune::cost::fits;
use crate::tune::{Config, SearchSpace};

/// Refuses a configuration with a hyperparameter the learner does not read.
pub(crate) fn check_keys(config: &Config, known: &[&str]) -> Result<()> {
    match config.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(Error::invalid(
            "hyperparameter",
            k,
            format!("unknown name; this learner reads {}", known.join(", ")),
        )),
        None => Ok(()),
    }
}

/// Checks a search space against a learner's hyperparameter names (`known`) and the ones it
/// requires (`required`), before any run: the error names the offending hyperparameter.
pub fn check_space(space: &SearchSpace, known: &[&str], required: &[&str]) -> Result<()> {
    for name in space.names() {
        if !known.contains(&name) {
            return Err(Error::invalid(
                "hyperparameter",
                name,
                format!("unknown name; this learner reads {}", known.join(", ")),
            ));
        }
    }
    for r in required {
        if !space.names().any(|n| n == *r) {
            return Err(Error::invalid(
                "hyperparameter",
                r,
                "missing from the search space",
            ));
        }
    }
    Ok(())
}

/// A real hyperparameter, or an error naming it.
pub(crate) fn get_f64(config: &Config, name: &'static str) -> Result<f64> {
    config
        .get(name)
        .ok_or_else(|| Error::invalid(name, "(missing)", "required hyperparameter"))?
        .as_f64(name)
}

/// An integer hyperparameter, or an error naming it.
pub(crate) fn get_i64(config: &Config, name: &'static str) -> Result<i64> {
    config
        .get(name)
        .ok_or_else(|| Error::invalid(name, "(missing)", "required hyperparameter"))?
        .as_i64(name)
}

/// The largest `t` in `[low, high]` (bisection to a relative 1e-6, rounded toward `low`) such
/// that `family(t)` fits `allowance`; `None` if even `family(low)` does not. `family` must spend
/// more as `t` grows.
pub(crate) fn largest_fitting(
    allowance: &Guarantee,
    family: impl Fn(f64) -> Result<Guarantee>,
    low: f64,
    high: f64,
) -> Result<Option<f64>> {
    if !fits(allowance, &family(low)?)? {
        return Ok(None);
    }
    if fits(allowance, &family(high)?)? {
        return Ok(Some(high));
    }
    let (mut lo, mut hi) = (low, high);
    while hi > lo * (1.0 + 1e-6) {
        let mid = (lo * hi).sqrt();
        if fits(allowance, &family(mid)?)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(Some(lo))
}
