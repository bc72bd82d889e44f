//! Logistic regression by objective perturbation.

use nalgebra::{DMatrix, DVector};

use crate::data::Dataset;
use crate::data::Records;
use crate::error::{check_positive, Error, Result};
use crate::noise::{DiscreteGaussian, Geometric, SecureRng};
use crate::privacy::{Guarantee, Neighbours, Release};
use crate::tune::{Config, Learner};

use super::model::{sigmoid, Model};
use super::{check_keys, get_f64, largest_fitting};

/// The hyperparameter names [`ObjectivePerturbation`] reads.
pub const OBJPERT_KEYS: [&str; 1] = ["regularization"];

/// Bound on the second derivative of the logistic loss (CMS11: c = 1/4).
const C_LOGISTIC: f64 = 0.25;

/// ε spent on the approximations of the noise sampler (see [`ObjectivePerturbation`]).
pub const SAMPLER_SLACK: f64 = 1.0 / (1u64 << 20) as f64;

/// Newton's method stops when the gradient norm of the perturbed objective is below this.
pub const GRADIENT_TOLERANCE: f64 = 1e-10;

/// At most this many Newton steps.
const MAX_NEWTON_STEPS: usize = 100;

/// (ε′, Δ) of CMS11 Algorithm 2 for privacy ε, n records, regularisation Λ, loss curvature c
/// (THEORY.md §8): ε′ = ε − ln(1 + 2c/(nΛ) + c²/(n²Λ²)); if ε′ > 0 then Δ = 0, else
/// Δ = c/(n(e^{ε/4} − 1)) − Λ and ε′ = ε/2. ε′ is rounded down and Δ up (conservative).
pub fn objective_perturbation_params(eps: f64, n: usize, lambda: f64, c: f64) -> (f64, f64) {
    let nl = n as f64 * lambda;
    let eps_prime = eps - 2.0 * (c / nl).ln_1p();
    if eps_prime > 0.0 {
        ((eps_prime * (1.0 - 1e-15)).next_down(), 0.0)
    } else {
        let delta = c / (n as f64 * (eps / 4.0).exp_m1()) - lambda;
        (
            (eps / 2.0).next_down(),
            (delta * (1.0 + 1e-15)).next_up().max(0.0),
        )
    }
}

/// Binary logistic regression by **objective perturbation**: Chaudhuri, Monteleoni & Sarwate,
/// "Differentially Private Empirical Risk Minimization", JMLR 12 (2011), arXiv 0912.0071,
/// **Algorithm 2, Theorem 9** (THEORY.md §8): output
/// argmin_f (1/n)Σ ℓ(yᵢ fᵀxᵢ) + (Λ/2)‖f‖² + (1/n)bᵀf + (Δ/2)‖f‖² with b of density
/// ∝ exp(−(ε′/2)‖b‖), (ε′, Δ) from [`objective_perturbation_params`]; the output is ε-DP.
///
/// Preconditions (checked): **replace-one** neighbours (n public); a binary label; a pure ε
/// allowance or one that a pure ε fits (the largest such ε is spent); Λ = `regularization` > 0.
/// Features are scaled by the public 1/√(max_norm² + 1) with the bias coordinate appended, so
/// ‖xᵢ‖ ≤ 1; labels are mapped to ±1; the logistic loss has |ℓ′| ≤ 1 and ℓ″ ≤ c = 1/4.
///
/// **The noise and how its approximation is charged.** ‖b‖ ~ Gamma(d, 2/ε′) is drawn as a sum
/// of d exponentials, each r·(G + U): G exact geometric (P[G = g] ∝ e^{−g·x}, x = r/θ rounded
/// *down* to a multiple of 2^-62, so the scale θ = 2/ε′ only widens) on the power-of-two grid
/// r ≈ θ·2^-30, and U a 53-bit uniform offset inside the cell (within-cell density ratio at
/// most e^{x} ≤ e^{2^-29}). The direction is a vector of d exact discrete Gaussians with
/// σ = 2^30, normalised (its deviation from uniform on the sphere is a lattice effect of
/// relative size about √d/σ). These two approximations are charged by running the mechanism at
/// ε′ − 2^-20 ([`SAMPLER_SLACK`]); that this slack covers them is argued, not proved.
///
/// **The argmin.** Newton's method with backtracking on the (Λ+Δ)-strongly convex perturbed
/// objective, stopped when the gradient norm is ≤ 1e-10 ([`GRADIENT_TOLERANCE`]), when no
/// decrease of the objective is representable in floating point, or after 100 steps; the
/// released f is within ‖∇‖/(Λ+Δ) of the exact argmin. This gap is **not charged**: the
/// theorem assumes the exact minimiser (Redberg, Koskela & Wang 2023, arXiv 2401.00583,
/// analyse approximate ones). The solver never fails on a data-dependent condition (an error
/// there would itself leak), it releases its last iterate.
#[derive(Debug, Clone, Copy, Default)]
pub struct ObjectivePerturbation;

impl ObjectivePerturbation {
    /// The largest pure ε the allowance admits (replace-one neighbours).
    pub fn epsilon_within(allowance: &Guarantee) -> Result<f64> {
        if allowance.neighbours() != Neighbours::Replace {
            return Err(Error::invalid(
                "allowance",
                allowance,
                "objective perturbation is proved for replace-one neighbours (n public)",
            ));
        }
        largest_fitting(
            allowance,
            |e| Guarantee::pure(e, Neighbours::Replace),
            1e-6,
            100.0,
        )?
        .ok_or_else(|| Error::BudgetExceeded {
            allowance: allowance.to_string(),
            spent: "nothing".into(),
            requested: "objective perturbation at eps >= 1e-6".into(),
        })
    }
}

fn sample_noise(d: usize, eps_prime: f64, rng: &mut SecureRng) -> Result<Vec<f64>> {
    let theta = 2.0 / eps_prime;
    let r = 2f64.powi((theta * 2f64.powi(-30)).log2().ceil() as i32);
    let x = r / theta;
    let num = (x * 2f64.powi(62)).floor() as u64;
    let geo = Geometric::from_rate(num.max(1), 1u64 << 62)?;
    let radius: f64 = (0..d)
        .map(|_| r * (geo.sample(rng) as f64 + rng.unit_f64()))
        .sum();
    let dg = DiscreteGaussian::new(1u64 << 60, 1)?;
    loop {
        let v: Vec<f64> = (0..d).map(|_| dg.sample(rng) as f64).collect();
        let norm = v.iter().map(|a| a * a).sum::<f64>().sqrt();
        if norm > 0.0 {
            return Ok(v.into_iter().map(|a| a / norm * radius).collect());
        }
    }
}

impl Learner for ObjectivePerturbation {
    type Data = Dataset;
    type Model = Model;

    fn fit(
        &self,
        config: &Config,
        data: &Dataset,
        allowance: &Guarantee,
        rng: &mut SecureRng,
    ) -> Result<Release<Model>> {
        check_keys(config, &OBJPERT_KEYS)?;
        let lambda = check_positive("regularization", get_f64(config, "regularization")?)?;
        if data.task().classes() != 2 {
            return Err(Error::invalid(
                "learner",
                "objective perturbation",
                "needs a binary label",
            ));
        }
        let eps = Self::epsilon_within(allowance)?;
        let n = data.len();
        if n == 0 {
            return Err(Error::NoRelease {
                reason: "no training records".into(),
            });
        }
        let (eps_prime, delta) = objective_perturbation_params(eps, n, lambda, C_LOGISTIC);
        let eps_run = eps_prime - SAMPLER_SLACK;
        if eps_run <= 0.0 {
            return Err(Error::invalid(
                "epsilon",
                eps,
                "too small for the sampler slack",
            ));
        }
        let dim = data.dim();
        let d = dim + 1;
        let a = 1.0 / (data.max_norm() * data.max_norm() + 1.0).sqrt().next_up();
        let b = sample_noise(d, eps_run, rng)?;
        let reg = lambda + delta;
        let nf = n as f64;
        let xs = |i: usize, j: usize| if j < dim { a * data.row(i)[j] } else { a };
        let ys: Vec<f64> = data.labels().iter().map(|&y| 2.0 * y - 1.0).collect();
        let objective = |f: &DVector<f64>| -> f64 {
            let loss: f64 = (0..n)
                .map(|i| {
                    let m = ys[i] * (0..d).map(|j| f[j] * xs(i, j)).sum::<f64>();
                    // ln(1 + e^{-m}), stable
                    if m > 0.0 {
                        (-m).exp().ln_1p()
                    } else {
                        -m + m.exp().ln_1p()
                    }
                })
                .sum();
            loss / nf + 0.5 * reg * f.norm_squared() + f.dot(&DVector::from_column_slice(&b)) / nf
        };
        let bv = DVector::from_column_slice(&b);
        let mut f = DVector::<f64>::zeros(d);
        for _ in 0..MAX_NEWTON_STEPS {
            let mut grad = &f * reg + &bv / nf;
            let mut hess = DMatrix::<f64>::identity(d, d) * reg;
            let mut xi = vec![0.0; d];
            let mut nz: Vec<usize> = Vec::with_capacity(d);
            for (i, &y) in ys.iter().enumerate() {
                for (j, v) in xi.iter_mut().enumerate() {
                    *v = xs(i, j);
                }
                let m = y * xi.iter().zip(f.iter()).map(|(p, q)| p * q).sum::<f64>();
                let s = sigmoid(-m);
                let gcoef = -y * s / nf;
                let hcoef = s * (1.0 - s) / nf;
                // One-hot rows are sparse: accumulate over the non-zero coordinates only.
                nz.clear();
                nz.extend((0..d).filter(|&j| xi[j] != 0.0));
                for (p, &j) in nz.iter().enumerate() {
                    grad[j] += gcoef * xi[j];
                    let hj = hcoef * xi[j];
                    for &k in &nz[..=p] {
                        hess[(j, k)] += hj * xi[k];
                    }
                }
            }
            if grad.norm() <= GRADIENT_TOLERANCE {
                break;
            }
            for j in 0..d {
                for k in 0..j {
                    hess[(k, j)] = hess[(j, k)];
                }
            }
            let step = hess
                .cholesky()
                .ok_or(Error::Numerical {
                    what: "objective perturbation",
                    reason: "Hessian not positive definite".into(),
                })?
                .solve(&grad);
            let f0 = objective(&f);
            let slope = grad.dot(&step);
            let mut t = 1.0;
            let mut moved = false;
            while t >= 1e-12 {
                let cand = &f - &step * t;
                if objective(&cand) <= f0 - 1e-4 * t * slope {
                    f = cand;
                    moved = true;
                    break;
                }
                t *= 0.5;
            }
            if !moved {
                // No decrease is representable in floating point: f is the minimiser to
                // working precision.
                break;
            }
        }
        let mut model = Model::linear(dim, data.task(), a);
        model.params[..dim].copy_from_slice(&f.as_slice()[..dim]);
        model.params[dim] = a * f[dim];
        Ok(Release {
            value: model,
            spent: Guarantee::pure(eps, Neighbours::Replace)?,
        })
    }
}
