//! DP predictions by cloaking (Smith, Álvarez, Zwiessele & Lawrence, AISTATS 2018, arXiv
//! 1606.00720) and the Hall, Rinaldo & Wasserman (JMLR 14, 2013) RKHS output perturbation as a
//! baseline. DPGP.md §§3–5.
//!
//! Cloaking: predictions at public test inputs are C·ỹ with C = k(X*, X)(K + σ_n²I)⁻¹; changing
//! one clipped output by at most d moves them by d·c_j. With noise N(0, s²M) and
//! max_j c_jᵀM⁻¹c_j ≤ 1 this is, after whitening by M^{−1/2}, an isotropic Gaussian mechanism of
//! L2 sensitivity d. M is chosen by the minimum-volume enclosing ellipsoid of {±c_j} (D-optimal
//! design dual, Titterington's multiplicative algorithm); **whatever the optimiser did, the
//! constraint is recomputed from the final M and a violating M is refused**
//! ([`CloakingCovariance::verify`]).

use nalgebra::{DMatrix, DVector};
use serde::Serialize;

use super::linalg::{bounded_matvec, chol_inv, max_col_norm_up, range_basis};
use super::mechanisms::grid_gaussian_vector;
use super::regression::{check_inputs, Clipped, GpRegression, Kernel, OutputRange};
use crate::error::{check_positive, Error, Result};
use crate::noise::SecureRng;
use crate::numeric::mul_up;
use crate::privacy::{Guarantee, Neighbours, Release};

/// Settings of the MVEE (D-optimal design) solver.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MveeConfig {
    /// Stop once max_j c_jᵀM⁻¹c_j ≤ 1 + tol (the final M is then scaled so that the constraint
    /// holds exactly; tol = 0.01 costs at most 0.5 % extra noise s.d.).
    pub tol: f64,
    /// Iteration cap; reaching it only costs utility (the final M is still verified).
    pub max_iter: usize,
    /// Singular values of C below rank_tol·s_max are dropped from the optimisation space.
    pub rank_tol: f64,
}

impl Default for MveeConfig {
    fn default() -> Self {
        Self {
            tol: 0.01,
            max_iter: 1000,
            rank_tol: 1e-7,
        }
    }
}

impl MveeConfig {
    fn check(&self) -> Result<()> {
        check_positive("mvee_tol", self.tol)?;
        check_positive("rank_tol", self.rank_tol)?;
        if self.max_iter == 0 {
            return Err(Error::invalid("mvee_max_iter", 0, "must be >= 1"));
        }
        Ok(())
    }
}

/// D-optimal weights λ_j (M = Σ λ_j c_j c_jᵀ) from the reduced-space multiplicative algorithm.
#[derive(Debug, Clone)]
pub(crate) struct MveeWeights {
    /// One weight per column of C; Σλ = r.
    pub lambda: Vec<f64>,
    /// max_j c̃_jᵀM̃⁻¹c̃_j at the last iterate (≤ 1 + tol unless the cap was hit).
    pub q_max: f64,
    /// Numerical rank r of C.
    pub rank: usize,
    /// Iterations used.
    pub iterations: usize,
}

/// Coordinates of the columns of `c` in a basis of its numerical range (r × N), scaled so that
/// their rows are orthonormal (C = U_r S_r V_rᵀ ↦ V_rᵀ). The D-optimal weights and the constraint
/// values are invariant under an invertible change of coordinates, and these start the
/// multiplicative algorithm from a perfectly conditioned M̃ = (r/N)·I. The range is found by
/// pivoted Cholesky of C·Cᵀ (cheap when r is small), then whitened by an r × r Cholesky factor
/// (an eigendecomposition only as the fallback).
fn reduced_coordinates(c: &DMatrix<f64>, rank_tol: f64) -> DMatrix<f64> {
    let tol2 = rank_tol * rank_tol;
    let q = range_basis(&(c * c.transpose()), tol2);
    let c0 = q.transpose() * c;
    if c0.nrows() == 0 {
        // A numerically zero C has an empty range (the caller refuses it); nalgebra's
        // eigendecomposition panics on an empty matrix.
        return c0;
    }
    let g = &c0 * c0.transpose();
    // Any invertible whitening gives the same weights; a Cholesky factor of c0·c0ᵀ costs far less
    // than its eigendecomposition, which remains the fallback when c0·c0ᵀ is too ill-conditioned
    // for Cholesky (it then drops the directions below rank_tol).
    if let Ok(f) = chol_inv(&g, "reduced Gram matrix") {
        return &f.l_inv * c0;
    }
    if g.iter().any(|v| !v.is_finite()) {
        // Unreachable from finite C (the caller checks), and nalgebra's eigendecomposition
        // would not terminate or panic on it: no directions are kept, and the caller refuses.
        return DMatrix::zeros(0, c0.ncols());
    }
    let eig = g.symmetric_eigen();
    let top = eig.eigenvalues.iter().cloned().fold(0.0, f64::max);
    let keep: Vec<usize> = (0..c0.nrows())
        .filter(|&i| top > 0.0 && eig.eigenvalues[i] > tol2 * top)
        .collect();
    let mut w = eig.eigenvectors.select_columns(&keep);
    for (k, &i) in keep.iter().enumerate() {
        w.column_mut(k).scale_mut(1.0 / eig.eigenvalues[i].sqrt());
    }
    w.transpose() * c0
}

/// Solves min log det M s.t. c_jᵀM⁻¹c_j ≤ 1 through its dual (D-optimal design) with the
/// multiplicative algorithm λ_j ← λ_j·q_j (Titterington 1976; Silvey, Titterington & Torsney 1978;
/// Boyd & Vandenberghe §7.5, §8.4.1), in the r-dimensional range of C. DPGP.md §5.2 step 3.
pub(crate) fn mvee_weights(c: &DMatrix<f64>, cfg: &MveeConfig) -> Result<MveeWeights> {
    cfg.check()?;
    if c.iter().any(|v| !v.is_finite()) {
        return Err(Error::Numerical {
            what: "cloaking matrix",
            reason: "non-finite entries".into(),
        });
    }
    let ct = reduced_coordinates(c, cfg.rank_tol);
    let (r, n) = ct.shape();
    if r == 0 {
        return Err(Error::Numerical {
            what: "cloaking matrix",
            reason:
                "the prediction matrix is numerically zero (no column influences the predictions)"
                    .into(),
        });
    }
    let mut lambda = vec![r as f64 / n as f64; n];
    let mut q = vec![0.0; n];
    let mut q_max = f64::INFINITY;
    let mut iterations = 0;
    let mut scaled = ct.clone();
    while iterations < cfg.max_iter {
        iterations += 1;
        scaled.copy_from(&ct);
        for (col, l) in scaled.column_iter_mut().zip(&lambda) {
            let mut col = col;
            col.scale_mut(l.sqrt());
        }
        let m = &scaled * scaled.transpose();
        let f = chol_inv(&m, "MVEE iterate")?;
        let y = &f.l_inv * &ct;
        for (j, qj) in q.iter_mut().enumerate() {
            *qj = y.column(j).norm_squared();
        }
        q_max = q.iter().cloned().fold(0.0, f64::max);
        if q_max <= 1.0 + cfg.tol {
            break;
        }
        for (l, qj) in lambda.iter_mut().zip(&q) {
            *l *= qj;
        }
    }
    Ok(MveeWeights {
        lambda,
        q_max,
        rank: r,
        iterations,
    })
}

/// A cloaking noise covariance M whose constraint c_jᵀM⁻¹c_j ≤ 1 has been checked for every column
/// of C, together with its Cholesky factor and the whitened matrix W = L⁻¹C.
#[derive(Debug, Clone)]
pub struct CloakingCovariance {
    m: DMatrix<f64>,
    l: DMatrix<f64>,
    w: DMatrix<f64>,
    constraints: Vec<f64>,
    rank: usize,
    iterations: usize,
}

impl CloakingCovariance {
    /// Accepts `m` for the cloaking matrix `c` only if it is symmetric positive definite and
    /// c_jᵀM⁻¹c_j ≤ 1 for **every** column j (computed from `m` itself through its Cholesky
    /// factor). Anything else is refused with an error naming `noise_covariance`.
    pub fn verify(c: &DMatrix<f64>, m: DMatrix<f64>) -> Result<Self> {
        Self::verify_with(c, m, 0, 0)
    }

    fn verify_with(
        c: &DMatrix<f64>,
        m: DMatrix<f64>,
        rank: usize,
        iterations: usize,
    ) -> Result<Self> {
        if m.nrows() != c.nrows() || m.ncols() != c.nrows() {
            return Err(Error::invalid(
                "noise_covariance",
                format!("{}×{}", m.nrows(), m.ncols()),
                format!("must be {0}×{0} for {0} prediction points", c.nrows()),
            ));
        }
        let asym = (&m - m.transpose()).amax();
        if asym > 1e-12 * m.amax() {
            return Err(Error::invalid(
                "noise_covariance",
                format!("asymmetry {asym:e}"),
                "must be symmetric",
            ));
        }
        let f = chol_inv(&m, "cloaking noise covariance").map_err(|e| {
            Error::invalid("noise_covariance", "not positive definite", e.to_string())
        })?;
        let w = &f.l_inv * c;
        let constraints: Vec<f64> = w.column_iter().map(|col| col.norm_squared()).collect();
        if let Some((j, q)) = constraints
            .iter()
            .enumerate()
            .find(|(_, q)| !(q.is_finite() && **q <= 1.0))
        {
            return Err(Error::invalid(
                "noise_covariance",
                format!("c_{j}ᵀ M⁻¹ c_{j} = {q}"),
                "violates the cloaking constraint c_jᵀM⁻¹c_j <= 1; refused",
            ));
        }
        Ok(Self {
            m,
            l: f.l,
            w,
            constraints,
            rank,
            iterations,
        })
    }

    /// Optimises M for `c` (minimum-volume enclosing ellipsoid of the columns, DPGP.md §5.2), then
    /// recomputes every c_jᵀM⁻¹c_j from the final full-space M = CΛCᵀ + ηI, scales M so that the
    /// largest is below 1, and verifies the result with [`CloakingCovariance::verify`].
    pub fn optimise(c: &DMatrix<f64>, cfg: &MveeConfig) -> Result<Self> {
        let wts = mvee_weights(c, cfg)?;
        let mut scaled = c.clone();
        for (j, mut col) in scaled.column_iter_mut().enumerate() {
            col.scale_mut(wts.lambda[j].sqrt());
        }
        let mut m = &scaled * scaled.transpose();
        m = (&m + m.transpose()) * 0.5;
        let eta = 1e-9 * m.trace() / m.nrows() as f64;
        for i in 0..m.nrows() {
            m[(i, i)] += eta;
        }
        let f = chol_inv(&m, "cloaking noise covariance")?;
        let w = &f.l_inv * c;
        let q_max = w
            .column_iter()
            .map(|col| col.norm_squared())
            .fold(0.0, f64::max);
        if !(q_max.is_finite() && q_max > 0.0) {
            return Err(Error::Numerical {
                what: "cloaking noise covariance",
                reason: format!("max constraint value {q_max}"),
            });
        }
        m *= q_max * (1.0 + 2f64.powi(-20));
        Self::verify_with(c, m, wts.rank, wts.iterations)
    }

    /// M.
    pub fn matrix(&self) -> &DMatrix<f64> {
        &self.m
    }

    /// c_jᵀM⁻¹c_j for every column j (all ≤ 1).
    pub fn constraints(&self) -> &[f64] {
        &self.constraints
    }

    /// max_j √(c_jᵀM⁻¹c_j) ≤ 1: the whitened sensitivity per unit output change.
    pub fn delta(&self) -> f64 {
        self.constraints.iter().cloned().fold(0.0, f64::max).sqrt()
    }

    /// Numerical rank of C used by the optimiser (0 when M was supplied by the caller).
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// MVEE iterations (0 when M was supplied by the caller).
    pub fn iterations(&self) -> usize {
        self.iterations
    }
}

/// Released predictions and their public error bars.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DpPredictions {
    /// The private predictions at the test inputs (in output units, centre added back).
    pub values: Vec<f64>,
    /// Standard deviation of the DP noise at each test input (public: depends on inputs only).
    pub noise_sd: Vec<f64>,
    /// The Gaussian multiplier s actually used (analytic calibration, Balle–Wang), noise = s·M^{1/2}z.
    pub sigma: f64,
    /// For comparison only: the paper's s = c(δ)·Δ/ε with c(δ) = √(2 ln(2/δ)) (Hall et al. 2013;
    /// valid for ε ≤ 1, `None` above). Not used for the noise.
    pub classic_sigma: Option<f64>,
    /// The L2 sensitivity of the whitened prediction vector W·ỹ for the matrix W actually used
    /// (d·max_j ‖W_{:,j}‖₂, rounded up, for cloaking; for Hall et al. the larger of that and the
    /// RKHS bound), before charging floating-point error and grid rounding.
    pub sensitivity: f64,
    /// The sensitivity σ was calibrated for: `sensitivity` plus the grid rounding and a bound on
    /// the floating-point error of the whitened predictions (DESIGN rule 1: rounding charged).
    pub charged_sensitivity: f64,
    /// Spacing of the power-of-two noise grid.
    pub granularity: f64,
}

/// The paper's c(δ) = √(2 ln(2/δ)) (Hall et al. 2013, vector Gaussian mechanism; ε ≤ 1 only).
pub fn classic_c_delta(delta: f64) -> f64 {
    (2.0 * (2.0 / delta).ln()).sqrt()
}

/// The (ε, δ) of a cloaking or Hall allowance. Both mechanisms are (ε, δ)-DP for replacing one
/// training output, so the allowance must be exactly one (ε, δ) bound under replace_one: any
/// other relation is a [`Error::NeighboursMismatch`] (an add_remove allowance would make the
/// number of training outputs private, which the mechanism releases exactly), any other kind of
/// bound an invalid `allowance` (the analytic calibration needs a δ).
pub(crate) fn approx_allowance(allowance: &Guarantee) -> Result<(f64, f64)> {
    if allowance.neighbours() != Neighbours::Replace {
        return Err(Error::NeighboursMismatch {
            left: allowance.neighbours().to_string(),
            right: Neighbours::Replace.to_string(),
        });
    }
    match allowance.as_approx() {
        Some((eps, delta)) if delta > 0.0 => Ok((eps, delta)),
        _ => Err(Error::invalid(
            "allowance",
            allowance,
            "GP predictions are calibrated for one (epsilon, delta) bound",
        )),
    }
}

/// What a private GP prediction is computed from: the public training inputs `x`, the private
/// outputs `y` (clipped into the public `range`), the public `kernel` and the public test inputs
/// `x_star`. Both mechanisms ([`cloaked_predictions`], [`hall_predictions`]) take this one
/// value, so they read and check the same data the same way and differ only in their noise.
#[derive(Debug, Clone, Copy)]
pub struct PredictionInputs<'a> {
    /// Training inputs, one row per record (public).
    pub x: &'a DMatrix<f64>,
    /// Training outputs, one per row of `x` (private; clipped into `range`).
    pub y: &'a [f64],
    /// The declared public output range that bounds the sensitivity.
    pub range: OutputRange,
    /// The public kernel.
    pub kernel: Kernel,
    /// The test inputs to predict at, one row each (public).
    pub x_star: &'a DMatrix<f64>,
}

/// The data-side preparation shared by cloaking and Hall: the charge, the clipped outputs, the
/// fitted GP and the prediction matrix C at the test inputs.
struct Prepared {
    spent: Guarantee,
    range: OutputRange,
    clipped: Clipped,
    gp: GpRegression,
    c: DMatrix<f64>,
}

impl Prepared {
    fn new(inputs: &PredictionInputs<'_>, allowance: &Guarantee) -> Result<Self> {
        approx_allowance(allowance)?;
        let spent = allowance.clone();
        check_inputs("x_star", inputs.x_star, Some(inputs.x.ncols()))?;
        let clipped = inputs.range.clip(inputs.y)?;
        let gp = GpRegression::fit(inputs.x, &clipped.centred, inputs.kernel)?;
        let c = gp.prediction_matrix(inputs.x_star)?;
        Ok(Self {
            spent,
            range: inputs.range,
            clipped,
            gp,
            c,
        })
    }

    /// Adds the whitened vector Gaussian to W·ỹ (W = L⁻¹C for the noise covariance M = LLᵀ,
    /// with diagonal `m_diag`) and maps back with L. `sensitivity` bounds the exact map's L2
    /// sensitivity d·max_j ‖W_{:,j}‖; the floating-point error of computing W·ỹ, at most
    /// γ_N·(d/2)·Σ_j|W_ij| per coordinate ([`bounded_matvec`]), is charged on top by
    /// [`grid_gaussian_vector`].
    fn release(
        self,
        w: &DMatrix<f64>,
        l: &DMatrix<f64>,
        m_diag: &[f64],
        sensitivity: f64,
        rng: &mut SecureRng,
    ) -> Result<Release<DpPredictions>> {
        let (eps, delta) = approx_allowance(&self.spent)?;
        let y = DVector::from_column_slice(&self.clipped.centred);
        let centre = self.range.centre();
        let (g, float_err) = bounded_matvec(w, &y, self.range.width() / 2.0);
        let noisy = grid_gaussian_vector(g.as_slice(), sensitivity, &float_err, eps, delta, rng)?;
        let out = l * DVector::from_vec(noisy.values);
        let value = DpPredictions {
            values: out.iter().map(|v| v + centre).collect(),
            noise_sd: m_diag.iter().map(|v| noisy.sigma * v.sqrt()).collect(),
            sigma: noisy.sigma,
            classic_sigma: (eps <= 1.0).then(|| classic_c_delta(delta) * sensitivity / eps),
            sensitivity,
            charged_sensitivity: noisy.charged_sensitivity,
            granularity: noisy.granularity,
        };
        Ok(Release {
            value,
            spent: self.spent,
        })
    }
}

/// Private GP predictions at the public test inputs `inputs.x_star` by cloaking: (ε, δ)-DP with
/// respect to replacing one training output (inputs public, outputs clipped into `inputs.range`).
///
/// Smith et al., AISTATS 2018 (arXiv 1606.00720), with the improvements of DPGP.md §5.2: M from
/// the MVEE problem, verified after optimisation ([`CloakingCovariance`]); the multiplier by the
/// analytic Gaussian (Balle–Wang 2018, arXiv 1805.06530, Thm 8) for the whitened sensitivity
/// d·max_j ‖W_{:,j}‖₂ ≤ d·max_j √(c_jᵀM⁻¹c_j) of the computed W = L⁻¹C (a rigorous upper bound,
/// `max_col_norm_up`, plus the charged floating-point error of W·ỹ); noise on a power-of-two
/// grid with the rounding charged. Preconditions: the `allowance` is one (ε, δ) bound under
/// replace_one (`approx_allowance`) with ε ∈ (0, 30], δ ∈ (0, 1); kernel with σ_n² > 0. The
/// release spends exactly the allowance.
pub fn cloaked_predictions(
    inputs: &PredictionInputs<'_>,
    allowance: &Guarantee,
    cfg: &MveeConfig,
    rng: &mut SecureRng,
) -> Result<Release<DpPredictions>> {
    let prep = Prepared::new(inputs, allowance)?;
    let cov = CloakingCovariance::optimise(&prep.c, cfg)?;
    let sens = mul_up(inputs.range.width(), max_col_norm_up(&cov.w));
    let m_diag: Vec<f64> = cov.m.diagonal().iter().cloned().collect();
    prep.release(&cov.w, &cov.l, &m_diag, sens, rng)
}

/// Which RKHS sensitivity the Hall et al. baseline uses (DPGP.md §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HallBound {
    /// The published bound d·σ_f·‖A‖_∞ (max absolute row sum of A = (K + σ_n²I)⁻¹).
    Published,
    /// The exact value d·max_j √((AKA)_jj), with AKA = A − σ_n²A².
    Exact,
}

/// The RKHS sensitivity sup ‖f_D − f_D′‖_H of the posterior mean (DPGP.md §4).
pub(crate) fn hall_sensitivity(gp: &GpRegression, d: f64, bound: HallBound) -> f64 {
    let a = gp.precision();
    let k = gp.kernel();
    match bound {
        HallBound::Published => {
            let inf_norm = a
                .row_iter()
                .map(|r| r.iter().map(|v| v.abs()).sum::<f64>())
                .fold(0.0, f64::max);
            d * k.signal_var().sqrt() * inf_norm
        }
        HallBound::Exact => {
            let worst = (0..a.ncols())
                .map(|j| a[(j, j)] - k.noise_var() * a.column(j).norm_squared())
                .fold(0.0, f64::max);
            d * worst.max(0.0).sqrt()
        }
    }
}

/// Baseline: Hall, Rinaldo & Wasserman, "Differential Privacy for Functions and Functional Data",
/// JMLR 14:703–727 (2013), functional mechanism (Corollary 9 as recalled, DPGP.md §3): the
/// posterior mean plus s·G(X*), G ~ GP(0, k), with s calibrated for the RKHS sensitivity.
/// Evaluated at X* this is a vector Gaussian mechanism with covariance K** (+ a tiny jitter, which
/// only adds independent noise); after whitening by chol(K** + jitter) its L2 sensitivity is at most
/// the RKHS sensitivity. Calibrated with the analytic Gaussian and released on the same grid as
/// cloaking. Preconditions as [`cloaked_predictions`].
pub fn hall_predictions(
    inputs: &PredictionInputs<'_>,
    allowance: &Guarantee,
    bound: HallBound,
    rng: &mut SecureRng,
) -> Result<Release<DpPredictions>> {
    let prep = Prepared::new(inputs, allowance)?;
    let d = inputs.range.width();
    let kernel = inputs.kernel;
    let mut m = kernel.matrix(inputs.x_star, inputs.x_star);
    for i in 0..m.nrows() {
        m[(i, i)] += 1e-8 * kernel.signal_var();
    }
    let f = chol_inv(&m, "prior covariance at the test inputs")?;
    let w = &f.l_inv * &prep.c;
    // The release computes W·ỹ; its exact sensitivity is bounded rigorously from W itself.
    let whitened = mul_up(d, max_col_norm_up(&w));
    let sens = hall_sensitivity(&prep.gp, d, bound).max(whitened);
    let m_diag: Vec<f64> = m.diagonal().iter().cloned().collect();
    prep.release(&w, &f.l, &m_diag, sens, rng)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 17: `gp --noise-ratio 1e300` made the prediction matrix numerically zero; its range
    /// was empty and nalgebra's eigendecomposition of the empty Gram matrix panicked. Now the
    /// empty range is returned and refused as a numerical error (C depends on the public inputs
    /// and constants only, never on the outputs).
    #[test]
    fn a_numerically_zero_prediction_matrix_is_an_error_not_a_panic() {
        let cfg = MveeConfig::default();
        for c in [DMatrix::zeros(3, 5), DMatrix::from_element(3, 5, 1e-300)] {
            assert_eq!(reduced_coordinates(&c, cfg.rank_tol).nrows(), 0);
            match mvee_weights(&c, &cfg) {
                Err(Error::Numerical { reason, .. }) => {
                    assert!(reason.contains("numerically zero"), "{reason}")
                }
                other => panic!("expected a numerical error, got {other:?}"),
            }
        }
        let mut inf = DMatrix::from_element(2, 4, 1.0);
        inf[(0, 1)] = f64::INFINITY;
        assert!(matches!(
            mvee_weights(&inf, &cfg),
            Err(Error::Numerical { .. })
        ));
    }

    fn allowance(eps: f64, delta: f64) -> Guarantee {
        Guarantee::approx(eps, delta, Neighbours::Replace).unwrap()
    }

    #[test]
    fn the_allowance_must_be_one_replace_one_epsilon_delta_bound() {
        let data = toy(20, 5);
        let range = OutputRange::new(-5.0, 5.0).unwrap();
        let k = Kernel::new(0.5, 1.0, 0.3).unwrap();
        let cfg = MveeConfig::default();
        let inputs = toy_inputs(&data, range, k);
        let run = |a: &Guarantee| {
            let mut rng = SecureRng::seeded(4);
            cloaked_predictions(&inputs, a, &cfg, &mut rng)
        };
        let ok = allowance(1.0, 1e-5);
        assert_eq!(run(&ok).unwrap().spent, ok);
        // The wrong relation is a typed mismatch, not a silently relabelled release.
        let add_remove = Guarantee::approx(1.0, 1e-5, Neighbours::AddRemove).unwrap();
        assert!(matches!(
            run(&add_remove),
            Err(Error::NeighboursMismatch { .. })
        ));
        let mut rng = SecureRng::seeded(4);
        assert!(matches!(
            hall_predictions(&inputs, &add_remove, HallBound::Exact, &mut rng),
            Err(Error::NeighboursMismatch { .. })
        ));
        for other in [
            Guarantee::pure(1.0, Neighbours::Replace).unwrap(),
            Guarantee::zcdp(0.1, Neighbours::Replace).unwrap(),
            ok.clone()
                .and(Guarantee::zcdp(0.1, Neighbours::Replace).unwrap())
                .unwrap(),
        ] {
            match run(&other) {
                Err(Error::InvalidParameter { name, .. }) => assert_eq!(name, "allowance"),
                r => panic!("{other}: {r:?}"),
            }
        }
    }

    /// `toy` data as the mechanisms' inputs.
    fn toy_inputs(
        data: &(DMatrix<f64>, Vec<f64>, DMatrix<f64>),
        range: OutputRange,
        kernel: Kernel,
    ) -> PredictionInputs<'_> {
        let (x, y, x_star) = data;
        PredictionInputs {
            x,
            y,
            range,
            kernel,
            x_star,
        }
    }

    fn toy(n: usize, ns: usize) -> (DMatrix<f64>, Vec<f64>, DMatrix<f64>) {
        let x = DMatrix::from_fn(n, 1, |i, _| i as f64 * 4.0 / n as f64 - 2.0);
        let y: Vec<f64> = (0..n).map(|i| (x[(i, 0)] * 1.3).sin() * 3.0).collect();
        let xs = DMatrix::from_fn(ns, 1, |i, _| i as f64 * 5.0 / ns as f64 - 2.5);
        (x, y, xs)
    }

    #[test]
    fn optimised_covariance_satisfies_every_constraint_and_kkt() {
        let (x, y, xs) = toy(80, 30);
        let gp = GpRegression::fit(&x, &y, Kernel::new(0.5, 1.0, 0.3).unwrap()).unwrap();
        let c = gp.prediction_matrix(&xs).unwrap();
        let cov = CloakingCovariance::optimise(&c, &MveeConfig::default()).unwrap();
        assert!(cov.constraints().iter().all(|q| *q <= 1.0));
        // Near-optimality: the largest constraint is close to 1 and Σλ = r at the optimum.
        assert!(cov.delta() > 0.99, "{}", cov.delta());
        let w = mvee_weights(&c, &MveeConfig::default()).unwrap();
        let s: f64 = w.lambda.iter().sum();
        assert!((s - w.rank as f64).abs() < 1e-6 * s, "{s} vs {}", w.rank);
        assert!(w.q_max <= 1.01);
        // Independent re-check of c_jᵀM⁻¹c_j with nalgebra's own solver.
        let chol = cov.matrix().clone().cholesky().unwrap();
        for j in 0..c.ncols() {
            let cj = c.column(j).into_owned();
            let q = cj.dot(&chol.solve(&cj));
            assert!(q <= 1.0 + 1e-6, "{j}: {q}");
        }
    }

    #[test]
    fn a_violating_covariance_is_refused() {
        let (x, y, xs) = toy(40, 10);
        let gp = GpRegression::fit(&x, &y, Kernel::new(0.5, 1.0, 0.3).unwrap()).unwrap();
        let c = gp.prediction_matrix(&xs).unwrap();
        let good = CloakingCovariance::optimise(&c, &MveeConfig::default()).unwrap();
        // Shrinking a valid M by 2 doubles every constraint value: some exceed 1.
        let bad = good.matrix() * 0.5;
        let e = CloakingCovariance::verify(&c, bad).unwrap_err();
        assert!(e.to_string().contains("noise_covariance"), "{e}");
        assert!(e.to_string().contains("refused"), "{e}");
        // Singular and wrongly shaped matrices are refused too.
        assert!(CloakingCovariance::verify(&c, DMatrix::zeros(10, 10)).is_err());
        assert!(CloakingCovariance::verify(&c, DMatrix::identity(3, 3)).is_err());
        // The identity scaled large enough is valid (just noisy).
        let big = DMatrix::identity(10, 10)
            * c.column_iter()
                .map(|v| v.norm_squared())
                .fold(0.0, f64::max);
        assert!(CloakingCovariance::verify(&c, big * 1.01).is_ok());
    }

    #[test]
    fn mvee_matches_brute_force_in_two_dimensions() {
        // Columns ±c_j in ℝ²: compare log det of the MVEE with a grid search over
        // M = [[a, b], [b, e]] satisfying all constraints.
        let c = DMatrix::from_column_slice(2, 4, &[1.0, 0.0, 0.0, 1.0, 0.7, 0.7, 0.5, -0.2]);
        let cfg = MveeConfig {
            tol: 1e-6,
            ..MveeConfig::default()
        };
        let cov = CloakingCovariance::optimise(&c, &cfg).unwrap();
        let ld = cov.matrix().determinant().ln();
        let mut best = f64::INFINITY;
        let steps = 120;
        for ia in 1..=steps {
            for ie in 1..=steps {
                for ib in 0..=steps {
                    let a = 0.5 + ia as f64 * 1.5 / steps as f64;
                    let e = 0.5 + ie as f64 * 1.5 / steps as f64;
                    let b = -1.0 + ib as f64 * 2.0 / steps as f64;
                    let det = a * e - b * b;
                    if det <= 0.0 {
                        continue;
                    }
                    let ok = (0..4).all(|j| {
                        let (u, v) = (c[(0, j)], c[(1, j)]);
                        (e * u * u - 2.0 * b * u * v + a * v * v) / det <= 1.0
                    });
                    if ok {
                        best = best.min(det.ln());
                    }
                }
            }
        }
        assert!(ld <= best + 1e-5, "optimiser {ld} worse than grid {best}");
        assert!(ld >= best - 0.05, "optimiser {ld} vs grid {best}");
    }

    #[test]
    fn noise_vanishes_in_the_long_lengthscale_limit() {
        let data = toy(40, 10);
        let range = OutputRange::new(-5.0, 5.0).unwrap();
        let mut sds = vec![];
        for l in [0.3, 3.0, 300.0] {
            let mut rng = SecureRng::seeded(1);
            let k = Kernel::new(l, 1.0, 0.3).unwrap();
            let inputs = toy_inputs(&data, range, k);
            let r = cloaked_predictions(
                &inputs,
                &allowance(1.0, 1e-5),
                &MveeConfig::default(),
                &mut rng,
            )
            .unwrap();
            sds.push(r.value.noise_sd.iter().cloned().fold(0.0, f64::max));
        }
        assert!(sds[0] > sds[1] && sds[1] > sds[2], "{sds:?}");
    }

    #[test]
    fn cloaking_beats_hall_and_reports_its_guarantee() {
        let data = toy(60, 12);
        let range = OutputRange::new(-5.0, 5.0).unwrap();
        let k = Kernel::new(0.5, 1.0, 0.3).unwrap();
        let mut rng = SecureRng::seeded(2);
        let cfg = MveeConfig::default();
        let a = allowance(1.0, 1e-5);
        let inputs = toy_inputs(&data, range, k);
        let cl = cloaked_predictions(&inputs, &a, &cfg, &mut rng).unwrap();
        assert_eq!(cl.spent.epsilon(1e-5).unwrap(), 1.0);
        assert!(cl.value.sensitivity <= 10.0 * (1.0 + 1e-6));
        let c_classic = cl.value.classic_sigma.unwrap();
        assert!(
            c_classic > cl.value.sigma,
            "analytic must beat c(δ) at ε = 1"
        );
        for b in [HallBound::Exact, HallBound::Published] {
            let h = hall_predictions(&inputs, &a, b, &mut rng).unwrap();
            let mean_h: f64 = h.value.noise_sd.iter().sum::<f64>();
            let mean_c: f64 = cl.value.noise_sd.iter().sum::<f64>();
            assert!(mean_h > mean_c, "{b:?}: hall {mean_h} vs cloaking {mean_c}");
        }
        assert!((classic_c_delta(0.01) - 3.255).abs() < 1e-3);
    }

    #[test]
    fn monte_carlo_privacy_loss_of_the_cloaked_release() {
        // dp4gp's Monte-Carlo test, in the whitened space where the release is g + N(0, σ²I):
        // for a training output moved by d the hockey-stick divergence
        // δ(ε) = E_o[(1 − e^{ε − L(o)})₊] estimated from the real sampler stays below δ.
        let (x, y, xs) = toy(30, 8);
        let range = OutputRange::new(-5.0, 5.0).unwrap();
        let k = Kernel::new(0.5, 1.0, 0.3).unwrap();
        let gp = GpRegression::fit(&x, &range.clip(&y).unwrap().centred, k).unwrap();
        let c = gp.prediction_matrix(&xs).unwrap();
        let cov = CloakingCovariance::optimise(&c, &MveeConfig::default()).unwrap();
        let (eps, delta) = (1.0, 0.05);
        let mut rng = SecureRng::seeded(3);
        let reps = if cfg!(debug_assertions) {
            1_500
        } else {
            20_000
        };
        for j in [0, 15, 29] {
            let v = cov.w.column(j) * 10.0; // whitened change when output j moves by d = 10
            let (mut sum, mut sum2) = (0.0, 0.0);
            for _ in 0..reps {
                let z =
                    grid_gaussian_vector(&[0.0; 8], 10.0, &[0.0; 8], eps, delta, &mut rng).unwrap();
                let dot: f64 = z.values.iter().zip(v.iter()).map(|(a, b)| a * b).sum();
                let loss = (v.norm_squared() - 2.0 * dot) / (2.0 * z.sigma * z.sigma);
                let h = (1.0 - (eps - loss).exp()).max(0.0);
                sum += h;
                sum2 += h * h;
            }
            let mean = sum / reps as f64;
            let se = ((sum2 / reps as f64 - mean * mean) / reps as f64).sqrt();
            assert!(mean <= delta + 4.0 * se, "column {j}: {mean} ± {se}");
        }
    }
}
