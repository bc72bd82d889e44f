//! Tuning: costs, calibration and tuning plans (the library's
//! `Tuner::schedule` draws the tasks and the release rule; Python dispatches the candidate calls).

use pyo3::prelude::*;
use pyo3::types::PyDict;

use dptune::privacy::Guarantee;
use dptune::tune::{self, Config, Method, TuneOptions, Tuner};

use crate::errors::{invalid, BudgetExceeded, IntoPy, NoRelease, R};
use crate::guarantee::{g, PyGuarantee};
use crate::input::{rng_from, vec_f64, Seed};
use crate::method::{method_from, method_over, LooseMethod, MethodArg, MAX_RUNS};
use crate::space::{config_to_py, space_from};
use crate::target;

/// The guarantee of a whole tuning whose runs each spend at most `per_run`. `method`: a
/// `dptune.Method`, or the older spelling (deprecated): a name ("repeat", the default,
/// "threshold" or "exhaustive") with the loose keywords `repeats=`, `gamma=`, `threshold=`.
#[pyfunction]
#[pyo3(signature = (per_run, *, method=None, runs=None, **loose))]
pub(crate) fn tuning_cost(
    per_run: &PyGuarantee,
    method: Option<MethodArg<'_>>,
    runs: Option<usize>,
    loose: Option<&Bound<'_, PyDict>>,
) -> R<PyGuarantee> {
    let loose = LooseMethod::from_options("tuning_cost", loose)?;
    let m = method_from(method.as_ref(), &loose, runs)?;
    Ok(g(tune::tuning_cost(&m, &per_run.inner).py()?))
}

/// Largest per-run allowance whose whole tuning fits `outer`: ρ (zCDP), ε (pure), or for
/// "dpsgd" the RDP curve of `steps` DP-SGD steps at rate `sampling_rate` with the smallest
/// noise multiplier that fits (`dpsgd_noise_multiplier(allowance, ...)` gives it back).
/// `method` as for `tuning_cost`.
#[pyfunction]
#[pyo3(signature = (outer, *, method=None, runs=None, per_run="zcdp", sampling_rate=None,
    steps=None, **loose))]
pub(crate) fn calibrate(
    outer: &PyGuarantee,
    method: Option<MethodArg<'_>>,
    runs: Option<usize>,
    per_run: &str,
    sampling_rate: Option<f64>,
    steps: Option<u64>,
    loose: Option<&Bound<'_, PyDict>>,
) -> R<PyGuarantee> {
    let loose = LooseMethod::from_options("calibrate", loose)?;
    let m = method_from(method.as_ref(), &loose, runs)?;
    let kind = target::PerRun::parse(per_run, sampling_rate, steps)?;
    Ok(g(target::calibrate_per_run(&outer.inner, &m, kind)?.0))
}

// ------------------------------------------------------------------------------------------------
// Tuning plans: Rust draws the data-independent part (K, configurations, seeds, cost); Python
// dispatches the candidate calls; Rust keeps the best.

/// One drawn tuning, as the library's `Tuner::schedule` draws it: the tasks Python dispatches
/// (their count equals K, or the cap T in capped mode; Python's executor is trusted with it)
/// and the library's release rule, which holds K and picks the winner from the scores.
#[pyclass(module = "dptune._core", name = "_TuningPlan")]
pub(crate) struct TuningPlan {
    /// Per task: its configuration and its seed (the first word of the run's stream after the
    /// configuration was sampled, where `Tuner::run` hands that stream to the learner).
    tasks: Vec<(Config, u64)>,
    rule: tune::ReleaseRule,
    per_run: Guarantee,
    /// With a cap: the δ the truncation adds, and the advice on choosing a cap when that is
    /// more than `cap_delta` (public: computed from the method, the cap and the cost).
    truncation: Option<(f64, String)>,
}

/// Draws a tuning plan with the library's `Tuner::schedule`, so a seeded Python tuning gives the
/// configurations, seeds and winner of the library's `Tuner::run` with the same seed.
#[pyfunction]
#[pyo3(signature = (space, per_run, *, method=None, cap=None, cap_delta=0.0, seed=None,
    target=None, **loose))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn _plan_tuning(
    space: &Bound<'_, PyAny>,
    per_run: &PyGuarantee,
    method: Option<MethodArg<'_>>,
    cap: Option<u64>,
    cap_delta: f64,
    seed: Option<Seed<'_>>,
    target: Option<PyRef<'_, PyGuarantee>>,
    loose: Option<&Bound<'_, PyDict>>,
) -> R<TuningPlan> {
    let space = space_from(space)?;
    let loose = LooseMethod::from_options("_plan_tuning", loose)?;
    let m = method_over(&space, method.as_ref(), &loose)?;
    if cap == Some(0) {
        return Err(invalid("cap", 0, "must be at least 1"));
    }
    let tuner = Tuner::new(m, &space, per_run.inner.clone()).py()?;
    let options = TuneOptions {
        cap,
        cap_delta,
        ..Default::default()
    };
    let cost = tuner.cost(&options).py()?;
    // A target-first tuning is calibrated to fit; this re-check makes the plan refuse (before
    // anything is drawn) whatever path produced a cost that does not.
    if let Some(t) = &target {
        if !tune::cost::fits(&t.inner, &cost).py()? {
            return Err(BudgetExceeded::new_err(format!(
                "budget exceeded: the tuning costs {cost}, more than the target {}; nothing ran",
                t.inner
            )));
        }
    }
    let truncation = match cap {
        Some(t) if !matches!(m, Method::Exhaustive { .. }) => {
            let eps = tune::tuning_cost(&m, &per_run.inner)
                .py()?
                .epsilon(cap_delta)
                .py()?;
            let term = tune::capped_delta(&m, t, eps, 0.0).py()?;
            let advice = if cap_delta > 0.0 {
                target::cap_advice(&m, eps, cap_delta)
            } else {
                "give cap_delta > 0 (the δ the truncation may add is then chosen against it), or \
                 target=Guarantee.approx(eps, delta) with cap=\"auto\""
                    .to_string()
            };
            Some((term, advice))
        }
        _ => None,
    };
    let mut rng = rng_from(seed)?;
    let (schedule, rule) = tuner.schedule(&options, &mut rng).py()?;
    if schedule.tasks() > MAX_RUNS as u64 {
        return Err(NoRelease::new_err(
            "no release: the drawn number of runs is beyond what can be dispatched; use cap",
        ));
    }
    let tasks = (0..schedule.tasks())
        .map(|i| {
            let (config, mut r) = schedule.task(i).py()?;
            Ok((config, r.next_u64()))
        })
        .collect::<R<_>>()?;
    Ok(TuningPlan {
        tasks,
        rule,
        per_run: per_run.inner.clone(),
        truncation,
    })
}

#[pymethods]
impl TuningPlan {
    /// The whole tuning's guarantee (public).
    #[getter]
    fn cost(&self) -> PyGuarantee {
        g(self.rule.spent().clone())
    }
    /// The per-run allowance.
    #[getter]
    fn per_run(&self) -> PyGuarantee {
        g(self.per_run.clone())
    }
    /// With a cap: (δ the truncation adds, how to choose a cap); else None.
    #[getter]
    fn truncation(&self) -> Option<(f64, String)> {
        self.truncation.clone()
    }
    /// The tasks to dispatch: a list of (index, config dict, seed).
    fn tasks<'py>(&self, py: Python<'py>) -> R<Vec<(u64, Bound<'py, PyDict>, u64)>> {
        self.tasks
            .iter()
            .enumerate()
            .map(|(i, (c, s))| Ok((i as u64, config_to_py(py, c)?, *s)))
            .collect()
    }
    /// Given the scores by task index (NaN for an unusable configuration), the index of the
    /// released candidate or None (⊥), by the library's release rule.
    fn best(&self, scores: &Bound<'_, PyAny>) -> R<Option<u64>> {
        let s: Vec<Option<f64>> = vec_f64("scores", scores)?
            .into_iter()
            .map(|x| (!x.is_nan()).then_some(x))
            .collect();
        self.rule.winner(&s).py()
    }
}

/// Adds this file's classes and functions to the module `dptune._core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<TuningPlan>()?;
    m.add_function(wrap_pyfunction!(tuning_cost, m)?)?;
    m.add_function(wrap_pyfunction!(calibrate, m)?)?;
    m.add_function(wrap_pyfunction!(_plan_tuning, m)?)?;
    Ok(())
}
