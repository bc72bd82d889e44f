//! The discrete Laplace distribution (two-sided geometric) on the integers.

use super::geometric::ratio_u64;
use super::wide::geometric_unit_rate;
use super::{exact_rational, SecureRng};
use crate::error::{check_positive, Error, Result};

/// Largest supported scale t/s (2^48): outputs stay far inside `i64`.
const MAX_SCALE: u128 = 1 << 48;

/// Discrete Laplace on ℤ with P[Y = y] ∝ exp(-|y|·s/t), integers s, t >= 1 (scale b = t/s).
/// P[Y = 0] = (1 - e^{-1/b})/(1 + e^{-1/b}) (THEORY.md §14.3; OpenDP's doc comment has the sign
/// flipped).
///
/// Algorithm: Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy",
/// NeurIPS 2020, arXiv 2004.00010, **Algorithm 2**: X = U + t·V with U uniform in 0..t accepted
/// with probability exp(-U/t) and V ~ the number of Bernoulli(exp(-1)) successes before the
/// first failure; Y = ⌊X/s⌋; a fair sign B, and (B = 1, Y = 0) is rejected so that zero is not
/// counted twice. Exact: only uniform integers drawn by rejection are compared with integers
/// (no floating point), and the hot path is pure `u64`/`u128` arithmetic with an expected cost
/// independent of s and t.
///
/// Preconditions: s, t >= 1, t/s <= 2^48. Draws beyond `i64` are redrawn; at these scales that
/// has probability below e^{-2^14}.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiscreteLaplace {
    s: u64,
    t: u64,
}

impl DiscreteLaplace {
    /// P ∝ exp(-|y|·`s`/`t`).
    pub fn new(s: u64, t: u64) -> Result<Self> {
        if s == 0 || t == 0 {
            return Err(Error::invalid(
                "scale",
                format!("{t}/{s}"),
                "s and t must be >= 1",
            ));
        }
        if t as u128 > s as u128 * MAX_SCALE {
            return Err(Error::invalid(
                "scale",
                format!("{t}/{s}"),
                "must be <= 2^48",
            ));
        }
        Ok(Self { s, t })
    }

    /// Scale b = `num`/`den` (P ∝ exp(-|y|/b)).
    pub fn from_scale(num: u64, den: u64) -> Result<Self> {
        Self::new(den, num)
    }

    /// Scale b given as an `f64`, converted exactly to a rational (numerator and denominator
    /// must fit in 64 bits, which holds for every b in [2^-11, 2^48]).
    pub fn from_scale_f64(scale: f64) -> Result<Self> {
        check_positive("scale", scale)?;
        let (num, den) = ratio_u64(&exact_rational("scale", scale)?).ok_or_else(|| {
            Error::invalid(
                "scale",
                scale,
                "its exact rational does not fit in 64 bits; use from_scale(num, den)",
            )
        })?;
        Self::from_scale(num, den)
    }

    /// The scale b = t/s as (t, s).
    pub fn scale(&self) -> (u64, u64) {
        (self.t, self.s)
    }

    /// P[Y = y] in floating point (for tests and diagnostics, never for sampling).
    pub fn pmf(&self, y: i64) -> f64 {
        let x = self.s as f64 / self.t as f64;
        let q = (-x).exp();
        -(-x).exp_m1() / (1.0 + q) * (-x * y.unsigned_abs() as f64).exp()
    }

    /// One draw.
    #[inline]
    pub fn sample(&self, rng: &mut SecureRng) -> i64 {
        loop {
            let y = discrete_laplace_wide(rng, self.s as u128, self.t as u128);
            if y.unsigned_abs() <= i64::MAX as u128 {
                return y as i64;
            }
        }
    }
}

/// The discrete Laplace P(y) ∝ exp(-|y|·s/t) for 128-bit integers s, t >= 1 (CKS20 Alg. 2, as
/// [`DiscreteLaplace`], without its 2^48 bound on the scale): for callers whose rational rate
/// does not fit 64 bits (the selection mechanisms' grids). |y| saturates at 2^127 - 1, which
/// needs the geometric part to exceed 2^127/t: probability below e^{-2^27} for t < 2^100.
#[inline]
pub(crate) fn discrete_laplace_wide(rng: &mut SecureRng, s: u128, t: u128) -> i128 {
    debug_assert!(s > 0 && t > 0);
    loop {
        let y = (geometric_unit_rate(rng, t) / s).min(i128::MAX as u128) as i128;
        let negative = rng.coin();
        if negative && y == 0 {
            continue;
        }
        return if negative { -y } else { y };
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{assert_fits, assert_mean, fits};
    use super::*;

    fn draws(d: &DiscreteLaplace, seed: u64, n: usize) -> Vec<i64> {
        let mut rng = SecureRng::seeded(seed);
        (0..n).map(|_| d.sample(&mut rng)).collect()
    }

    #[test]
    fn fits_the_exact_pmf() {
        // Chi-square at false-failure probability 1e-6 per scale; mean 0 with variance
        // 2q/(1-q)^2 at five standard errors (< 6e-7).
        for (i, (s, t)) in [(1, 1), (1, 3), (2, 7), (3, 1), (1, 20)]
            .into_iter()
            .enumerate()
        {
            let d = DiscreteLaplace::new(s, t).unwrap();
            let xs = draws(&d, 40 + i as u64, 60_000);
            assert_fits(&xs, |y| d.pmf(y), 0);
            let q = (-(s as f64) / t as f64).exp();
            assert_mean(&xs, 0.0, (2.0 * q).sqrt() / (1.0 - q));
        }
    }

    #[test]
    fn normaliser_worked_number() {
        // THEORY.md §14.3: P(0) = (1 - e^{-1/b})/(1 + e^{-1/b}); at b = 1 that is 0.46212.
        let d = DiscreteLaplace::from_scale(1, 1).unwrap();
        assert!((d.pmf(0) - 0.462_117).abs() < 1e-6);
        let total: f64 = (-60..=60).map(|y| d.pmf(y)).sum();
        assert!((total - 1.0).abs() < 1e-12);
    }

    #[test]
    fn the_check_rejects_a_wrong_scale() {
        // Deliberately wrong variant: samples at scale 3 tested against the pmf at scale 2.5.
        // With 60_000 draws the statistic is far beyond the 1e-6 critical value (it passes
        // falsely only if the wrong sampler looked right, probability far below 1e-6).
        let right = DiscreteLaplace::from_scale(5, 2).unwrap();
        let wrong = DiscreteLaplace::from_scale(3, 1).unwrap();
        let xs = draws(&wrong, 49, 60_000);
        assert!(!fits(&xs, |y| right.pmf(y), 0));
        assert!(fits(&xs, |y| wrong.pmf(y), 0));
    }

    #[test]
    fn large_scales_are_fast_and_centred() {
        // Scale 2^20: sd = sqrt(2)·2^20 approximately; five standard errors (< 6e-7).
        let d = DiscreteLaplace::from_scale(1 << 20, 1).unwrap();
        let xs = draws(&d, 50, 20_000);
        assert_mean(&xs, 0.0, 2f64.sqrt() * (1 << 20) as f64);
        let mad = xs.iter().map(|x| x.unsigned_abs() as f64).sum::<f64>() / xs.len() as f64;
        // E|Y| ≈ b for large b; sd of |Y| ≈ b, so five standard errors ≈ 0.035·b.
        assert!((mad / (1 << 20) as f64 - 1.0).abs() < 0.04, "{mad}");
    }

    #[test]
    fn constructors_name_the_parameter() {
        for bad in [f64::NAN, f64::INFINITY, 0.0, -2.0, 1e300, 1e-300] {
            let e = DiscreteLaplace::from_scale_f64(bad).unwrap_err();
            assert!(e.to_string().contains("`scale`"), "{e}");
        }
        assert!(DiscreteLaplace::new(0, 1).is_err());
        assert!(DiscreteLaplace::new(1, 0).is_err());
        assert_eq!(
            DiscreteLaplace::from_scale_f64(2.5).unwrap(),
            DiscreteLaplace::new(2, 5).unwrap()
        );
    }
}
