//! Exact integer machinery shared by the selection mechanisms: snapping scores to a
//! power-of-two grid, the exponential weight exp(−n·c) of a gap of n grid steps as an exact
//! rational rate, and the exact samplers built on it (THEORY.md §14.3–14.4). The randomness
//! itself comes from the shared exact samplers of [`crate::noise`] (CKS20 Alg. 1–2:
//! Bernoulli(exp(−x)) on rationals, Bernoulli(exp(−1)), the geometric with rate 1, the
//! discrete Laplace).
//!
//! The grid stays here: `noise`'s grid (for [`crate::noise::GridLaplace`]) picks its step from
//! the noise scale and rounds ties away from zero in floating point, while selection snaps
//! every score once, exactly in integers, to a step chosen from the sensitivity Δ and needs
//! that sensitivity in whole steps.
//!
//! **The grid (THEORY.md §14.2, 14.4).** A score x is replaced by the integer round(x / 2^k)
//! (round half to even, saturated at ±2^120). This map is monotone, so monotone scores stay
//! monotone, and it moves any score by at most 2^k/2, so a per-candidate sensitivity Δ becomes
//! at most ⌈Δ/2^k⌉ + 1 grid steps. Every mechanism is then run *exactly* on the integers with
//! that inflated sensitivity: the rounding is charged by a slightly larger range (relative
//! inflation ≤ 2^−39 with the default 40 bits), never by a larger ε. Saturation is a fixed,
//! monotone, 1-Lipschitz clamp, so it does not increase the sensitivity either.
//!
//! **Integer part first (THEORY.md §14.3).** Bernoulli(exp(−x)) for x = k + f (k = ⌊x⌋) is
//! "k independent Bernoulli(exp(−1)) succeed, then Bernoulli(exp(−f))". The first part is the
//! event L ≥ k for L ~ the geometric with rate 1 (P\[L ≥ k\] = e^{−k}, the number of
//! Bernoulli(exp(−1)) successes before the first failure), so a sampler may draw L *before*
//! knowing which candidate it tests, and compare L with precomputed thresholds: [`Levels`].

use num_bigint::BigInt;
use num_rational::BigRational;

use super::gap;
use crate::noise::{
    bernoulli_exp, bernoulli_exp_u128, discrete_laplace_wide, geometric_rate_one, SecureRng,
};

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

    /// Bernoulli(exp(−n·c)) given an independent L with P\[L ≥ k\] = e^{−k} (see the module
    /// docs): true iff ⌊n·c⌋ ≤ L and Bernoulli(exp(−(n·c − ⌊n·c⌋))) succeeds.
    fn accept_given_integer_part(&self, rng: &mut SecureRng, n: u128, l: u64) -> bool {
        if let Some((num, den)) = self.small {
            if let Some(nn) = num.checked_mul(n) {
                return nn / den <= l as u128 && bernoulli_exp_u128(rng, nn % den, den);
            }
        }
        let x = BigRational::new(&self.num * BigInt::from(n), self.den.clone());
        let whole = x.floor();
        // x − ⌊x⌋ ∈ [0, 1), so the exact sampler cannot refuse it.
        whole.to_integer() <= BigInt::from(l) && bernoulli_exp(rng, &(x - whole)).unwrap_or(false)
    }

    /// The discrete Laplace distribution P(y) ∝ exp(−|y|·c) on the integers, exactly
    /// ([`crate::noise`]'s CKS20 Alg. 2 on 128-bit rationals).
    pub fn discrete_laplace(&self, rng: &mut SecureRng) -> i128 {
        let (s, t) = self.ratio_u128();
        discrete_laplace_wide(rng, s, t)
    }

    /// c = s/t as 128-bit integers, for the noise P(y) ∝ exp(−|y|·s/t). Without a 128-bit form
    /// (ε beyond 2^74 or below 2^−127 before scaling) the rate is saturated, a documented
    /// limitation.
    pub fn ratio_u128(&self) -> (u128, u128) {
        self.small.unwrap_or_else(|| {
            (
                u128::try_from(&self.num).unwrap_or(u128::MAX),
                u128::try_from(&self.den).unwrap_or(u128::MAX),
            )
        })
    }

    /// The integer-part thresholds of this rate (see [`Levels`]).
    pub fn levels(&self) -> Levels {
        let mut thresholds = [u128::MAX; LEVELS];
        for (j, t) in thresholds.iter_mut().enumerate() {
            // The smallest gap n with n·c ≥ j + 1: ⌈(j + 1)·den / num⌉ (saturated; gaps are
            // below 2^122, so a saturated threshold is never reached, as it should not be).
            let fast = self.small.and_then(|(num, den)| {
                (j as u128 + 1)
                    .checked_mul(den)
                    .map(|need| need.div_ceil(num))
            });
            *t = fast.unwrap_or_else(|| {
                let need = BigInt::from(j + 1) * &self.den;
                let q = (&need + &self.num - BigInt::from(1)) / &self.num;
                u128::try_from(&q).unwrap_or(u128::MAX)
            });
        }
        Levels {
            rate: self.clone(),
            thresholds,
        }
    }
}

/// Number of integer parts k = 0..LEVELS − 1 that [`Levels`] resolves without arithmetic.
pub(crate) const LEVELS: usize = 64;

/// A [`Rate`] with the gap thresholds T_j = min{n : n·c ≥ j}, j = 1..=LEVELS, so that the
/// integer part ⌊n·c⌋ of a gap is found by comparisons and a draw whose integer part already
/// fails costs no division.
#[derive(Debug, Clone)]
pub(crate) struct Levels {
    rate: Rate,
    /// `thresholds[j]` = T_{j+1}: n ≥ thresholds\[j\] iff ⌊n·c⌋ > j.
    thresholds: [u128; LEVELS],
}

impl Levels {
    /// ⌊n·c⌋ if it is below LEVELS, else `LEVELS`.
    #[inline]
    pub fn integer_part(&self, n: u128) -> usize {
        if n >= self.thresholds[LEVELS - 1] {
            return LEVELS;
        }
        self.thresholds.partition_point(|&t| t <= n)
    }

    /// Bernoulli(exp(−n·c)) given an independent L with P\[L ≥ k\] = e^{−k}.
    #[inline]
    pub fn accept(&self, rng: &mut SecureRng, n: u128, l: u64) -> bool {
        if (l as usize) < LEVELS && n >= self.thresholds[l as usize] {
            return false;
        }
        self.rate.accept_given_integer_part(rng, n, l)
    }

    /// Bernoulli(exp(−n·c)), exactly.
    #[inline]
    pub fn coin(&self, rng: &mut SecureRng, n: u128) -> bool {
        if n == 0 {
            return true;
        }
        let l = geometric_rate_one(rng);
        self.accept(rng, n, l)
    }
}

/// The exponential mechanism P(i) ∝ exp(−(top − v_i)·c) over snapped scores, sampled exactly
/// by rejection with the integer part drawn first.
///
/// The textbook exact sampler (THEORY.md §1.3) repeats: i uniform among the live candidates;
/// accept with Bernoulli(exp(−x_i)), x_i = (top − v_i)·c = k_i + f_i. Writing that Bernoulli as
/// "L ≥ k_i, then Bernoulli(exp(−f_i))" with L independent of i, each round may draw L first,
/// then u uniform in 0..live, and test the candidate at position u of a list sorted by k_i:
/// the candidates with k_i ≤ L are exactly the first N(L) positions, so u ≥ N(L) rejects
/// without touching any candidate. This is the same round with the same probabilities, so the
/// output distribution is exactly EM's; the expected number of rounds is unchanged
/// (live / Σ_i e^{−x_i}), but a rejected round costs about two random words and no memory
/// access. Only candidates with k_i < LEVELS are sorted (a counting sort); the others follow in
/// index order and are located by a scan, needed only when L ≥ LEVELS (probability e^{−64}).
#[derive(Debug, Clone)]
pub(crate) struct EmSampler {
    levels: Levels,
    /// Candidates with k_i < LEVELS, by k_i ascending.
    order: Vec<usize>,
    /// `upto[l]` = number of candidates with k_i ≤ l.
    upto: [usize; LEVELS],
    /// Number of non-excluded candidates.
    live: usize,
    top: i128,
}

impl EmSampler {
    /// Prepares the sampler for snapped scores `vals` (not all excluded) with maximum `top`.
    pub fn new(vals: &[i128], top: i128, rate: &Rate) -> Self {
        let levels = rate.levels();
        let keys: Vec<u8> = vals
            .iter()
            .map(|&v| gap(top, v).map_or(u8::MAX, |g| levels.integer_part(g) as u8))
            .collect();
        let mut upto = [0usize; LEVELS];
        let mut live = 0;
        for &k in &keys {
            if k != u8::MAX {
                live += 1;
                if (k as usize) < LEVELS {
                    upto[k as usize] += 1;
                }
            }
        }
        let mut start = [0usize; LEVELS];
        let mut acc = 0;
        for l in 0..LEVELS {
            start[l] = acc;
            acc += upto[l];
            upto[l] = acc;
        }
        let mut order = vec![0usize; acc];
        for (i, &k) in keys.iter().enumerate() {
            if (k as usize) < LEVELS {
                order[start[k as usize]] = i;
                start[k as usize] += 1;
            }
        }
        Self {
            levels,
            order,
            upto,
            live,
            top,
        }
    }

    /// One exact draw.
    pub fn draw(&self, rng: &mut SecureRng, vals: &[i128]) -> usize {
        let live = self.live as u64;
        loop {
            let l = geometric_rate_one(rng);
            let reach = self.upto.get(l as usize).copied().unwrap_or(self.live);
            let u = rng.below_u64(live) as usize;
            if u >= reach {
                continue;
            }
            let i = match self.order.get(u) {
                Some(&i) => i,
                None => self.beyond_levels(vals, u - self.order.len()),
            };
            if let Some(g) = gap(self.top, vals[i]) {
                if self.levels.accept(rng, g, l) {
                    return i;
                }
            }
        }
    }

    /// The `j`-th live candidate (index order) with k_i ≥ LEVELS.
    #[cold]
    fn beyond_levels(&self, vals: &[i128], j: usize) -> usize {
        (0..vals.len())
            .filter(|&i| {
                gap(self.top, vals[i]).is_some_and(|g| self.levels.integer_part(g) >= LEVELS)
            })
            .nth(j)
            .unwrap_or(0)
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
    fn rate_bernoulli_matches_exp_on_both_paths() {
        // Five standard errors (false failure < 6e-7 per check), fixed seeds.
        let mut rng = SecureRng::seeded(7);
        let n = 200_000;
        let check = |hits: usize, p: f64| {
            let se = (p * (1.0 - p) / n as f64).sqrt();
            assert!(
                (hits as f64 / n as f64 - p).abs() < 5.0 * se,
                "{hits} vs {p}"
            );
        };
        // c = 7/3 per step (small path) and c = 3·2^-128 (bignum path) at 2^127 steps.
        let levels = Rate::new(7.0, 3).levels();
        assert_eq!(levels.integer_part(1), 2);
        assert_eq!(levels.integer_part(3), 7);
        let hits = (0..n).filter(|_| levels.coin(&mut rng, 1)).count();
        check(hits, (-7.0f64 / 3.0).exp());
        let tiny = 3.0 * 2f64.powi(-128);
        let r = Rate::new(tiny, 1);
        assert!(r.small.is_none());
        let levels = r.levels();
        let steps = 1u128 << 127;
        let hits = (0..n).filter(|_| levels.coin(&mut rng, steps)).count();
        check(hits, (-1.5f64).exp());
    }

    #[test]
    fn em_sampler_matches_the_weights() {
        // Gaps 0, 1, 2, 3, 200 steps at c = 1/2 plus an excluded candidate; chi-square-like
        // check at five standard errors per cell (false failure < 4e-6 in all), fixed seed.
        let vals = [10i128, 9, 8, 7, -190, EXCLUDED];
        let rate = Rate::new(1.0, 2);
        let em = EmSampler::new(&vals, 10, &rate);
        assert_eq!(em.live, 5);
        assert_eq!(em.order.len(), 4);
        let w: Vec<f64> = [0.0, 0.5, 1.0, 1.5, 100.0]
            .iter()
            .map(|x: &f64| (-x).exp())
            .collect();
        let z: f64 = w.iter().sum();
        let n = 200_000;
        let mut rng = SecureRng::seeded(5);
        let mut counts = [0usize; 6];
        for _ in 0..n {
            counts[em.draw(&mut rng, &vals)] += 1;
        }
        assert_eq!(counts[5], 0);
        for i in 0..5 {
            let p = w[i] / z;
            let se = (p * (1.0 - p) / n as f64).sqrt();
            assert!(
                (counts[i] as f64 / n as f64 - p).abs() < 5.0 * se + 1e-12,
                "{i}"
            );
        }
        assert_eq!(em.beyond_levels(&vals, 0), 4);
    }
}
