//! Ridge regression by sufficient-statistics perturbation.

use nalgebra::{DMatrix, DVector};

use crate::data::Records;
use crate::data::{Dataset, Task};
use crate::error::{Error, Result};
use crate::noise::GridGaussian;
use crate::numeric::GridSum;
use crate::privacy::{Bound, Guarantee, Release};
use crate::tune::cost::fits;
use crate::tune::{Config, Learner, PrivateStep};

use super::model::Model;
use super::{regularization, rho_within};

/// Ridge regression by **sufficient-statistics perturbation** (Vu & Slavkovic 2009; Wang,
/// "Revisiting differentially private linear regression", NeurIPS 2018, arXiv 1803.02596,
/// Algorithm 2 "SSP"): release XᵀX and Xᵀy with Gaussian noise once, then solve
/// (XᵀX + noise + λI) w = Xᵀy + noise (post-processing). Gaussian mechanism: Bun & Steinke 2016
/// Prop. 1.6 (ρ = Δ²/(2σ²)), on the grid with the rounding charged ([`GridGaussian::rho`]).
///
/// Preconditions (checked): a regression label with declared bounds; add/remove or replace
/// neighbours as the allowance says (the sensitivity below bounds one record's whole
/// contribution, so it holds for add/remove; for replace-one it is doubled); any allowance a
/// zCDP ρ fits (pure allowances are refused); λ = `regularization` > 0.
///
/// Sensitivity: features are scaled by the public a = 1/√(max_norm² + 1) with a bias coordinate,
/// so ‖x‖ ≤ 1, and the label is mapped to [−1, 1] by its declared bounds. One record adds xxᵀ
/// (its upper triangle, d(d+1)/2 entries, has L2 norm ≤ ‖x‖² ≤ 1) and x·y (norm ≤ 1): the
/// released vector has L2 sensitivity √2 (add/remove).
///
/// Floating-point error: those bounds hold for exact arithmetic; the computed xᵢxⱼ and xᵢy can
/// exceed them by a few ulps, and a float sum of n terms errs by up to γ_{n−1}·Σ|terms| with n
/// the private record count. Neither is charged as slack: each record's statistics vector is
/// clipped to norm √2 on the noise grid (a no-op in exact arithmetic) and the vectors are summed
/// exactly in integers ([`GridSum`]), so the released sum has sensitivity exactly √2 (add/remove)
/// or 2√2 (replace) in any arithmetic, and the noise is added in grid units.
#[derive(Debug, Clone, Copy, Default)]
pub struct RidgeSsp;

impl Learner for RidgeSsp {
    type Data = Dataset;
    type Model = Model;

    fn fit(&self, config: &Config, step: PrivateStep<'_, Dataset>) -> Result<Release<Model>> {
        let lambda = regularization(config)?;
        let Task::Regression { low, high } = *step.data.task() else {
            return Err(Error::invalid(
                "learner",
                "ridge",
                "needs a numeric (regression) label",
            ));
        };
        if matches!(step.allowance.bounds(), [Bound::Pure { .. }]) {
            return Err(Error::invalid(
                "allowance",
                step.allowance,
                "Gaussian noise has no pure-DP guarantee",
            ));
        }
        let nb = step.allowance.neighbours();
        let sensitivity = match nb {
            crate::privacy::Neighbours::AddRemove => 2f64.sqrt().next_up(),
            crate::privacy::Neighbours::Replace => (2.0 * 2f64.sqrt()).next_up(),
        };
        let rho = rho_within(step.allowance)?.ok_or_else(|| Error::BudgetExceeded {
            allowance: step.allowance.to_string(),
            spent: "nothing".into(),
            requested: "ridge sufficient statistics".into(),
        })?;
        let dim = step.data.dim();
        let d = dim + 1;
        let m = d * (d + 1) / 2;
        let sigma = sensitivity / (2.0 * rho).sqrt() * (1.0 + 1e-6);
        let mech = GridGaussian::new(sensitivity, sigma, m + d)?;
        let spent = Guarantee::zcdp(mech.rho(), nb)?;
        if !fits(step.allowance, &spent)? {
            return Err(Error::BudgetExceeded {
                allowance: step.allowance.to_string(),
                spent: "nothing".into(),
                requested: spent.to_string(),
            });
        }
        let a = 1.0
            / (step.data.max_norm() * step.data.max_norm() + 1.0)
                .sqrt()
                .next_up();
        // One record's statistics, clipped on the noise grid to the add/remove sensitivity √2
        // and summed exactly (see the type's doc: no floating-point slack to charge).
        let mut stats = GridSum::new(mech.resolution(), 2f64.sqrt(), "sensitivity", m + d)?;
        let mut term = vec![0.0; m + d];
        let mut x = vec![0.0; d];
        for i in 0..step.data.len() {
            for (j, v) in step.data.row(i).iter().enumerate() {
                x[j] = a * v;
            }
            x[dim] = a;
            let y = 2.0 * (step.data.labels()[i] - low) / (high - low) - 1.0;
            let mut t = 0;
            for j in 0..d {
                for k in j..d {
                    term[t] = x[j] * x[k];
                    t += 1;
                }
            }
            for j in 0..d {
                term[m + j] = x[j] * y;
            }
            stats.add(&term)?;
        }
        let noisy = stats.release(|| mech.grid_noise().sample(step.rng));
        let mut xtx = DMatrix::<f64>::identity(d, d) * lambda;
        let mut t = 0;
        for j in 0..d {
            for k in j..d {
                xtx[(j, k)] += noisy[t];
                if k != j {
                    xtx[(k, j)] += noisy[t];
                }
                t += 1;
            }
        }
        let xty = DVector::from_column_slice(&noisy[m..]);
        let w = match xtx.clone().cholesky() {
            Some(c) => c.solve(&xty),
            None => xtx.lu().solve(&xty).unwrap_or_else(|| DVector::zeros(d)),
        };
        let mut model = Model::linear(dim, step.data.task(), a);
        model.params[..dim].copy_from_slice(&w.as_slice()[..dim]);
        model.params[dim] = a * w[dim];
        Ok(Release {
            value: model,
            spent,
        })
    }
}
