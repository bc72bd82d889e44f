//! The discrete Gaussian N_ℤ(0, σ²) for rational σ².

use num_bigint::{BigInt, BigUint};
use num_rational::BigRational;
use num_traits::{Signed, ToPrimitive};

use super::laplace::DiscreteLaplace;
use super::wide::bernoulli_exp_u128;
use super::{bernoulli_exp, exact_rational, SecureRng};
use crate::error::{check_positive, Error, Result};

/// Largest supported σ² (2^80, i.e. σ <= 2^40).
const MAX_SIGMA2_BITS: u64 = 80;

/// The 128-bit constants of the fast path: with σ² = n/d and t = ⌊σ⌋ + 1 the acceptance
/// exponent (|y| - σ²/t)²/(2σ²) equals (|y|·t·d - n)²/(2·n·d·t²).
#[derive(Debug, Clone, PartialEq)]
struct Fast {
    n: u128,
    td: u128,
    den: u128,
}

/// Discrete Gaussian on ℤ: P[Y = y] ∝ exp(-y²/(2σ²)) for a rational σ² > 0.
///
/// Algorithm: Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy",
/// NeurIPS 2020, arXiv 2004.00010, **Algorithm 3**: t = ⌊σ⌋ + 1; draw Y from the discrete
/// Laplace with scale t ([`DiscreteLaplace`], their Algorithm 2); accept with probability
/// exp(-(|Y| - σ²/t)²/(2σ²)) (Bernoulli(exp(-x)) of their Algorithm 1), else redraw. Exact:
/// the acceptance exponent is a rational computed without rounding, and every random decision
/// compares uniform integers with integers.
///
/// The exponent is (|Y|·t·d - n)²/(2·n·d·t²) for σ² = n/d; it is evaluated with checked `u128`
/// arithmetic (σ up to about 2^30 with a small denominator never leaves this path) and falls
/// back to `BigRational` only when a product would overflow (large σ, huge denominators from
/// `f64` inputs, or far tails), so the distribution is the same on both paths.
///
/// Preconditions: 0 < σ² <= 2^80. Privacy (not checked here): an integer query of L2
/// sensitivity Δ plus this noise is Δ²/(2σ²)-zCDP (CKS20).
#[derive(Debug, Clone, PartialEq)]
pub struct DiscreteGaussian {
    sigma2: BigRational,
    t: u64,
    laplace: DiscreteLaplace,
    fast: Option<Fast>,
    big: Big,
}

/// The same constants as [`Fast`] in `BigInt`, for the fallback path (no gcd reductions on the
/// hot path: the exponent is handed to [`bernoulli_exp`] unreduced).
#[derive(Debug, Clone, PartialEq)]
struct Big {
    n: BigInt,
    td: BigInt,
    den: BigInt,
}

impl DiscreteGaussian {
    /// σ² = `num`/`den`.
    pub fn new(num: u64, den: u64) -> Result<Self> {
        if num == 0 || den == 0 {
            return Err(Error::invalid(
                "sigma2",
                format!("{num}/{den}"),
                "numerator and denominator must be >= 1",
            ));
        }
        Self::from_sigma2(BigRational::new(BigInt::from(num), BigInt::from(den)))
    }

    /// σ given as an `f64`; σ² is its exact square (a rational, no rounding).
    pub fn from_sigma(sigma: f64) -> Result<Self> {
        check_positive("sigma", sigma)?;
        let s = exact_rational("sigma", sigma)?;
        Self::from_sigma2(&s * &s)
    }

    /// σ² as an exact rational.
    pub fn from_sigma2(sigma2: BigRational) -> Result<Self> {
        if !sigma2.is_positive() {
            return Err(Error::invalid("sigma2", &sigma2, "must be > 0"));
        }
        let n = sigma2.numer().magnitude();
        let d = sigma2.denom().magnitude();
        let floor = n / d;
        if floor.bits() > MAX_SIGMA2_BITS {
            return Err(Error::invalid("sigma2", &sigma2, "must be <= 2^80"));
        }
        // ⌊σ⌋ = ⌊sqrt(⌊n/d⌋)⌋, since k² <= n/d iff k² <= ⌊n/d⌋ for integers k.
        let t = floor.sqrt().to_u64().unwrap_or(u64::MAX) + 1;
        let laplace = DiscreteLaplace::new(1, t)?;
        let fast = Self::fast_constants(n, d, t);
        let (n_big, d_big, t_big) = (
            BigInt::from(n.clone()),
            BigInt::from(d.clone()),
            BigInt::from(t),
        );
        let td = &t_big * d_big;
        let big = Big {
            den: BigInt::from(2) * &n_big * &td * &t_big,
            n: n_big,
            td,
        };
        Ok(Self {
            big,
            sigma2,
            t,
            laplace,
            fast,
        })
    }

    fn fast_constants(n: &BigUint, d: &BigUint, t: u64) -> Option<Fast> {
        let (n, d, t) = (n.to_u128()?, d.to_u128()?, t as u128);
        let td = t.checked_mul(d)?;
        let den = n.checked_mul(td)?.checked_mul(t)?.checked_mul(2)?;
        Some(Fast { n, td, den })
    }

    /// σ² exactly.
    pub fn sigma2(&self) -> &BigRational {
        &self.sigma2
    }

    /// The Laplace scale t = ⌊σ⌋ + 1 of the proposal.
    pub fn proposal_scale(&self) -> u64 {
        self.t
    }

    /// P[Y = y] in floating point (for tests and diagnostics, never for sampling). The
    /// normaliser is summed directly for σ² <= 10^4 and is sqrt(2πσ²) above (the relative
    /// error of the latter is below e^{-2π²σ²}).
    pub fn pmf(&self, y: i64) -> f64 {
        let s2 = self.sigma2.to_f64().unwrap_or(f64::INFINITY);
        let z = if s2 <= 1e4 {
            let lim = (40.0 * s2.sqrt()) as i64 + 40;
            (-lim..=lim)
                .map(|k| (-(k as f64).powi(2) / (2.0 * s2)).exp())
                .sum()
        } else {
            (2.0 * std::f64::consts::PI * s2).sqrt()
        };
        (-(y as f64).powi(2) / (2.0 * s2)).exp() / z
    }

    /// Bernoulli(exp(-(|y| - σ²/t)²/(2σ²))), the acceptance step of Algorithm 3.
    #[inline]
    fn accept(&self, rng: &mut SecureRng, y: i64) -> bool {
        let abs = y.unsigned_abs() as u128;
        if let Some(f) = &self.fast {
            let num = abs
                .checked_mul(f.td)
                .map(|a| a.abs_diff(f.n))
                .and_then(|a| a.checked_mul(a));
            if let Some(num) = num {
                return bernoulli_exp_u128(rng, num, f.den);
            }
        }
        let a = BigInt::from(abs) * &self.big.td - &self.big.n;
        let x = BigRational::new_raw(&a * &a, self.big.den.clone());
        // x is a square over a positive number, so `bernoulli_exp` cannot refuse it.
        matches!(bernoulli_exp(rng, &x), Ok(true))
    }

    /// One draw.
    #[inline]
    pub fn sample(&self, rng: &mut SecureRng) -> i64 {
        loop {
            let y = self.laplace.sample(rng);
            if self.accept(rng, y) {
                return y;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{assert_fits, assert_mean, fits};
    use super::*;

    fn draws(g: &DiscreteGaussian, seed: u64, n: usize) -> Vec<i64> {
        let mut rng = SecureRng::seeded(seed);
        (0..n).map(|_| g.sample(&mut rng)).collect()
    }

    fn tv(xs: &[i64], g: &DiscreteGaussian) -> f64 {
        let n = xs.len() as f64;
        let lo = *xs.iter().min().unwrap_or(&0) - 5;
        let hi = *xs.iter().max().unwrap_or(&0) + 5;
        let mut tv = 0.0;
        for k in lo..=hi {
            let c = xs.iter().filter(|&&x| x == k).count() as f64;
            tv += (c / n - g.pmf(k)).abs();
        }
        // Mass outside the observed range counts fully.
        let inside: f64 = (lo..=hi).map(|k| g.pmf(k)).sum();
        (tv + (1.0 - inside).max(0.0)) / 2.0
    }

    #[test]
    fn worked_numbers_sigma2_nine_quarters_and_ten() {
        // THEORY.md §14.3: TV(empirical, exact) was 0.0045 at σ² = 9/4 and 0.0075 at σ² = 10
        // with 6·10⁴ draws. We check chi-square at false-failure 1e-6; TV < 0.02, where
        // E[TV] <= ½·Σ_k sqrt(p_k/n) <= 0.0082 at σ² = 10 (0.006 at 9/4) and McDiarmid (one draw
        // moves TV by <= 1/n) gives P[TV > E[TV] + 0.0107] <= e^{-2·0.0107²·n} < 1e-6; and the
        // variance at five standard errors (< 6e-7).
        for (i, (num, den)) in [(9u64, 4u64), (10, 1)].into_iter().enumerate() {
            let g = DiscreteGaussian::new(num, den).unwrap();
            let xs = draws(&g, 60 + i as u64, 60_000);
            assert_fits(&xs, |y| g.pmf(y), 0);
            assert!(tv(&xs, &g) < 0.02, "tv = {}", tv(&xs, &g));
            let var: f64 = (-200..=200i64).map(|y| (y * y) as f64 * g.pmf(y)).sum();
            let fourth: f64 = (-200..=200i64).map(|y| (y as f64).powi(4) * g.pmf(y)).sum();
            let sq: Vec<i64> = xs.iter().map(|x| x * x).collect();
            assert_mean(&sq, var, (fourth - var * var).sqrt());
            assert_mean(&xs, 0.0, var.sqrt());
        }
    }

    #[test]
    fn opendp_sigma_three_and_a_half_variance() {
        // THEORY.md §14.3: σ = 3.5 has variance ≈ 12.25. 100_000 draws; sd of Y² ≈ σ²·√2;
        // five standard errors (< 6e-7).
        let g = DiscreteGaussian::from_sigma(3.5).unwrap();
        assert_eq!(g.proposal_scale(), 4);
        let xs = draws(&g, 62, 100_000);
        let sq: Vec<i64> = xs.iter().map(|x| x * x).collect();
        assert_mean(&sq, 12.25, 12.25 * 2f64.sqrt());
    }

    #[test]
    fn bignum_path_agrees_with_the_fast_path() {
        // σ = 0.7 as an f64 has a 2^-104-ish square: the exact σ² has a huge denominator and
        // takes the BigRational path. Chi-square at false-failure 1e-6.
        let g = DiscreteGaussian::from_sigma(0.7).unwrap();
        assert!(g.fast.is_none());
        let xs = draws(&g, 63, 15_000);
        assert_fits(&xs, |y| g.pmf(y), 0);
        // σ = 2^20: fast path, variance 2^40 at five standard errors (< 6e-7).
        let g = DiscreteGaussian::from_sigma((1u64 << 20) as f64).unwrap();
        assert!(g.fast.is_some());
        let xs = draws(&g, 64, 20_000);
        let sq: Vec<f64> = xs
            .iter()
            .map(|&x| (x as f64 / (1u64 << 20) as f64).powi(2))
            .collect();
        let m = sq.iter().sum::<f64>() / sq.len() as f64;
        assert!(
            (m - 1.0).abs() < 5.0 * 2f64.sqrt() / (sq.len() as f64).sqrt(),
            "{m}"
        );
    }

    #[test]
    fn the_check_rejects_a_wrong_variance() {
        // Deliberately wrong variant: σ² = 10 samples tested against σ² = 9 (false pass far
        // below 1e-6 at 60_000 draws; the correct pmf passes at 1e-6).
        let right = DiscreteGaussian::new(9, 1).unwrap();
        let wrong = DiscreteGaussian::new(10, 1).unwrap();
        let xs = draws(&wrong, 65, 60_000);
        assert!(!fits(&xs, |y| right.pmf(y), 0));
        assert!(fits(&xs, |y| wrong.pmf(y), 0));
    }

    #[test]
    fn constructors_name_the_parameter() {
        for bad in [f64::NAN, f64::INFINITY, 0.0, -1.0] {
            let e = DiscreteGaussian::from_sigma(bad).unwrap_err();
            assert!(e.to_string().contains("`sigma`"), "{e}");
        }
        assert!(DiscreteGaussian::from_sigma(1e30).is_err());
        let e = DiscreteGaussian::new(0, 1).unwrap_err();
        assert!(e.to_string().contains("`sigma2`"), "{e}");
        assert!(DiscreteGaussian::new(1, 0).is_err());
    }
}
