//! The truncated negative binomial D_{η,γ} of Papernot & Steinke and its logarithmic case.

use num_rational::BigRational;
use num_traits::ToPrimitive;
use statrs::function::gamma::ln_gamma;

use super::geometric::{ratio_u64, GeometricTrials};
use super::wide::one_in;
use super::{exact_rational, SecureRng};
use crate::error::{check_non_negative, check_open_unit, Error, Result};

/// Largest supported η (the cost grows linearly with ⌈η⌉).
const MAX_ETA: f64 = 1000.0;
/// Largest accepted expected number of coin flips per draw (2^32, seconds at worst).
const MAX_WORK: f64 = 4294967296.0;

/// The shape η, exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// η = 0.
    Logarithmic,
    /// η = r, a positive integer.
    Integer(u64),
    /// η = num/den, not an integer; `ceil` = ⌈η⌉.
    Fractional { num: u64, den: u64, ceil: u64 },
}

/// Truncated negative binomial D_{η,γ} on {1, 2, …} (Papernot & Steinke, "Hyperparameter
/// Tuning with Rényi Differential Privacy", ICLR 2022, arXiv 2110.03620, **Definition 1**;
/// THEORY.md §7.1):
///
/// P[K = k] = (1-γ)^k / (γ^{-η} - 1) · ∏_{ℓ=0}^{k-1} (ℓ+η)/(ℓ+1) for η ≠ 0, and
/// (1-γ)^k / (k·ln(1/γ)) for η = 0 (logarithmic). η = 1 is the geometric γ(1-γ)^{k-1}.
///
/// Sampling (exact: geometric trials are exact rational Bernoulli(γ) coins and every
/// acceptance step is an exact rational Bernoulli):
/// * η = 0: draw k ~ [`GeometricTrials`] (P ∝ (1-γ)^k on k >= 1) and accept with probability
///   1/k, giving P ∝ (1-γ)^k/k.
/// * η = 1: one [`GeometricTrials`] draw.
/// * integer η = r: NegBin(r, γ) as the sum of r geometric failure counts (P ∝
///   C(k+r-1, k)(1-γ)^k), rejecting K = 0.
/// * fractional η: propose k ~ NegBin(⌈η⌉, γ), reject k = 0, accept with probability
///   ∏_{i<k} (η+i)/(⌈η⌉+i) <= 1; the accepted law is ∝ (1-γ)^k ∏_{ℓ<k}(ℓ+η)/(ℓ+1).
///
/// Preconditions: 0 <= η <= 1000 (Definition 1 allows η ∈ (-1, 0); like dp_accounting we
/// refuse it), 0 < γ < 1; γ and η are `f64`s taken exactly as rationals. Liveness: the
/// expected number of coin flips per draw, about ⌈η⌉/γ (1/(γ² ln(1/γ)) for η = 0), must be
/// <= 2^32, e.g. γ >= about 5e-6 for the logarithmic case (mean up to about 1.6·10^4).
#[derive(Debug, Clone, PartialEq)]
pub struct TruncatedNegativeBinomial {
    shape: Shape,
    eta: f64,
    trials: GeometricTrials,
}

impl TruncatedNegativeBinomial {
    /// D_{η,γ} with shape `eta` >= 0 and stop probability `gamma` ∈ (0, 1).
    pub fn new(eta: f64, gamma: f64) -> Result<Self> {
        if eta.is_finite() && eta < 0.0 {
            return Err(Error::invalid(
                "eta",
                eta,
                "must be >= 0 (Definition 1 allows (-1, 0) but dptune, like dp_accounting, does not)",
            ));
        }
        check_non_negative("eta", eta)?;
        if eta > MAX_ETA {
            return Err(Error::invalid("eta", eta, "must be <= 1000"));
        }
        check_open_unit("gamma", gamma)?;
        // Liveness: the logarithmic sampler needs about 1/(γ² ln(1/γ)) flips per draw (1/γ per
        // proposal, acceptance γ ln(1/γ)/(1-γ)); the others about ⌈η⌉/γ.
        let work = if eta == 0.0 {
            1.0 / (gamma * gamma * -gamma.ln())
        } else {
            eta.ceil() / gamma
        };
        if work > MAX_WORK {
            return Err(Error::invalid(
                "gamma",
                gamma,
                format!("too small for eta = {eta}: a draw would need about {work:.1e} coin flips (limit 2^32)"),
            ));
        }
        let trials = GeometricTrials::from_success_prob(gamma)?;
        let shape = Self::shape(eta, &exact_rational("eta", eta)?)?;
        Ok(Self { shape, eta, trials })
    }

    /// The logarithmic distribution D_{0,γ}: P[K = k] = (1-γ)^k/(k·ln(1/γ)).
    pub fn logarithmic(gamma: f64) -> Result<Self> {
        Self::new(0.0, gamma)
    }

    fn shape(eta: f64, exact: &BigRational) -> Result<Shape> {
        if eta == 0.0 {
            return Ok(Shape::Logarithmic);
        }
        if exact.is_integer() {
            let r = exact.to_integer().to_u64().unwrap_or(u64::MAX);
            return Ok(Shape::Integer(r));
        }
        let (num, den) = ratio_u64(exact).ok_or_else(|| {
            Error::invalid(
                "eta",
                eta,
                "its exact rational needs a denominator below 2^64 (eta >= 2^-11 always works)",
            )
        })?;
        Ok(Shape::Fractional {
            num,
            den,
            ceil: num.div_ceil(den),
        })
    }

    /// η.
    pub fn eta(&self) -> f64 {
        self.eta
    }

    /// γ.
    pub fn gamma(&self) -> f64 {
        self.trials.success_prob()
    }

    /// E\[K\] = η(1-γ)/(γ(1-γ^η)) ((1/γ - 1)/ln(1/γ) at η = 0), evaluated stably as
    /// 1/(γ·a·b) with a = expm1(η ln γ)/(η ln γ) and b = ln(γ)/(γ - 1) (dp_accounting's form,
    /// THEORY.md §7.1), using the series of a near η ln γ = 0.
    pub fn mean(&self) -> f64 {
        let g = self.gamma();
        let ln_g = (g - 1.0).ln_1p();
        let x = self.eta * ln_g;
        let a = if x.abs() < 1e-5 {
            1.0 + x / 2.0 + x * x / 6.0 + x * x * x / 24.0
        } else {
            x.exp_m1() / x
        };
        let b = ln_g / (g - 1.0);
        1.0 / (g * a * b)
    }

    /// P[K = k] in floating point (for tests and diagnostics, never for sampling).
    pub fn pmf(&self, k: u64) -> f64 {
        if k == 0 {
            return 0.0;
        }
        let g = self.gamma();
        let ln_q = (-g).ln_1p();
        let ln_g = (g - 1.0).ln_1p();
        let log = if self.eta == 0.0 {
            k as f64 * ln_q - (k as f64).ln() - (-ln_g).ln()
        } else {
            // ln ∏_{ℓ<k} (ℓ+η)/(ℓ+1) = lnΓ(k+η) - lnΓ(η) - lnΓ(k+1).
            let prod =
                ln_gamma(k as f64 + self.eta) - ln_gamma(self.eta) - ln_gamma(k as f64 + 1.0);
            k as f64 * ln_q + prod - (-self.eta * ln_g).exp_m1().ln()
        };
        log.exp()
    }

    /// NegBin(r, γ) on {0, 1, …}: the sum of r geometric failure counts.
    fn negbin(&self, rng: &mut SecureRng, r: u64) -> u64 {
        (0..r)
            .map(|_| self.trials.sample(rng) - 1)
            .fold(0u64, u64::saturating_add)
    }

    /// One draw on {1, 2, …}.
    pub fn sample(&self, rng: &mut SecureRng) -> u64 {
        match self.shape {
            Shape::Logarithmic => loop {
                let k = self.trials.sample(rng);
                if one_in(rng, k) {
                    return k;
                }
            },
            Shape::Integer(1) => self.trials.sample(rng),
            Shape::Integer(r) => loop {
                let k = self.negbin(rng, r);
                if k >= 1 {
                    return k;
                }
            },
            Shape::Fractional { num, den, ceil } => loop {
                let k = self.negbin(rng, ceil);
                if k == 0 {
                    continue;
                }
                // ∏_{i<k} (η+i)/(⌈η⌉+i) = ∏ (num + i·den)/(den·(⌈η⌉+i)), one exact coin each.
                let (num, den, ceil) = (num as u128, den as u128, ceil as u128);
                let accepted =
                    (0..k as u128).all(|i| rng.below_u128(den * (ceil + i)) < num + i * den);
                if accepted {
                    return k;
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{assert_fits, assert_mean, fits};
    use super::*;

    fn draws(d: &TruncatedNegativeBinomial, seed: u64, n: usize) -> Vec<i64> {
        let mut rng = SecureRng::seeded(seed);
        (0..n).map(|_| d.sample(&mut rng) as i64).collect()
    }

    fn sd(d: &TruncatedNegativeBinomial) -> f64 {
        let m = d.mean();
        let second: f64 = (1..20_000u64).map(|k| (k * k) as f64 * d.pmf(k)).sum();
        (second - m * m).sqrt()
    }

    #[test]
    fn worked_mean_eta_half_gamma_five_percent() {
        // THEORY.md §7.1: η = 0.5, γ = 0.05 has mean 12.236 (simulation: 12.221).
        let d = TruncatedNegativeBinomial::new(0.5, 0.05).unwrap();
        assert!((d.mean() - 12.236).abs() < 5e-4, "{}", d.mean());
        let total: f64 = (1..20_000u64).map(|k| d.pmf(k)).sum();
        assert!((total - 1.0).abs() < 1e-9, "{total}");
        // 20_000 draws, mean at five standard errors (< 6e-7).
        let xs = draws(&d, 80, 20_000);
        assert_mean(&xs, d.mean(), sd(&d));
    }

    #[test]
    fn means_match_the_closed_forms() {
        // η = 1: 1/γ; η = 0: (1/γ - 1)/ln(1/γ); η = 2: 2(1-γ)/(γ(1-γ²)) = 2/(γ(1+γ)).
        let g = 0.1;
        let m1 = TruncatedNegativeBinomial::new(1.0, g).unwrap().mean();
        assert!((m1 - 10.0).abs() < 1e-12, "{m1}");
        let m0 = TruncatedNegativeBinomial::logarithmic(g).unwrap().mean();
        assert!((m0 - 9.0 / 10f64.ln()).abs() < 1e-12, "{m0}");
        let m2 = TruncatedNegativeBinomial::new(2.0, g).unwrap().mean();
        assert!((m2 - 2.0 / (0.1 * 1.1)).abs() < 1e-12, "{m2}");
        // Near the singular point η ln γ -> 0 the series agrees with the direct formula
        // (whose cancellation costs only about 1e-10 relative at η = 2^-20).
        let eta = 2f64.powi(-20);
        let tiny = TruncatedNegativeBinomial::new(eta, g).unwrap().mean();
        let direct = eta * (1.0 - g) / (g * (1.0 - g.powf(eta)));
        assert!((tiny - direct).abs() < 1e-8 * direct, "{tiny} vs {direct}");
        assert!((tiny - m0).abs() < 1e-4, "{tiny} vs {m0}");
    }

    #[test]
    fn every_shape_fits_its_exact_pmf() {
        // Chi-square at false-failure 1e-6 and the mean at five standard errors (< 6e-7),
        // for η = 0 (logarithmic), 0.5, 1, 2 and 2.5.
        for (i, (eta, gamma)) in [(0.0, 0.2), (0.5, 0.1), (1.0, 0.25), (2.0, 0.3), (2.5, 0.2)]
            .into_iter()
            .enumerate()
        {
            let d = TruncatedNegativeBinomial::new(eta, gamma).unwrap();
            let xs = draws(&d, 81 + i as u64, 30_000);
            assert_fits(&xs, |k| if k < 1 { 0.0 } else { d.pmf(k as u64) }, 1);
            assert_mean(&xs, d.mean(), sd(&d));
        }
    }

    #[test]
    fn the_check_rejects_a_wrong_shape() {
        // Deliberately wrong variant: η = 1 (geometric) samples against the η = 0.5 pmf (false
        // pass far below 1e-6 at 30_000 draws).
        let wrong = TruncatedNegativeBinomial::new(1.0, 0.1).unwrap();
        let right = TruncatedNegativeBinomial::new(0.5, 0.1).unwrap();
        let xs = draws(&wrong, 88, 30_000);
        assert!(!fits(
            &xs,
            |k| if k < 1 { 0.0 } else { right.pmf(k as u64) },
            1
        ));
    }

    #[test]
    fn constructors_name_the_parameter() {
        for bad in [f64::NAN, f64::INFINITY, -0.5, -1.0, 1e6] {
            let e = TruncatedNegativeBinomial::new(bad, 0.1).unwrap_err();
            assert!(e.to_string().contains("`eta`"), "{e}");
        }
        for bad in [f64::NAN, 0.0, 1.0, 1.5, -0.1] {
            let e = TruncatedNegativeBinomial::new(0.5, bad).unwrap_err();
            assert!(e.to_string().contains("`gamma`"), "{e}");
        }
        assert!(TruncatedNegativeBinomial::new(1e-300, 0.5).is_err());
        // Liveness limits name gamma.
        let e = TruncatedNegativeBinomial::logarithmic(1e-6).unwrap_err();
        assert!(e.to_string().contains("`gamma`"), "{e}");
        assert!(TruncatedNegativeBinomial::logarithmic(1e-4).is_ok());
        assert!(TruncatedNegativeBinomial::new(1000.0, 1e-7).is_err());
    }
}
