//! Private lengthscale selection: K-fold cross-validation over a public grid, a noise-aware score
//! with a data-independent sensitivity, and the exponential mechanism (DPGP.md §6); the
//! noise-aware log marginal likelihood as an alternative score (DPGP.md §7); and the end-to-end
//! select-then-predict release with its total cost.
//!
//! The CV predictions and scores are internal: they are never released, and the exponential
//! mechanism's guarantee holds conditionally on them (DPGP.md §6.4).

use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;
use serde::Serialize;

use super::cloaking::{
    cloaked_predictions, mvee_weights, DpPredictions, MveeConfig, PredictionInputs,
};
use super::linalg::{bounded_matvec, chol_inv, spd_inverse, try_sq_dists};
use super::regression::{check_inputs, Kernel, OutputRange};
use crate::error::{check_positive, Error, Result};
use crate::noise::SecureRng;
use crate::numeric::{abs_sum_up, gamma, inflate, norm_up, MIN_SUBNORMAL, UNIT_ROUNDOFF};
use crate::numeric::{add_up, mul_up};
use crate::privacy::gaussian::gaussian_sigma;
use crate::privacy::{Guarantee, Neighbours, Release};
use crate::select::exponential::em_guarantee;
use crate::select::{ExponentialMechanism, Goal, Scores, Selector, Sensitivity};

/// A fold assignment: point i is a test point of fold `of[i]` and a training point of the others.
/// It is drawn independently of the outputs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Folds {
    of: Vec<usize>,
    k: usize,
}

impl Folds {
    /// A uniformly random balanced assignment of `n` points to `k` folds. Needs 2 ≤ k ≤ n.
    pub fn random(n: usize, k: usize, rng: &mut SecureRng) -> Result<Self> {
        if k < 2 {
            return Err(Error::invalid("folds", k, "needs at least 2 folds"));
        }
        if n < k {
            return Err(Error::invalid(
                "folds",
                k,
                format!("more folds than training points ({n})"),
            ));
        }
        let mut perm: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = rng.below_u64(i as u64 + 1) as usize;
            perm.swap(i, j);
        }
        let mut of = vec![0; n];
        for (pos, &i) in perm.iter().enumerate() {
            of[i] = pos % k;
        }
        Ok(Self { of, k })
    }

    /// Number of folds.
    pub fn k(&self) -> usize {
        self.k
    }

    /// The fold of each point.
    pub fn assignment(&self) -> &[usize] {
        &self.of
    }

    fn members(&self) -> Vec<(Vec<usize>, Vec<usize>)> {
        (0..self.k)
            .map(|f| {
                let test = (0..self.of.len()).filter(|&i| self.of[i] == f).collect();
                let train = (0..self.of.len()).filter(|&i| self.of[i] != f).collect();
                (test, train)
            })
            .collect()
    }
}

/// The score the exponential mechanism maximises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Utility {
    /// DPGP.md §6.3 row A: u(ℓ) = −Σ_k √(‖r_k‖² + t_k) (per-fold noise-aware residual norm),
    /// Δu(ℓ) = d·max_i [1 + Σ_{k≠k(i)} ‖c_i^(k)‖₂] in exact arithmetic; as computed,
    /// d·max_i Σ_k ‖(R_k)_{:,i}‖₂ for the residual maps R_k actually used, plus the charged
    /// floating-point slack (see `cv_candidate`).
    CrossValidation,
    /// DPGP.md §7: the noise-aware log marginal likelihood
    /// −½ỹᵀPỹ − ½log|K_y + Σ_z| − (N/2)log 2π, P = (K_y + Σ_z)⁻¹ with Σ_z the cloaking covariance
    /// at the training inputs; Δu(ℓ) = d·(d/2)·max_i ‖P_{i,:}‖₁ + ½d²·max_i P_ii in exact
    /// arithmetic for a symmetric P; as computed, see `lml_candidate`.
    LogMarginalLikelihood,
}

/// Everything fixed before looking at the outputs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SelectionConfig {
    /// The public grid of lengthscales.
    pub grid: Vec<f64>,
    /// σ_f².
    pub signal_var: f64,
    /// σ_n².
    pub noise_var: f64,
    /// K, the number of CV folds.
    pub folds: usize,
    /// ε of the exponential mechanism.
    pub eps_select: f64,
    /// ε of the final cloaked release (also used inside the noise-aware score).
    pub eps_predict: f64,
    /// δ of the final cloaked release.
    pub delta: f64,
    /// The score.
    pub utility: Utility,
    /// MVEE solver settings of the final release. Inside the CV score only the trace of M
    /// matters (it is data-independent and never released), so the score uses a tolerance of at
    /// least [`CV_MVEE_TOL`].
    pub mvee: MveeConfig,
}

/// MVEE tolerance used inside the CV score: the noise trace is overestimated by at most 5 %.
pub const CV_MVEE_TOL: f64 = 0.05;

impl SelectionConfig {
    pub(super) fn check(&self, n: usize) -> Result<()> {
        if self.grid.is_empty() {
            return Err(Error::invalid("lengthscales", "[]", "needs at least one"));
        }
        for &l in &self.grid {
            check_positive("lengthscales", l)?;
        }
        Kernel::new(self.grid[0], self.signal_var, self.noise_var)?;
        check_positive("eps_select", self.eps_select)?;
        check_positive("eps_predict", self.eps_predict)?;
        Guarantee::approx(self.eps_predict, self.delta, Neighbours::Replace)?;
        if self.delta == 0.0 {
            return Err(Error::invalid(
                "delta",
                0,
                "the Gaussian release needs delta > 0",
            ));
        }
        if self.folds < 2 {
            return Err(Error::invalid(
                "folds",
                self.folds,
                "needs at least 2 folds",
            ));
        }
        if n < self.folds {
            return Err(Error::invalid(
                "folds",
                self.folds,
                format!("more folds than training points ({n})"),
            ));
        }
        Ok(())
    }

    fn kernel(&self, l: f64) -> Result<Kernel> {
        Kernel::new(l, self.signal_var, self.noise_var)
    }
}

/// Public, data-independent facts about one candidate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CandidateInfo {
    /// ℓ.
    pub lengthscale: f64,
    /// Δu(ℓ), the sensitivity of the score *as computed in floating point*: the exact-arithmetic
    /// bound for the public matrices actually used plus `float_slack`.
    pub sensitivity: f64,
    /// 2E(ℓ): twice a data-independent bound E(ℓ) on the floating-point error of the computed
    /// score (|computed − exact| ≤ E on every dataset, so neighbouring computed scores differ by
    /// at most the exact sensitivity plus 2E). Included in `sensitivity`.
    pub float_slack: f64,
    /// Expected squared norm of the cloaking noise the score accounts for (Σ_k t_k for CV,
    /// tr Σ_z for the likelihood).
    pub noise_trace: f64,
}

impl CandidateInfo {
    /// The facts of a candidate whose score has exact-arithmetic sensitivity `exact` and a
    /// floating-point error of at most `error` (E) on every dataset: 2E is charged on top.
    fn charged(kernel: Kernel, exact: f64, error: f64, noise_trace: f64) -> Self {
        let float_slack = 2.0 * error;
        Self {
            lengthscale: kernel.lengthscale(),
            sensitivity: add_up(exact, float_slack),
            float_slack,
            noise_trace,
        }
    }
}

/// What every candidate's score reads: the squared distances between the inputs, the clipped,
/// centred outputs ỹ, the width d of their range (|ỹ_j| ≤ d/2), the cloaking noise variance s²
/// and the MVEE settings.
#[derive(Clone, Copy)]
struct ScoreInputs<'a> {
    d2: &'a DMatrix<f64>,
    y: &'a DVector<f64>,
    d: f64,
    s2: f64,
    mvee: &'a MveeConfig,
}

/// **Non-private** scores (they read the outputs and are not covered by any guarantee): for
/// experiments, tests and the non-private baseline only.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NonPrivateScores {
    /// The score of each candidate (higher is better).
    pub scores: Vec<f64>,
    /// The public facts of each candidate.
    pub candidates: Vec<CandidateInfo>,
}

impl NonPrivateScores {
    /// max_ℓ Δu(ℓ) (floating-point slack included), what the exponential mechanism pays for.
    pub fn sensitivity(&self) -> f64 {
        self.candidates
            .iter()
            .map(|c| c.sensitivity)
            .fold(0.0, f64::max)
    }

    /// The exponential mechanism over these scores (`None` for a single candidate: there is
    /// nothing to choose). Utility = score (higher is better), per-candidate Δ = Δu, not
    /// monotone, so the range is R = 2Δu and P(ℓ) ∝ exp(ε·u(ℓ)/(2Δu)): the mechanism of
    /// McSherry & Talwar with ε charged (DPGP.md §6.4).
    fn mechanism(&self, eps_select: f64) -> Result<Option<ExponentialMechanism>> {
        if self.scores.len() == 1 {
            return Ok(None);
        }
        let sens = Sensitivity::general(self.sensitivity())?;
        let allowance = Guarantee::pure(eps_select, Neighbours::Replace)?;
        ExponentialMechanism::new(
            &Scores::new(&self.scores, Goal::Maximize, sens)?,
            &allowance,
        )
        .map(Some)
    }

    /// The exponential mechanism's selection probabilities at `eps_select`: the exact
    /// probabilities of the draw [`select_lengthscale`] makes (computing them reads the outputs,
    /// so they are not released).
    pub fn em_probabilities(&self, eps_select: f64) -> Result<Vec<f64>> {
        Ok(match self.mechanism(eps_select)? {
            Some(m) => m.probabilities(),
            None => vec![1.0],
        })
    }
}

/// Unavoidable underflow slack per square root of a sum of squares: the squares of up to 2⁷⁴
/// tiny entries may flush to zero, which moves √(Σ) by at most √(2⁷⁴·2⁻¹⁰⁷⁴) = 2⁻⁵⁰⁰.
const UNDERFLOW_SLACK: f64 = 3.054936363499605e-151; // 2^-500

/// CV score, sensitivity and noise trace for one lengthscale, via the full inverse
/// A = (K + σ_n²I)⁻¹: for a held-out block I the residual is r = R·ỹ with the public matrix
/// R = −(A_II)⁻¹A_{I,:} (block-inverse identities: in exact arithmetic its test columns are −e_i
/// and its training columns are C_I = −(A_II)⁻¹A_{I,−I}, the fold's prediction matrix).
///
/// **Sensitivity as computed.** The computed A is not exactly the inverse, so the identity above
/// only holds approximately; the bound is derived from the computed R_k themselves. Changing ỹ_i
/// by at most d moves r_k by d·(R_k)_{:,i}, and g(r) = √(‖r‖² + t) is 1-Lipschitz, so the score
/// with exact arithmetic on these matrices has sensitivity d·max_i Σ_k ‖(R_k)_{:,i}‖₂ (rounded
/// up; it equals DPGP.md's d·max_i [1 + Σ_{k≠k(i)} ‖c_i^(k)‖] when A is exact).
///
/// **Floating-point error, charged.** With h = d/2 ≥ |ỹ_j| and N points, per fold:
/// * the residual: |fl(R_k ỹ)_t − (R_k ỹ)_t| ≤ e_{k,t} = γ_N·h·Σ_j|(R_k)_{tj}| (+ underflow), so
///   ‖r̂_k − r_k‖ ≤ e_k = ‖e_{k,·}‖₂ and, g being 1-Lipschitz, g moves by at most e_k;
/// * g(r̂) itself (a sum of n_I squares, one addition, one square root) has relative error at most
///   γ_{N+3}, and g(r̂) ≤ Φ_k = h·‖(Σ_j|(R_k)_{tj}|)_t‖₂ + e_k + √t_k, a public bound;
/// * summing the K fold terms adds γ_{K−1}·Σ_k|fl(g_k)| ≤ 2γ_{K−1}·Σ_k Φ_k.
///
/// So |computed u − exact u| ≤ E = Σ_k (e_k + 2⁻⁵⁰⁰) + 3γ_{N+K+3}·Σ_k Φ_k (Higham 2002, Lemma 3.1
/// and eqs. (3.5), (4.4)), a function of public inputs only, and neighbouring computed scores
/// differ by at most the exact sensitivity plus 2E, which is what is charged. The noise traces
/// t_k depend on the inputs only and are computed identically on neighbouring datasets.
fn cv_candidate(
    inputs: &ScoreInputs,
    kernel: Kernel,
    members: &[(Vec<usize>, Vec<usize>)],
) -> Result<(f64, CandidateInfo)> {
    let ScoreInputs { d2, y, d, s2, mvee } = *inputs;
    let (n, h) = (d2.nrows(), d / 2.0);
    let a = spd_inverse(
        &kernel.noisy_gram_from_sq(d2),
        "kernel matrix K + noise_var·I",
    )?;
    let mut influence = vec![0.0; n];
    let mut score = 0.0;
    let mut trace = 0.0;
    let (mut resid_err, mut reach) = (0.0, 0.0);
    for (test, train) in members {
        let rows = a.select_rows(test);
        let a_ii = rows.select_columns(test);
        let f = chol_inv(&a_ii, "held-out block of (K + noise_var·I)⁻¹")?;
        let resid = -(f.inverse() * &rows);
        for (col, infl) in resid.column_iter().zip(influence.iter_mut()) {
            *infl = add_up(*infl, norm_up(col.iter().copied()));
        }
        let (r, e) = bounded_matvec(&resid, y, h);
        let e_k = norm_up(e);
        let reach_r = mul_up(
            h,
            norm_up(resid.row_iter().map(|row| abs_sum_up(row.iter().copied()))),
        );
        let c = resid.select_columns(train);
        let w = mvee_weights(&c, mvee)?;
        let tr: f64 = c
            .column_iter()
            .zip(&w.lambda)
            .map(|(col, l)| l * col.norm_squared())
            .sum::<f64>()
            * w.q_max.max(1.0);
        let t = s2 * tr;
        trace += t;
        score -= (r.norm_squared() + t).sqrt();
        resid_err = add_up(resid_err, add_up(e_k, UNDERFLOW_SLACK));
        reach = add_up(reach, add_up(add_up(reach_r, e_k), t.sqrt().next_up()));
    }
    let exact = mul_up(d, influence.iter().cloned().fold(0.0, f64::max));
    let rounding = mul_up(mul_up(3.0, gamma(n + members.len() + 3)), reach);
    let info = CandidateInfo::charged(kernel, exact, add_up(resid_err, rounding), trace);
    Ok((score, info))
}

/// Noise-aware log marginal likelihood and its sensitivity for one lengthscale (DPGP.md §7).
///
/// **Sensitivity as computed.** Only the data-fit term ỹᵀPỹ reads the outputs (log det and the
/// constant are computed identically on neighbouring datasets). For the computed P (symmetric
/// only up to rounding) moving ỹ_i by δ, |δ| ≤ d, with |ỹ_j| ≤ h = d/2, changes ỹᵀPỹ by
/// δ·Σ_j(P_ij + P_ji)ỹ_j + δ²P_ii, so −½ỹᵀPỹ moves by at most
/// ½[d·h·Σ_j|P_ij + P_ji| + d²|P_ii|] (= d(d/2)‖P_{i,:}‖₁ + ½d²P_ii for a symmetric P).
///
/// **Floating-point error, charged.** z = fl(Pỹ) errs by e_i ≤ γ_N·h·Σ_j|P_ij| per coordinate
/// ([`bounded_matvec`]); the dot product ỹ·z adds γ_N·Σ_i|ỹ_i||z_i|; so
/// |fl(ỹᵀPỹ) − ỹᵀPỹ| ≤ F_err = h·Σe_i·(1 + γ_N) + γ_N·h²·Σ_ij|P_ij|, and |fl(ỹᵀPỹ)| ≤
/// F = h²·Σ_ij|P_ij| + F_err. The final −½·fit (exact) and two subtractions add at most
/// 3u·(½F + ½|log det| + (N/2)log 2π) + 2⁻¹⁰⁷⁴. E is ½F_err plus that, and 2E is charged.
fn lml_candidate(inputs: &ScoreInputs, kernel: Kernel) -> Result<(f64, CandidateInfo)> {
    let ScoreInputs { d2, y, d, s2, mvee } = *inputs;
    let (n, h) = (d2.nrows(), d / 2.0);
    let ky = kernel.noisy_gram_from_sq(d2);
    // Cloaking matrix for predictions at the training inputs: C = K(K + σ²I)⁻¹ = I − σ²A.
    let a = chol_inv(&ky, "kernel matrix K + noise_var·I")?.inverse();
    let c = DMatrix::identity(n, n) - &a * kernel.noise_var();
    let w = mvee_weights(&c, mvee)?;
    let mut scaled = c.clone();
    for (j, mut col) in scaled.column_iter_mut().enumerate() {
        col.scale_mut(w.lambda[j].sqrt());
    }
    let sigma_z = (&scaled * scaled.transpose()) * (s2 * w.q_max.max(1.0));
    let total = &ky + &sigma_z;
    let f = chol_inv(&total, "K + noise_var·I + cloaking covariance")?;
    let p = f.inverse();
    let (py, e) = bounded_matvec(&p, y, h);
    let fit = y.dot(&py);
    let log_det = f.log_det();
    let constant = 0.5 * n as f64 * (2.0 * std::f64::consts::PI).ln();
    let score = -0.5 * fit - 0.5 * log_det - constant;
    // Exact-arithmetic sensitivity for the computed P.
    let sym = &p + p.transpose();
    let worst = (0..n)
        .map(|i| {
            // fl(P_ij + P_ji) may be below the exact sum by a factor (1 − u).
            let row = inflate(abs_sum_up(sym.row(i).iter().copied()), 2.0 * UNIT_ROUNDOFF);
            add_up(
                mul_up(mul_up(d, h), row),
                mul_up(mul_up(d, d), p[(i, i)].abs()),
            )
        })
        .fold(0.0, f64::max);
    let exact = worst / 2.0;
    // Floating-point error bound E.
    let g = gamma(n);
    let abs_p = abs_sum_up(p.iter().copied());
    let fit_err = add_up(
        mul_up(mul_up(h, abs_sum_up(e.iter().copied())), 1.0 + 2.0 * g),
        mul_up(g, mul_up(mul_up(h, h), abs_p)),
    );
    let fit_bound = add_up(mul_up(mul_up(h, h), abs_p), fit_err);
    let magnitude = add_up(
        add_up(fit_bound / 2.0, log_det.abs() / 2.0),
        constant.abs().next_up(),
    );
    let err = add_up(
        add_up(fit_err / 2.0, mul_up(4.0 * UNIT_ROUNDOFF, magnitude)),
        MIN_SUBNORMAL,
    );
    let info = CandidateInfo::charged(kernel, exact, err, sigma_z.trace());
    Ok((score, info))
}

/// Scores every grid lengthscale on the clipped, centred outputs. **Not private**: see
/// [`NonPrivateScores`]. `y_centred` must already lie in [−d/2, d/2] (use [`OutputRange::clip`]).
pub fn nonprivate_scores(
    x: &DMatrix<f64>,
    y_centred: &[f64],
    range: OutputRange,
    cfg: &SelectionConfig,
    folds: &Folds,
) -> Result<NonPrivateScores> {
    check_inputs("x", x, None)?;
    cfg.check(x.nrows())?;
    let d = range.width();
    if y_centred.len() != x.nrows() || folds.assignment().len() != x.nrows() {
        return Err(Error::invalid(
            "y",
            y_centred.len(),
            format!(
                "needs one output and one fold per input row ({})",
                x.nrows()
            ),
        ));
    }
    if y_centred.iter().any(|v| v.is_nan() || v.abs() > d / 2.0) {
        return Err(Error::invalid(
            "y",
            "outside [-d/2, d/2]",
            "clip and centre the outputs with OutputRange::clip first",
        ));
    }
    let s = gaussian_sigma(cfg.eps_predict, cfg.delta, d)?;
    let y = DVector::from_column_slice(y_centred);
    let members = folds.members();
    let cv_mvee = MveeConfig {
        tol: cfg.mvee.tol.max(CV_MVEE_TOL),
        ..cfg.mvee
    };
    // The squared distances are the same for every lengthscale: computed once.
    let d2 = try_sq_dists(x, x)?;
    let inputs = ScoreInputs {
        d2: &d2,
        y: &y,
        d,
        s2: s * s,
        mvee: &cv_mvee,
    };
    let results: Vec<Result<(f64, CandidateInfo)>> = cfg
        .grid
        .par_iter()
        .map(|&l| {
            let k = cfg.kernel(l)?;
            match cfg.utility {
                Utility::CrossValidation => cv_candidate(&inputs, k, &members),
                Utility::LogMarginalLikelihood => lml_candidate(&inputs, k),
            }
        })
        .collect();
    let mut scores = Vec::with_capacity(results.len());
    let mut candidates = Vec::with_capacity(results.len());
    for r in results {
        let (u, info) = r?;
        if !u.is_finite() {
            return Err(Error::Numerical {
                what: "selection score",
                reason: format!("non-finite score at lengthscale {}", info.lengthscale),
            });
        }
        scores.push(u);
        candidates.push(info);
    }
    Ok(NonPrivateScores { scores, candidates })
}

/// The released outcome of private selection: the chosen lengthscale and public facts only (no
/// scores).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Selection {
    /// Index into the grid.
    pub index: usize,
    /// The chosen ℓ.
    pub lengthscale: f64,
    /// Δu = max_ℓ Δu(ℓ) used by the exponential mechanism.
    pub sensitivity: f64,
    /// The score used.
    pub utility: Utility,
    /// Public facts per candidate.
    pub candidates: Vec<CandidateInfo>,
}

/// Selects a lengthscale with the exponential mechanism over the CV (or likelihood) scores:
/// ε_select-DP for replace-one neighbours (one output changed within the range).
///
/// McSherry & Talwar 2007 (THEORY.md §1.1) with P(ℓ) ∝ exp(ε·u(ℓ)/(2Δu)), Δu = max over the grid
/// of the data-independent Δu(ℓ) (DPGP.md §6.2–6.4; the score is not monotone, so the range is
/// 2Δu). Δu includes twice a proven, data-independent bound on the floating-point error of each
/// score ([`CandidateInfo::float_slack`]). The draw is the shared [`ExponentialMechanism`] (`Sensitivity::general(Δu)`, so R = 2Δu; exact
/// rejection sampling, scores snapped with the rounding charged); it spends ε_select pure and
/// ε²/8-zCDP (bounded range, THEORY.md §1.2). The fold assignment is drawn from `rng`
/// independently of the outputs.
pub fn select_lengthscale(
    x: &DMatrix<f64>,
    y: &[f64],
    range: OutputRange,
    cfg: &SelectionConfig,
    rng: &mut SecureRng,
) -> Result<Release<Selection>> {
    check_inputs("x", x, None)?;
    cfg.check(x.nrows())?;
    if y.len() != x.nrows() {
        return Err(Error::invalid(
            "y",
            y.len(),
            format!("needs one output per input row ({})", x.nrows()),
        ));
    }
    let clipped = range.clip(y)?;
    let folds = Folds::random(x.nrows(), cfg.folds, rng)?;
    let scored = nonprivate_scores(x, &clipped.centred, range, cfg, &folds)?;
    let sensitivity = scored.sensitivity();
    // A one-point grid needs no mechanism; ε_select is still charged (a conservative statement
    // that keeps the reported total independent of the grid size).
    let (index, spent) = match scored.mechanism(cfg.eps_select)? {
        Some(m) => {
            let r = m.select(rng);
            (r.value, r.spent)
        }
        None => (0, em_guarantee(cfg.eps_select, Neighbours::Replace)?),
    };
    Ok(Release {
        value: Selection {
            index,
            lengthscale: cfg.grid[index],
            sensitivity,
            utility: cfg.utility,
            candidates: scored.candidates,
        },
        spent,
    })
}

/// Selection followed by cloaked predictions at the selected lengthscale.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PrivateGp {
    /// The private selection.
    pub selection: Selection,
    /// The private predictions at the test inputs.
    pub predictions: DpPredictions,
}

/// Private lengthscale selection and then cloaked predictions at `x_star`, on the same data:
/// (ε_select + ε_predict, δ)-DP by sequential composition (THEORY.md §9; DPGP.md §6.4).
pub fn private_gp(
    x: &DMatrix<f64>,
    y: &[f64],
    range: OutputRange,
    x_star: &DMatrix<f64>,
    cfg: &SelectionConfig,
    rng: &mut SecureRng,
) -> Result<Release<PrivateGp>> {
    check_inputs("x_star", x_star, Some(x.ncols()))?;
    let sel = select_lengthscale(x, y, range, cfg, rng)?;
    let kernel = cfg.kernel(sel.value.lengthscale)?;
    let inputs = PredictionInputs {
        x,
        y,
        range,
        kernel,
        x_star,
    };
    let pred = cloaked_predictions(
        &inputs,
        &Guarantee::approx(cfg.eps_predict, cfg.delta, Neighbours::Replace)?,
        &cfg.mvee,
        rng,
    )?;
    let spent = sel.spent.compose(&pred.spent)?;
    Ok(Release {
        value: PrivateGp {
            selection: sel.value,
            predictions: pred.value,
        },
        spent,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synthetic(n: usize, seed: u64) -> (DMatrix<f64>, Vec<f64>) {
        let mut rng = SecureRng::seeded(seed);
        let x = DMatrix::from_fn(n, 1, |_, _| rng.unit_f64() * 6.0 - 3.0);
        let y = (0..n)
            .map(|i| (1.5 * x[(i, 0)]).sin() * 2.0 + (rng.unit_f64() - 0.5))
            .collect();
        (x, y)
    }

    fn config(utility: Utility) -> SelectionConfig {
        SelectionConfig {
            grid: vec![0.05, 0.2, 0.8, 3.2],
            signal_var: 2.0,
            noise_var: 0.5,
            folds: 4,
            eps_select: 1.0,
            eps_predict: 1.0,
            delta: 1e-5,
            utility,
            mvee: MveeConfig::default(),
        }
    }

    /// Acceptance: over many random neighbouring datasets (one output moved within the range),
    /// the largest observed change of the score never exceeds Δu(ℓ).
    #[test]
    fn sensitivity_bound_holds_by_brute_force() {
        let range = OutputRange::new(-4.0, 4.0).unwrap();
        for utility in [Utility::CrossValidation, Utility::LogMarginalLikelihood] {
            let cfg = config(utility);
            let mut worst: f64 = 0.0;
            for trial in 0..6u64 {
                let (x, y) = synthetic(24, 100 + trial);
                let mut rng = SecureRng::seeded(trial);
                let folds = Folds::random(24, cfg.folds, &mut rng).unwrap();
                let base = range.clip(&y).unwrap().centred;
                let s0 = nonprivate_scores(&x, &base, range, &cfg, &folds).unwrap();
                for _ in 0..8 {
                    let i = rng.below_u64(24) as usize;
                    let mut y2 = base.clone();
                    // Moves to the extremes and to random values inside the range.
                    y2[i] = match rng.below_u64(3) {
                        0 => -4.0,
                        1 => 4.0,
                        _ => rng.unit_f64() * 8.0 - 4.0,
                    };
                    let s1 = nonprivate_scores(&x, &y2, range, &cfg, &folds).unwrap();
                    for (k, c) in s0.candidates.iter().enumerate() {
                        let change = (s0.scores[k] - s1.scores[k]).abs();
                        assert!(
                            change <= c.sensitivity,
                            "{utility:?} ℓ = {}: change {change} > bound {}",
                            c.lengthscale,
                            c.sensitivity
                        );
                        worst = worst.max(change / c.sensitivity);
                    }
                }
            }
            assert!(
                worst > 0.05,
                "{utility:?}: the bound is implausibly loose ({worst})"
            );
        }
    }

    #[test]
    fn longer_lengthscales_win_when_prediction_noise_grows() {
        let (x, y) = synthetic(60, 7);
        let range = OutputRange::new(-4.0, 4.0).unwrap();
        let c = range.clip(&y).unwrap().centred;
        let mut rng = SecureRng::seeded(1);
        let folds = Folds::random(60, 5, &mut rng).unwrap();
        let mut cfg = config(Utility::CrossValidation);
        cfg.folds = 5;
        let loose = nonprivate_scores(&x, &c, range, &cfg, &folds).unwrap();
        cfg.eps_predict = 0.05;
        let tight = nonprivate_scores(&x, &c, range, &cfg, &folds).unwrap();
        let argmax = |s: &NonPrivateScores| {
            (0..s.scores.len())
                .max_by(|&a, &b| s.scores[a].total_cmp(&s.scores[b]))
                .unwrap()
        };
        assert!(argmax(&tight) >= argmax(&loose));
        assert!(tight.candidates[0].noise_trace > loose.candidates[0].noise_trace);
        let p = loose.em_probabilities(1.0).unwrap();
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn end_to_end_release_and_bad_input() {
        let (x, y) = synthetic(40, 3);
        let range = OutputRange::new(-4.0, 4.0).unwrap();
        let xs = DMatrix::from_fn(7, 1, |i, _| i as f64 - 3.0);
        let cfg = config(Utility::CrossValidation);
        let mut rng = SecureRng::seeded(9);
        let r = private_gp(&x, &y, range, &xs, &cfg, &mut rng).unwrap();
        assert_eq!(r.value.predictions.values.len(), 7);
        assert!(cfg.grid.contains(&r.value.selection.lengthscale));
        assert_eq!(r.spent.epsilon(1e-5).unwrap(), 2.0);
        assert_eq!(r.spent.neighbours(), Neighbours::Replace);
        // Bad input names the parameter.
        let mut bad = cfg.clone();
        bad.grid = vec![1.0, -1.0];
        let e = private_gp(&x, &y, range, &xs, &bad, &mut rng).unwrap_err();
        assert!(e.to_string().contains("`lengthscales`"), "{e}");
        let mut bad = cfg.clone();
        bad.folds = 50;
        let e = private_gp(&x, &y, range, &xs, &bad, &mut rng).unwrap_err();
        assert!(e.to_string().contains("`folds`"), "{e}");
        // Repeated inputs with a vanishing noise variance: a singular kernel is a clear error.
        let xd = DMatrix::from_element(10, 1, 0.5);
        let mut sing = cfg.clone();
        sing.noise_var = 1e-300;
        sing.folds = 2;
        let e = private_gp(&xd, &y[..10], range, &xs, &sing, &mut rng).unwrap_err();
        assert!(matches!(e, Error::Numerical { .. }), "{e}");
    }

    /// Worked numbers for the charged floating-point slack (24 points, 4 folds, d = 8): the
    /// slack is 2E ≈ 4.6e-12 (CV) and ≈ 7.5e-12 (LML), about 3e-13 and 4e-14 of Δu, and it
    /// grows with the conditioning of the kernel (σ_n² = 1e-9: ≈ 3.3e-3 for the LML, whose
    /// Δu ≈ 8.6e10 grows too). Never zero: it is what the exact-arithmetic bound misses.
    #[test]
    fn float_slack_worked_numbers() {
        let range = OutputRange::new(-4.0, 4.0).unwrap();
        let cases = [
            (
                Utility::CrossValidation,
                0.5,
                16.976446116,
                4.0e-12,
                5.2e-12,
            ),
            (
                Utility::LogMarginalLikelihood,
                0.5,
                182.304615187,
                6.5e-12,
                8.5e-12,
            ),
            (
                Utility::LogMarginalLikelihood,
                1e-9,
                86043729705.34,
                2.8e-3,
                3.8e-3,
            ),
        ];
        for (utility, noise_var, sens, lo, hi) in cases {
            let mut cfg = config(utility);
            cfg.grid = vec![if noise_var < 1e-3 { 3.2 } else { 0.8 }];
            cfg.noise_var = noise_var;
            let mut rng = SecureRng::seeded(3);
            let x = DMatrix::from_fn(24, 1, |_, _| rng.unit_f64() * 6.0 - 3.0);
            let y: Vec<f64> = (0..24).map(|i| (1.5 * x[(i, 0)]).sin() * 2.0).collect();
            let folds = Folds::random(24, 4, &mut rng).unwrap();
            let c = range.clip(&y).unwrap().centred;
            let s = nonprivate_scores(&x, &c, range, &cfg, &folds).unwrap();
            let info = &s.candidates[0];
            assert!(
                (info.sensitivity / sens - 1.0).abs() < 1e-9,
                "{utility:?}: {info:?}"
            );
            assert!(
                (lo..hi).contains(&info.float_slack),
                "{utility:?}: {info:?}"
            );
        }
    }
}
