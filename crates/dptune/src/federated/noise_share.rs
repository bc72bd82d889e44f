//! Each client's share of the distributed noise: exact Skellam samples.
//!
//! Sk(μ) := Poisson(μ/2) − Poisson(μ/2) is a symmetric integer distribution with variance μ, and
//! Sk(μ₁) + Sk(μ₂) = Sk(μ₁ + μ₂) exactly (Agarwal, Kairouz, Liu, "The Skellam Mechanism for
//! Differentially Private Federated Learning", NeurIPS 2021, arXiv 2110.04995, §3). So s clients
//! each adding Sk(μ_c) give exactly Sk(s·μ_c): the accounting of the sum has no slack.
//!
//! Each Poisson(μ_c/2) draw comes from the shared exact sampler [`crate::noise::Poisson`]
//! (rational mean, integer arithmetic only, no floating point).

use crate::error::{Error, Result};
use crate::noise::{Poisson, SecureRng};

/// One client's noise share: Sk(μ_c) per coordinate, μ_c = `num/den` (the variance).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkellamShare {
    half: Poisson,
    num: u64,
    den: u64,
}

impl SkellamShare {
    /// Sk(num/den): variance num/den > 0 (at most 2^21), two Poisson(num/(2·den)) draws per
    /// coordinate.
    pub fn new(num: u64, den: u64) -> Result<Self> {
        let den2 = den
            .checked_mul(2)
            .ok_or_else(|| Error::invalid("den", den, "too large"))?;
        Ok(Self {
            half: Poisson::new(num, den2)?,
            num,
            den,
        })
    }

    /// The variance μ_c as a float (for reports).
    pub fn variance(&self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// The exact variance as (numerator, denominator).
    pub fn variance_ratio(&self) -> (u64, u64) {
        (self.num, self.den)
    }

    /// One draw of Sk(μ_c).
    pub fn sample(&self, rng: &mut SecureRng) -> i64 {
        self.half.sample(rng) as i64 - self.half.sample(rng) as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use statrs::function::gamma::gamma_ur;

    /// Chi-square goodness of fit of `draws` against `pmf` on cells lo..=hi plus the two tails;
    /// returns the p-value.
    fn chi2_p(draws: &[i64], pmf: impl Fn(i64) -> f64, lo: i64, hi: i64) -> f64 {
        let cells = (hi - lo + 3) as usize;
        let mut obs = vec![0f64; cells];
        for &d in draws {
            let c = if d < lo {
                0
            } else if d > hi {
                cells - 1
            } else {
                (d - lo + 1) as usize
            };
            obs[c] += 1.0;
        }
        let inner: Vec<f64> = (lo..=hi).map(&pmf).collect();
        let below: f64 = (lo - 200..lo).map(&pmf).sum();
        let above: f64 = (hi + 1..hi + 200).map(&pmf).sum();
        let mut probs = vec![below];
        probs.extend(inner);
        probs.push(above);
        let n = draws.len() as f64;
        let mut stat = 0.0;
        let mut used = 0usize;
        for (o, p) in obs.iter().zip(&probs) {
            if *p == 0.0 {
                if *o > 0.0 {
                    return 0.0;
                }
                continue;
            }
            stat += (o - n * p).powi(2) / (n * p);
            used += 1;
        }
        gamma_ur((used as f64 - 1.0) / 2.0, stat / 2.0)
    }

    /// Skellam pmf Sk(μ) by convolving two Poisson(μ/2) pmfs (μ = num/den).
    fn skellam_pmf(num: u64, den: u64, x: i64) -> f64 {
        let half = Poisson::new(num, 2 * den).unwrap();
        (0..400u64)
            .filter(|&j| j as i64 + x >= 0)
            .map(|j| half.pmf((j as i64 + x) as u64) * half.pmf(j))
            .sum()
    }

    #[test]
    fn sum_of_client_shares_is_skellam_of_the_summed_variance() {
        // 7 surviving clients, each Sk(3/2): the sum must be Sk(10.5). 20 000 sums, cells −10..10
        // and two tails (22 d.o.f.): a false failure has probability 1e-6 (fixed seed).
        let mut rng = SecureRng::seeded(42);
        let share = SkellamShare::new(3, 2).unwrap();
        let draws: Vec<i64> = (0..20_000)
            .map(|_| (0..7).map(|_| share.sample(&mut rng)).sum())
            .collect();
        let pv = chi2_p(&draws, |x| skellam_pmf(21, 2, x), -10, 10);
        assert!(pv > 1e-6, "p = {pv}");
        let mean = draws.iter().sum::<i64>() as f64 / draws.len() as f64;
        // Standard error sqrt(10.5/20000) = 0.023; 5 SE.
        assert!(mean.abs() < 0.12, "{mean}");
        // A wrong claim (variance 14) is detected by the same test.
        assert!(chi2_p(&draws, |x| skellam_pmf(14, 1, x), -10, 10) < 1e-6);
    }

    #[test]
    fn bad_variances_are_refused() {
        for (num, den) in [(0u64, 1u64), (1, 0), (u64::MAX, 1), (1, u64::MAX)] {
            assert!(SkellamShare::new(num, den).is_err(), "{num}/{den}");
        }
        assert_eq!(SkellamShare::new(3, 2).unwrap().variance_ratio(), (3, 2));
    }
}
