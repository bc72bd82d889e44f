//! Poisson subsampling in time proportional to the sample: exact geometric gaps.
//!
//! Including each of n records independently with probability q is the same, in distribution,
//! as walking from record to record by gaps G₁, G₂, … of independent Geometric(q) failures
//! (P[G = g] = q(1 − q)^g on {0, 1, …}): the gaps of an i.i.d. Bernoulli(q) sequence are
//! i.i.d. geometric. [`GeometricGap`] draws one gap exactly with about log₂(1/q) uniform words,
//! so a batch costs time proportional to its size, not to n (DP-SGD's per-step sampling, issue
//! 17 §2).

use num_bigint::BigUint;
use num_integer::Integer;
use num_traits::{One, ToPrimitive, Zero};

use super::{exact_rational, SecureRng};
use crate::error::{check_open_unit, Error, Result};

/// Bits of working precision beyond a comparison's prefix: after `level` squarings the bounds
/// err by at most about 2^(level+1) units, which this margin (plus `level`) absorbs.
const MARGIN_BITS: u64 = 64;

/// Geometric(q) on {0, 1, …}: the number of records skipped before the next one included by
/// a Poisson sample at rate q, P[G = g] = q(1 − q)^g, drawn **exactly** in O(log(1/q)) time.
///
/// Algorithm (c = 1 − q; J the smallest level with c^(2^J) <= 1/2, any J would do):
/// * G = R + 2^J·D with R = G mod 2^J and D = ⌊G/2^J⌋ **independent**: D is geometric with
///   continuation probability c^(2^J) and R a geometric truncated to {0, …, 2^J − 1}, because
///   q·c^(2^J·d + r) = [(1 − c^(2^J))·(c^(2^J))^d]·[q·c^r/(1 − c^(2^J))] factorises. This is the
///   split of Bringmann & Friedrich, "Exact and Efficient Generation of Geometric Random
///   Variates and Random Graphs", ICALP 2013.
/// * The J binary digits r_j of R are independent with P[r_j = 1] = c^(2^j)/(1 + c^(2^j)):
///   c^r = Π_j (c^(2^j))^(r_j) factorises over the digits, and the normaliser is
///   Π_{j<J} (1 + c^(2^j)) = (1 − c^(2^J))/(1 − c) (telescoping), as required.
/// * D counts the successes of Bernoulli(c^(2^J)) before the first failure (at most 1 on
///   average, since c^(2^J) <= 1/2).
///
/// Every Bernoulli(x) here is "U < x" for a uniform real U whose bits are drawn lazily
/// (Knuth & Yao 1976): x = c^(2^j) (or x/(1 + x)) is rational but huge, so it is bracketed by
/// integers lo <= x·2^k <= hi computed with outward-rounded integer squarings; U's bits are
/// read one at a time until its prefix's interval lies below or above the bracket (two bits
/// on average), and in the rare case (about 2^-62) that 64 bits do not decide, more bits and
/// a wider precision are taken until they do. U = x has probability zero,
/// so each trial is exactly Bernoulli(x): no floating-point value is compared with a uniform.
///
/// q is taken exactly: an `f64` is a dyadic rational, so the inclusion probability is exactly
/// the `f64` value the accountant is given.
///
/// Preconditions: 2^-64 <= q < 1 (checked, the error names `q`). Cost: J + 2 trials of about
/// two random bits each on average, J <= log₂(1/q) + 1; a gap above `u64::MAX` is returned as
/// `u64::MAX`.
#[derive(Debug, Clone)]
pub struct GeometricGap {
    /// c = 1 − q as `c_num / den`.
    c_num: BigUint,
    den: BigUint,
    /// The J digit trials (x = c^(2^j)/(1 + c^(2^j)) at level j), then the tail trial
    /// (x = c^(2^J)).
    digits: Vec<Target>,
    tail: Target,
}

/// One Bernoulli target: which x, and its 64-bit bracket for the first word of U.
#[derive(Debug, Clone, Copy)]
struct Target {
    level: u32,
    ratio: bool,
    /// ⌊x·2^64⌋ and ⌈x·2^64⌉ rounded outward from a wider bracket (hi may be 2^64).
    lo: u128,
    hi: u128,
}

impl GeometricGap {
    /// Smallest accepted inclusion probability (2^-64).
    pub const MIN_PROB: f64 = 1.0 / 18_446_744_073_709_551_616.0;

    /// The gap sampler for inclusion probability `q` ∈ [2^-64, 1), taken exactly.
    pub fn new(q: f64) -> Result<Self> {
        check_open_unit("q", q)?;
        if q < Self::MIN_PROB {
            return Err(Error::invalid("q", q, "must be >= 2^-64"));
        }
        let exact = exact_rational("q", q)?;
        let num = exact.numer().magnitude().clone();
        let den = exact.denom().magnitude().clone();
        let mut gap = Self {
            c_num: &den - &num,
            den,
            digits: Vec::new(),
            tail: Target {
                level: 0,
                ratio: false,
                lo: 0,
                hi: 0,
            },
        };
        let half = 1u128 << 63;
        let mut level = 0;
        loop {
            let power = gap.target(level, false);
            if power.hi <= half {
                gap.tail = power;
                return Ok(gap);
            }
            gap.digits.push(gap.target(level, true));
            level += 1;
        }
    }

    /// J, the number of binary digits drawn one by one (the rest is the tail D).
    pub fn levels(&self) -> u32 {
        self.digits.len() as u32
    }

    fn target(&self, level: u32, ratio: bool) -> Target {
        let (lo, hi) = self.bracket(level, ratio, 64);
        Target {
            level,
            ratio,
            lo: lo.to_u128().expect("x <= 1"),
            hi: hi.to_u128().expect("x <= 1"),
        }
    }

    /// Integers (lo, hi) with lo <= x·2^bits <= hi and hi − lo <= 2 (for the margin used), where
    /// x = c^(2^level), or x/(1 + x) when `ratio`.
    fn bracket(&self, level: u32, ratio: bool, bits: u64) -> (BigUint, BigUint) {
        let k = bits + MARGIN_BITS + u64::from(level);
        let (mut lo, rem) = (&self.c_num << k).div_rem(&self.den);
        let mut hi = if rem.is_zero() {
            lo.clone()
        } else {
            &lo + 1u32
        };
        for _ in 0..level {
            lo = (&lo * &lo) >> k;
            hi = ceil_shift(&hi * &hi, k);
        }
        if ratio {
            // x/(1 + x) is increasing in x, so the bracket maps endpoint to endpoint.
            let one = BigUint::one() << k;
            lo = (&lo << k) / (&one + &lo);
            hi = ceil_div(&hi << k, &one + &hi);
        }
        (lo >> (k - bits), ceil_shift(hi, k - bits))
    }

    /// One exact Bernoulli(x) trial: "U < x" with U's bits drawn one at a time (from `bits`)
    /// until the prefix's interval lies below or above x's bracket; about two bits per trial.
    /// After 64 undecided bits (probability about 2^-62) the slow path takes over.
    fn trial(&self, t: &Target, rng: &mut SecureRng, bits: &mut Bits) -> bool {
        let mut u: u128 = 0;
        for shift in (0..64).rev() {
            u = (u << 1) | bits.next(rng);
            if (u + 1) << shift <= t.lo {
                return true;
            }
            if u << shift >= t.hi {
                return false;
            }
        }
        self.refine(t, BigUint::from(u), &mut || rng.next_u64())
    }

    /// The rare slow path: `prefix` (64·m bits of U) fell inside the bracket; append 64 more
    /// bits per round and compare with a bracket at that precision.
    fn refine(&self, t: &Target, mut prefix: BigUint, next: &mut dyn FnMut() -> u64) -> bool {
        let mut bits = 64;
        loop {
            prefix = (prefix << 64u32) | BigUint::from(next());
            bits += 64;
            let (lo, hi) = self.bracket(t.level, t.ratio, bits);
            if prefix < lo {
                return true;
            }
            if prefix >= hi {
                return false;
            }
        }
    }

    /// One draw of G (saturating at `u64::MAX`).
    pub fn sample(&self, rng: &mut SecureRng) -> u64 {
        self.sample_with(rng, &mut Bits::default())
    }

    /// One draw of G, taking U's bits from `bits` (unused bits stay fresh for the next draw).
    fn sample_with(&self, rng: &mut SecureRng, bits: &mut Bits) -> u64 {
        let mut g: u128 = 0;
        for (j, t) in self.digits.iter().enumerate() {
            if self.trial(t, rng, bits) {
                g |= 1 << j;
            }
        }
        let mut d: u128 = 0;
        while self.trial(&self.tail, rng, bits) {
            d += 1;
        }
        let high = d
            .checked_shl(self.levels())
            .filter(|h| h >> self.levels() == d);
        high.and_then(|h| h.checked_add(g))
            .and_then(|x| u64::try_from(x).ok())
            .unwrap_or(u64::MAX)
    }

    /// The indices of `0..n` in one Poisson sample at rate q, in increasing order: each index is
    /// included independently with probability exactly q. Time and randomness are proportional
    /// to the number included (plus one gap).
    pub fn included<'a>(&'a self, n: usize, rng: &'a mut SecureRng) -> Included<'a> {
        let mut bits = Bits::default();
        let next = self.sample_with(rng, &mut bits);
        Included {
            gap: self,
            rng,
            bits,
            next,
            n: n as u64,
        }
    }
}

/// Uniform bits drawn from 64-bit words one at a time. Each trial stops after a prefix of the
/// bits it reads (a stopping time), so the bits it leaves are still independent and uniform.
#[derive(Debug, Default)]
struct Bits {
    word: u64,
    left: u32,
}

impl Bits {
    #[inline]
    fn next(&mut self, rng: &mut SecureRng) -> u128 {
        if self.left == 0 {
            self.word = rng.next_u64();
            self.left = 64;
        }
        self.left -= 1;
        u128::from((self.word >> self.left) & 1)
    }
}

/// The iterator of [`GeometricGap::included`].
pub struct Included<'a> {
    gap: &'a GeometricGap,
    rng: &'a mut SecureRng,
    bits: Bits,
    next: u64,
    n: u64,
}

impl Iterator for Included<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.next >= self.n {
            return None;
        }
        let i = self.next;
        self.next = i
            .saturating_add(1)
            .saturating_add(self.gap.sample_with(self.rng, &mut self.bits));
        Some(i as usize)
    }
}

/// ⌈x / 2^k⌉.
fn ceil_shift(x: BigUint, k: u64) -> BigUint {
    let down = &x >> k;
    if (&down << k) == x {
        down
    } else {
        down + 1u32
    }
}

/// ⌈a / b⌉ for b > 0.
fn ceil_div(a: BigUint, b: BigUint) -> BigUint {
    let (q, r) = a.div_rem(&b);
    if r.is_zero() {
        q
    } else {
        q + 1u32
    }
}

#[cfg(test)]
mod tests {
    use num_rational::BigRational;

    use super::super::testutil::{assert_fits, assert_mean, fits};
    use super::*;

    fn pmf(q: f64) -> impl Fn(i64) -> f64 {
        move |g| {
            if g < 0 {
                0.0
            } else {
                q * (g as f64 * (-q).ln_1p()).exp()
            }
        }
    }

    #[test]
    fn worked_number_quarter() {
        // q = 1/4, c = 3/4: digit 0 is Bernoulli((3/4)/(7/4) = 3/7), digit 1 Bernoulli(
        // (9/16)/(25/16) = 9/25), and c^4 = 81/256 <= 1/2 ends the digits (J = 2). Then
        // P[G = 5] = P[r0 = 1]·P[r1 = 0]·P[D = 1] = (3/7)(16/25)(81/256)(175/256)
        //          = 243/4096 = q·c^5, as the factorisation says.
        let g = GeometricGap::new(0.25).unwrap();
        assert_eq!(g.levels(), 2);
        let exact = |lo: &BigUint, hi: &BigUint, x: (u64, u64), bits: u64| {
            let scaled = BigRational::new(
                (BigUint::from(x.0) << bits).into(),
                BigUint::from(x.1).into(),
            );
            assert!(BigRational::from_integer(lo.clone().into()) <= scaled);
            assert!(scaled <= BigRational::from_integer(hi.clone().into()));
            assert!(hi - lo <= BigUint::from(2u32));
        };
        for bits in [64, 128, 512] {
            let (lo, hi) = g.bracket(0, true, bits);
            exact(&lo, &hi, (3, 7), bits);
            let (lo, hi) = g.bracket(1, true, bits);
            exact(&lo, &hi, (9, 25), bits);
            let (lo, hi) = g.bracket(2, false, bits);
            exact(&lo, &hi, (81, 256), bits);
        }
        let p5: f64 = (3.0 / 7.0) * (16.0 / 25.0) * (81.0 / 256.0) * (175.0 / 256.0);
        assert!((p5 - 243.0 / 4096.0).abs() < 1e-15);
        assert!((pmf(0.25)(5) - 243.0 / 4096.0).abs() < 1e-15);
    }

    #[test]
    fn the_slow_path_decides_exactly() {
        // A first word equal to ⌊3/7·2^64⌋ cannot decide "U < 3/7"; the refinement reads the
        // next words. 3/7 = 0.011011…₂ and 3·2^64 mod 7 = 6, so the bits after the first word
        // are those of 6/7 = 0.110110…₂ = 0xDB6DB6…: an all-zero word says "below", an all-one
        // word "above", and a word equal to 6/7's first 64 bits needs a third word.
        let g = GeometricGap::new(0.25).unwrap();
        let t = g.digits[0];
        let first = (BigUint::from(3u32) << 64u32) / BigUint::from(7u32);
        let f = first.to_u128().unwrap();
        assert!(f >= t.lo && f < t.hi, "the first word must be undecided");
        assert!(g.refine(&t, first.clone(), &mut || 0));
        assert!(!g.refine(&t, first.clone(), &mut || u64::MAX));
        let mut words = [0xDB6D_B6DB_6DB6_DB6Du64, 0].into_iter();
        let mut calls = 0;
        assert!(g.refine(&t, first.clone(), &mut || {
            calls += 1;
            words.next().unwrap()
        }));
        assert_eq!(calls, 2);
        let mut words = [0xDB6D_B6DB_6DB6_DB6Du64, u64::MAX].into_iter();
        assert!(!g.refine(&t, first, &mut || words.next().unwrap()));
    }

    #[test]
    fn gaps_fit_the_geometric_pmf() {
        // Chi-square at false-failure probability 1e-6 per call (testutil::FALSE_FAILURE) and a
        // mean check at five standard errors (< 6e-7), for dyadic q of several sizes.
        let mut rng = SecureRng::seeded(41);
        for q in [0.5, 0.25, 0.1, 0.01, 0.003] {
            let g = GeometricGap::new(q).unwrap();
            let xs: Vec<i64> = (0..50_000).map(|_| g.sample(&mut rng) as i64).collect();
            assert_fits(&xs, pmf(q), 0);
            assert_mean(&xs, (1.0 - q) / q, (1.0 - q).sqrt() / q);
        }
    }

    #[test]
    fn the_check_rejects_an_off_by_one_gap_and_wrong_digits() {
        // The same chi-square check must fail for deliberately wrong samplers (at these sizes a
        // wrong sampler passes with negligible probability): the gap plus one (trials instead
        // of failures), and digits drawn with P[r_j = 1] = c^(2^j) (missing the 1/(1 + x)).
        let q = 0.1;
        let g = GeometricGap::new(q).unwrap();
        let mut rng = SecureRng::seeded(42);
        let off: Vec<i64> = (0..50_000).map(|_| g.sample(&mut rng) as i64 + 1).collect();
        assert!(!fits(&off, pmf(q), 0));
        let wrong = GeometricGap {
            digits: (0..g.levels()).map(|j| g.target(j, false)).collect(),
            ..g.clone()
        };
        let bad: Vec<i64> = (0..50_000).map(|_| wrong.sample(&mut rng) as i64).collect();
        assert!(!fits(&bad, pmf(q), 0));
        let good: Vec<i64> = (0..50_000).map(|_| g.sample(&mut rng) as i64).collect();
        assert!(fits(&good, pmf(q), 0));
    }

    #[test]
    fn poisson_sample_includes_each_record_with_probability_q() {
        // 20 records, q = 0.3, 40_000 batches: each record's inclusion count is Binomial(40_000,
        // 0.3) (sd ≈ 91.7); five standard deviations per record, false failure < 20·6e-7.
        // The batch size must be Binomial(20, 0.3): chi-square at 1e-6.
        let (n, q, batches) = (20, 0.3, 40_000);
        let g = GeometricGap::new(q).unwrap();
        let mut rng = SecureRng::seeded(43);
        let mut counts = vec![0u32; n];
        let mut sizes = Vec::new();
        for _ in 0..batches {
            let mut size = 0;
            let mut last = None;
            for i in g.included(n, &mut rng) {
                assert!(last.is_none_or(|l| l < i) && i < n);
                last = Some(i);
                counts[i] += 1;
                size += 1;
            }
            sizes.push(size);
        }
        let sd = (batches as f64 * q * (1.0 - q)).sqrt();
        for c in counts {
            assert!((c as f64 - batches as f64 * q).abs() < 5.0 * sd, "{c}");
        }
        let binom = |k: i64| {
            if !(0..=n as i64).contains(&k) {
                return 0.0;
            }
            let k = k as u64;
            let choose = (0..k).fold(1.0, |acc, i| acc * (n as u64 - i) as f64 / (i + 1) as f64);
            choose * q.powi(k as i32) * (1.0 - q).powi((n as u64 - k) as i32)
        };
        assert_fits(&sizes, binom, 6);
        // No records, no inclusions; q close to 1 includes nearly all.
        assert_eq!(g.included(0, &mut rng).count(), 0);
    }

    #[test]
    fn constructor_names_q_and_tiny_q_is_fast() {
        for bad in [f64::NAN, 0.0, 1.0, -0.5, 1e-30] {
            let e = GeometricGap::new(bad).unwrap_err();
            assert!(e.to_string().contains("`q`"), "{e}");
        }
        // q = 2^-64: about 64 digit levels, mean gap 2^64 (saturates at u64::MAX at times).
        let g = GeometricGap::new(GeometricGap::MIN_PROB).unwrap();
        assert!((63..=65).contains(&g.levels()), "{}", g.levels());
        let mut rng = SecureRng::seeded(44);
        let mut seen = 0;
        for _ in 0..1000 {
            seen += g.included(1 << 20, &mut rng).count();
        }
        // Expected 1000·2^20·2^-64 ≈ 6e-11 inclusions.
        assert_eq!(seen, 0);
    }
}
