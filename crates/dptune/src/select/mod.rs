//! Choosing among scored candidates privately (DESIGN.md, "select/").
//!
//! Every mechanism with a per-candidate Δ is built from one validated [`Scores`] (the scores,
//! the [`Goal`] and the [`Sensitivity`]) and the allowance it may spend.
//!
//! One small module per mechanism; each has a validating constructor and implements
//! [`Selector`]: a [`Release`] with the
//! [`Guarantee`] it spent, and a `select_charged` path that charges a
//! [`Ledger`] *before* any noise is drawn. Front ends build a mechanism
//! by name through the one dispatch [`Mechanism::build`] ([`Spec`], [`Prepared`]).
//!
//! | mechanism | module | charge |
//! |---|---|---|
//! | exponential mechanism (exact rejection) | [`exponential`] | ε pure and ε²/8 zCDP |
//! | report-noisy-max, Gumbel noise (= EM) | [`gumbel`] | ε pure and ε²/8 zCDP |
//! | report-noisy-max, Laplace noise | [`laplace`] | ε pure |
//! | permute-and-flip (= exponential noise) | [`permute_flip`] | ε pure |
//! | Gaussian argmax (L2 calibration) | [`gaussian`] | (ε, δ) and ρ-zCDP |
//! | generalized EM | [`gem`] | ε pure |
//! | noisy top-k (ε is the total: k rounds of ε/k) | [`top_k`] | ε pure (and ε²/(8k) zCDP for Gumbel) |
//! | sparse vector (its own mechanism) | [`sparse_vector`] | ε₁ + ε₂ pure |
//! | noisy summary statistics | [`summary`] | per statistic |
//!
//! **Common conventions.**
//! * Scores: higher is better; [`Goal::Minimize`] negates them.
//! * Bad input is an error naming the parameter: empty score vectors, a single candidate (there
//!   is nothing private to choose; release it without a mechanism), NaN, +∞ (−∞ when
//!   minimising), a non-positive sensitivity ([`Scores::new`] and [`Sensitivity::new`] check
//!   them once for every mechanism).
//! * −∞ (+∞ when minimising) marks a candidate that **can never win**: it is selected with
//!   probability 0. Excluding a candidate must not depend on the private data (a
//!   data-dependent filter before selection is not DP, THEORY.md §15); at least one candidate
//!   must be finite.
//! * Exactness: scores are snapped to a power-of-two grid with the rounding charged as a
//!   slightly larger range (see `exact.rs`); sampling is exact integer arithmetic (THEORY.md
//!   §14.4). `probabilities()` are the exact probabilities of the implemented (snapped)
//!   mechanism, which differ from the textbook closed form by a relative error of order
//!   2^−40·ε·(u_max − u_min)/R.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

mod build;
mod exact;
pub mod exponential;
pub mod gaussian;
pub mod gem;
pub mod gumbel;
pub mod laplace;
mod lazy_max;
pub mod permute_flip;
pub mod report;
mod scores;
mod sensitivity;
pub mod sparse_vector;
pub mod summary;
pub mod top_k;

pub use build::{Prepared, Selection, Spec, PF_PROBABILITIES_MAX};
pub use exponential::ExponentialMechanism;
pub use gaussian::{GaussianArgmax, L2Sensitivity};
pub use gem::GeneralizedExponential;
pub use gumbel::GumbelMax;
pub use laplace::LaplaceNoisyMax;
pub use permute_flip::PermuteAndFlip;
pub(crate) use scores::oriented_scores;
pub use scores::Scores;
pub use sensitivity::{Goal, Sensitivity};
pub use sparse_vector::SparseVector;
pub use top_k::{NoisyTopK, TopKMethod};

use exact::{Grid, Rate, EXCLUDED};

use crate::noise::SecureRng;
use crate::privacy::{Guarantee, Ledger, Release};

/// A selection mechanism prepared on its scores: what one selection spends, the draw, and the
/// charged path every caller uses (the CLI, the Python bindings, the tuners). The charge is a
/// function of the public inputs only and is made *before* the draw, so a refused charge draws
/// nothing; that order is written once, here.
pub trait Selector {
    /// What a selection releases: one index, or the ordered indices of top-k.
    type Output;

    /// What one selection spends.
    fn guarantee(&self) -> &Guarantee;

    /// One draw, with no accounting: the caller must account for [`Selector::guarantee`]
    /// (use [`Selector::select_charged`] unless the charge is made elsewhere).
    fn draw(&self, rng: &mut SecureRng) -> Self::Output;

    /// One draw together with what it spent.
    fn select(&self, rng: &mut SecureRng) -> Release<Self::Output> {
        Release {
            value: self.draw(rng),
            spent: self.guarantee().clone(),
        }
    }

    /// Charges `ledger` first (refusing with `BudgetExceeded` and drawing nothing if the
    /// guarantee does not fit), then selects.
    fn select_charged(
        &self,
        ledger: &mut Ledger,
        rng: &mut SecureRng,
    ) -> Result<Release<Self::Output>> {
        ledger.charge(self.guarantee())?;
        Ok(self.select(rng))
    }
}

/// Grid resolution: a per-candidate sensitivity Δ spans 2^GRID_BITS to 2^(GRID_BITS+1) steps.
const GRID_BITS: i32 = 40;

/// The selection mechanisms by name (as used by the CLI's `--mechanism`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mechanism {
    /// [`ExponentialMechanism`].
    Exponential,
    /// [`GumbelMax`].
    Gumbel,
    /// [`LaplaceNoisyMax`].
    Laplace,
    /// [`PermuteAndFlip`].
    PermuteAndFlip,
    /// [`GaussianArgmax`].
    Gaussian,
    /// [`GeneralizedExponential`].
    Gem,
    /// [`NoisyTopK`].
    TopK,
    /// Not a selection mechanism: see [`sparse_vector`]. Asking for it is refused by
    /// [`Mechanism::as_selection`].
    SparseVector,
}

impl Mechanism {
    /// Names accepted by [`FromStr`].
    pub const NAMES: [&'static str; 8] = [
        "exponential",
        "gumbel",
        "laplace",
        "permute-and-flip",
        "gaussian",
        "gem",
        "top-k",
        "sparse-vector",
    ];

    /// The names of the mechanisms that release one index (every name but top-k's and the
    /// sparse vector technique's): what `dptune.select` in Python accepts, listed there as
    /// `dptune.MECHANISMS`.
    pub fn single_index_names() -> Vec<&'static str> {
        Self::NAMES
            .into_iter()
            .filter(|n| {
                n.parse::<Self>()
                    .is_ok_and(|m| !matches!(m, Mechanism::TopK | Mechanism::SparseVector))
            })
            .collect()
    }

    /// Checks that this is a selection mechanism. The sparse vector technique answers a
    /// different question (the first scores above a threshold, with its own accounting) and is
    /// refused with an error pointing to [`sparse_vector::SparseVector`].
    pub fn as_selection(self) -> Result<Self> {
        if self == Mechanism::SparseVector {
            return Err(not_a_selection());
        }
        Ok(self)
    }
}

/// Why the sparse vector technique is refused where a selection mechanism is asked for.
fn not_a_selection() -> Error {
    Error::invalid(
        "mechanism",
        "sparse-vector",
        "the sparse vector technique is not a selection mechanism: it reports which scores \
         exceed a threshold, with its own budget split; use \
         dptune::select::sparse_vector::SparseVector",
    )
}

impl fmt::Display for Mechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = *self as usize;
        f.write_str(Self::NAMES[i])
    }
}

impl FromStr for Mechanism {
    type Err = Error;
    /// The serde (kebab-case) name, which [`Mechanism::NAMES`] lists in declaration order.
    fn from_str(s: &str) -> Result<Self> {
        use serde::de::{value, IntoDeserializer};
        Self::deserialize(IntoDeserializer::<value::Error>::into_deserializer(s)).map_err(|_| {
            Error::invalid(
                "mechanism",
                s,
                format!("expected one of {}", Self::NAMES.join(", ")),
            )
        })
    }
}

/// The ε of a pure-ε allowance. A mechanism calibrated to one pure ε reads it from an
/// allowance of exactly one pure bound (as a [`Ledger`] allowance is one bound), so that
/// everything it spends fits the allowance: a pure ε taken from a richer allowance would ignore
/// its other bounds (a zCDP ρ smaller than ε²/8, say). Anything else is an invalid `allowance`
/// whose reason names `mechanism`. The neighbour relation is the allowance's.
pub(crate) fn pure_allowance(allowance: &Guarantee, mechanism: &str) -> Result<f64> {
    match allowance.as_approx() {
        Some((eps, 0.0)) => Ok(eps),
        _ => Err(Error::invalid(
            "allowance",
            allowance,
            format!("{mechanism} needs a pure-epsilon allowance (one pure bound)"),
        )),
    }
}

/// Scores snapped to a grid: integers (or [`EXCLUDED`]), their maximum, and the grid.
#[derive(Debug, Clone)]
pub(crate) struct Snapped {
    pub vals: Vec<i128>,
    pub max: i128,
    pub grid: Grid,
}

impl Snapped {
    /// Snaps oriented scores (higher is better, −∞ excluded, already validated) to the default
    /// grid for sensitivity `delta`, finding their maximum in the same pass.
    pub fn new(oriented: impl ExactSizeIterator<Item = f64>, delta: f64) -> Self {
        let grid = Grid::for_delta(delta, GRID_BITS);
        let mut vals = Vec::with_capacity(oriented.len());
        let mut max = EXCLUDED;
        for x in oriented {
            let v = grid.snap(x);
            max = max.max(v);
            vals.push(v);
        }
        Self { vals, max, grid }
    }

    /// Wraps already snapped values.
    pub fn from_vals(vals: Vec<i128>, grid: Grid) -> Self {
        let max = vals.iter().copied().max().unwrap_or(EXCLUDED);
        Self { vals, max, grid }
    }

    /// Range sensitivity in grid steps: Δ_steps (monotone) or 2·Δ_steps.
    pub fn range_steps(&self, monotonic: bool) -> u128 {
        if monotonic {
            self.grid.delta_steps
        } else {
            2 * self.grid.delta_steps
        }
    }

    /// max − v_i in steps, or `None` for an excluded candidate.
    #[inline]
    pub fn gap(&self, i: usize) -> Option<u128> {
        gap(self.max, self.vals[i])
    }
}

/// Scores snapped for a per-candidate sensitivity Δ and the exact rate c = ε/R on that grid
/// (R = Δ monotone or 2Δ, in grid steps, the rounding included), for the ε of a pure allowance:
/// what the exponential mechanism, permute-and-flip, report-noisy-max with Laplace noise and
/// top-k all start from.
#[derive(Debug, Clone)]
pub(crate) struct Calibrated {
    pub snapped: Snapped,
    /// R in grid steps.
    pub steps: u128,
    pub rate: Rate,
    /// The allowance's ε.
    pub epsilon: f64,
}

impl Calibrated {
    /// Snaps `scores` and calibrates for the ε of `allowance` ([`pure_allowance`]: an error
    /// naming `allowance` and `mechanism` unless it is one pure-ε bound).
    pub fn new(scores: &Scores<'_>, allowance: &Guarantee, mechanism: &str) -> Result<Self> {
        let epsilon = pure_allowance(allowance, mechanism)?;
        let snapped = scores.snapped();
        let steps = snapped.range_steps(scores.sensitivity().is_monotonic());
        Ok(Self {
            snapped,
            steps,
            rate: Rate::new(epsilon, steps),
            epsilon,
        })
    }

    /// ln of the weight exp(−(top − v)·c) of a candidate with snapped score `v` against the
    /// maximum `top` (−∞ when excluded), with c in floating point: for closed-form
    /// probabilities only, never for sampling.
    pub fn log_weight(&self, top: i128, v: i128) -> f64 {
        gap(top, v).map_or(f64::NEG_INFINITY, |g| -(g as f64) * self.rate.approx)
    }

    /// [`Calibrated::log_weight`] of every candidate against the overall maximum.
    pub fn log_weights(&self) -> Vec<f64> {
        let top = self.snapped.max;
        self.snapped
            .vals
            .iter()
            .map(|&v| self.log_weight(top, v))
            .collect()
    }
}

/// top − v in steps, or `None` if v is excluded.
#[inline]
pub(crate) fn gap(top: i128, v: i128) -> Option<u128> {
    (v != EXCLUDED).then(|| (top - v) as u128)
}

/// Natural-log weights −gap·c normalised into probabilities (log-sum-exp; excluded → 0).
pub(crate) fn normalise_log_weights(logw: &[f64]) -> Vec<f64> {
    let top = logw.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let z: f64 = logw.iter().map(|&l| (l - top).exp()).sum();
    logw.iter().map(|&l| (l - top).exp() / z).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_index_names_are_the_six_selections() {
        assert_eq!(
            Mechanism::single_index_names(),
            [
                "exponential",
                "gumbel",
                "laplace",
                "permute-and-flip",
                "gaussian",
                "gem"
            ]
        );
    }

    #[test]
    fn mechanism_names_round_trip_and_svt_is_refused() {
        for n in Mechanism::NAMES {
            let m: Mechanism = n.parse().unwrap();
            assert_eq!(m.to_string(), n);
        }
        let e = Mechanism::SparseVector.as_selection().unwrap_err();
        assert!(e.to_string().contains("sparse_vector"), "{e}");
        assert!("median".parse::<Mechanism>().is_err());
    }

    #[test]
    fn bad_scores_are_named() {
        for bad in [
            vec![],
            vec![1.0],
            vec![1.0, f64::NAN],
            vec![1.0, f64::INFINITY],
            vec![f64::NEG_INFINITY; 3],
        ] {
            let e = oriented_scores(&bad, Goal::Maximize).unwrap_err();
            assert!(e.to_string().contains("`scores`"), "{e}");
        }
        assert!(oriented_scores(&[1.0, f64::NEG_INFINITY], Goal::Minimize).is_err());
        assert_eq!(
            oriented_scores(&[1.0, f64::INFINITY], Goal::Minimize).unwrap(),
            vec![-1.0, f64::NEG_INFINITY]
        );
    }
}
