//! Target-first tuning: from the whole tuning's allowance (the target) to what each run may
//! spend, by the library's calibration (`dptune::tune::calibrate` over a per-run family), and,
//! for a capped tuning, the cap and the split of the target's δ between the truncation term
//! and the rest (`dptune::tune::{capped_delta, smallest_cap}`). Nothing here computes privacy
//! itself; it chooses the public inputs of the library's functions.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use dptune::privacy::{dpsgd, Bound as Bnd, Guarantee};
use dptune::tune::{self, cost::NOISE_MULTIPLIERS, Method};

use crate::errors::{invalid, IntoPy, R};
use crate::guarantee::{g, PyGuarantee};
use crate::method::{method_over, LooseMethod, MethodArg};
use crate::space::space_from;

/// What each run of a calibrated tuning spends.
#[derive(Clone, Copy)]
pub(crate) enum PerRun {
    /// ρ-zCDP (Gaussian noise, e.g. output perturbation).
    Zcdp,
    /// Pure ε-DP.
    Pure,
    /// `steps` steps of DP-SGD at the public Poisson rate `q`: the per-run allowance is the
    /// subsampled-Gaussian RDP curve of the calibrated noise multiplier.
    DpSgd { q: f64, steps: u64 },
}

impl PerRun {
    pub(crate) fn parse(kind: &str, sampling_rate: Option<f64>, steps: Option<u64>) -> R<Self> {
        let unused = |name: &str| {
            invalid(
                name,
                "a value",
                "is for per_run=\"dpsgd\" only (the sampling rate and steps of DP-SGD)",
            )
        };
        match kind {
            "zcdp" | "pure" if sampling_rate.is_some() => Err(unused("sampling_rate")),
            "zcdp" | "pure" if steps.is_some() => Err(unused("steps")),
            "zcdp" => Ok(PerRun::Zcdp),
            "pure" => Ok(PerRun::Pure),
            "dpsgd" => Ok(PerRun::DpSgd {
                q: sampling_rate.ok_or_else(|| {
                    invalid(
                        "sampling_rate",
                        "None",
                        "DP-SGD needs its Poisson sampling rate",
                    )
                })?,
                steps: steps
                    .ok_or_else(|| invalid("steps", "None", "DP-SGD needs its number of steps"))?,
            }),
            _ => Err(invalid(
                "per_run",
                kind,
                "expected \"zcdp\", \"pure\" or \"dpsgd\"",
            )),
        }
    }
}

/// The largest per-run allowance of kind `kind` whose whole tuning fits `outer`, with the
/// noise multiplier for DP-SGD: the library's `calibrate` (bisection to a relative 1e-9,
/// rounded toward less spending; for DP-SGD over t = 1/z, so z is rounded up).
pub(crate) fn calibrate_per_run(
    outer: &Guarantee,
    method: &Method,
    kind: PerRun,
) -> R<(Guarantee, Option<f64>)> {
    let nb = outer.neighbours();
    Ok(match kind {
        PerRun::Zcdp => {
            let f = |r| Guarantee::zcdp(r, nb);
            (tune::calibrate(outer, method, f, 1e-12, 1e3).py()?.1, None)
        }
        PerRun::Pure => {
            let f = |e| Guarantee::pure(e, nb);
            (tune::calibrate(outer, method, f, 1e-12, 1e3).py()?.1, None)
        }
        PerRun::DpSgd { q, steps } => {
            // Check the DP-SGD inputs first, so that a bad rate is named as such and not
            // reported as an allowance that nothing fits.
            dpsgd::dpsgd_guarantee(q, 1.0, steps).py()?;
            let (z_low, z_high, _) = NOISE_MULTIPLIERS;
            let f = |t: f64| dpsgd::dpsgd_guarantee(q, 1.0 / t, steps);
            let (t, run) = tune::calibrate(outer, method, f, 1.0 / z_high, 1.0 / z_low).py()?;
            (run, Some(1.0 / t))
        }
    })
}

/// The (ε, δ) of a target that a capped tuning can be held to.
fn approx_target(target: &Guarantee) -> R<(f64, f64)> {
    match target.bounds() {
        [Bnd::Approx { eps, delta }] if target.pld().is_none() => Ok((*eps, *delta)),
        _ => Err(invalid(
            "cap",
            "a cap",
            &format!(
                "a capped tuning is charged in (eps, delta), so the target must be one (it is \
                 {target}): give target=Guarantee.approx(eps, delta), or no cap"
            ),
        )),
    }
}

/// How to choose a cap, for the messages that refuse or warn about one.
pub(crate) fn cap_advice(method: &Method, eps: f64, delta: f64) -> String {
    match tune::smallest_cap(method, eps, delta) {
        Ok(Some(t)) => format!(
            "the smallest cap whose truncation term (1 + e^eps)·P[K > cap] is at most {delta:e} \
             is {t}; pass cap={t} or larger, or cap=\"auto\" with target= to choose it"
        ),
        _ => format!(
            "no cap up to {} keeps the truncation term (1 + e^eps)·P[K > cap] below {delta:e}; \
             use fewer expected runs (repeats) or no cap",
            tune::MAX_CAP
        ),
    }
}

/// The calibrated inputs of a target-first tuning: (per-run allowance, cap, cap_delta,
/// DP-SGD noise multiplier). See `dptune.tune` for the rules; the plan checks the final cost
/// against the target again before anything runs.
#[pyfunction]
#[pyo3(signature = (space, target, *, method=None, per_run="zcdp", sampling_rate=None,
    steps=None, cap=None, cap_auto=false, cap_share=0.5, **loose))]
#[allow(clippy::too_many_arguments)]
fn _calibrate_tuning(
    space: &Bound<'_, PyAny>,
    target: &PyGuarantee,
    method: Option<MethodArg<'_>>,
    per_run: &str,
    sampling_rate: Option<f64>,
    steps: Option<u64>,
    cap: Option<u64>,
    cap_auto: bool,
    cap_share: f64,
    loose: Option<&Bound<'_, PyDict>>,
) -> R<(PyGuarantee, Option<u64>, f64, Option<f64>)> {
    let loose = LooseMethod::from_options("_calibrate_tuning", loose)?;
    let m = method_over(&space_from(space)?, method.as_ref(), &loose)?;
    m.check().py()?;
    let kind = PerRun::parse(per_run, sampling_rate, steps)?;
    let target = &target.inner;
    if !(cap_share > 0.0 && cap_share < 1.0) {
        return Err(invalid("cap_share", cap_share, "must lie in (0, 1)"));
    }
    if matches!(target.bounds(), [Bnd::Zcdp { .. }]) && !matches!(m, Method::Exhaustive { .. }) {
        return Err(invalid(
            "target",
            target,
            "the cost of a private selection among a random number of runs is an RDP curve (and \
             a pure ε for pure runs), never a zCDP bound, so no tuning fits a zCDP target: give \
             Guarantee.approx(eps, delta) (or a pure target with per_run=\"pure\")",
        ));
    }
    let capped = cap_auto || cap.is_some();
    if !capped {
        let (run, z) = calibrate_per_run(target, &m, kind)?;
        return Ok((g(run), None, 0.0, z));
    }
    if matches!(m, Method::Exhaustive { .. }) {
        return Err(invalid(
            "cap",
            "a cap",
            "an exhaustive search runs every grid point (its number of runs is public): there \
             is nothing to cap",
        ));
    }
    if cap == Some(0) {
        return Err(invalid("cap", 0, "must be at least 1"));
    }
    let (eps, delta) = approx_target(target)?;
    // The truncation term may use `cap_share` of δ; the uncapped tuning gets the rest (two ulps
    // below it, so that the library's rounded-up sum stays within δ; the plan re-checks it).
    let share = delta * cap_share;
    let rest = (delta - share).next_down().next_down();
    // The term grows with the tuning's ε, which calibration keeps at most the target's: checking
    // the cap at the target's ε bounds it for every per-run allowance chosen below.
    let t = match cap {
        Some(t) => {
            let term = tune::capped_delta(&m, t, eps, 0.0).py()?;
            if term > share {
                return Err(invalid(
                    "cap",
                    t,
                    &format!(
                        "too small for the target {target}: truncating at {t} runs adds δ = \
                         {term:.3e} (the term (1 + e^eps)·P[K > cap] of the truncation lemma), \
                         more than the cap's share {cap_share} of the target's δ ({share:e}); \
                         {}",
                        cap_advice(&m, eps, share)
                    ),
                ));
            }
            t
        }
        None => tune::smallest_cap(&m, eps, share).py()?.ok_or_else(|| {
            invalid(
                "cap",
                "\"auto\"",
                &format!(
                    "no cap up to {} keeps the truncation term within {cap_share} of the \
                     target's δ ({share:e}); use fewer expected runs or a larger δ",
                    tune::MAX_CAP
                ),
            )
        })?,
    };
    let inner = Guarantee::approx(eps, rest, target.neighbours()).py()?;
    let (run, z) = calibrate_per_run(&inner, &m, kind)?;
    Ok((g(run), Some(t), rest, z))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_calibrate_tuning, m)?)?;
    Ok(())
}
