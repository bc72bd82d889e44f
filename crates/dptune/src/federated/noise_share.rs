//! Each client's share of the distributed noise: exact Skellam samples.
//!
//! Sk(μ) := Poisson(μ/2) − Poisson(μ/2) is a symmetric integer distribution with variance μ, and
//! Sk(μ₁) + Sk(μ₂) = Sk(μ₁ + μ₂) exactly (Agarwal, Kairouz, Liu, "The Skellam Mechanism for
//! Differentially Private Federated Learning", NeurIPS 2021, arXiv 2110.04995, §3). So s clients
//! each adding Sk(μ_c) give exactly Sk(s·μ_c): the accounting of the sum has no slack.
//!
//! Poisson(λ) is sampled exactly for rational λ (no floating point): λ is cut into m = ⌈2λ⌉
//! equal pieces q = λ/m ≤ 1/2 (Poisson is closed under sums); for each piece a proposal x with
//! P(x) = (1 − q)·q^x is drawn by counting Bernoulli(q) successes before the first failure, and
//! accepted with probability 1/x! (Bernoulli(1/2)·…·Bernoulli(1/x)). The accepted law is
//! ∝ q^x/x!, i.e. Poisson(q) (rejection sampling; acceptance rate (1 − q)e^q ≥ 0.82). Every coin
//! is an exact comparison of a uniform integer from [`SecureRng`] with a rational.
//!
//! This file is self-contained so that it can be merged with the shared exact Poisson sampler
//! of `noise/` later.

use crate::error::{Error, Result};
use crate::noise::SecureRng;

/// Largest per-client Poisson mean accepted (the sampler's cost is linear in λ).
pub const MAX_POISSON_MEAN: u64 = 1 << 20;

#[inline]
fn bernoulli(rng: &mut SecureRng, num: u128, den: u128) -> bool {
    rng.below_u128(den) < num
}

/// One exact Poisson(num/den) draw with num/den ≤ 1/2 (callers guarantee it).
fn poisson_small(rng: &mut SecureRng, num: u128, den: u128) -> u64 {
    loop {
        let mut x = 0u64;
        while bernoulli(rng, num, den) {
            x += 1;
        }
        if (2..=x).all(|i| bernoulli(rng, 1, i as u128)) {
            return x;
        }
    }
}

/// An exact Poisson(λ) sampler for a rational λ = num/den.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Poisson {
    pieces: u64,
    num: u128,
    den: u128,
}

impl Poisson {
    /// Poisson(num/den); `den > 0`, λ ≤ [`MAX_POISSON_MEAN`].
    pub fn new(num: u64, den: u64) -> Result<Self> {
        if den == 0 {
            return Err(Error::invalid("den", den, "the denominator must be > 0"));
        }
        if num / den >= MAX_POISSON_MEAN {
            return Err(Error::invalid(
                "lambda",
                format!("{num}/{den}"),
                format!("Poisson means above {MAX_POISSON_MEAN} are not supported"),
            ));
        }
        // m = ⌈2λ⌉ pieces of λ/m = num/(den·m) ≤ 1/2.
        let pieces = (2 * num as u128).div_ceil(den as u128).max(1) as u64;
        Ok(Self {
            pieces,
            num: num as u128,
            den: den as u128 * pieces as u128,
        })
    }

    /// One draw.
    pub fn sample(&self, rng: &mut SecureRng) -> u64 {
        if self.num == 0 {
            return 0;
        }
        (0..self.pieces)
            .map(|_| poisson_small(rng, self.num, self.den))
            .sum()
    }
}

/// One client's noise share: Sk(μ_c) per coordinate, μ_c = `num/den` (the variance).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkellamShare {
    half: Poisson,
    num: u64,
    den: u64,
}

impl SkellamShare {
    /// Sk(num/den): variance num/den, two Poisson(num/(2·den)) draws per coordinate.
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
    use statrs::function::gamma::{gamma_ur, ln_gamma};

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

    fn poisson_pmf(lambda: f64, x: i64) -> f64 {
        if x < 0 {
            return 0.0;
        }
        (-lambda + x as f64 * lambda.ln() - ln_gamma(x as f64 + 1.0)).exp()
    }

    /// Skellam pmf Sk(μ) by convolving two Poisson(μ/2) pmfs.
    pub(crate) fn skellam_pmf(mu: f64, x: i64) -> f64 {
        (0..400)
            .map(|j| poisson_pmf(mu / 2.0, j + x) * poisson_pmf(mu / 2.0, j))
            .sum()
    }

    #[test]
    fn poisson_matches_its_pmf() {
        // 30 000 draws each; the check fails falsely with probability 1e-6 per λ (fixed seed).
        let mut rng = SecureRng::seeded(41);
        for (num, den, hi) in [(3u64, 10u64, 3i64), (1, 1, 5), (7, 2, 9)] {
            let p = Poisson::new(num, den).unwrap();
            let draws: Vec<i64> = (0..30_000).map(|_| p.sample(&mut rng) as i64).collect();
            let lambda = num as f64 / den as f64;
            let pv = chi2_p(&draws, |x| poisson_pmf(lambda, x), 0, hi);
            assert!(pv > 1e-6, "lambda {lambda}: p = {pv}");
        }
        assert_eq!(Poisson::new(0, 5).unwrap().sample(&mut rng), 0);
        assert!(Poisson::new(1, 0).is_err());
        assert!(Poisson::new(u64::MAX, 1).is_err());
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
        let pv = chi2_p(&draws, |x| skellam_pmf(10.5, x), -10, 10);
        assert!(pv > 1e-6, "p = {pv}");
        let mean = draws.iter().sum::<i64>() as f64 / draws.len() as f64;
        // Standard error sqrt(10.5/20000) = 0.023; 5 SE.
        assert!(mean.abs() < 0.12, "{mean}");
        // A wrong claim (variance 14) is detected by the same test.
        assert!(chi2_p(&draws, |x| skellam_pmf(14.0, x), -10, 10) < 1e-6);
    }
}
