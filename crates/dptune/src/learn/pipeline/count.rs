//! The record count DP-SGD's schedules are planned for: declared public, or released first as
//! a charged noisy count (add_remove: the count itself is private).

use serde::Serialize;

use crate::error::{Error, Result};
use crate::noise::{DiscreteLaplace, SecureRng};
use crate::privacy::{Guarantee, Neighbours, Release};

/// Where the number of records that DP-SGD's schedule is planned for comes from (objective
/// perturbation and ridge need none, and then nothing is spent or released for it).
///
/// Under add/remove-one neighbours the number of private records is itself private, so it is
/// never read off the data: either the user declares it public, or a noisy count is released
/// first and charged. DP-SGD's guarantee holds whatever the planned size (see
/// [`crate::learn::DpSgd`]): a size far from the truth only costs accuracy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Size {
    /// Declared public by the user (`--public-size`): nothing is spent on it.
    Public(u64),
    /// Released first as a noisy count spending `share` ∈ (0, 1) of the total ε
    /// ([`noisy_count`]); the rest goes to tuning and final fit.
    NoisyCount {
        /// The share of the total ε spent on the count.
        share: f64,
    },
}

/// The default share of the total ε spent on the noisy record count (2 %: at ε = 1 the count's
/// noise has scale 50 records).
pub const COUNT_SHARE: f64 = 0.02;

/// The record count a finished tuning planned with.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "source")]
pub enum SizeUsed {
    /// The learner needs no size: nothing was spent or released for it.
    NotNeeded,
    /// Declared public by the user.
    Public {
        /// The declared number of records.
        records: u64,
    },
    /// A charged release: the noisy count and what it spent.
    NoisyCount {
        /// The released noisy count (may be below 1; the schedule then plans for 1 record).
        value: i64,
        /// Its cost (pure ε, add/remove-one).
        spent: Guarantee,
    },
}

impl SizeUsed {
    /// The number of records the schedules are planned for, when there is one: the declared
    /// size, or the noisy count raised to at least 1 (post-processing).
    pub fn records(&self) -> Option<f64> {
        match self {
            SizeUsed::NotNeeded => None,
            SizeUsed::Public { records } => Some((*records).max(1) as f64),
            SizeUsed::NoisyCount { value, .. } => Some((*value).max(1) as f64),
        }
    }
}

/// Denominator of the noisy count's rational ε (2^32).
const COUNT_DEN: u64 = 1 << 32;

/// The number of records `n` plus exact discrete Laplace noise P\[y\] ∝ exp(−|y|·s/2^32) with
/// s = ⌊ε·2^32⌋ (the geometric mechanism, Ghosh, Roughgarden & Sundararajan, STOC 2009;
/// sampled exactly by Canonne, Kamath & Steinke, arXiv 2004.00010, Algorithm 2). A count has
/// sensitivity 1 under add/remove-one, so the release is (s/2^32)-DP, and that (≤ ε) is what it
/// is charged (Dwork & Roth 2014, Thm 3.6, with the discrete Laplace in place of the Laplace).
/// Refused before sampling when ε < 2^-32 or the scale exceeds 2^48.
pub fn noisy_count(n: usize, eps: f64, rng: &mut SecureRng) -> Result<Release<i64>> {
    let (lap, spent) = count_mechanism(eps)?;
    Ok(Release {
        value: (n as i64).saturating_add(lap.sample(rng)),
        spent,
    })
}

/// The noisy count's sampler and exact charge at allowance `eps` (no data involved).
pub(super) fn count_mechanism(eps: f64) -> Result<(DiscreteLaplace, Guarantee)> {
    crate::error::check_positive("epsilon", eps)?;
    let s = (eps * COUNT_DEN as f64).floor();
    if !(1.0..=u64::MAX as f64 / 2.0).contains(&s) {
        return Err(Error::invalid(
            "epsilon",
            eps,
            "the noisy count needs 2^-32 <= epsilon <= 2^31",
        ));
    }
    let s = s as u64;
    // s / 2^32 is exact in f64 (s < 2^63 and a power-of-two denominator).
    let spent = Guarantee::pure(s as f64 / COUNT_DEN as f64, Neighbours::AddRemove)?;
    Ok((DiscreteLaplace::new(s, COUNT_DEN)?, spent))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sample variance of `draws` noisy counts of 0 at ε.
    fn count_noise_variance(eps: f64, draws: usize, seed: u64) -> f64 {
        let mut rng = SecureRng::seeded(seed);
        let v: Vec<f64> = (0..draws)
            .map(|_| noisy_count(0, eps, &mut rng).unwrap().value as f64)
            .collect();
        let mean = v.iter().sum::<f64>() / draws as f64;
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (draws - 1) as f64
    }

    #[test]
    fn noisy_count_is_a_charged_discrete_laplace() {
        // Worked number: ε = 0.5 gives s = 2^31, charged exactly 0.5; the discrete Laplace with
        // P ∝ e^{-|y|/2} has variance 2e^{-1/2}/(1 - e^{-1/2})^2 = 7.8742.
        let r = noisy_count(10, 0.5, &mut SecureRng::seeded(1)).unwrap();
        assert_eq!(r.spent.pure_eps(), Some(0.5));
        assert_eq!(r.spent.neighbours(), Neighbours::AddRemove);
        let var = count_noise_variance(0.5, 20_000, 2);
        // The sample variance of 20 000 draws has sd ≈ 7.87·sqrt((kurtosis - 1)/20 000) < 0.2
        // (excess kurtosis of this law ≈ 6); 6 sd = 1.2 gives a false failure below 1e-8.
        assert!((var - 7.8742).abs() < 1.2, "{var}");
        // A deliberately wrong variant (half the noise scale, ε = 1: variance 1.8410) is
        // rejected by the same check.
        let wrong = count_noise_variance(1.0, 20_000, 3);
        assert!((wrong - 7.8742).abs() >= 1.2, "{wrong}");
        // Allowances that the exact sampler cannot express are refused before any data.
        assert!(noisy_count(10, 1e-12, &mut SecureRng::seeded(1)).is_err());
        assert!(noisy_count(10, f64::NAN, &mut SecureRng::seeded(1)).is_err());
    }
}
