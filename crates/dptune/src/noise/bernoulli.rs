//! Exact Bernoulli samplers: Bernoulli(p) for rational p and Bernoulli(exp(-x)) for rational
//! x >= 0.
//!
//! Source: Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy",
//! NeurIPS 2020, arXiv 2004.00010, Algorithm 1 (THEORY.md §14.3). Everything is integer
//! arithmetic on uniform integers drawn by rejection: no `exp()` is ever evaluated in floating
//! point and compared with a float uniform (the attack of Mironov 2012 does not apply).
//!
//! Bernoulli(exp(-γ)) for γ ∈ [0, 1]: K ← 1; while Bernoulli(γ/K) succeeds, K ← K + 1; return
//! "K is odd". For γ > 1: ⌊γ⌋ independent Bernoulli(exp(-1)) must all succeed, then
//! Bernoulli(exp(-(γ - ⌊γ⌋))). The expected number of uniform draws is below e + 1 per call.

use num_bigint::{BigUint, Sign};
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};

use super::wide::{bernoulli_exp_minus_one, bernoulli_exp_u128};
use super::SecureRng;
use crate::error::{Error, Result};

/// The exact rational value of a finite `f64`.
pub fn exact_rational(name: &'static str, x: f64) -> Result<BigRational> {
    BigRational::from_float(x).ok_or_else(|| Error::invalid(name, x, "must be finite"))
}

/// Uniform integer in `0..n` for an arbitrary-size `n > 0`, by rejection on whole bits.
pub fn below_big(rng: &mut SecureRng, n: &BigUint) -> BigUint {
    if let Some(small) = n.to_u128() {
        return BigUint::from(rng.below_u128(small));
    }
    let bits = n.bits();
    let words = bits.div_ceil(64) as usize;
    let top_mask = if bits.is_multiple_of(64) {
        u64::MAX
    } else {
        (1u64 << (bits % 64)) - 1
    };
    let mut digits = vec![0u64; words];
    loop {
        for d in digits.iter_mut() {
            *d = rng.next_u64();
        }
        digits[words - 1] &= top_mask;
        let x = BigUint::from_slice(
            &digits
                .iter()
                .flat_map(|d| [*d as u32, (*d >> 32) as u32])
                .collect::<Vec<u32>>(),
        );
        if &x < n {
            return x;
        }
    }
}

/// Bernoulli(exp(-num/den)) exactly, for `den > 0`. This is the fast path used by the selection
/// mechanisms and by [`bernoulli_exp`] when the rationals are small; it is
/// [`bernoulli_exp_u128`] on 64-bit inputs.
pub fn bernoulli_exp_u64(rng: &mut SecureRng, num: u64, den: u64) -> bool {
    debug_assert!(den > 0);
    bernoulli_exp_u128(rng, num as u128, den as u128)
}

/// Bernoulli(exp(-x)) exactly for a rational `x >= 0` of any size. Negative `x` is refused.
pub fn bernoulli_exp(rng: &mut SecureRng, x: &BigRational) -> Result<bool> {
    if x.numer().sign() == Sign::Minus {
        return Err(Error::invalid("x", x, "Bernoulli(exp(-x)) needs x >= 0"));
    }
    let num = x.numer().magnitude();
    let den = x.denom().magnitude();
    if let (Some(n), Some(d)) = (num.to_u64(), den.to_u64()) {
        return Ok(bernoulli_exp_u64(rng, n, d));
    }
    let (whole, rem) = num.div_rem(den);
    // ⌊x⌋ Bernoulli(exp(-1)) trials; each fails with probability 1 - 1/e, so a huge ⌊x⌋
    // terminates early with overwhelming probability (the loop is over a BigUint count).
    let mut i = BigUint::zero();
    while i < whole {
        if !bernoulli_exp_minus_one(rng) {
            return Ok(false);
        }
        i += 1u32;
    }
    let mut k = BigUint::from(1u32);
    loop {
        let bound = den * &k;
        if below_big(rng, &bound) >= rem {
            break;
        }
        k += 1u32;
    }
    Ok(k.is_odd())
}

/// Bernoulli(p) exactly for a rational `p ∈ [0, 1]`.
pub fn bernoulli_rational(rng: &mut SecureRng, p: &BigRational) -> Result<bool> {
    if p.numer().sign() == Sign::Minus || p.numer() > p.denom() {
        return Err(Error::invalid("p", p, "a probability must lie in [0, 1]"));
    }
    let den = p.denom().magnitude();
    Ok(&below_big(rng, den) < p.numer().magnitude())
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigInt;

    /// Frequency of `true` over `n` draws.
    fn freq(n: u32, mut f: impl FnMut() -> bool) -> f64 {
        (0..n).filter(|_| f()).count() as f64 / n as f64
    }

    /// Five standard errors around the true mean: a false failure has probability < 6e-7 per
    /// check (normal approximation), and the seed is fixed.
    fn assert_close(p_hat: f64, p: f64, n: u32) {
        let se = (p * (1.0 - p) / n as f64).sqrt();
        assert!((p_hat - p).abs() < 5.0 * se, "p_hat = {p_hat}, p = {p}");
    }

    #[test]
    fn worked_number_exp_minus_seven_thirds() {
        // THEORY.md §14.3: Bernoulli(e^{-7/3}) has mean 0.0970.
        let mut rng = SecureRng::seeded(11);
        let n = 200_000;
        assert_close(
            freq(n, || bernoulli_exp_u64(&mut rng, 7, 3)),
            (-7.0f64 / 3.0).exp(),
            n,
        );
    }

    #[test]
    fn fast_and_big_paths_agree_in_distribution() {
        let mut rng = SecureRng::seeded(12);
        let n = 100_000;
        // x = 0.3 as an exact f64 has a 2^54 denominator: still the fast path.
        let x = exact_rational("x", 0.3).unwrap();
        assert_close(
            freq(n, || bernoulli_exp(&mut rng, &x).unwrap()),
            (-0.3f64).exp(),
            n,
        );
        // A denominator beyond 64 bits forces the bignum path: x = 1.5 + 2^-70.
        let x = BigRational::new(
            (BigInt::from(3u32) << 69u32) + BigInt::from(1u32),
            BigInt::from(1u32) << 70u32,
        );
        assert_close(
            freq(n, || bernoulli_exp(&mut rng, &x).unwrap()),
            (-1.5f64).exp(),
            n,
        );
        assert!(bernoulli_exp(&mut rng, &exact_rational("x", -0.1).unwrap()).is_err());
    }

    #[test]
    fn edge_values() {
        let mut rng = SecureRng::seeded(13);
        assert!((0..1000).all(|_| bernoulli_exp_u64(&mut rng, 0, 5)));
        let half = BigRational::new(BigInt::from(1), BigInt::from(2));
        let n = 100_000;
        assert_close(
            freq(n, || bernoulli_rational(&mut rng, &half).unwrap()),
            0.5,
            n,
        );
        assert!(bernoulli_rational(&mut rng, &BigRational::from_integer(BigInt::from(2))).is_err());
        let big = (BigUint::from(1u32) << 130u32) + BigUint::from(7u32);
        assert!((0..50).all(|_| below_big(&mut rng, &big) < big));
        assert!(exact_rational("score", f64::NAN).is_err());
    }
}
