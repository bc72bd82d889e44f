//! The reports of `dptune account ...`: one serialisable type per subcommand, built by one
//! function each, which the CLI renders (text or `--json`) and Python returns as a dict.
//!
//! Accounting runs no mechanism and reads no data: every field below is either a **public
//! input** (a flag or a field of the composition file, echoed) or **public, computed** (a
//! function of public inputs only). Nothing here is a private release or a diagnostic, so no
//! field needs a charge or a NOT PRIVATE flag (DESIGN.md, `Report`).
//!
//! An ε that comes out infinite promises nothing; it is refused as an
//! [`Error::InvalidParameter`] naming the input that would fix it, never reported as `inf` or
//! a JSON `null`.

use serde::Serialize;

use crate::error::{check_positive, Error, Result};

use super::convert::{rdp_epsilon, zcdp_epsilon_at_order};
use super::dpsgd::{dpsgd_curve, dpsgd_epsilon_grid};
use super::gaussian::{classic_gaussian_sigma, gaussian_curve, gaussian_epsilon, gaussian_sigma};
use super::pld::{calibrate_dpsgd_noise, dpsgd_pld, ComposeSpec, PldConfig};
use super::{Guarantee, Neighbours, Route};

/// dptune's default PLD grid with the loss-grid width `interval` (the CLI's `--interval`).
pub fn pld_config(interval: f64) -> PldConfig {
    PldConfig {
        interval,
        ..PldConfig::default()
    }
}

/// `eps` if finite, else an invalid `name` = `value` that says which ε (`what`) is infinite.
fn finite(eps: f64, name: &'static str, value: f64, what: &str) -> Result<f64> {
    if eps.is_finite() {
        Ok(eps)
    } else {
        Err(Error::invalid(
            name,
            value,
            format!(
                "the epsilon {what} is not finite at these inputs: they give no (epsilon, delta) \
                 privacy guarantee (more noise, fewer steps or runs, or a larger delta would)"
            ),
        ))
    }
}

/// `dptune account gaussian`: ε of one Gaussian mechanism, exact (Balle–Wang 2018, arXiv
/// 1805.06530, Thm 8) and via RDP (Canonne–Kamath–Steinke 2020, arXiv 2004.00010, continuous
/// orders).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GaussianAccount {
    /// Public input: always `gaussian`.
    pub mechanism: &'static str,
    /// Public input: z = σ / Δ.
    pub noise_multiplier: f64,
    /// Public input: the L2 sensitivity Δ.
    pub sensitivity: f64,
    /// Public, computed: σ = z·Δ.
    pub sigma: f64,
    /// Public input: the target δ.
    pub delta: f64,
    /// Public, computed: the exact ε (Balle–Wang Thm 8).
    pub epsilon: f64,
    /// Public, computed: ε via RDP.
    pub epsilon_rdp: f64,
    /// Public, computed: the RDP order that gives `epsilon_rdp`.
    pub order: f64,
}

impl GaussianAccount {
    /// Accounts a Gaussian mechanism with noise multiplier `z` and sensitivity `sensitivity`.
    pub fn new(z: f64, sensitivity: f64, delta: f64) -> Result<Self> {
        // The library validates σ = z·Δ; z itself is checked under its own name.
        check_positive("noise_multiplier", z)?;
        let sigma = z * sensitivity;
        let rdp = rdp_epsilon(&gaussian_curve(sigma, sensitivity)?, delta)?;
        finite(rdp.eps, "noise_multiplier", z, "via RDP")?;
        Ok(Self {
            mechanism: "gaussian",
            noise_multiplier: z,
            sensitivity,
            sigma,
            delta,
            epsilon: gaussian_epsilon(sigma, sensitivity, delta)?,
            epsilon_rdp: rdp.eps,
            order: rdp.order,
        })
    }
}

/// `dptune account calibrate-gaussian`: the smallest σ for (ε, δ) (Balle–Wang 2018 Thm 8), with
/// the classic σ (Dwork–Roth 2014 Thm A.1) as a labelled comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GaussianCalibration {
    /// Public input: always `gaussian`.
    pub mechanism: &'static str,
    /// Public input: the target ε.
    pub epsilon: f64,
    /// Public input: the target δ.
    pub delta: f64,
    /// Public input: the L2 sensitivity Δ.
    pub sensitivity: f64,
    /// Public, computed: the analytic σ.
    pub sigma: f64,
    /// Public, computed: the classic σ, for comparison only.
    pub sigma_classic: f64,
    /// Public: why `sigma_classic` is a comparison only.
    pub sigma_classic_note: &'static str,
    /// Public, computed: whether the classic theorem applies (ε < 1).
    pub sigma_classic_valid: bool,
}

impl GaussianCalibration {
    /// Calibrates σ for (`eps`, `delta`) at sensitivity `sensitivity`.
    pub fn new(eps: f64, delta: f64, sensitivity: f64) -> Result<Self> {
        Ok(Self {
            mechanism: "gaussian",
            epsilon: eps,
            delta,
            sensitivity,
            sigma: gaussian_sigma(eps, delta, sensitivity)?,
            sigma_classic: classic_gaussian_sigma(eps, delta, sensitivity)?,
            sigma_classic_note:
                "comparison only: Dwork-Roth 2014 Thm A.1, proven only for epsilon < 1",
            sigma_classic_valid: eps < 1.0,
        })
    }
}

/// `dptune account dpsgd`: ε of Poisson-subsampled Gaussian DP-SGD (add_remove) by its
/// privacy loss distribution, with the RDP ε (Mironov–Talwar–Zhang 2019, arXiv 1908.10530;
/// continuous orders and dp_accounting's default grid) beside it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DpsgdAccount {
    /// Public input: always `dpsgd`.
    pub mechanism: &'static str,
    /// Public input: the Poisson sampling rate q.
    pub sampling_rate: f64,
    /// Public input: z = σ / clipping norm.
    pub noise_multiplier: f64,
    /// Public input: the number of steps.
    pub steps: u64,
    /// Public input: the target δ.
    pub delta: f64,
    /// Public: the relation the accounting holds for (always add_remove).
    pub neighbours: Neighbours,
    /// Public, computed: the reported ε (the PLD's).
    pub epsilon: f64,
    /// Public: the route of `epsilon` (always the PLD).
    pub route: Route,
    /// Public, computed: ε by the PLD.
    pub epsilon_pld: f64,
    /// Public input: the width of the PLD's loss grid.
    pub interval: f64,
    /// Public, computed: ε via RDP on continuous orders.
    pub epsilon_rdp: f64,
    /// Public, computed: the order of `epsilon_rdp`.
    pub order: f64,
    /// Public, computed: ε via RDP on dp_accounting's default order grid.
    pub epsilon_default_grid: f64,
    /// Public, computed: the order of `epsilon_default_grid`.
    pub order_default_grid: f64,
}

impl DpsgdAccount {
    /// Accounts `steps` DP-SGD steps at rate `q` and noise multiplier `z` on a loss grid of
    /// width `interval`. An infinite RDP ε is refused before the PLD is built.
    pub fn new(q: f64, z: f64, steps: u64, delta: f64, interval: f64) -> Result<Self> {
        let cont = rdp_epsilon(&dpsgd_curve(q, z, steps)?, delta)?;
        finite(cont.eps, "noise_multiplier", z, "via RDP")?;
        let grid = dpsgd_epsilon_grid(q, z, steps, delta)?;
        let pld = dpsgd_pld(q, z, steps, pld_config(interval))?;
        let eps_pld = finite(pld.epsilon(delta)?, "noise_multiplier", z, "by PLD")?;
        Ok(Self {
            mechanism: "dpsgd",
            sampling_rate: q,
            noise_multiplier: z,
            steps,
            delta,
            neighbours: Neighbours::AddRemove,
            epsilon: eps_pld,
            route: Route::Pld,
            epsilon_pld: eps_pld,
            interval,
            epsilon_rdp: cont.eps,
            order: cont.order,
            epsilon_default_grid: grid.eps,
            order_default_grid: grid.order,
        })
    }
}

/// `dptune account calibrate-dpsgd`: the smallest noise multiplier giving (ε, δ)-DP to DP-SGD
/// by PLD, with the ε it reaches by PLD and via RDP.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DpsgdCalibration {
    /// Public input: always `dpsgd`.
    pub mechanism: &'static str,
    /// Public input: the Poisson sampling rate q.
    pub sampling_rate: f64,
    /// Public input: the number of steps.
    pub steps: u64,
    /// Public input: the target ε.
    pub epsilon: f64,
    /// Public input: the target δ.
    pub delta: f64,
    /// Public: the relation the accounting holds for (always add_remove).
    pub neighbours: Neighbours,
    /// Public, computed: the calibrated noise multiplier.
    pub noise_multiplier: f64,
    /// Public: the route of the calibration (always the PLD).
    pub route: Route,
    /// Public, computed: ε by the PLD at `noise_multiplier` (default grid).
    pub epsilon_pld: f64,
    /// Public, computed: ε via RDP at `noise_multiplier`.
    pub epsilon_rdp: f64,
}

impl DpsgdCalibration {
    /// Calibrates the noise multiplier of `steps` DP-SGD steps at rate `q` for (`eps`, `delta`).
    pub fn new(q: f64, steps: u64, eps: f64, delta: f64) -> Result<Self> {
        // Validate q and steps under their names before the search.
        dpsgd_curve(q, 1.0, steps)?;
        let z = calibrate_dpsgd_noise(q, steps, eps, delta)?;
        Ok(Self {
            mechanism: "dpsgd",
            sampling_rate: q,
            steps,
            epsilon: eps,
            delta,
            neighbours: Neighbours::AddRemove,
            noise_multiplier: z,
            route: Route::Pld,
            epsilon_pld: dpsgd_pld(q, z, steps, PldConfig::default())?.epsilon(delta)?,
            epsilon_rdp: rdp_epsilon(&dpsgd_curve(q, z, steps)?, delta)?.eps,
        })
    }
}

/// `dptune account compose`: ε of a composition, the minimum over the valid routes (PLD, RDP,
/// zCDP, pure, approx), naming the winner.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompositionAccount {
    /// Public input: the number of parts.
    pub parts: usize,
    /// Public input: the δ at which ε is reported.
    pub delta: f64,
    /// Public input: the relation of the composition.
    pub neighbours: Neighbours,
    /// Public, computed: the smallest ε over the valid routes.
    pub epsilon: f64,
    /// Public, computed: the route that gives `epsilon`.
    pub route: Route,
    /// Public, computed: ε by the PLD alone (none if the composition has no PLD).
    pub epsilon_pld: Option<f64>,
    /// Public input: the width of the PLD's loss grid.
    pub interval: f64,
}

impl CompositionAccount {
    /// The report of `guarantee`, the composition of `spec` on a loss grid of width `interval`
    /// ([`ComposeSpec::guarantee`]), at `delta`.
    pub fn new(
        spec: &ComposeSpec,
        guarantee: &Guarantee,
        delta: f64,
        interval: f64,
    ) -> Result<Self> {
        let (epsilon, route) = guarantee.epsilon_route(delta)?;
        finite(epsilon, "delta", delta, "of the composition")?;
        Ok(Self {
            parts: spec.parts.len(),
            delta,
            neighbours: spec.neighbours()?,
            epsilon,
            route,
            epsilon_pld: guarantee.pld().map(|p| p.epsilon(delta)).transpose()?,
            interval,
        })
    }
}

/// `dptune account zcdp`: ε of a ρ-zCDP mechanism (Canonne–Kamath–Steinke 2020, optimal order).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ZcdpAccount {
    /// Public input: ρ.
    pub rho: f64,
    /// Public input: the target δ.
    pub delta: f64,
    /// Public, computed: ε.
    pub epsilon: f64,
    /// Public, computed: the optimal RDP order.
    pub order: f64,
}

impl ZcdpAccount {
    /// Accounts ρ-zCDP at `delta`.
    pub fn new(rho: f64, delta: f64) -> Result<Self> {
        let r = zcdp_epsilon_at_order(rho, delta)?;
        finite(r.eps, "rho", rho, "of this zCDP bound")?;
        Ok(Self {
            rho,
            delta,
            epsilon: r.eps,
            order: r.order,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dpsgd_report_is_the_pld_epsilon_with_rdp_beside_it() {
        // Issue 14's case (q 0.01, z 1, 1000 steps, δ 1e-5): dp_accounting's PLD gives 1.829,
        // its RDP on the default grid 2.101.
        let r = DpsgdAccount::new(0.01, 1.0, 1000, 1e-5, 1e-4).unwrap();
        assert_eq!(r.epsilon, r.epsilon_pld);
        assert!(0.9 * 1.829 < r.epsilon && r.epsilon <= 1.829 * (1.0 + 2e-3));
        assert!(r.epsilon < r.epsilon_rdp && r.epsilon_rdp <= r.epsilon_default_grid);
        assert!((r.epsilon_default_grid - 2.101).abs() < 2e-3 * 2.101);
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["neighbours"], "add_remove");
        assert_eq!(v["route"], "pld");
    }

    #[test]
    fn an_infinite_epsilon_is_refused_naming_the_input() {
        // z = 1e-200, one full-batch step: the RDP ε (≈ α/(2z²)) overflows to +∞.
        let e = DpsgdAccount::new(1.0, 1e-200, 1, 1e-5, 1e-4);
        match e {
            Err(Error::InvalidParameter { name, reason, .. }) => {
                assert_eq!(name, "noise_multiplier");
                assert!(reason.contains("not finite"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        assert!(finite(f64::INFINITY, "rho", 1.0, "x").is_err());
        assert_eq!(finite(1.5, "rho", 1.0, "x").unwrap(), 1.5);
    }

    #[test]
    fn calibration_reaches_its_target() {
        let c = DpsgdCalibration::new(0.01, 1000, 2.0, 1e-5).unwrap();
        assert!(c.epsilon_pld <= 2.0 && c.epsilon_pld > 1.9, "{c:?}");
        assert!(c.epsilon_rdp > c.epsilon_pld);
        let g = GaussianCalibration::new(0.5, 1e-5, 1.0).unwrap();
        assert!(g.sigma < g.sigma_classic && g.sigma_classic_valid);
        let a = GaussianAccount::new(g.sigma, 1.0, 1e-5).unwrap();
        assert!((a.epsilon - 0.5).abs() < 1e-6, "{a:?}");
    }
}
