//! What a whole tuning spends, given what one candidate run may spend, and the calibration of
//! the per-run budget so that the whole tuning fits an outer allowance.
//!
//! The cost depends only on public inputs (the method, the distribution of the number of runs,
//! the per-run allowance), never on the runs' outcomes, so it can be computed, checked and
//! refused before anything runs (DESIGN.md rule 4).

use std::num::NonZeroUsize;

use crate::error::{Error, Result};
use crate::numeric::bisect::{
    bisect, halve_to_failure, smallest_between, within_factor, Halved, Split,
};
use crate::numeric::mul_up;
use crate::privacy::dpsgd::{dpsgd_discrete_guarantee, dpsgd_guarantee};
use crate::privacy::pld::{
    dpsgd_lattice_pld, dpsgd_pld, is_grid_refusal, PldConfig, NOISE_MULTIPLIER_RANGE,
};
use crate::privacy::repeat::{
    base_curve, liu_talwar_threshold_pure, liu_talwar_threshold_rdp, repeat_guarantee, Repeats,
};
#[cfg(doc)]
use crate::privacy::Ledger;
use crate::privacy::{default_orders, Bound, Guarantee, Neighbours};

/// The calibrations' fit test, kept under this path for their callers (it lives with the
/// [`Ledger`] so that `select` can use it too).
pub use crate::privacy::fits;

/// How candidates are chosen and what the theorem behind it charges.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Method {
    /// Run a random number K of candidates and release the best (Papernot–Steinke; with
    /// geometric K this is Liu–Talwar Algorithm 2).
    RepeatAndSelect(Repeats),
    /// Liu–Talwar Algorithm 1: release the first candidate whose private score reaches
    /// `threshold`, stopping with probability `gamma` after each run that does not.
    Threshold {
        /// The public threshold τ.
        threshold: f64,
        /// The stop probability γ ∈ (0, 1).
        gamma: f64,
    },
    /// Every one of `runs` grid points, each under its share of the allowance; the best is
    /// post-processing (THEORY.md §10).
    Exhaustive {
        /// The number of grid points.
        runs: usize,
    },
}

impl Method {
    /// Checks what the cost does not: the threshold must be a finite number (a NaN threshold is
    /// never reached and an infinite one never or always, so the run would spend its budget on
    /// a foregone ⊥ or first candidate). Called before anything runs.
    pub fn check(&self) -> Result<()> {
        match *self {
            Method::Threshold { threshold, .. } if !threshold.is_finite() => Err(Error::invalid(
                "threshold",
                threshold,
                "must be a finite number",
            )),
            _ => Ok(()),
        }
    }
}

/// The guarantee of a whole tuning whose runs each spend at most `per_run`.
pub fn tuning_cost(method: &Method, per_run: &Guarantee) -> Result<Guarantee> {
    let n = per_run.neighbours();
    match *method {
        Method::RepeatAndSelect(repeats) => repeat_guarantee(per_run, &repeats),
        Method::Threshold { gamma, .. } => {
            let rdp = Guarantee::rdp(
                liu_talwar_threshold_rdp(&base_curve(per_run)?, gamma, &default_orders())?,
                n,
            );
            match per_run.pure_eps() {
                Some(eps) => {
                    Guarantee::pure(liu_talwar_threshold_pure(eps, gamma, None)?, n)?.and(rdp)
                }
                None => Ok(rdp),
            }
        }
        Method::Exhaustive { runs } => {
            if runs == 0 {
                return Err(Error::invalid(
                    "runs",
                    0,
                    "an exhaustive search needs a grid point",
                ));
            }
            let mut total = per_run.clone();
            for _ in 1..runs {
                total = total.compose(per_run)?;
            }
            Ok(total)
        }
    }
}

/// The share of `outer` that each of `runs` exhaustive runs may spend ([`Guarantee::share`]:
/// rounded down so that `runs` shares never exceed the whole); no runs is an invalid `runs`.
pub fn exhaustive_share(outer: &Guarantee, runs: usize) -> Result<Guarantee> {
    outer.share(
        NonZeroUsize::new(runs)
            .ok_or_else(|| Error::invalid("runs", 0, "an exhaustive search needs a grid point"))?,
    )
}

/// Finds the largest per-run parameter `t` in `[low, high]` (by bisection to a relative
/// precision of 1e-9, rounded toward `low`) such that the whole tuning under the per-run
/// guarantee `family(t)` fits `outer`. `family` must spend more as `t` grows (e.g. t = ρ, or
/// t = 1/σ). Fails with [`Error::NoRelease`] before anything runs if even `family(low)` does not
/// fit: the selection overhead alone exceeds the allowance.
pub fn calibrate(
    outer: &Guarantee,
    method: &Method,
    family: impl Fn(f64) -> Result<Guarantee>,
    low: f64,
    high: f64,
) -> Result<(f64, Guarantee)> {
    if !(low > 0.0 && low < high && high.is_finite()) {
        return Err(Error::invalid(
            "range",
            format!("[{low}, {high}]"),
            "need 0 < low < high",
        ));
    }
    let cost_at = |t: f64| -> Result<bool> { fits(outer, &tuning_cost(method, &family(t)?)?) };
    let Some(t) = largest_fitting(low, high, 1e-9, cost_at)? else {
        return Err(Error::NoRelease {
            reason: format!(
                "the selection overhead alone exceeds the allowance {outer}: even the smallest \
                 per-run budget does not fit"
            ),
        });
    };
    Ok((t, family(t)?))
}

/// The largest `t` in `[low, high]` with `fits_at(t)` (geometric bisection to a relative
/// `precision`, rounded toward `low`), or `None` when not even `low` fits. `fits_at` must be
/// monotone: true up to some point, false beyond it.
pub(crate) fn largest_fitting(
    low: f64,
    high: f64,
    precision: f64,
    fits_at: impl Fn(f64) -> Result<bool>,
) -> Result<Option<f64>> {
    if !fits_at(low)? {
        return Ok(None);
    }
    if fits_at(high)? {
        return Ok(Some(high));
    }
    let done = within_factor(1.0 + precision);
    let (lo, _) = bisect(low, high, Split::Geometric, done, |t| Ok(!fits_at(t)?))?;
    Ok(Some(lo))
}

/// The smallest `z` in `[low, high]` with `fits_at(z)` = `Some(_)` (geometric bisection until
/// the bracket is within the factor `ratio`, rounded up: the value returned is for a `z` that
/// fits), or `None` when not even `high` fits. `fits_at` must be monotone: `None` below some
/// point, `Some` beyond it. Used for noise multipliers, where more noise always fits better.
pub fn smallest_fitting<T>(
    low: f64,
    high: f64,
    ratio: f64,
    fits_at: impl Fn(f64) -> Result<Option<T>>,
) -> Result<Option<T>> {
    let Some(best) = fits_at(high)? else {
        return Ok(None);
    };
    if let Some(b) = fits_at(low)? {
        return Ok(Some(b));
    }
    smallest_between(low, high, best, ratio, fits_at).map(Some)
}

/// The noise multipliers a DP-SGD calibration searches ([`NOISE_MULTIPLIER_RANGE`], shared with
/// `dptune account calibrate-dpsgd`), and the factor it stops at.
pub const NOISE_MULTIPLIERS: (f64, f64, f64) =
    (NOISE_MULTIPLIER_RANGE.0, NOISE_MULTIPLIER_RANGE.1, 1.001);

/// The noise DP-SGD adds: continuous Gaussian (training loops dptune does not run, such as
/// Opacus's) or dptune's lattice Gaussian.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DpSgdNoise {
    /// Continuous Gaussian noise: Mironov, Talwar & Zhang 2019, arXiv 1908.10530, Thm 11 (RDP);
    /// [`crate::privacy::pld::dpsgd_pld`] (PLD).
    Continuous,
    /// Discrete Gaussian noise on a grid: the lattice proof in [`crate::privacy::subsampled`]
    /// (RDP) and in [`crate::privacy::pld::dpsgd_lattice_pld`] (PLD), which needs the number of
    /// coordinates per step and the grid variance.
    Lattice {
        /// Coordinates released per step (the model's parameters).
        dim: usize,
        /// The discrete Gaussian's variance in grid units² ([`crate::noise::GridGaussian`]).
        grid_variance: u64,
    },
}

/// The accounting routes a DP-SGD spend states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DpSgdRoutes {
    /// The closed-form currency of the allowance only (RDP curve, or ρ for zCDP): cheap.
    ClosedForm,
    /// Also the privacy loss distribution when the allowance is (ε, δ) ([`dpsgd_spend`]).
    Tightest,
}

/// What T steps of DP-SGD (Poisson rate `q`, noise multiplier `z`) spend under add/remove-one
/// neighbours, in the currency of `allowance`: for a zCDP allowance the unsampled bound
/// T/(2z²) (Bun & Steinke 2016, arXiv 1605.02065, Prop. 1.6 and Lemma 2.3; subsampling has no
/// zCDP amplification); for an RDP allowance the subsampled-Gaussian RDP curve of `noise` (both
/// add/remove directions); for an (ε, δ) allowance that curve **and** the privacy loss
/// distribution of `noise` (continuous: [`dpsgd_pld`]; lattice: [`dpsgd_lattice_pld`]), two
/// simultaneous bounds of which the [`Ledger`] uses the tighter (the PLD is left out only when
/// its loss grid would be larger than a PLD may hold, i.e. with very little noise, where the
/// RDP curve still applies). An RDP allowance keeps the curve alone: the repeat theorems that
/// set per-run allowances (Papernot–Steinke, Liu–Talwar) are stated in RDP.
pub fn dpsgd_spend(
    q: f64,
    z: f64,
    steps: u64,
    allowance: &Guarantee,
    noise: DpSgdNoise,
) -> Result<Guarantee> {
    dpsgd_spend_by(q, z, steps, allowance, noise, DpSgdRoutes::Tightest)
}

/// [`dpsgd_spend`] with the routes to state: [`DpSgdRoutes::ClosedForm`] leaves out the PLD
/// (a weaker but valid statement, for the first phase of [`smallest_dpsgd_noise`]).
pub fn dpsgd_spend_by(
    q: f64,
    z: f64,
    steps: u64,
    allowance: &Guarantee,
    noise: DpSgdNoise,
    routes: DpSgdRoutes,
) -> Result<Guarantee> {
    if matches!(allowance.bounds(), [Bound::Zcdp { .. }]) {
        let rho = mul_up(steps as f64, (1.0 / (2.0 * z * z)).next_up());
        return Guarantee::zcdp(rho, Neighbours::AddRemove);
    }
    let rdp = match noise {
        DpSgdNoise::Continuous => dpsgd_guarantee(q, z, steps)?,
        DpSgdNoise::Lattice { .. } => dpsgd_discrete_guarantee(q, z, steps)?,
    };
    if routes == DpSgdRoutes::ClosedForm || !matches!(allowance.bounds(), [Bound::Approx { .. }]) {
        return Ok(rdp);
    }
    let config = PldConfig::default();
    let pld = match noise {
        DpSgdNoise::Continuous => dpsgd_pld(q, z, steps, config),
        DpSgdNoise::Lattice { dim, grid_variance } => {
            dpsgd_lattice_pld(q, z, steps, dim, grid_variance, config)
        }
    };
    match pld {
        Ok(p) => rdp.with_pld(p),
        Err(e) if is_grid_refusal(&e) => Ok(rdp),
        Err(e) => Err(e),
    }
}

/// The smallest noise multiplier z in [`NOISE_MULTIPLIERS`] for which `fits_at(z, routes)` is
/// `Some`, where `fits_at` states the spend at z by `routes` ([`dpsgd_spend_by`]) and checks it
/// against `allowance`. Two phases, because a PLD costs milliseconds and the RDP curve
/// microseconds: first the closed-form route alone ([`smallest_fitting`], to the factor 1.001),
/// giving z_rdp; then, only for an (ε, δ) `allowance`, every route (RDP and PLD) below z_rdp:
/// halving until a z does not fit (or the range ends), then geometric bisection to the same
/// factor. Every value returned comes from a call of `fits_at` that said `Some` at its z, so it
/// is valid even where the PLD's computed ε is not exactly monotone in z (then the search may
/// stop above the smallest z that fits, never below a z that does not).
pub fn smallest_dpsgd_noise<T>(
    allowance: &Guarantee,
    fits_at: impl Fn(f64, DpSgdRoutes) -> Result<Option<T>>,
) -> Result<Option<T>> {
    let (low, high, ratio) = NOISE_MULTIPLIERS;
    let cheap = |z: f64| Ok(fits_at(z, DpSgdRoutes::ClosedForm)?.map(|_| z));
    let Some(z_rdp) = smallest_fitting(low, high, ratio, cheap)? else {
        return Ok(None);
    };
    if !matches!(allowance.bounds(), [Bound::Approx { .. }]) {
        return fits_at(z_rdp, DpSgdRoutes::ClosedForm);
    }
    let tight = |z: f64| fits_at(z, DpSgdRoutes::Tightest);
    // Every route includes the closed form, which fits at z_rdp; checked all the same.
    let Some(best) = tight(z_rdp)? else {
        return fits_at(z_rdp, DpSgdRoutes::ClosedForm);
    };
    match halve_to_failure(low, z_rdp, best, tight)? {
        Halved::Floor(best) => Ok(Some(best)),
        Halved::Bracket { lo, hi, best } => smallest_between(lo, hi, best, ratio, tight).map(Some),
    }
}

/// The smallest noise multiplier (to a factor 1.001, rounded up) for which `steps` steps of
/// DP-SGD with continuous Gaussian noise at Poisson rate `q` ([`dpsgd_spend`]) fit
/// `allowance` as the [`Ledger`] checks it: for an (ε, δ) allowance by the tighter of the RDP
/// curve and the PLD ([`smallest_dpsgd_noise`]), else in the allowance's own currency. For training loops dptune does not run (Opacus):
/// the caller must use exactly this q (a public rate, never one derived from the private record
/// count) and at most `steps` steps. Refused: a pure-DP allowance (Gaussian noise has none),
/// replace-one allowances (the curve is for add/remove-one), and allowances that no multiplier
/// up to 10⁴ fits.
pub fn dpsgd_noise_multiplier(allowance: &Guarantee, q: f64, steps: u64) -> Result<f64> {
    if !(q > 0.0 && q <= 1.0) {
        return Err(Error::invalid("sampling_rate", q, "must be in (0, 1]"));
    }
    if steps == 0 {
        return Err(Error::invalid("steps", steps, "must be at least 1"));
    }
    if allowance.pure_eps().is_some() {
        return Err(Error::invalid(
            "allowance",
            allowance,
            "Gaussian noise has no pure-DP guarantee",
        ));
    }
    if allowance.neighbours() != Neighbours::AddRemove {
        return Err(Error::invalid(
            "allowance",
            allowance,
            "the DP-SGD curve is for add/remove-one neighbours",
        ));
    }
    let high = NOISE_MULTIPLIERS.1;
    let fits_at = |z: f64, routes: DpSgdRoutes| -> Result<Option<f64>> {
        let spent = dpsgd_spend_by(q, z, steps, allowance, DpSgdNoise::Continuous, routes)?;
        Ok(fits(allowance, &spent)?.then_some(z))
    };
    smallest_dpsgd_noise(allowance, fits_at)?.ok_or_else(|| {
        Error::invalid(
            "allowance",
            allowance,
            format!("no noise multiplier up to {high} fits {steps} steps at rate {q}"),
        )
    })
}

/// The largest ε (to a relative 1e-9, rounded down) such that an ε-DP release fits
/// `allowance` as the [`Ledger`] checks it: what a private score may spend when it runs in
/// parallel with training on a disjoint part of the data.
pub fn largest_pure_within(allowance: &Guarantee) -> Result<f64> {
    let n = allowance.neighbours();
    let fits_at = |eps: f64| fits(allowance, &Guarantee::pure(eps, n)?);
    largest_fitting(1e-9, 1e3, 1e-9, fits_at)?.ok_or_else(|| {
        Error::invalid(
            "allowance",
            allowance,
            "no pure-DP release of at least 1e-9 fits",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::privacy::Neighbours::AddRemove;

    #[test]
    fn pure_base_costs_follow_corollary_three_and_liu_talwar() {
        let run = Guarantee::pure(0.5, AddRemove).unwrap();
        let geo = Method::RepeatAndSelect(Repeats::geometric(0.1).unwrap());
        assert_eq!(tuning_cost(&geo, &run).unwrap().pure_eps(), Some(1.5));
        let thr = Method::Threshold {
            threshold: 0.0,
            gamma: 0.1,
        };
        assert_eq!(tuning_cost(&thr, &run).unwrap().pure_eps(), Some(1.0));
        let ex = Method::Exhaustive { runs: 10 };
        assert_eq!(tuning_cost(&ex, &run).unwrap().pure_eps(), Some(5.0));
        let pois = Method::RepeatAndSelect(Repeats::poisson(10.0).unwrap());
        assert_eq!(tuning_cost(&pois, &run).unwrap().pure_eps(), None);
        let approx = Guarantee::approx(1.0, 1e-6, AddRemove).unwrap();
        assert!(matches!(
            tuning_cost(&geo, &approx),
            Err(Error::Conversion { .. })
        ));
    }

    #[test]
    fn calibration_fits_the_allowance_tightly() {
        let outer = Guarantee::approx(4.0, 1e-5, AddRemove).unwrap();
        let m = Method::RepeatAndSelect(Repeats::tnb_with_mean(0.0, 10.0).unwrap());
        let (rho, per_run) =
            calibrate(&outer, &m, |r| Guarantee::zcdp(r, AddRemove), 1e-9, 100.0).unwrap();
        let spent = tuning_cost(&m, &per_run).unwrap().epsilon(1e-5).unwrap();
        assert!(spent <= 4.0 && spent > 3.99, "spent {spent} at rho {rho}");
        // A tiny allowance is refused before anything runs: overhead ln(E[K]) dominates.
        let tiny = Guarantee::approx(0.001, 1e-5, AddRemove).unwrap();
        let r = calibrate(&tiny, &m, |r| Guarantee::zcdp(r, AddRemove), 1e-12, 100.0);
        assert!(matches!(r, Err(Error::NoRelease { .. })));
        // Pure outer allowance with geometric repeats: per-run ε = total / 3.
        let (eps, _) = calibrate(
            &Guarantee::pure(1.5, AddRemove).unwrap(),
            &Method::RepeatAndSelect(Repeats::geometric(0.05).unwrap()),
            |e| Guarantee::pure(e, AddRemove),
            1e-9,
            10.0,
        )
        .unwrap();
        assert!((eps - 0.5).abs() < 1e-8, "{eps}");
    }

    #[test]
    fn exhaustive_shares_never_exceed_the_whole() {
        let outer = Guarantee::approx(1.0, 1e-5, AddRemove).unwrap();
        let share = exhaustive_share(&outer, 3).unwrap();
        let total = tuning_cost(&Method::Exhaustive { runs: 3 }, &share).unwrap();
        assert!(fits(&outer, &total).unwrap());
        let z = exhaustive_share(&Guarantee::zcdp(0.3, AddRemove).unwrap(), 7).unwrap();
        assert!(z.zcdp_rho().unwrap() * 7.0 <= 0.3);
        assert!(exhaustive_share(&outer, 0).is_err());
    }

    #[test]
    fn dpsgd_noise_multiplier_worked_numbers() {
        // zCDP: T/(2z²) <= 0.5 with T = 100 needs z >= 10.
        let z =
            dpsgd_noise_multiplier(&Guarantee::zcdp(0.5, AddRemove).unwrap(), 0.01, 100).unwrap();
        assert!((10.0..=10.0 * 1.001).contains(&z), "{z}");
        // An allowance that is itself a DP-SGD curve (q = 0.01, z = 1, 1000 steps) gives z = 1
        // back, rounded up; 1 % less noise does not fit (the search has teeth).
        let curve = dpsgd_guarantee(0.01, 1.0, 1000).unwrap();
        let z = dpsgd_noise_multiplier(&curve, 0.01, 1000).unwrap();
        assert!((1.0..=1.001).contains(&z), "{z}");
        let less = dpsgd_spend(0.01, 0.99, 1000, &curve, DpSgdNoise::Continuous).unwrap();
        assert!(!fits(&curve, &less).unwrap());
        // Fewer steps fit with less noise (0.991: the check is pointwise at every order, and
        // the large orders, where subsampling helps least, decide it).
        let half = dpsgd_noise_multiplier(&curve, 0.01, 500).unwrap();
        assert!(half < 1.0, "{half}");
        for bad in [
            dpsgd_noise_multiplier(&Guarantee::pure(1.0, AddRemove).unwrap(), 0.01, 10),
            dpsgd_noise_multiplier(&curve, 0.0, 10),
            dpsgd_noise_multiplier(&curve, 0.01, 0),
            dpsgd_noise_multiplier(&Guarantee::zcdp(1e-12, AddRemove).unwrap(), 0.5, 10_000),
        ] {
            assert!(
                matches!(bad, Err(Error::InvalidParameter { .. })),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn an_eps_delta_allowance_is_calibrated_by_the_tightest_route() {
        // The first case: q = 0.01, 1000 steps, z = 1 costs ε = 2.101 by RDP and 1.829
        // by PLD (dp_accounting) at δ = 1e-5. With (ε, δ) = (2.11, 1e-5) the RDP route alone
        // needs z ≈ 1; every route together needs less, and that z fits by the PLD only.
        let a = Guarantee::approx(2.11, 1e-5, AddRemove).unwrap();
        let (q, steps) = (0.01, 1000);
        let z = dpsgd_noise_multiplier(&a, q, steps).unwrap();
        let (low, high, ratio) = NOISE_MULTIPLIERS;
        let rdp_fits = |z: f64| -> Result<Option<f64>> {
            let g = dpsgd_spend_by(
                q,
                z,
                steps,
                &a,
                DpSgdNoise::Continuous,
                DpSgdRoutes::ClosedForm,
            )?;
            Ok(fits(&a, &g)?.then_some(z))
        };
        let z_rdp = smallest_fitting(low, high, ratio, rdp_fits)
            .unwrap()
            .unwrap();
        assert!((0.99..1.01).contains(&z_rdp), "{z_rdp}");
        assert!(z < 0.95 * z_rdp, "{z} vs {z_rdp}");
        let spent = dpsgd_spend(q, z, steps, &a, DpSgdNoise::Continuous).unwrap();
        let (eps, route) = spent.epsilon_route(1e-5).unwrap();
        assert!(
            eps <= 2.11 && route == crate::privacy::Route::Pld,
            "{eps} {route}"
        );
        assert!(rdp_fits(z).unwrap().is_none());
        // The search has teeth: just below the bracket nothing fits.
        let below = dpsgd_spend(q, z / 1.0011, steps, &a, DpSgdNoise::Continuous).unwrap();
        assert!(!fits(&a, &below).unwrap());
        // Neither an RDP nor a zCDP allowance gets a PLD.
        let curve = dpsgd_guarantee(q, 1.0, steps).unwrap();
        assert!(dpsgd_spend(q, 1.0, steps, &curve, DpSgdNoise::Continuous)
            .unwrap()
            .pld()
            .is_none());
    }

    #[test]
    fn largest_pure_within_worked_numbers() {
        let eps = largest_pure_within(&Guarantee::pure(0.3, AddRemove).unwrap()).unwrap();
        assert!(eps <= 0.3 && eps > 0.3 * (1.0 - 1e-8), "{eps}");
        // ε-DP is ε²/2-zCDP: ρ = 0.5 allows ε = 1.
        let eps = largest_pure_within(&Guarantee::zcdp(0.5, AddRemove).unwrap()).unwrap();
        assert!(eps <= 1.0 && eps > 1.0 - 1e-8, "{eps}");
        assert!(fits(
            &Guarantee::zcdp(0.5, AddRemove).unwrap(),
            &Guarantee::pure(eps, AddRemove).unwrap()
        )
        .unwrap());
    }
}
