//! The one GP-specific piece of privacy arithmetic: an (ε, δ) charge for the shared grid
//! Gaussian.
//!
//! Everything else comes from the shared modules: σ calibration is
//! [`crate::privacy::gaussian::gaussian_sigma`] (Balle–Wang), the noise is
//! [`crate::noise::GridGaussian`] (exact discrete Gaussian on a power-of-two grid, rounding
//! charged as Δ + r·√dim), and the lengthscale draw is
//! [`crate::select::ExponentialMechanism`].
//!
//! **Why a GP-specific part remains.** `GridGaussian` states its cost as zCDP
//! (ρ = (Δ + r√dim)²/(2r²n)). The GP releases are calibrated by the *analytic* Gaussian
//! (an iff condition for (ε, δ)), which needs noticeably less noise than going through zCDP; the
//! discrete Gaussian's (ε, δ) curve for a vector is not the continuous one, so the shared type
//! cannot certify the analytic calibration by itself. [`grid_gaussian_vector`] adds exactly
//! that step: a total-variation bound between the shared sampler's output and a post-processed
//! continuous Gaussian mechanism, charged to δ. It draws no noise of its own.

use crate::error::{check_positive, Error, Result};
use crate::noise::{GridGaussian, SecureRng};
use crate::numeric::add_up;
use crate::numeric::norm_up;
use crate::privacy::gaussian::gaussian_sigma;

/// The largest ε the grid Gaussian accepts (beyond it the discrete-versus-continuous slack,
/// which grows like e^ε, is no longer negligible against any useful δ).
pub(crate) const MAX_GAUSSIAN_EPS: f64 = 30.0;

/// The smallest grid variance `GridGaussian` uses: σ/r ∈ (2^29, 2^30], so n = ⌈(σ/r)²⌉ ≥ 2^58.
const MIN_GRID_VARIANCE: f64 = 288_230_376_151_711_744.0; // 2^58

/// The largest share of δ the discrete-versus-continuous slack may take.
const MAX_SLACK_SHARE: f64 = 0.5;

/// β(s²) ≥ TV(N_ℤ(0, s²), round(N(0, s²))): the midpoint-rule error of the rounded continuous
/// pmf plus the Poisson-summation gap of the discrete normaliser (DESIGN rule 2: an upper bound).
fn discrete_continuous_tv(s2: f64) -> f64 {
    let s3 = s2 * s2.sqrt();
    (1.0 / 48.0) * (1.0 / s2 + 5.0 / s3) + 2.0 * (-2.0 * std::f64::consts::PI.powi(2) * s2).exp()
}

/// A released vector on the grid of a shared [`GridGaussian`].
#[derive(Debug, Clone)]
pub(crate) struct GridRelease {
    /// The noisy vector; every entry is an integer multiple of `granularity`.
    pub values: Vec<f64>,
    /// Standard deviation of the noise per coordinate (r·√n, rounded down).
    pub sigma: f64,
    /// The grid spacing r, a power of two.
    pub granularity: f64,
    /// The L2 sensitivity that σ was calibrated for, after charging rounding and float error.
    pub charged_sensitivity: f64,
}

/// Releases `query + noise` with the shared [`GridGaussian`] so that the release is (ε, δ)-DP
/// for a query whose exact value has L2 sensitivity `sensitivity` and whose computed value is
/// within `float_err[i]` of the exact one in coordinate i (a data-independent bound from the
/// caller).
///
/// Argument (DESIGN rules 1 and 2):
/// * between neighbours the computed query moves by at most Δ_in = Δ + ‖2·float_err‖₂ (L2,
///   triangle inequality); `GridGaussian` rounds it to r·ℤ and charges Δ_in + r√dim
///   ([`GridGaussian::effective_sensitivity`]);
/// * σ is the analytic Gaussian σ for that charged sensitivity at δ' (Balle & Wang, ICML 2018,
///   arXiv 1805.06530, Thm 8, via [`gaussian_sigma`]); since r grows with σ, the calibration is
///   repeated until `effective_sigma` ≥ `gaussian_sigma(ε, δ', effective_sensitivity)` holds for
///   the final grid, so the continuous mechanism round_r(q) + N(0, r²n·I) is (ε, δ')-DP;
/// * the shared sampler adds r·Y, Y_i ~ N_ℤ(0, n) exact (Canonne, Kamath & Steinke, NeurIPS 2020,
///   arXiv 2004.00010, Alg. 3). Rounding commutes with lattice shifts, so its output is within
///   total variation dim·β(n) of the post-processed continuous release r·round(round_r(q)/r +
///   N(0, n·I)), with β as in [`discrete_continuous_tv`]. A TV gap β_tot turns (ε, δ')-DP into
///   (ε, δ' + (1 + e^ε)·β_tot)-DP; δ' = δ − (1 + e^ε)·dim·β(2^58) (n ≥ 2^58 always), so the
///   release is (ε, δ)-DP. If that slack exceeds half of δ the call is refused (`delta`).
///
/// Preconditions: ε ∈ (0, 30], δ ∈ (0, 1), sensitivity > 0, finite query.
pub(crate) fn grid_gaussian_vector(
    query: &[f64],
    sensitivity: f64,
    float_err: &[f64],
    eps: f64,
    delta: f64,
    rng: &mut SecureRng,
) -> Result<GridRelease> {
    check_positive("epsilon", eps)?;
    if eps > MAX_GAUSSIAN_EPS {
        return Err(Error::invalid(
            "epsilon",
            eps,
            format!("the grid Gaussian here accepts epsilon <= {MAX_GAUSSIAN_EPS}"),
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
    let dim = query.len();
    if dim == 0 || float_err.len() != dim {
        return Err(Error::invalid(
            "query",
            dim,
            "needs a non-empty query and one float-error bound per coordinate",
        ));
    }
    if query.iter().chain(float_err).any(|v| !v.is_finite()) {
        return Err(Error::Numerical {
            what: "grid Gaussian",
            reason: "non-finite query value or error bound".into(),
        });
    }
    // (1 + 1e-6) covers the rounding of this product and of β.
    let slack =
        (1.0 + eps.exp()) * dim as f64 * discrete_continuous_tv(MIN_GRID_VARIANCE) * (1.0 + 1e-6);
    if slack.is_nan() || slack > MAX_SLACK_SHARE * delta {
        return Err(Error::invalid(
            "delta",
            delta,
            format!(
                "too small for the noise grid at epsilon = {eps} and {dim} coordinates (the \
                 discrete-Gaussian slack {slack:e} exceeds half of it)"
            ),
        ));
    }
    let delta_calib = (delta - slack).next_down();
    // ‖2·float_err‖₂ and the sum, both rounded up (DESIGN rule 2).
    let err_norm = norm_up(float_err.iter().map(|e| 2.0 * e));
    let sens_in = add_up(sensitivity, err_norm);
    let mut sigma = gaussian_sigma(eps, delta_calib, sens_in)?;
    for _ in 0..16 {
        let grid = GridGaussian::new(sens_in, sigma, dim)?;
        let charged = grid.effective_sensitivity();
        let need = gaussian_sigma(eps, delta_calib, charged)?;
        if need <= grid.effective_sigma() {
            let values = grid.release_vec(rng, query)?;
            return Ok(GridRelease {
                values,
                sigma: grid.effective_sigma(),
                granularity: grid.resolution(),
                charged_sensitivity: charged,
            });
        }
        // r only grows with σ, so this fixed-point iteration increases σ monotonically.
        sigma = need.max(sigma).next_up();
    }
    Err(Error::Numerical {
        what: "grid Gaussian",
        reason: "the grid calibration did not settle".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
            // Rounding charged: r·√3 with r ≈ σ·2^-30.
            assert!(g.charged_sensitivity >= 2.0 + g.granularity * 3f64.sqrt());
            assert!(g.charged_sensitivity < 2.0 + 1e-7);
            for i in 0..3 {
                assert_eq!((g.values[i] / g.granularity).fract(), 0.0);
                sums[i] += g.values[i] - q[i];
                sq[i] += (g.values[i] - q[i]).powi(2);
            }
        }
        // The calibration matches the analytic Gaussian to well within 1e-6.
        let want = gaussian_sigma(1.0, 1e-5, 2.0).unwrap();
        assert!(sigma >= want && (sigma / want - 1.0).abs() < 1e-6);
        for i in 0..3 {
            let mean = sums[i] / reps as f64;
            let sd = (sq[i] / reps as f64).sqrt();
            assert!(mean.abs() < 5.0 * sigma / (reps as f64).sqrt(), "{mean}");
            assert!((sd / sigma - 1.0).abs() < 0.06, "{sd} vs {sigma}");
        }
        assert!(grid_gaussian_vector(&[], 1.0, &[], 1.0, 1e-5, &mut rng).is_err());
        assert!(grid_gaussian_vector(&[f64::NAN], 1.0, &[0.0], 1.0, 1e-5, &mut rng).is_err());
        assert!(grid_gaussian_vector(&[0.0], 1.0, &[0.0], 1.0, 1e-300, &mut rng).is_err());
        assert!(grid_gaussian_vector(&[0.0], 1.0, &[0.0], 31.0, 1e-5, &mut rng).is_err());
        assert!(grid_gaussian_vector(&[0.0], 1.0, &[0.0], 0.0, 1e-5, &mut rng).is_err());
        assert!(grid_gaussian_vector(&[0.0], -1.0, &[0.0], 1.0, 1e-5, &mut rng).is_err());
    }

    #[test]
    fn slack_is_charged_and_bounded() {
        // β(2^58) ≈ 7.2e-20; at ε = 1 and 10^4 coordinates the slack is ≈ 2.7e-15.
        let b = discrete_continuous_tv(MIN_GRID_VARIANCE);
        assert!(b > 7.0e-20 && b < 7.4e-20, "{b}");
        // ε = 30 with 8 coordinates needs δ above ~1.2e-5.
        let mut rng = SecureRng::seeded(1);
        assert!(grid_gaussian_vector(&[0.0; 8], 1.0, &[0.0; 8], 30.0, 1e-6, &mut rng).is_err());
        assert!(grid_gaussian_vector(&[0.0; 8], 1.0, &[0.0; 8], 30.0, 1e-3, &mut rng).is_ok());
    }
}
