//! Exact integer machinery shared by the selection mechanisms: snapping scores to a
//! power-of-two grid, exact Bernoulli(exp(−x)) for 128-bit rationals, and exact discrete Laplace
//! and Gaussian samplers (Canonne–Kamath–Steinke, arXiv 2004.00010, Alg. 1–3; THEORY.md §14.3).
//!
//! These helpers are private to `select` and deliberately small: they can be replaced by the
//! shared samplers of `noise/` once those exist.
//!
//! **The grid (THEORY.md §14.2, 14.4).** A score x is replaced by the integer round(x / 2^k)
//! (round half to even, saturated at ±2^120). This map is monotone, so monotone scores stay
//! monotone, and it moves any score by at most 2^k/2, so a per-candidate sensitivity Δ becomes
//! at most ⌈Δ/2^k⌉ + 1 grid steps. Every mechanism is then run *exactly* on the integers with
//! that inflated sensitivity: the rounding is charged by a slightly larger range (relative
//! inflation ≤ 2^−39 with the default 40 bits), never by a larger ε. Saturation is a fixed,
//! monotone, 1-Lipschitz clamp, so it does not increase the sensitivity either.

use num_bigint::BigInt;
use num_rational::BigRational;

use crate::error::{Error, Result};
use crate::noise::{bernoulli_exp, SecureRng};

/// Saturation bound of snapped scores.
const SATURATE: i128 = 1 << 120;

/// Sentinel for a candidate that can never win (score −∞).
pub(crate) const EXCLUDED: i128 = i128::MIN;

/// Decomposes a finite f64 as sign, integer mantissa and exponent: |x| = mant · 2^exp.
fn decompose(x: f64) -> (bool, u64, i32) {
    let bits = x.to_bits();
    let neg = bits >> 63 == 1;
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    if biased == 0 {
        (neg, frac, -1074)
    } else {
        (neg, frac | (1u64 << 52), biased - 1075)
    }
}

/// ⌊log2 x⌋ for finite x > 0.
fn floor_log2(x: f64) -> i32 {
    let (_, m, e) = decompose(x);
    63 - m.leading_zeros() as i32 + e
}

/// A power-of-two grid 2^exp and a per-candidate sensitivity expressed in grid steps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Grid {
    /// The grid step is 2^exp.
    pub exp: i32,
    /// ⌈Δ / 2^exp⌉ + 1: the per-candidate sensitivity of snapped scores, in steps.
    pub delta_steps: u128,
}

impl Grid {
    /// The grid with step 2^(⌊log2 Δ⌋ − bits), so that Δ spans between 2^bits and 2^(bits+1)
    /// steps. `delta` must be finite and > 0.
    pub fn for_delta(delta: f64, bits: i32) -> Self {
        Self::with_exp(delta, floor_log2(delta) - bits)
    }

    /// The grid with step 2^exp for sensitivity `delta` (finite, > 0).
    pub fn with_exp(delta: f64, exp: i32) -> Self {
        let (_, m, e) = decompose(delta);
        let shift = e - exp;
        let ceil = if shift >= 0 {
            (m as u128) << shift.min(64)
        } else {
            let s = (-shift) as u32;
            if s >= 64 {
                1
            } else {
                (m as u128).div_ceil(1u128 << s)
            }
        };
        Self {
            exp,
            delta_steps: ceil + 1,
        }
    }

    /// The grid step as an f64 (0 if it underflows).
    pub fn step(&self) -> f64 {
        2f64.powi(self.exp)
    }

    /// round(x / 2^exp), half to even, saturated at ±2^120; −∞ maps to [`EXCLUDED`]. `x` must
    /// not be NaN or +∞ (callers validate first).
    pub fn snap(&self, x: f64) -> i128 {
        if x == f64::NEG_INFINITY {
            return EXCLUDED;
        }
        let (neg, m, e) = decompose(x);
        let shift = e - self.exp;
        let v: i128 = if m == 0 {
            0
        } else if shift >= 0 {
            if shift > 66 {
                SATURATE
            } else {
                ((m as i128) << shift).min(SATURATE)
            }
        } else {
            let s = (-shift) as u32;
            if s > 60 {
                0
            } else {
                let q = m >> s;
                let r = m & ((1u64 << s) - 1);
                let half = 1u64 << (s - 1);
                (if r > half || (r == half && q & 1 == 1) {
                    q + 1
                } else {
                    q
                }) as i128
            }
        };
        if neg {
            -v
        } else {
            v
        }
    }

    /// round(x / 2^exp) for an exact rational, half to even, saturated like [`Grid::snap`].
    pub fn snap_rational(&self, x: &BigRational) -> i128 {
        let scaled = if self.exp >= 0 {
            x / BigRational::from_integer(BigInt::from(1) << self.exp as usize)
        } else {
            x * BigRational::from_integer(BigInt::from(1) << (-self.exp) as usize)
        };
        let fl = scaled.floor();
        let frac = &scaled - &fl;
        let half = BigRational::new(1.into(), 2.into());
        let mut q = fl.to_integer();
        if frac > half || (frac == half && (&q % 2u32) != BigInt::from(0)) {
            q += 1;
        }
        let sat = BigInt::from(SATURATE);
        if q > sat {
            SATURATE
        } else if q < -&sat {
            -SATURATE
        } else {
            i128::try_from(q).unwrap_or(0)
        }
    }
}

/// An f64 > 0 as an exact dyadic fraction num / den (both powers of two apart from the odd
/// mantissa), or `None` if it does not fit 128 bits.
fn dyadic(x: f64) -> Option<(u128, u128)> {
    let (_, m, e) = decompose(x);
    let tz = m.trailing_zeros() as i32;
    let (m, e) = ((m >> tz) as u128, e + tz);
    if e >= 0 {
        if e > 74 {
            None
        } else {
            Some((m << e, 1))
        }
    } else if -e > 127 {
        None
    } else {
        Some((m, 1u128 << (-e)))
    }
}

/// The rate c = ε / steps of an exponential weight exp(−n·c) over grid steps n, as an exact
/// rational, with a 128-bit fast path.
#[derive(Debug, Clone)]
pub(crate) struct Rate {
    num: BigInt,
    den: BigInt,
    small: Option<(u128, u128)>,
    /// c as f64 (for closed-form probabilities only, never for sampling).
    pub approx: f64,
}

impl Rate {
    /// c = eps / steps for finite eps > 0 and steps > 0.
    pub fn new(eps: f64, steps: u128) -> Self {
        let (num, den) = match dyadic(eps) {
            Some((n, d)) => (BigInt::from(n), BigInt::from(d)),
            None => {
                let r = BigRational::from_float(eps).unwrap_or_default();
                (r.numer().clone(), r.denom().clone())
            }
        };
        let den = den * BigInt::from(steps);
        let small = match (u128::try_from(&num), u128::try_from(&den)) {
            (Ok(n), Ok(d)) => Some((n, d)),
            _ => None,
        };
        Self {
            num,
            den,
            small,
            approx: eps / steps as f64,
        }
    }

    /// Bernoulli(exp(−n·c)), exactly.
    pub fn bernoulli_exp(&self, rng: &mut SecureRng, n: u128) -> bool {
        if n == 0 {
            return true;
        }
        if let Some((num, den)) = self.small {
            if let Some(nn) = num.checked_mul(n) {
                return bernoulli_exp_wide(rng, nn, den);
            }
        }
        let x = BigRational::new(&self.num * BigInt::from(n), self.den.clone());
        // x >= 0 by construction, so the exact sampler cannot refuse it.
        bernoulli_exp(rng, &x).unwrap_or(false)
    }

    /// The discrete Laplace distribution P(y) ∝ exp(−|y|·c) on the integers, exactly.
    pub fn discrete_laplace(&self, rng: &mut SecureRng) -> i128 {
        // P(y) ∝ exp(−|y| s/t) with s/t = c = num/den.
        match self.small {
            Some((s, t)) => discrete_laplace(rng, s, t),
            None => {
                // Only reachable for absurd ε (beyond 2^74 or below 2^−127 before scaling).
                let s = u128::try_from(&self.num).unwrap_or(u128::MAX);
                let t = u128::try_from(&self.den).unwrap_or(u128::MAX);
                discrete_laplace(rng, s, t)
            }
        }
    }
}

/// Bernoulli(exp(−1)) exactly: CKS20 Alg. 1 with γ = 1, where Bernoulli(1/K) is one uniform
/// draw below K (the K = 1 step always succeeds and draws nothing).
#[inline]
fn bernoulli_exp_minus_one(rng: &mut SecureRng) -> bool {
    let mut k: u64 = 2;
    while rng.below_u64(k) == 0 {
        k += 1;
    }
    // The loop stopped at the first failure, K = k; success iff K is odd.
    k % 2 == 1
}

/// Bernoulli(exp(−num/den)) exactly for 128-bit num, den (den > 0). CKS20 Alg. 1, with
/// Bernoulli(γ/K) drawn as Bernoulli(γ) ∧ Bernoulli(1/K) so that nothing overflows.
pub(crate) fn bernoulli_exp_wide(rng: &mut SecureRng, num: u128, den: u128) -> bool {
    let whole = num / den;
    let rem = num % den;
    let mut i = 0u128;
    while i < whole {
        if !bernoulli_exp_minus_one(rng) {
            return false;
        }
        i += 1;
    }
    let mut k: u64 = 1;
    loop {
        if rng.below_u128(den) >= rem {
            break;
        }
        if k > 1 && rng.below_u64(k) != 0 {
            break;
        }
        k += 1;
    }
    k % 2 == 1
}

/// Discrete Laplace P(y) ∝ exp(−|y|·s/t), integers s, t ≥ 1 (CKS20 Alg. 2). Arithmetic
/// saturates at 2^127, a value the loop reaches with probability below e^(−2^60).
pub(crate) fn discrete_laplace(rng: &mut SecureRng, s: u128, t: u128) -> i128 {
    loop {
        let u = rng.below_u128(t);
        if !bernoulli_exp_wide(rng, u, t) {
            continue;
        }
        let mut v: u128 = 0;
        while bernoulli_exp_minus_one(rng) {
            v += 1;
        }
        let x = u.saturating_add(t.saturating_mul(v));
        let y = (x / s).min(i128::MAX as u128) as i128;
        let negative = rng.coin();
        if negative && y == 0 {
            continue;
        }
        return if negative { -y } else { y };
    }
}

/// Discrete Gaussian N_ℤ(0, σ²) for an integer σ ≥ 1 (CKS20 Alg. 3).
pub(crate) fn discrete_gaussian(rng: &mut SecureRng, sigma: u128) -> Result<i128> {
    if sigma == 0 || sigma > (1 << 40) {
        return Err(Error::invalid(
            "sigma",
            sigma,
            "grid sigma must lie in [1, 2^40]",
        ));
    }
    let sig2 = sigma * sigma;
    let t = sigma + 1;
    loop {
        let y = discrete_laplace(rng, 1, t);
        let a = y.unsigned_abs();
        // Accept with exp(−(|y| − σ²/t)² / (2σ²)) = exp(−(|y|t − σ²)² / (2σ²t²)).
        let accept = match a.checked_mul(t).map(|at| at.abs_diff(sig2)) {
            Some(d) if d < (1u128 << 63) => bernoulli_exp_wide(rng, d * d, 2 * sig2 * t * t),
            _ => {
                let d = BigInt::from(a) * BigInt::from(t) - BigInt::from(sig2);
                let x = BigRational::new(&d * &d, BigInt::from(2 * sig2 * t * t));
                bernoulli_exp(rng, &x)?
            }
        };
        if accept {
            return Ok(y);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapping_is_exact_and_monotone() {
        let g = Grid::with_exp(1.0, -2);
        assert_eq!(g.delta_steps, 5);
        assert_eq!(g.snap(1.0), 4);
        assert_eq!(g.snap(0.125), 0); // half to even
        assert_eq!(g.snap(0.375), 2);
        assert_eq!(g.snap(-0.375), -2);
        assert_eq!(g.snap(1e300), SATURATE);
        assert_eq!(g.snap(-1e300), -SATURATE);
        assert_eq!(g.snap(f64::NEG_INFINITY), EXCLUDED);
        let r = BigRational::new(3.into(), 8.into());
        assert_eq!(g.snap_rational(&r), 2);
        let xs = [-3.3, -1.0, -0.2, 0.0, 0.1, 0.124, 0.126, 2.5, 7.0];
        for w in xs.windows(2) {
            assert!(g.snap(w[0]) <= g.snap(w[1]));
        }
        let g = Grid::for_delta(0.005, 40);
        assert!(g.delta_steps > 1 << 40 && g.delta_steps <= (1 << 41) + 1);
    }

    #[test]
    fn exp_minus_one() {
        let mut rng = SecureRng::seeded(9);
        let n = 200_000;
        let hits = (0..n).filter(|_| bernoulli_exp_minus_one(&mut rng)).count();
        let p = (-1.0f64).exp();
        let se = (p * (1.0 - p) / n as f64).sqrt();
        assert!((hits as f64 / n as f64 - p).abs() < 5.0 * se);
    }

    #[test]
    fn wide_bernoulli_matches_exp() {
        let mut rng = SecureRng::seeded(7);
        let n = 200_000;
        let hits = (0..n)
            .filter(|_| bernoulli_exp_wide(&mut rng, 7u128 << 90, 3u128 << 90))
            .count();
        let p = (-7.0f64 / 3.0).exp();
        let se = (p * (1.0 - p) / n as f64).sqrt();
        assert!((hits as f64 / n as f64 - p).abs() < 5.0 * se);
    }

    #[test]
    fn discrete_gaussian_variance() {
        let mut rng = SecureRng::seeded(3);
        let n = 100_000;
        let xs: Vec<f64> = (0..n)
            .map(|_| discrete_gaussian(&mut rng, 3).unwrap() as f64)
            .collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        assert!(mean.abs() < 0.05, "{mean}");
        assert!((var - 9.0).abs() < 0.25, "{var}");
    }
}
