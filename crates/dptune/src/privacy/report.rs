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

use crate::error::{check_non_negative, check_positive, Error, Result};

use super::convert::{rdp_epsilon, zcdp_epsilon_at_order};
use super::dpsgd::{dpsgd_curve, dpsgd_epsilon_grid};
use super::gaussian::{classic_gaussian_sigma, gaussian_curve, gaussian_epsilon, gaussian_sigma};
use super::pld::{calibrate_dpsgd_noise, dpsgd_pld, ComposeSpec, PldConfig};
use super::repeat::{repeat_guarantee, Repeats};
use super::{fmt_number, Guarantee, Neighbours, Route};

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
    /// Public, computed: ε by the PLD at `noise_multiplier`, on the grid of `interval`.
    pub epsilon_pld: f64,
    /// Public input: the width of the PLD's loss grid.
    pub interval: f64,
    /// Public, computed: whether the grid, not the target, stopped the search from below
    /// (just under `noise_multiplier` the PLD needs more grid points than are held; a coarser
    /// `interval` may certify less noise). [`calibrate_dpsgd_noise`].
    pub grid_limited: bool,
    /// Public, computed: ε via RDP at `noise_multiplier`.
    pub epsilon_rdp: f64,
}

impl DpsgdCalibration {
    /// Calibrates the noise multiplier of `steps` DP-SGD steps at rate `q` for (`eps`, `delta`)
    /// by the PLD on a loss grid of width `interval`.
    pub fn new(q: f64, steps: u64, eps: f64, delta: f64, interval: f64) -> Result<Self> {
        // Validate q, steps and the grid under their names before the search.
        dpsgd_curve(q, 1.0, steps)?;
        let c = calibrate_dpsgd_noise(q, steps, eps, delta, pld_config(interval))?;
        let z = c.noise_multiplier;
        Ok(Self {
            mechanism: "dpsgd",
            sampling_rate: q,
            steps,
            epsilon: eps,
            delta,
            neighbours: Neighbours::AddRemove,
            noise_multiplier: z,
            route: Route::Pld,
            epsilon_pld: c.epsilon,
            interval,
            grid_limited: c.grid_limited,
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

/// The ε grid of `dptune account profile`: `points` values evenly spaced from `from` to `to`,
/// checked (`from` ≥ 0, `to` finite and above it, 2 to 10,000 points) before anything is read.
pub fn profile_epsilons(from: f64, to: f64, points: usize) -> Result<Vec<f64>> {
    check_non_negative("from", from)?;
    if !(to.is_finite() && to > from) {
        return Err(Error::invalid("to", to, "must be finite and > --from"));
    }
    if !(2..=10_000).contains(&points) {
        return Err(Error::invalid("points", points, "must lie in [2, 10000]"));
    }
    Ok((0..points)
        .map(|i| from + (to - from) * i as f64 / (points - 1) as f64)
        .collect())
}

/// `dptune account profile`: δ(ε) of a composition over a grid of ε, by its privacy loss
/// distribution and by the closed-form route alone (every part's own theorem, composed without
/// the PLD), so that the two can be compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileAccount {
    /// Public input: the relation of the composition.
    pub neighbours: Neighbours,
    /// Public input: the width of the PLD's loss grid.
    pub interval: f64,
    /// Public input: the ε grid ([`profile_epsilons`]).
    pub epsilon: Vec<f64>,
    /// Public, computed: δ(ε) by the PLD, one per `epsilon`.
    pub delta_pld: Vec<f64>,
    /// Public, computed: δ(ε) by the closed-form route, one per `epsilon` (null at ε = 0, where
    /// the conversions give nothing, and when the composition has no part).
    pub delta_closed_form: Vec<Option<f64>>,
    /// Public input: the file the profile is drawn to (the CLI's `--plot`), null without one.
    pub plot: Option<String>,
}

impl ProfileAccount {
    /// The profile of the composition `spec` on a loss grid of width `interval` at the ε values
    /// `epsilon`; `plot` names where the caller draws it.
    pub fn new(
        spec: &ComposeSpec,
        epsilon: Vec<f64>,
        interval: f64,
        plot: Option<String>,
    ) -> Result<Self> {
        let g = spec.guarantee(pld_config(interval))?;
        let pld = g.pld().ok_or_else(|| Error::Conversion {
            from: "the composition".into(),
            to: "a privacy loss distribution".into(),
            reason: "the composition has no privacy loss distribution".into(),
        })?;
        let neighbours = spec.neighbours()?;
        let mut closed: Option<Guarantee> = None;
        for part in &spec.parts {
            let p = part.closed_form(neighbours)?;
            closed = Some(match closed {
                None => p,
                Some(c) => c.compose(&p)?,
            });
        }
        let delta_pld = epsilon
            .iter()
            .map(|&e| pld.delta(e))
            .collect::<Result<_>>()?;
        let delta_closed_form = epsilon
            .iter()
            .map(|&e| match (&closed, e > 0.0) {
                (Some(c), true) => c.delta(e).map(Some),
                _ => Ok(None),
            })
            .collect::<Result<_>>()?;
        Ok(Self {
            neighbours,
            interval,
            epsilon,
            delta_pld,
            delta_closed_form,
            plot,
        })
    }

    /// The profile row by row: (ε, δ by the PLD, δ by the closed-form route if any).
    pub fn rows(&self) -> Vec<(f64, f64, Option<f64>)> {
        self.epsilon
            .iter()
            .zip(&self.delta_pld)
            .zip(&self.delta_closed_form)
            .map(|((&e, &d), &c)| (e, d, c))
            .collect()
    }
}

/// The base mechanism of `dptune account repeat`, whose runs are repeated; every base is
/// stated under add_remove.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RepeatBase {
    /// One Gaussian release with noise multiplier z (sensitivity 1).
    Gaussian {
        /// z = σ / Δ.
        noise_multiplier: f64,
    },
    /// A DP-SGD run: Poisson rate q, noise multiplier z, `steps` steps.
    Dpsgd {
        /// The Poisson sampling rate q.
        sampling_rate: f64,
        /// z = σ / clipping norm.
        noise_multiplier: f64,
        /// The number of steps.
        steps: u64,
    },
    /// An ε-DP mechanism.
    Pure {
        /// Its ε.
        epsilon: f64,
    },
    /// A ρ-zCDP mechanism.
    Zcdp {
        /// Its ρ.
        rho: f64,
    },
}

impl RepeatBase {
    /// What one run spends.
    pub fn guarantee(&self) -> Result<Guarantee> {
        let n = Neighbours::AddRemove;
        match *self {
            RepeatBase::Gaussian { noise_multiplier } => {
                Ok(Guarantee::rdp(gaussian_curve(noise_multiplier, 1.0)?, n))
            }
            RepeatBase::Dpsgd {
                sampling_rate,
                noise_multiplier,
                steps,
            } => Ok(Guarantee::rdp(
                dpsgd_curve(sampling_rate, noise_multiplier, steps)?,
                n,
            )),
            RepeatBase::Pure { epsilon } => Guarantee::pure(epsilon, n),
            RepeatBase::Zcdp { rho } => Guarantee::zcdp(rho, n),
        }
    }

    /// The base for people, its numbers in the one text format ([`fmt_number`]).
    pub fn description(&self) -> String {
        match *self {
            RepeatBase::Gaussian { noise_multiplier } => {
                format!(
                    "Gaussian, noise multiplier {}",
                    fmt_number(noise_multiplier)
                )
            }
            RepeatBase::Dpsgd {
                sampling_rate,
                noise_multiplier,
                steps,
            } => format!(
                "DP-SGD, q {}, z {}, {steps} steps",
                fmt_number(sampling_rate),
                fmt_number(noise_multiplier)
            ),
            RepeatBase::Pure { epsilon } => format!("{}-DP", fmt_number(epsilon)),
            RepeatBase::Zcdp { rho } => format!("{}-zCDP", fmt_number(rho)),
        }
    }
}

/// `dptune account repeat`: ε of releasing the best of a random number of runs of a base
/// mechanism (Papernot–Steinke 2022, arXiv 2110.03620, Thm 2, Thm 6 and Cor. 3; Liu–Talwar
/// 2019, arXiv 1811.07971, for geometric repeats), [`repeat_guarantee`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RepeatAccount {
    /// Public input: the base mechanism, for people ([`RepeatBase::description`]).
    pub base: String,
    /// Public, computed: the expected number of runs E\[K\].
    pub mean_runs: f64,
    /// Public input: the shape η of truncated negative binomial repeats (null for Poisson).
    pub eta: Option<f64>,
    /// Public input: γ of truncated negative binomial repeats (null for Poisson).
    pub gamma: Option<f64>,
    /// Public input: the target δ.
    pub delta: f64,
    /// Public, computed: ε of the repeated runs at `delta`.
    pub epsilon: f64,
    /// Public, computed: the pure ε (Cor. 3), null when there is none (a base that is not
    /// pure, or Poisson repeats).
    pub epsilon_pure: Option<f64>,
    /// Public, computed: ε of one run alone at `delta`.
    pub epsilon_single_run: f64,
}

impl RepeatAccount {
    /// Accounts the best of K ~ `repeats` runs of `base` at `delta`. An infinite ε is refused
    /// naming `delta`.
    pub fn new(base: &RepeatBase, repeats: Repeats, delta: f64) -> Result<Self> {
        let per_run = base.guarantee()?;
        let single = finite(per_run.epsilon(delta)?, "delta", delta, "of one run")?;
        let total = repeat_guarantee(&per_run, &repeats)?;
        let epsilon = finite(
            total.epsilon(delta)?,
            "delta",
            delta,
            "of the repeated runs",
        )?;
        let (eta, gamma) = match repeats {
            Repeats::Poisson { .. } => (None, None),
            Repeats::TruncatedNegativeBinomial { eta, gamma } => (Some(eta), Some(gamma)),
        };
        Ok(Self {
            base: base.description(),
            mean_runs: repeats.mean(),
            eta,
            gamma,
            delta,
            epsilon,
            epsilon_pure: total.pure_eps(),
            epsilon_single_run: single,
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
        let c = DpsgdCalibration::new(0.01, 1000, 2.0, 1e-5, 1e-4).unwrap();
        assert!(c.epsilon_pld <= 2.0 && c.epsilon_pld > 1.9, "{c:?}");
        assert!(c.epsilon_rdp > c.epsilon_pld);
        let g = GaussianCalibration::new(0.5, 1e-5, 1.0).unwrap();
        assert!(g.sigma < g.sigma_classic && g.sigma_classic_valid);
        let a = GaussianAccount::new(g.sigma, 1.0, 1e-5).unwrap();
        assert!((a.epsilon - 0.5).abs() < 1e-6, "{a:?}");
    }

    #[test]
    fn repeating_a_pure_base_reports_corollary_3_and_poisson_has_no_pure_bound() {
        // Papernot–Steinke Cor. 3: a 0.1-DP base repeated D_{η=0.5,γ} times is (2 + 0.5)·0.1-DP.
        let base = RepeatBase::Pure { epsilon: 0.1 };
        let r = RepeatAccount::new(&base, Repeats::tnb(0.5, 0.1).unwrap(), 1e-5).unwrap();
        let pure = r.epsilon_pure.unwrap();
        assert!((0.25..0.25 * (1.0 + 1e-12)).contains(&pure), "{r:?}");
        assert!(r.epsilon <= pure && r.epsilon_single_run == 0.1);
        assert_eq!(
            (r.eta, r.gamma, r.base.as_str()),
            (Some(0.5), Some(0.1), "0.1-DP")
        );
        let p = RepeatAccount::new(&base, Repeats::poisson(3.0).unwrap(), 1e-5).unwrap();
        assert_eq!((p.epsilon_pure, p.eta, p.gamma), (None, None, None));
        let v = serde_json::to_value(&p).unwrap();
        assert!(v["epsilon_pure"].is_null() && v["eta"].is_null());
    }

    #[test]
    fn a_profile_has_no_closed_form_delta_at_zero_and_refuses_a_bad_grid() {
        let spec: ComposeSpec = serde_json::from_str(
            r#"{"parts": [{"mechanism": "gaussian", "sigma": 2, "times": 3}],
                "delta": 1e-6, "neighbours": "replace_one"}"#,
        )
        .unwrap();
        let eps = profile_epsilons(0.0, 2.0, 3).unwrap();
        assert_eq!(eps, vec![0.0, 1.0, 2.0]);
        let r = ProfileAccount::new(&spec, eps, 1e-4, None).unwrap();
        let rows = r.rows();
        assert_eq!(rows.len(), 3);
        assert!(rows[0].2.is_none() && rows[1].2.is_some());
        // δ(ε) falls with ε, and the PLD is at least as tight as the closed form.
        assert!(rows[1].1 > rows[2].1 && rows[2].1 <= rows[2].2.unwrap());
        assert_eq!(r.neighbours, Neighbours::Replace);
        for (from, to, points, name) in [
            (-1.0, 2.0, 3, "from"),
            (1.0, 1.0, 3, "to"),
            (0.0, 1.0, 1, "points"),
        ] {
            match profile_epsilons(from, to, points) {
                Err(Error::InvalidParameter { name: n, .. }) => assert_eq!(n, name),
                other => panic!("{other:?}"),
            }
        }
    }
}
