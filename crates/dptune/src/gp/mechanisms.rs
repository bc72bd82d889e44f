//! The three privacy touch points of the GP module, kept minimal and in one file.
//!
//! **Temporary:** the shared versions (`privacy::gaussian::gaussian_sigma`, the secure grid Gaussian
//! in `noise`, the exponential mechanism in `select`) are being written on other branches. These
//! private functions are small, exact, self-contained stand-ins that the coordinator replaces at
//! merge; nothing else in `gp` samples noise or calibrates a mechanism.
//!
//! 1. [`analytic_gaussian_sigma`]: Balle & Wang's analytic Gaussian calibration by bisection.
//! 2. [`grid_gaussian_vector`]: an isotropic Gaussian vector on a power-of-two grid, built from
//!    exact discrete Gaussians (CKS20 Alg. 3 over [`crate::noise::bernoulli_exp`]), with the
//!    rounding and the discrete-versus-continuous gap charged (see its doc comment).
//! 3. [`exponential_mechanism`]: the exact exponential-mechanism draw by rejection with exact
//!    Bernoulli(exp(−x)) on rationals (THEORY.md §1.3, §14.4).

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::Signed;
use statrs::function::erf::erfc;

use crate::error::{check_positive, Error, Result};
use crate::noise::{bernoulli_exp, bernoulli_exp_u64, exact_rational, SecureRng};

/// The largest ε the grid Gaussian accepts: beyond it the lattice needed to make the
/// discrete-versus-continuous gap negligible against δ no longer fits 64-bit scales.
pub(crate) const MAX_GAUSSIAN_EPS: f64 = 30.0;

/// log Φ(x) for the standard normal CDF, accurate in the far lower tail.
fn log_phi(x: f64) -> f64 {
    if x > -30.0 {
        (0.5 * erfc(-x / std::f64::consts::SQRT_2)).ln()
    } else {
        // Mills-ratio asymptotic series: Φ(x) = φ(x)/|x|·(1 − 1/x² + 3/x⁴ − …).
        let x2 = x * x;
        -0.5 * x2 - (-x).ln() - 0.5 * (2.0 * std::f64::consts::PI).ln()
            + (1.0 - 1.0 / x2 + 3.0 / (x2 * x2)).ln()
    }
}

/// δ(σ) of the Gaussian mechanism with L2 sensitivity `sens` at `eps` (Balle–Wang Thm 8):
/// Φ(Δ/(2σ) − εσ/Δ) − e^ε·Φ(−Δ/(2σ) − εσ/Δ).
fn agm_delta(eps: f64, sens: f64, sigma: f64) -> f64 {
    let a = sens / (2.0 * sigma);
    let b = eps * sigma / sens;
    (log_phi(a - b)).exp() - (eps + log_phi(-a - b)).exp()
}

/// The smallest σ (rounded up) such that adding N(0, σ²I) to a query of L2 sensitivity
/// `sensitivity` is (`eps`, `delta`)-DP.
///
/// Balle & Wang, "Improving the Gaussian Mechanism for Differential Privacy: Analytical
/// Calibration and Optimal Denoising", ICML 2018, arXiv 1805.06530, Theorem 8 (THEORY.md §11.1):
/// the condition Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ) ≤ δ is necessary and sufficient and
/// decreasing in σ, so bisection finds σ; the feasible end of the bracket is returned, times
/// (1 + 1e-9). Preconditions: ε ∈ (0, 30], δ ∈ (0, 1), sensitivity > 0; any ε in that range
/// (no ε ≤ 1 restriction, unlike the classic c(δ) form).
pub(crate) fn analytic_gaussian_sigma(eps: f64, delta: f64, sensitivity: f64) -> Result<f64> {
    check_positive("epsilon", eps)?;
    if eps > MAX_GAUSSIAN_EPS {
        return Err(Error::invalid(
            "epsilon",
            eps,
            format!("the Gaussian mechanism here accepts epsilon <= {MAX_GAUSSIAN_EPS}"),
        ));
    }
    if !(delta > 0.0 && delta < 1.0) {
        return Err(Error::invalid(
            "delta",
            delta,
            "the Gaussian mechanism needs delta in (0, 1)",
        ));
    }
    check_positive("sensitivity", sensitivity)?;
    let mut hi = sensitivity;
    while agm_delta(eps, sensitivity, hi) > delta {
        hi *= 2.0;
        if !hi.is_finite() {
            return Err(Error::Numerical {
                what: "analytic Gaussian calibration",
                reason: "no finite sigma reaches the requested delta".into(),
            });
        }
    }
    let mut lo = 0.0;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if agm_delta(eps, sensitivity, mid) > delta {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(hi * (1.0 + 1e-9))
}

/// Exact discrete Laplace on ℤ with P(y) ∝ exp(−|y|/t), t ≥ 1 (CKS20 Alg. 2 with s = 1).
fn discrete_laplace(rng: &mut SecureRng, t: u64) -> i128 {
    loop {
        let u = rng.below_u64(t);
        if !bernoulli_exp_u64(rng, u, t) {
            continue;
        }
        let mut v: i128 = 0;
        while bernoulli_exp_u64(rng, 1, 1) {
            v += 1;
        }
        let x = u as i128 + t as i128 * v;
        let negative = rng.coin();
        if negative && x == 0 {
            continue;
        }
        return if negative { -x } else { x };
    }
}

/// Exact discrete Gaussian N_ℤ(0, σ²) with σ² the exact square of the `f64` `sigma`.
///
/// Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020,
/// arXiv 2004.00010, Algorithm 3 (THEORY.md §14.3): t = ⌊σ⌋ + 1; Y ← discrete Laplace(t); accept
/// with probability exp(−(|Y| − σ²/t)²/(2σ²)). All arithmetic is on exact rationals.
/// Precondition: 0 < σ < 2^62.
fn discrete_gaussian(rng: &mut SecureRng, sigma: f64) -> Result<i128> {
    if !(sigma > 0.0 && sigma < 2f64.powi(62)) {
        return Err(Error::invalid("sigma", sigma, "must lie in (0, 2^62)"));
    }
    let s = exact_rational("sigma", sigma)?;
    let s2 = &s * &s;
    let t = sigma.floor() as u64 + 1;
    let t_rat = BigRational::from_integer(BigInt::from(t));
    let centre = &s2 / &t_rat;
    let two_s2 = &s2 * BigRational::from_integer(BigInt::from(2));
    loop {
        let y = discrete_laplace(rng, t);
        let diff = BigRational::from_integer(BigInt::from(y).abs()) - &centre;
        let x = &diff * &diff / &two_s2;
        if bernoulli_exp(rng, &x)? {
            return Ok(y);
        }
    }
}

/// An isotropic Gaussian vector added on a power-of-two grid.
#[derive(Debug, Clone)]
pub(crate) struct GridGaussian {
    /// The noisy vector; every entry is an integer multiple of `granularity`.
    pub values: Vec<f64>,
    /// Standard deviation of the noise per coordinate.
    pub sigma: f64,
    /// The grid spacing h, a power of two.
    pub granularity: f64,
    /// The L2 sensitivity that σ was calibrated for, after charging rounding and float error.
    pub charged_sensitivity: f64,
}

/// Releases `query + noise` with noise ≈ N(0, σ²I) on the grid h·ℤⁿ, (ε, δ)-DP for a query whose
/// exact value has L2 sensitivity `sensitivity` and whose computed value is within `float_err[i]`
/// of the exact one in coordinate i (a data-independent bound supplied by the caller).
///
/// Construction and charge:
/// * the computed query is rounded to the nearest multiple of a power of two h, so between
///   neighbours each coordinate moves by at most (exact change) + 2·float_err[i] + h; σ is
///   calibrated by [`analytic_gaussian_sigma`] (Balle–Wang, arXiv 1805.06530, Thm 8) for the
///   inflated sensitivity Δ + ‖2·float_err + h‖₂ at δ' = δ·(1 − 2⁻²⁰);
/// * noise is h·Y with Y_i ~ N_ℤ(0, (σ/h)²) exact (CKS20, arXiv 2004.00010, Alg. 3). The output is
///   within total variation n·β of the post-processed continuous mechanism
///   round_h(rounded query + N(0, σ²I)) (rounding commutes with lattice shifts), where
///   β ≤ (1/48)(1/s² + 5/s³) + 2e^{−2π²s²}, s = σ/h, bounds TV(N_ℤ(0, s²), round(N(0, s²)))
///   (midpoint-rule error plus the Poisson-summation normaliser gap). A TV gap β_total turns
///   (ε, δ')-DP into (ε, δ' + (1 + e^ε)β_total)-DP; h is chosen so that this slack is at most
///   δ·2⁻²⁰, which is checked, so the release is (ε, δ)-DP.
///
/// Preconditions: ε ∈ (0, 30], δ ∈ (0, 1), sensitivity > 0, finite query.
pub(crate) fn grid_gaussian_vector(
    query: &[f64],
    sensitivity: f64,
    float_err: &[f64],
    eps: f64,
    delta: f64,
    rng: &mut SecureRng,
) -> Result<GridGaussian> {
    let n = query.len();
    if n == 0 || float_err.len() != n {
        return Err(Error::invalid(
            "query",
            n,
            "needs a non-empty query and one float-error bound per coordinate",
        ));
    }
    if query.iter().chain(float_err).any(|v| !v.is_finite()) {
        return Err(Error::Numerical {
            what: "grid Gaussian",
            reason: "non-finite query value or error bound".into(),
        });
    }
    let delta_calib = delta * (1.0 - 2f64.powi(-20));
    let sigma0 = analytic_gaussian_sigma(eps, delta_calib, sensitivity)?;
    // The lattice must be fine enough that (1 + e^ε)·n·β ≤ δ·2⁻²⁰; with β ≈ 1/(24 s²) this needs
    // s² ≥ (1 + e^ε)·n·2²⁰/(24 δ). Keep s ≥ 2⁴⁰ in any case, so that the rounding inflates the
    // sensitivity by a relative ~2⁻⁴⁰ only.
    let need_log2_s = 0.5 * ((1.0 + eps.exp()) * n as f64 * 2f64.powi(20) / (24.0 * delta)).log2();
    let k = (sigma0.log2() - need_log2_s.max(40.0)).floor() as i32 - 2;
    if k < -1000 {
        return Err(Error::invalid(
            "delta",
            delta,
            "too small for a representable noise grid",
        ));
    }
    let h = 2f64.powi(k);
    let slack_norm = float_err
        .iter()
        .map(|e| (2.0 * e + h).powi(2))
        .sum::<f64>()
        .sqrt();
    let charged = (sensitivity + slack_norm) * (1.0 + 2f64.powi(-40));
    let sigma = analytic_gaussian_sigma(eps, delta_calib, charged)?;
    let s = sigma / h;
    if !(s >= 2f64.powi(20) && s < 2f64.powi(62)) {
        return Err(Error::Numerical {
            what: "grid Gaussian",
            reason: format!("lattice scale sigma/h = {s} outside [2^20, 2^62)"),
        });
    }
    let beta = (1.0 / 48.0) * (1.0 / (s * s) + 5.0 / (s * s * s))
        + 2.0 * (-2.0 * std::f64::consts::PI.powi(2) * s * s).exp();
    let tv_slack = (1.0 + eps.exp()) * n as f64 * beta * (1.0 + 1e-6);
    if tv_slack > delta - delta_calib {
        return Err(Error::invalid(
            "delta",
            delta,
            "too small for the noise grid (the discrete-Gaussian slack exceeds it)",
        ));
    }
    let mut values = Vec::with_capacity(n);
    for &q in query {
        let scaled = (q / h).round();
        if scaled.abs() >= 2f64.powi(100) {
            return Err(Error::Numerical {
                what: "grid Gaussian",
                reason: "query too large for the noise grid".into(),
            });
        }
        let y = discrete_gaussian(rng, s)?;
        values.push((scaled as i128 + y) as f64 * h);
    }
    Ok(GridGaussian {
        values,
        sigma,
        granularity: h,
        charged_sensitivity: charged,
    })
}

/// Selection probabilities of the exponential mechanism, P(i) ∝ exp(ε·u_i/(2Δ)), in log space.
/// For reporting and exact expectations only; sampling uses [`exponential_mechanism`].
pub(crate) fn em_probabilities(scores: &[f64], sensitivity: f64, eps: f64) -> Vec<f64> {
    let top = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let w: Vec<f64> = scores
        .iter()
        .map(|u| (eps * (u - top) / (2.0 * sensitivity)).exp())
        .collect();
    let z: f64 = w.iter().sum();
    w.into_iter().map(|x| x / z).collect()
}

/// Draws index i with probability ∝ exp(ε·u_i/(2Δ)): the exponential mechanism, ε-DP for scores
/// of per-candidate sensitivity Δ (range at most 2Δ).
///
/// McSherry & Talwar, FOCS 2007; Dwork & Roth 2014, Thm 3.10 (THEORY.md §1.1). Sampled exactly
/// (THEORY.md §1.3, OpenDP's rejection form): propose i uniformly, accept with probability
/// exp(−(u_max − u_i)·ε/(2Δ)) by an exact Bernoulli(exp(−x)) on the exact rationals of the `f64`
/// inputs. Preconditions: non-empty finite scores, Δ > 0, ε > 0.
pub(crate) fn exponential_mechanism(
    scores: &[f64],
    sensitivity: f64,
    eps: f64,
    rng: &mut SecureRng,
) -> Result<usize> {
    check_positive("epsilon", eps)?;
    check_positive("sensitivity", sensitivity)?;
    if scores.is_empty() {
        return Err(Error::invalid("scores", 0, "needs at least one candidate"));
    }
    let rats = scores
        .iter()
        .map(|&u| exact_rational("score", u))
        .collect::<Result<Vec<_>>>()?;
    let top = rats.iter().max().cloned().unwrap_or_default();
    let factor = exact_rational("epsilon", eps)?
        / (exact_rational("sensitivity", sensitivity)? * BigRational::from_integer(2.into()));
    let xs: Vec<BigRational> = rats.iter().map(|u| (&top - u) * &factor).collect();
    loop {
        let i = rng.below_u64(xs.len() as u64) as usize;
        if bernoulli_exp(rng, &xs[i])? {
            return Ok(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn analytic_gaussian_worked_numbers() {
        // THEORY.md §11.1.
        for (eps, delta, want) in [
            (1.0, 1e-5, 3.7306),
            (0.5, 1e-6, 8.0576),
            (4.0, 1e-5, 1.0812),
        ] {
            let s = analytic_gaussian_sigma(eps, delta, 1.0).unwrap();
            assert!((s - want).abs() < 6e-5, "eps {eps}: {s} vs {want}");
            assert!(agm_delta(eps, 1.0, s) <= delta);
            let s3 = analytic_gaussian_sigma(eps, delta, 3.0).unwrap();
            assert!((s3 / s - 3.0).abs() < 1e-6);
        }
        assert!(analytic_gaussian_sigma(0.0, 1e-5, 1.0).is_err());
        assert!(analytic_gaussian_sigma(1.0, 0.0, 1.0).is_err());
        assert!(analytic_gaussian_sigma(31.0, 1e-5, 1.0).is_err());
        assert!(analytic_gaussian_sigma(1.0, 1e-5, -1.0).is_err());
    }

    #[test]
    fn log_phi_is_continuous_across_the_switch() {
        let a = log_phi(-30.0 + 1e-9);
        let b = log_phi(-30.0 - 1e-9);
        assert!((a - b).abs() < 1e-6, "{a} {b}");
    }

    #[test]
    fn discrete_gaussian_matches_its_pmf() {
        // σ² = 9/4: TV(empirical, exact) ≈ 0.0045 at 6e4 draws in THEORY.md §14.3.
        let mut rng = SecureRng::seeded(5);
        let n = 60_000;
        let mut counts = std::collections::HashMap::new();
        for _ in 0..n {
            *counts
                .entry(discrete_gaussian(&mut rng, 1.5).unwrap())
                .or_insert(0u32) += 1;
        }
        let w = |y: i128| (-(y * y) as f64 / 4.5).exp();
        let z: f64 = (-40..=40).map(w).sum();
        let tv: f64 = (-40..=40)
            .map(|y| (*counts.get(&y).unwrap_or(&0) as f64 / n as f64 - w(y) / z).abs())
            .sum::<f64>()
            / 2.0;
        assert!(tv < 0.012, "tv = {tv}");
    }

    #[test]
    fn grid_gaussian_has_the_right_scale_and_lives_on_the_grid() {
        let mut rng = SecureRng::seeded(6);
        let q = [1.0, -2.5, 1e3];
        let mut sums = [0.0; 3];
        let mut sq = [0.0; 3];
        let reps = 3000;
        let mut sigma = 0.0;
        for _ in 0..reps {
            let g = grid_gaussian_vector(&q, 2.0, &[1e-12; 3], 1.0, 1e-5, &mut rng).unwrap();
            sigma = g.sigma;
            assert!(g.granularity.log2().fract() == 0.0);
            assert!(g.charged_sensitivity >= 2.0 && g.charged_sensitivity < 2.0 + 1e-9);
            for i in 0..3 {
                assert_eq!((g.values[i] / g.granularity).fract(), 0.0);
                sums[i] += g.values[i] - q[i];
                sq[i] += (g.values[i] - q[i]).powi(2);
            }
        }
        let want = analytic_gaussian_sigma(1.0, 1e-5, 2.0).unwrap();
        assert!((sigma / want - 1.0).abs() < 1e-6);
        for i in 0..3 {
            let mean = sums[i] / reps as f64;
            let sd = (sq[i] / reps as f64).sqrt();
            assert!(mean.abs() < 5.0 * sigma / (reps as f64).sqrt(), "{mean}");
            assert!((sd / sigma - 1.0).abs() < 0.06, "{sd} vs {sigma}");
        }
        assert!(grid_gaussian_vector(&[], 1.0, &[], 1.0, 1e-5, &mut rng).is_err());
        assert!(grid_gaussian_vector(&[f64::NAN], 1.0, &[0.0], 1.0, 1e-5, &mut rng).is_err());
        assert!(grid_gaussian_vector(&[0.0], 1.0, &[0.0], 1.0, 1e-300, &mut rng).is_err());
    }

    #[test]
    fn em_worked_numbers_and_sampler() {
        // THEORY.md §1.4: counts (800, 820, 850, 790), ε = 0.1, Δ = 1 (replace-one).
        let u = [800.0, 820.0, 850.0, 790.0];
        let want = [0.060579, 0.164671, 0.738006, 0.036743];
        let p = em_probabilities(&u, 1.0, 0.1);
        for i in 0..4 {
            assert!((p[i] - want[i]).abs() < 1e-6);
        }
        let mut rng = SecureRng::seeded(7);
        let n = 40_000;
        let mut c = [0u32; 4];
        for _ in 0..n {
            c[exponential_mechanism(&u, 1.0, 0.1, &mut rng).unwrap()] += 1;
        }
        for i in 0..4 {
            let ph = c[i] as f64 / n as f64;
            let se = (want[i] * (1.0 - want[i]) / n as f64).sqrt();
            assert!((ph - want[i]).abs() < 5.0 * se, "{i}: {ph}");
        }
        assert!(exponential_mechanism(&[], 1.0, 0.1, &mut rng).is_err());
        assert!(exponential_mechanism(&[f64::NAN], 1.0, 0.1, &mut rng).is_err());
        assert!(exponential_mechanism(&u, 0.0, 0.1, &mut rng).is_err());
    }
}
