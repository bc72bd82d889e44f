//! `dptune.tune` with a built-in learner: the whole job of `dptune tune` (the library's
//! `learn::pipeline`: noisy count, private tuning, final fit), called with the same plan and
//! returning the same report, so that one seed gives one selection in both front ends.

use std::path::PathBuf;

use pyo3::prelude::*;

use dptune::data::bundled;
use dptune::learn::pipeline::{
    compare_on_test, released_nothing, tune, Events, LearnerKind, Plan, Size, TuneReport,
    COUNT_SHARE,
};
use dptune::resources::Limits;
use dptune::tune::Fractions;

use crate::errors::{invalid, IntoPy, R};
use crate::guarantee::PyGuarantee;
use crate::input::{rng_from, Seed};
use crate::method::{method_over, LooseMethod, MethodArg};
use crate::space::space_from;

/// Runs the `dptune tune` job on a bundled dataset and returns its report as JSON text (the
/// object `dptune tune --json` prints). Everything that can be checked without data is
/// checked before the dataset is read, the job's memory and time estimate (`force` as the
/// command line's `--force`) before the budget is charged, the budget before any noise is
/// drawn, and the tuning runs without the GIL.
#[pyfunction]
#[pyo3(signature = (learner, *, target, data="adult", hidden=None, space=None, method=None,
    fractions=(0.5, 0.8), public_size=None, count_share=None, cap=None, compare=false,
    seed=None, budget=None, store=None, force=false))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn _tune_learner(
    py: Python<'_>,
    learner: &str,
    target: &PyGuarantee,
    data: &str,
    hidden: Option<usize>,
    space: Option<&Bound<'_, PyAny>>,
    method: Option<MethodArg<'_>>,
    fractions: (f64, f64),
    public_size: Option<u64>,
    count_share: Option<f64>,
    cap: Option<u64>,
    compare: bool,
    seed: Option<Seed<'_>>,
    budget: Option<&str>,
    store: Option<PathBuf>,
    force: bool,
) -> R<String> {
    let kind = LearnerKind::from_name(learner, hidden).py()?;
    let mut plan = Plan::default_for(kind).py()?;
    if let Some(s) = space {
        plan.space = space_from(s)?;
        plan.space.check(kind.rules()).py()?;
    }
    if let Some(m) = &method {
        plan.method = method_over(&plan.space, Some(m), &LooseMethod::default())?;
    }
    plan.allowance = target.inner.clone();
    plan.fractions = Fractions {
        tune: fractions.0,
        train: fractions.1,
    };
    plan.size = match (public_size, count_share) {
        (Some(_), Some(c)) => {
            return Err(invalid(
                "count_share",
                c,
                "no count is released when public_size is given",
            ))
        }
        (Some(n), None) => Size::Public(n),
        (None, share) => Size::NoisyCount {
            share: share.unwrap_or(COUNT_SHARE),
        },
    };
    if !plan.needs_size() {
        if let Some((name, value)) = public_size
            .map(|n| ("public_size", n.to_string()))
            .or(count_share.map(|c| ("count_share", c.to_string())))
        {
            return Err(invalid(
                name,
                value,
                "only the DP-SGD learners plan with a record count",
            ));
        }
    }
    plan.cap = cap;
    plan.check().py()?;
    let set = bundled(data).py()?;
    let (train, test) = (set.train(), set.test());
    plan.check_data(&train).py()?;
    // The command line's resource check (`dptune tune --force`), before any charge.
    Limits::this_machine()
        .check(
            &plan.resources(&train),
            force,
            "pass force=True to try anyway",
        )
        .py()?;
    let seeded = seed.is_some();
    let mut rng = rng_from(seed)?;
    crate::budget::charge(budget, store.as_deref(), &plan.allowance, "tune")?;
    let report = py.detach(|| -> dptune::Result<Option<TuneReport>> {
        let Some(outcome) = tune(&plan, &train, &Events::default(), &mut rng)? else {
            return Ok(None);
        };
        let comparison = if compare {
            Some(compare_on_test(&plan, &outcome, &train, &test, &mut rng)?.value)
        } else {
            None
        };
        TuneReport::new(
            &plan,
            set.name,
            &train,
            Some(&test),
            &outcome,
            comparison,
            seeded,
        )
        .map(Some)
    });
    let Some(report) = report.py()? else {
        return Err(released_nothing()).py();
    };
    serde_json::to_string(&report).map_err(|e| invalid("report", "unserialisable", &e.to_string()))
}

/// Adds this file's functions to the module `dptune._core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_tune_learner, m)?)?;
    Ok(())
}
