//! Geometric distributions, with the parameterisation in the type (PEERS.md §2.1 item 1).
//!
//! * [`Geometric`] counts failures on {0, 1, …} with P[K = k] = (1 - e^{-x})·e^{-xk}: it is
//!   built **only from a rate** x (`from_rate`). Its mean is 1/(e^x - 1).
//! * [`GeometricTrials`] counts trials on {1, 2, …} until the first stop, with
//!   P[K = k] = γ(1 - γ)^{k-1}: it is built **only from a per-trial stop (success) probability**
//!   γ (`from_success_prob`). Its mean is 1/γ.
//!
//! OpenDP 0.12–0.16 passed a scale where a rate was expected, so a requested stop probability
//! γ = 0.01 ran once on average instead of 100 times. Here the two meanings are different types
//! with differently named constructors, and the regression test
//! `stop_probability_one_percent_runs_about_one_hundred_times` pins the behaviour.

use num_rational::BigRational;
use num_traits::ToPrimitive;

use super::wide::geometric_unit_rate;
use super::{exact_rational, SecureRng};
use crate::error::{check_open_unit, check_positive, Error, Result};

/// Largest supported mean scale t/s of the rate parameterisation (2^32): beyond it a `u64`
/// result could overflow.
const MAX_RATE_SCALE: u128 = 1 << 32;

/// Geometric on {0, 1, …} with P[K = k] = (1 - e^{-x})·e^{-xk}, where x = s/t > 0 is a **rate**.
///
/// Algorithm: Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy",
/// NeurIPS 2020, arXiv 2004.00010, Algorithm 2 steps 1–4 (THEORY.md §14.3): X = U + t·V with
/// U uniform in 0..t accepted with probability exp(-U/t) and V the number of Bernoulli(exp(-1))
/// successes before the first failure, so P[X = x] ∝ exp(-x/t); then K = ⌊X/s⌋, so
/// P[K = k] = P[ks <= X < (k+1)s] ∝ exp(-ks/t). Exact: only uniform integers (drawn by
/// rejection) are compared with integers; the expected cost is constant in s and t.
///
/// Preconditions: s, t >= 1 and t/s <= 2^32 (mean below about 4.3e9). Results above
/// `u64::MAX` are redrawn; at t/s <= 2^32 that event has probability below e^{-2^31}.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometric {
    s: u64,
    t: u64,
}

impl Geometric {
    /// Rate x = `num`/`den` (continuation probability e^{-x} per trial).
    pub fn from_rate(num: u64, den: u64) -> Result<Self> {
        if num == 0 || den == 0 {
            return Err(Error::invalid(
                "rate",
                format!("{num}/{den}"),
                "numerator and denominator must be >= 1",
            ));
        }
        if (den as u128) > (num as u128) * MAX_RATE_SCALE {
            return Err(Error::invalid(
                "rate",
                format!("{num}/{den}"),
                "must be >= 2^-32 (mean at most about 4.3e9)",
            ));
        }
        Ok(Self { s: num, t: den })
    }

    /// Rate x given as an `f64`, converted exactly to a rational (its numerator and denominator
    /// must fit in 64 bits, which holds for every x in [2^-11, 2^63) and many others).
    pub fn from_rate_f64(rate: f64) -> Result<Self> {
        check_positive("rate", rate)?;
        let (num, den) = ratio_u64(&exact_rational("rate", rate)?).ok_or_else(|| {
            Error::invalid(
                "rate",
                rate,
                "its exact rational does not fit in 64 bits; use from_rate(num, den)",
            )
        })?;
        Self::from_rate(num, den)
    }

    /// The rate as (numerator, denominator).
    pub fn rate(&self) -> (u64, u64) {
        (self.s, self.t)
    }

    /// E\[K\] = 1/(e^x - 1).
    pub fn mean(&self) -> f64 {
        1.0 / (self.s as f64 / self.t as f64).exp_m1()
    }

    /// P[K = k] in floating point (for tests and diagnostics, never for sampling).
    pub fn pmf(&self, k: u64) -> f64 {
        let x = self.s as f64 / self.t as f64;
        -(-x).exp_m1() * (-x * k as f64).exp()
    }

    /// One draw.
    pub fn sample(&self, rng: &mut SecureRng) -> u64 {
        loop {
            let k = geometric_unit_rate(rng, self.t as u128) / self.s as u128;
            if let Ok(k) = u64::try_from(k) {
                return k;
            }
        }
    }
}

/// Number of trials on {1, 2, …} up to and including the first stop, where each trial stops
/// independently with probability γ: P[K = k] = γ(1 - γ)^{k-1}, E\[K\] = 1/γ. γ is a **stop
/// (success) probability**, not a rate or a scale.
///
/// Algorithm: the definition itself, with each trial an exact Bernoulli(γ) for rational γ
/// (a uniform integer below the denominator compared with the numerator; THEORY.md §14.3,
/// "Bernoulli(p), p = a/b rational"). Exact because nothing but integer comparisons is used.
/// Cost: 1/γ trials on average, one or two 64-bit draws each (about 6 µs for a mean of 1000).
///
/// Preconditions: 2^-30 <= γ < 1 ([`GeometricTrials::MIN_STOP_PROB`]; smaller γ would make a draw take
/// minutes to years, a liveness hazard). γ = num/den is held exactly with a 128-bit
/// denominator (every `f64` γ >= 2^-30 has one).
#[derive(Debug, Clone, PartialEq)]
pub struct GeometricTrials {
    num: u128,
    den: u128,
    gamma_f64: f64,
}

impl GeometricTrials {
    /// Smallest accepted stop probability (2^-30): the expected number of trials, 1/γ, stays
    /// below about 10^9, so a draw always finishes in seconds at worst.
    pub const MIN_STOP_PROB: f64 = 1.0 / (1u64 << 30) as f64;

    /// Stop probability γ ∈ (0, 1) given as an `f64` (converted exactly to a rational).
    pub fn from_success_prob(gamma: f64) -> Result<Self> {
        check_open_unit("gamma", gamma)?;
        let exact = exact_rational("gamma", gamma)?;
        match (exact.numer().to_u128(), exact.denom().to_u128()) {
            (Some(num), Some(den)) if gamma >= Self::MIN_STOP_PROB => Ok(Self {
                num,
                den,
                gamma_f64: gamma,
            }),
            _ => Err(Error::invalid(
                "gamma",
                gamma,
                "must be >= 2^-30 (expected trials 1/gamma <= about 1e9)",
            )),
        }
    }

    /// Stop probability γ = `num`/`den` with 2^-30 <= num/den < 1.
    pub fn from_success_ratio(num: u64, den: u64) -> Result<Self> {
        if num == 0 || num >= den {
            return Err(Error::invalid(
                "gamma",
                format!("{num}/{den}"),
                "must lie in (0, 1)",
            ));
        }
        if ((num as u128) << 30) < den as u128 {
            return Err(Error::invalid(
                "gamma",
                format!("{num}/{den}"),
                "must be >= 2^-30 (expected trials 1/gamma <= about 1e9)",
            ));
        }
        Ok(Self {
            num: num as u128,
            den: den as u128,
            gamma_f64: num as f64 / den as f64,
        })
    }

    /// γ in floating point (for diagnostics).
    pub fn success_prob(&self) -> f64 {
        self.gamma_f64
    }

    /// E\[K\] = 1/γ.
    pub fn mean(&self) -> f64 {
        1.0 / self.gamma_f64
    }

    /// P[K = k] in floating point (for tests and diagnostics, never for sampling).
    pub fn pmf(&self, k: u64) -> f64 {
        if k == 0 {
            return 0.0;
        }
        let g = self.gamma_f64;
        g * ((k - 1) as f64 * (-g).ln_1p()).exp()
    }

    /// One exact Bernoulli(γ) trial: true means "stop".
    #[inline]
    pub fn stops(&self, rng: &mut SecureRng) -> bool {
        rng.below_u128(self.den) < self.num
    }

    /// One draw on {1, 2, …}.
    pub fn sample(&self, rng: &mut SecureRng) -> u64 {
        let mut k: u64 = 1;
        while !self.stops(rng) {
            k = k.saturating_add(1);
        }
        k
    }
}

/// A positive rational whose numerator and denominator both fit in 64 bits.
pub(crate) fn ratio_u64(x: &BigRational) -> Option<(u64, u64)> {
    Some((x.numer().to_u64()?, x.denom().to_u64()?))
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{assert_fits, assert_mean};
    use super::*;

    #[test]
    fn stop_probability_one_percent_runs_about_one_hundred_times() {
        // PEERS.md §2.1 item 1: OpenDP's combinator ran once on average for γ = 0.01.
        // 20_000 draws, mean 100, sd sqrt(1-γ)/γ ≈ 99.5: five standard errors, false failure
        // < 6e-7.
        let g = GeometricTrials::from_success_prob(0.01).unwrap();
        assert_eq!(g.mean(), 100.0);
        let mut rng = SecureRng::seeded(31);
        let xs: Vec<i64> = (0..20_000).map(|_| g.sample(&mut rng) as i64).collect();
        assert_mean(&xs, 100.0, 0.99f64.sqrt() / 0.01);
        assert!(xs.iter().all(|&x| x >= 1));
    }

    #[test]
    fn trials_fit_the_exact_pmf() {
        // Chi-square at false-failure probability 1e-6 (testutil::FALSE_FAILURE).
        let g = GeometricTrials::from_success_ratio(1, 5).unwrap();
        let mut rng = SecureRng::seeded(32);
        let xs: Vec<i64> = (0..50_000).map(|_| g.sample(&mut rng) as i64).collect();
        assert_fits(&xs, |k| if k < 1 { 0.0 } else { g.pmf(k as u64) }, 1);
    }

    #[test]
    fn rate_geometric_fits_the_exact_pmf_and_mean() {
        // Rate 1/3 (mean 1/(e^{1/3} - 1) ≈ 2.53) and rate 2/7; chi-square at 1e-6 and a mean
        // check at five standard errors (< 6e-7).
        let mut rng = SecureRng::seeded(33);
        for (num, den) in [(1, 3), (2, 7), (5, 1)] {
            let g = Geometric::from_rate(num, den).unwrap();
            let xs: Vec<i64> = (0..50_000).map(|_| g.sample(&mut rng) as i64).collect();
            assert_fits(&xs, |k| if k < 0 { 0.0 } else { g.pmf(k as u64) }, 0);
            let q = (-(num as f64) / den as f64).exp();
            assert_mean(&xs, g.mean(), q.sqrt() / (1.0 - q));
        }
    }

    #[test]
    fn rate_and_probability_are_not_interchangeable() {
        // A rate of 1/100 means a continuation probability e^{-0.01}: mean ≈ 99.5 failures.
        let r = Geometric::from_rate(1, 100).unwrap();
        assert!((r.mean() - 99.5).abs() < 0.01);
        // Stop probability 0.01 expressed as a rate is x = -ln(0.99) ≈ 0.01005, not 100.
        let wrong = Geometric::from_rate(100, 1).unwrap();
        assert!(wrong.mean() < 1e-40);
        // Mean of 1000: fast enough for tests (1000 draws in well under a second in debug).
        let g = GeometricTrials::from_success_prob(0.001).unwrap();
        let mut rng = SecureRng::seeded(34);
        let avg = (0..1000).map(|_| g.sample(&mut rng) as f64).sum::<f64>() / 1000.0;
        // sd ≈ 1000, n = 1000: five standard errors ≈ 158 (false failure < 6e-7).
        assert!((avg - 1000.0).abs() < 160.0, "{avg}");
    }

    #[test]
    fn constructors_name_the_parameter() {
        for bad in [f64::NAN, f64::INFINITY, 0.0, 1.0, -0.5] {
            let e = GeometricTrials::from_success_prob(bad).unwrap_err();
            assert!(e.to_string().contains("`gamma`"), "{e}");
        }
        assert!(GeometricTrials::from_success_ratio(3, 3).is_err());
        for bad in [f64::NAN, f64::INFINITY, 0.0, -1.0] {
            let e = Geometric::from_rate_f64(bad).unwrap_err();
            assert!(e.to_string().contains("`rate`"), "{e}");
        }
        assert!(Geometric::from_rate(0, 1).is_err());
        assert_eq!(
            Geometric::from_rate_f64(0.25).unwrap(),
            Geometric::from_rate(1, 4).unwrap()
        );
        assert!(Geometric::from_rate(1, u64::MAX).is_err());
        // Liveness: a γ whose expected number of trials is astronomical is refused.
        let e = GeometricTrials::from_success_prob(1e-30).unwrap_err();
        assert!(e.to_string().contains("`gamma`"), "{e}");
        assert!(GeometricTrials::from_success_ratio(1, 1 << 31).is_err());
        assert!(GeometricTrials::from_success_prob(GeometricTrials::MIN_STOP_PROB).is_ok());
        assert!(GeometricTrials::from_success_ratio(1, 1 << 30).is_ok());
    }
}
