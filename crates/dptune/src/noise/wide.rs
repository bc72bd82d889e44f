//! Fast exact building blocks on machine integers: Bernoulli(exp(-num/den)) for 128-bit
//! rationals, Bernoulli(exp(-1)), the geometric with rate 1, and the CKS geometric with rate
//! `1/t`.
//!
//! Source: Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy",
//! NeurIPS 2020, arXiv 2004.00010, Algorithms 1 and 2 (THEORY.md §14.3). These are the same
//! algorithms as [`super::bernoulli_exp_u64`], written so that the hot paths of the discrete
//! Laplace and Gaussian samplers never touch a bignum and never overflow: every product is
//! checked, and a product that would overflow is replaced by an equivalent product of
//! independent Bernoulli trials (Bernoulli(a/(b·k)) = Bernoulli(a/b) ∧ Bernoulli(1/k)).

use super::SecureRng;

/// Bernoulli(1/k) exactly, for `k >= 1`.
#[inline]
pub(crate) fn one_in(rng: &mut SecureRng, k: u64) -> bool {
    k == 1 || rng.below_u64(k) == 0
}

/// n! for the table of [`bernoulli_exp_minus_one`]: 18! < 2^64 / 2880.
const FACT_N: u64 = 6_402_373_705_728_000;
/// The largest multiple of 18! that fits in a `u64`: a word below it is a uniform draw from
/// `0..18!` scaled by `FACT_SCALE`.
const FACT_SCALE: u64 = u64::MAX / FACT_N;
/// `FACT_SCALE · 18!/n!` for n = 0..=18: the chain of Bernoulli(1/k), k = 2..=n, all succeed iff
/// the scaled uniform is below entry n.
const FACT_THRESHOLDS: [u64; 19] = {
    let mut t = [0u64; 19];
    let mut n = 18;
    let mut ratio = 1u64; // 18!/n!
    loop {
        t[n] = FACT_SCALE * ratio;
        if n == 0 {
            break;
        }
        ratio *= n as u64;
        n -= 1;
    }
    t
};

/// Bernoulli(exp(-1)) exactly (CKS20 Alg. 1 with γ = 1): K is the first k >= 2 whose
/// Bernoulli(1/k) fails, and the result is "K is odd". Since P\[K > n\] = 1/n!, one uniform W in
/// `0..FACT_SCALE·18!` decides the first 17 trials at once: K > n iff W < FACT_SCALE·18!/n!
/// (n <= 18); only when W < FACT_SCALE (K > 18, probability 1/18!) does the chain continue with
/// one Bernoulli(1/k) per step. Exact: integer comparisons of a uniform drawn by rejection.
/// Expected cost: 1.0005 64-bit words (the rejection of W has probability < 6·10⁻⁴), against
/// about 1.9 for the step-by-step chain.
#[inline(always)]
pub(crate) fn bernoulli_exp_minus_one(rng: &mut SecureRng) -> bool {
    let limit = FACT_THRESHOLDS[0];
    let w = loop {
        let w = rng.next_u64();
        if w < limit {
            break w;
        }
    };
    // FACT_THRESHOLDS[1] = limit, so K >= 2 always; find the first n with w >= threshold.
    let mut k = 2usize;
    while k <= 18 {
        if w >= FACT_THRESHOLDS[k] {
            return k % 2 == 1;
        }
        k += 1;
    }
    // All of Bernoulli(1/2), …, Bernoulli(1/18) succeeded: continue the chain from K = 19.
    let mut k = 19u64;
    while one_in(rng, k) {
        k += 1;
    }
    k % 2 == 1
}

/// The number L of successes of Bernoulli(exp(-1)) before the first failure: P\[L >= k\] =
/// exp(-k), i.e. the geometric with rate 1 (⌊E⌋ for E ~ Exp(1)). Counted in `u64`: reaching
/// 2^64 would take more draws than can be made.
#[inline]
pub(crate) fn geometric_rate_one(rng: &mut SecureRng) -> u64 {
    let mut v: u64 = 0;
    while bernoulli_exp_minus_one(rng) {
        v = v.saturating_add(1);
    }
    v
}

/// Bernoulli(exp(-num/den)) for `num < den`: CKS20 Alg. 1, K ← 1; while Bernoulli(γ/K), K ← K+1;
/// return "K is odd". Bernoulli(γ/K) is one uniform below `den·K` when that fits in 128 bits,
/// else the product Bernoulli(num/den) ∧ Bernoulli(1/K) (same probability, independent draws).
#[inline]
fn bernoulli_exp_unit_u128(rng: &mut SecureRng, num: u128, den: u128) -> bool {
    let mut k: u64 = 1;
    loop {
        let success = match den.checked_mul(k as u128) {
            Some(dk) => rng.below_u128(dk) < num,
            None => one_in(rng, k) && rng.below_u128(den) < num,
        };
        if !success {
            return k % 2 == 1;
        }
        k += 1;
    }
}

/// Bernoulli(exp(-num/den)) exactly for 128-bit `num`, `den > 0` (CKS20 Alg. 1 plus the
/// integer-part reduction: ⌊num/den⌋ Bernoulli(exp(-1)) trials must all succeed first).
///
/// Exact because it only compares uniform integers (drawn by rejection) with integers; the loop
/// over the integer part stops at the first failure, so its expected length is below
/// e/(e-1) whatever `num/den` is. `den == 0` is treated as an infinite exponent (returns false).
pub fn bernoulli_exp_u128(rng: &mut SecureRng, num: u128, den: u128) -> bool {
    if den == 0 {
        return false;
    }
    let whole = num / den;
    let mut i: u128 = 0;
    while i < whole {
        if !bernoulli_exp_minus_one(rng) {
            return false;
        }
        i += 1;
    }
    bernoulli_exp_unit_u128(rng, num % den, den)
}

/// A geometric variable X on {0, 1, …} with P[X = x] ∝ exp(-x/t), `t >= 1` (CKS20 Alg. 2,
/// steps 1–4 before the division by `s`): U uniform in 0..t accepted with probability
/// exp(-U/t), then V = number of Bernoulli(exp(-1)) successes before the first failure, and
/// X = U + t·V. The expected cost is constant in `t` (acceptance of U is
/// (1 - e^{-1})/(t(1 - e^{-1/t})) >= 1 - e^{-1}).
///
/// X saturates at u128::MAX, which needs V >= 2^128/t: for the largest scales used (t < 2^100)
/// that has probability below e^{-2^28}, not observable.
#[inline]
pub(crate) fn geometric_unit_rate(rng: &mut SecureRng, t: u128) -> u128 {
    let u = geometric_remainder(rng, t);
    let v = geometric_rate_one(rng);
    u.saturating_add(t.saturating_mul(v as u128))
}

/// The remainder U = X mod t of [`geometric_unit_rate`]'s X = U + t·V: U uniform in `0..t`
/// accepted with probability exp(-U/t), so P[U = u] ∝ exp(-u/t) on `0..t`. U and V are
/// independent (the acceptance loop never looks at V), so a caller may draw V first, decide
/// from it alone whether X matters, and draw U only then (the lazy noisy-max in `select`).
#[inline]
pub(crate) fn geometric_remainder(rng: &mut SecureRng, t: u128) -> u128 {
    debug_assert!(t > 0);
    loop {
        let u = rng.below_u128(t);
        if u == 0 || bernoulli_exp_unit_u128(rng, u, t) {
            return u;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Five standard errors: a false failure has probability < 6e-7 per check (normal
    /// approximation), and the seed is fixed.
    fn assert_freq(n: u32, p: f64, mut f: impl FnMut() -> bool) {
        let hits = (0..n).filter(|_| f()).count() as f64 / n as f64;
        let se = (p * (1.0 - p) / n as f64).sqrt();
        assert!((hits - p).abs() < 5.0 * se, "freq {hits} vs {p}");
    }

    #[test]
    fn wide_bernoulli_exp_matches_exp() {
        let mut rng = SecureRng::seeded(21);
        // THEORY.md §14.3 worked number: Bernoulli(e^{-7/3}) has mean 0.0970.
        assert_freq(100_000, (-7.0f64 / 3.0).exp(), || {
            bernoulli_exp_u128(&mut rng, 7, 3)
        });
        assert_freq(100_000, (-1.0f64).exp(), || {
            bernoulli_exp_minus_one(&mut rng)
        });
        // A denominator near 2^127 makes den·K overflow from K = 2 on (the split path).
        let den = (1u128 << 127) + 12345;
        let num = den / 4;
        assert_freq(100_000, (-0.25f64).exp(), || {
            bernoulli_exp_u128(&mut rng, num, den)
        });
        assert!(!bernoulli_exp_u128(&mut rng, 1, 0));
        assert!(bernoulli_exp_u128(&mut rng, 0, 9));
    }

    #[test]
    fn unit_rate_geometric_has_the_right_mean() {
        // Mean of P ∝ exp(-x/t) on {0, 1, …} is 1/(e^{1/t} - 1); 200_000 draws at t = 3, five
        // standard errors (false failure < 6e-7).
        let mut rng = SecureRng::seeded(22);
        let t = 3u64;
        let q = (-1.0f64 / t as f64).exp();
        let mean = q / (1.0 - q);
        let sd = q.sqrt() / (1.0 - q);
        let n = 200_000;
        let avg = (0..n)
            .map(|_| geometric_unit_rate(&mut rng, t as u128) as f64)
            .sum::<f64>()
            / n as f64;
        assert!(
            (avg - mean).abs() < 5.0 * sd / (n as f64).sqrt(),
            "{avg} vs {mean}"
        );
    }
}
