//! DP quality metrics (Scorers) and their exact, non-private counterparts for baselines.

use crate::data::Dataset;
use crate::data::Records;
use crate::error::{Error, Result};
use crate::noise::{DiscreteGaussian, DiscreteLaplace, GridGaussian, GridLaplace, SecureRng};
use crate::numeric::GridSum;
use crate::privacy::{Bound, Guarantee, Release};
use crate::tune::baseline::ExactScorer;
use crate::tune::cost::fits;
use crate::tune::{Learner, PrivateStep, Scorer};

use super::model::{Model, Scratch};
use super::rho_within;

/// Denominator of the rational noise parameters (2^32).
const DEN: u64 = 1 << 32;

fn refused(allowance: &Guarantee, what: &str) -> Error {
    Error::BudgetExceeded {
        allowance: allowance.to_string(),
        spent: "nothing".into(),
        requested: format!("{what} (no positive noise level fits)"),
    }
}

enum CountNoise {
    Laplace(DiscreteLaplace),
    Gaussian(Box<DiscreteGaussian>),
}

impl CountNoise {
    fn sample(&self, rng: &mut SecureRng) -> i64 {
        match self {
            CountNoise::Laplace(l) => l.sample(rng),
            CountNoise::Gaussian(g) => g.sample(rng),
        }
    }
}

/// Noisy correct count: the number of evaluation records the model classifies correctly, plus
/// exact integer noise. Higher is better.
///
/// Sensitivity 1 under add/remove-one (adding a record changes the count by 0 or +1, so the
/// score is **monotone**, THEORY.md §0.2) and under replace-one. Noise: for a pure ε allowance,
/// the discrete Laplace with P ∝ exp(−|y|·s/2^32), s = ⌊ε·2^32⌋ (ε-DP, CKS20 arXiv 2004.00010
/// Algorithm 2), charged ε = s/2^32 rounded up; otherwise the discrete Gaussian with
/// σ² = ⌈2^32/(2ρ)⌉/2^32 for the largest ρ whose ρ-zCDP fits the allowance (CKS20 Thm 4: an
/// integer query of sensitivity 1 is 1/(2σ²)-zCDP), charged 1/(2σ²) rounded up. The count is
/// an exact integer (no floating-point summation; whatever the float arithmetic inside the
/// model, one record changes it by at most 1), and the noise is an exact integer. The count is
/// not normalised by the evaluation size (which is not public under add/remove); the tuner only
/// compares scores on the same evaluation set.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoisyAccuracy;

impl<L: Learner<Data = Dataset, Model = Model>> Scorer<L> for NoisyAccuracy {
    fn score(&self, model: &Model, step: PrivateStep<'_, Dataset>) -> Result<Release<f64>> {
        let n = step.allowance.neighbours();
        let (noise, spent) = if let [Bound::Pure { eps }] = step.allowance.bounds() {
            let s = (eps * DEN as f64).floor() as u64;
            if s == 0 {
                return Err(refused(step.allowance, "noisy accuracy"));
            }
            let lap = DiscreteLaplace::new(s, DEN)?;
            let spent = Guarantee::pure((s as f64 / DEN as f64).next_up(), n)?;
            (CountNoise::Laplace(lap), spent)
        } else {
            let rho = rho_within(step.allowance)?
                .ok_or_else(|| refused(step.allowance, "noisy accuracy"))?;
            let num = (DEN as f64 / (2.0 * rho)).ceil();
            if num >= u64::MAX as f64 {
                return Err(refused(step.allowance, "noisy accuracy"));
            }
            let num = num as u64;
            let dg = DiscreteGaussian::new(num, DEN)?;
            let spent = Guarantee::zcdp((DEN as f64 / (2.0 * num as f64)).next_up(), n)?;
            (CountNoise::Gaussian(Box::new(dg)), spent)
        };
        if !fits(step.allowance, &spent)? {
            return Err(refused(step.allowance, "noisy accuracy"));
        }
        let mut s = Scratch::default();
        let correct = (0..step.data.len())
            .filter(|&i| model.predict_class(step.data.row(i), &mut s) == step.data.class(i))
            .count() as i64;
        Ok(Release {
            value: (correct + noise.sample(step.rng)) as f64,
            spent,
        })
    }
}

/// The noise of [`NoisyClippedLoss`]: one grid mechanism, drawn in grid units.
enum LossNoise {
    Laplace(GridLaplace),
    Gaussian(Box<GridGaussian>),
}

impl LossNoise {
    fn resolution(&self) -> f64 {
        match self {
            LossNoise::Laplace(m) => m.resolution(),
            LossNoise::Gaussian(m) => m.resolution(),
        }
    }

    fn sample(&self, rng: &mut SecureRng) -> i64 {
        match self {
            LossNoise::Laplace(m) => m.grid_noise().sample(rng),
            LossNoise::Gaussian(m) => m.grid_noise().sample(rng),
        }
    }
}

/// Noisy clipped loss: −(Σ min(ℓᵢ, cap) + noise), with ℓ the log-loss of the true class for
/// classifiers and the squared error (declared label units) for regression. Higher is better.
///
/// Sensitivity `cap` (each record adds one term in [0, cap]; monotone under add/remove).
/// Noise: [`GridLaplace`] for a pure ε allowance (ε-DP with the grid rounding charged, Google
/// "Secure Noise Generation" Prop. 1), else [`GridGaussian`] whose ρ (rounding charged) fits
/// the allowance.
///
/// Floating-point error: a float sum of the n clipped losses errs by up to γ_{n−1}·n·cap, with n
/// the private evaluation size, so it would move the sensitivity by a data-dependent amount.
/// Instead each term is truncated onto the noise grid r within [0, ⌊cap/r⌋·r] and the terms are
/// summed exactly in integers ([`GridSum`]); the noise is added in grid units. The sum's
/// sensitivity is then exactly `cap` (one term), and the mechanisms' rounding charge (cap + r)
/// is unused slack.
#[derive(Debug, Clone, Copy)]
pub struct NoisyClippedLoss {
    /// The per-record loss cap (> 0).
    pub cap: f64,
}

impl<L: Learner<Data = Dataset, Model = Model>> Scorer<L> for NoisyClippedLoss {
    fn score(&self, model: &Model, step: PrivateStep<'_, Dataset>) -> Result<Release<f64>> {
        let cap = crate::error::check_positive("cap", self.cap)?;
        let n = step.allowance.neighbours();
        let (noise, spent) = if let [Bound::Pure { eps }] = step.allowance.bounds() {
            let m = GridLaplace::new(cap, *eps)?;
            let spent = Guarantee::pure(m.epsilon(), n)?;
            (LossNoise::Laplace(m), spent)
        } else {
            let rho = rho_within(step.allowance)?
                .ok_or_else(|| refused(step.allowance, "clipped loss"))?;
            let m = GridGaussian::new(cap, cap / (2.0 * rho).sqrt() * (1.0 + 1e-6), 1)?;
            let spent = Guarantee::zcdp(m.rho(), n)?;
            if !fits(step.allowance, &spent)? {
                return Err(refused(step.allowance, "clipped loss"));
            }
            (LossNoise::Gaussian(Box::new(m)), spent)
        };
        let mut total = GridSum::new(noise.resolution(), cap, "cap", 1)?;
        let mut s = Scratch::default();
        for i in 0..step.data.len() {
            let x = step.data.row(i);
            let l = if model.target.is_some() {
                (model.predict_value(x, &mut s) - step.data.labels()[i]).powi(2)
            } else {
                -model
                    .probability(x, step.data.class(i), &mut s)
                    .max(1e-300)
                    .ln()
            };
            // NaN counts as the worst loss; GridSum clips every term to [0, cap] on the grid.
            total.add(&[if l.is_nan() { cap } else { l.min(cap) }])?;
        }
        let noisy = total.release(|| noise.sample(step.rng))[0];
        Ok(Release {
            value: -noisy,
            spent,
        })
    }
}

/// Exact accuracy (fraction correct). **Not private**: for baselines and public test data.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExactAccuracy;

impl<L: Learner<Data = Dataset, Model = Model>> ExactScorer<L> for ExactAccuracy {
    fn exact_score(&self, model: &Model, data: &Dataset) -> f64 {
        model.accuracy(data)
    }
}

/// Exact negative RMSE. **Not private**: for baselines and public test data.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExactNegRmse;

impl<L: Learner<Data = Dataset, Model = Model>> ExactScorer<L> for ExactNegRmse {
    fn exact_score(&self, model: &Model, data: &Dataset) -> f64 {
        -model.rmse(data)
    }
}
