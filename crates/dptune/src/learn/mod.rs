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
#[cfg(test)]
mod testdata;

pub use dpsgd::{Architecture, DpSgd, Schedule, DPSGD_RULES};
pub use metrics::{ExactAccuracy, ExactNegRmse, NoisyAccuracy, NoisyClippedLoss};
pub use model::{Link, Model, Scratch};
pub use objpert::{ObjectivePerturbation, OutputPerturbation, NEWTON_STEPS};
pub use ridge::RidgeSsp;

use crate::error::{Error, Result};
use crate::privacy::Guarantee;
use crate::tune::cost::fits;
use crate::tune::space::Rule;
use crate::tune::Config;

/// The hyperparameter of the regularised learners ([`OutputPerturbation`], [`RidgeSsp`]) and the
/// values it accepts (λ = `regularization` > 0): one rule, shared, so that both learners and
/// every search space checked against them agree on its name and range.
pub const REGULARIZATION_RULES: [Rule; 1] = [Rule::positive("regularization", f64::MAX)];

/// λ from `config` by [`REGULARIZATION_RULES`], refusing any other hyperparameter name: how
/// both regularised learners read their configuration.
pub(crate) fn regularization(config: &Config) -> Result<f64> {
    check_names(config, &REGULARIZATION_RULES)?;
    REGULARIZATION_RULES[0].real(config)
}

/// Refuses a configuration with a hyperparameter the learner has no rule for (the values are
/// checked as they are read, by their rules).
pub(crate) fn check_names(config: &Config, rules: &[Rule]) -> Result<()> {
    match config
        .keys()
        .find(|k| !rules.iter().any(|r| r.name == k.as_str()))
    {
        Some(k) => Err(Error::invalid(
            "hyperparameter",
            k,
            format!(
                "unknown name; this learner reads {}",
                rules.iter().map(|r| r.name).collect::<Vec<_>>().join(", ")
            ),
        )),
        None => Ok(()),
    }
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
    crate::tune::cost::largest_fitting(low, high, 1e-6, |t| fits(allowance, &family(t)?))
}

/// The largest ρ in [1e-12, 1e6] whose ρ-zCDP (in the allowance's neighbour relation) fits
/// `allowance`, or `None`: the budget of every Gaussian release the learners and scorers make.
pub(crate) fn rho_within(allowance: &Guarantee) -> Result<Option<f64>> {
    let n = allowance.neighbours();
    largest_fitting(allowance, |r| Guarantee::zcdp(r, n), 1e-12, 1e6)
}
