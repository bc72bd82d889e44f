//! Selection: one dispatch (`dptune::select::Mechanism::build`) from the Python arguments.

use std::path::PathBuf;

use numpy::{PyArray1, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};
use pyo3::IntoPyObjectExt;

use dptune::noise::SecureRng;
use dptune::privacy::Guarantee;
use dptune::select::{
    Goal, Mechanism, NoisyTopK, Prepared, Scores, Selection, Selector, Sensitivity, Spec,
    TopKMethod,
};

use crate::budget;
use crate::errors::{invalid, DataError, IntoPy, R};
use crate::guarantee::{g, PyGuarantee};
use crate::input::{goal, neighbours, read_options, rng_from, vec_f64, Seed};
use crate::limits;

/// Inputs at least this long are copied and selected with the GIL released.
pub(crate) const DETACH_AT: usize = 4096;

/// The result types of `select_index` and `top_k` (tuple subclasses in `dptune/_results.py`),
/// unseeded and seeded, imported once.
static SELECTION: [PyOnceLock<Py<PyType>>; 2] = [PyOnceLock::new(), PyOnceLock::new()];
static TOP_K: [PyOnceLock<Py<PyType>>; 2] = [PyOnceLock::new(), PyOnceLock::new()];

/// `(value, spent)` as the tuple subclass `types[seeded]`, named `names[seeded]` in
/// `dptune._results`: a seeded result is a reproducible research run and says so (its
/// `seeded` attribute and its repr, NOT PRIVATE).
fn result<'py>(
    py: Python<'py>,
    types: &'static [PyOnceLock<Py<PyType>>; 2],
    names: [&str; 2],
    seeded: bool,
    value: impl IntoPyObject<'py>,
    spent: Guarantee,
) -> R<Bound<'py, PyAny>> {
    let i = usize::from(seeded);
    let cls = types[i].import(py, "dptune._results", names[i])?;
    let items = PyTuple::new(
        py,
        [
            value.into_bound_py_any(py)?,
            g(spent).into_bound_py_any(py)?,
        ],
    )?;
    cls.call1((items,))
}

/// One selection's parameters: `epsilon` and the keyword options that `dptune.select`,
/// `dptune.nonprivate_selection_probabilities` and the benchmark hook share. The options are
/// declared here once, with their defaults ([`SelArgs::new`]), and read from the functions'
/// `**options` by [`SelArgs::from_options`], so the functions cannot drift apart.
pub(crate) struct SelArgs {
    pub(crate) mechanism: String,
    pub(crate) epsilon: f64,
    pub(crate) sensitivity: f64,
    pub(crate) monotonic: bool,
    pub(crate) goal: String,
    pub(crate) neighbours: String,
    pub(crate) delta: Option<f64>,
    pub(crate) sensitivities: Option<Vec<f64>>,
    pub(crate) beta: f64,
}

impl SelArgs {
    /// `epsilon` with every option at its default (the defaults `dptune.select` documents).
    pub(crate) fn new(epsilon: f64) -> Self {
        Self {
            mechanism: "exponential".into(),
            epsilon,
            sensitivity: 1.0,
            monotonic: false,
            goal: "maximize".into(),
            neighbours: "add_remove".into(),
            delta: None,
            sensitivities: None,
            beta: 0.1,
        }
    }

    /// `epsilon` with the options given as keywords to `function` (its `**options`), the others
    /// at their defaults; any other keyword is a `TypeError` ([`read_options`]).
    pub(crate) fn from_options(
        function: &str,
        epsilon: f64,
        options: Option<&Bound<'_, PyDict>>,
    ) -> R<Self> {
        let mut a = Self::new(epsilon);
        read_options(function, options, |name, v| {
            match name {
                "mechanism" => a.mechanism = v.extract()?,
                "sensitivity" => a.sensitivity = v.extract()?,
                "monotonic" => a.monotonic = v.extract()?,
                "goal" => a.goal = v.extract()?,
                "neighbours" => a.neighbours = v.extract()?,
                "delta" => a.delta = v.extract()?,
                "sensitivities" if v.is_none() => a.sensitivities = None,
                "sensitivities" => a.sensitivities = Some(vec_f64(name, v)?),
                "beta" => a.beta = v.extract()?,
                _ => return Ok(false),
            }
            Ok(true)
        })?;
        Ok(a)
    }
}

/// Scores are computed from the private data: a NaN among them is a `DataError` (which aborts
/// a tuning), not an `InvalidParameter` (which a tuner counts as an unusable configuration).
pub(crate) fn no_nan_scores(scores: &[f64]) -> R<()> {
    match scores.iter().position(|x| x.is_nan()) {
        Some(i) => Err(DataError::new_err(format!(
            "data error in `scores`: element {i} is NaN; scores must be numbers"
        ))),
        None => Ok(()),
    }
}

/// The library's one dispatch ([`Mechanism::build`]) on the Python arguments; top-k has its
/// own function (`dptune.top_k`).
pub(crate) fn build(scores: &[f64], a: &SelArgs) -> R<Prepared> {
    no_nan_scores(scores)?;
    let mech: Mechanism = a.mechanism.parse().py()?;
    let mech = mech.as_selection().py()?;
    if mech == Mechanism::TopK {
        return Err(invalid(
            "mechanism",
            &a.mechanism,
            "use dptune.top_k for noisy top-k; the sparse vector technique is not a selection",
        ));
    }
    let goal = goal(&a.goal)?;
    let allowance = mech
        .allowance(a.epsilon, a.delta, neighbours(&a.neighbours)?)
        .py()?;
    let mut spec = Spec::new(allowance, a.sensitivity);
    spec.goal = goal;
    spec.monotonic = a.monotonic;
    spec.sensitivities = a.sensitivities.clone();
    spec.beta = a.beta;
    mech.build(scores, &spec).py()
}

/// One draw of a single-index mechanism and what it spent.
pub(crate) fn select_one(m: &Prepared, rng: &mut SecureRng) -> R<(usize, Guarantee)> {
    match m.draw(rng) {
        Selection::One(i) => Ok((i, m.guarantee().clone())),
        Selection::Many(_) => Err(invalid("mechanism", "top-k", "use dptune.top_k")),
    }
}

/// One private selection: returns `(index, guarantee)`, a `dptune.Selection` tuple whose
/// `seeded` says whether `seed` was given (a seeded result is NOT PRIVATE and its repr says so).
///
/// Options (keyword-only, typed by `dptune.types.SelectionOptions`): `mechanism="exponential"`,
/// `sensitivity=1.0`, `monotonic=False`, `goal="maximize"`, `neighbours="add_remove"`,
/// `delta=None`, `sensitivities=None`, `beta=0.1`.
///
/// `mechanism`: "exponential" (ε pure and ε²/8 zCDP), "gumbel" (same law), "laplace"
/// (report-noisy-max, ε pure), "permute-and-flip" (ε pure), "gaussian" (needs `delta`, which
/// the pure mechanisms refuse; calibrated to the L2 sensitivity Δ·√m of the whole vector), "gem" (generalized EM with
/// per-candidate `sensitivities` and failure probability `beta`). `sensitivity` Δ bounds how far
/// one neighbour moves each score; the range paid is Δ if `monotonic` else 2Δ. `goal`:
/// "maximize" or "minimize". Scores must be finite; -inf (+inf when minimising) marks a
/// candidate that can never win (the exclusion must not depend on private data). Sampling is
/// exact. `seed=None` draws from the operating system; an integer seed is for reproducible
/// research runs and is not private against anyone who knows it.
#[pyfunction]
#[pyo3(signature = (scores, epsilon, *, seed=None, budget=None, store=None, **options))]
pub(crate) fn select_index<'py>(
    py: Python<'py>,
    scores: &Bound<'py, PyAny>,
    epsilon: f64,
    seed: Option<Seed<'_>>,
    budget: Option<&str>,
    store: Option<PathBuf>,
    options: Option<&Bound<'_, PyDict>>,
) -> R<Bound<'py, PyAny>> {
    let a = SelArgs::from_options("select_index", epsilon, options)?;
    let seeded = seed.is_some();
    let selection = |(i, spent): (usize, Guarantee)| {
        result(
            py,
            &SELECTION,
            ["Selection", "_SeededSelection"],
            seeded,
            i,
            spent,
        )
    };
    let mut rng = rng_from(seed)?;
    // With `budget`, the mechanism (inputs validated) is charged before it selects.
    let charge = |m: &Prepared| budget::charge(budget, store.as_deref(), m.guarantee(), "select");
    // Small contiguous float64 arrays are read in place while holding the GIL (no copy); large
    // inputs are copied and the GIL is released while the core selects.
    if let Ok(a64) = scores.cast::<PyArray1<f64>>() {
        if a64.len() < DETACH_AT {
            if let Ok(ro) = a64.try_readonly() {
                if let Ok(slice) = ro.as_slice() {
                    let m = build(slice, &a)?;
                    charge(&m)?;
                    return selection(select_one(&m, &mut rng)?);
                }
            }
        }
    }
    let scores = vec_f64("scores", scores)?;
    let m = if scores.len() >= DETACH_AT {
        py.detach(|| build(&scores, &a))?
    } else {
        build(&scores, &a)?
    };
    charge(&m)?;
    selection(if scores.len() >= DETACH_AT {
        py.detach(|| select_one(&m, &mut rng))?
    } else {
        select_one(&m, &mut rng)?
    })
}

/// NOT PRIVATE: the exact selection probabilities of the implemented mechanism on the raw
/// scores (no noise, no guarantee), and the mechanism's name. Takes the options of
/// `select_index`. Wrapped by `dptune.nonprivate_selection_probabilities`, which labels the
/// result.
#[pyfunction]
#[pyo3(signature = (scores, epsilon, **options))]
pub(crate) fn _selection_probabilities<'py>(
    py: Python<'py>,
    scores: &Bound<'py, PyAny>,
    epsilon: f64,
    options: Option<&Bound<'py, PyDict>>,
) -> R<(Bound<'py, PyArray1<f64>>, String)> {
    let scores = vec_f64("scores", scores)?;
    // Named for its one caller, the public wrapper, so that a misspelt keyword names the
    // function the user called.
    let a = SelArgs::from_options("nonprivate_selection_probabilities", epsilon, options)?;
    let p = build(&scores, &a)?.probabilities().py()?;
    Ok((PyArray1::from_vec(py, p), a.mechanism))
}

/// The release-schema violations of a Python result: `paths` are the released attribute paths
/// of `command`'s result (`"python tune"`, `"python PrivateLogisticRegression"`), checked
/// against the one declaration in `dptune::release_schema`; an empty list means every field
/// is declared.
#[pyfunction]
pub(crate) fn _release_violations(command: &str, paths: Vec<String>) -> R<Vec<String>> {
    let schema = dptune::release_schema::schema(command)
        .ok_or_else(|| invalid("command", command, "has no release schema"))?;
    let seen = paths.iter().map(|p| dptune::release_schema::Seen {
        path: p,
        labelled: false,
    });
    Ok(schema
        .check(seen, &[])
        .iter()
        .map(ToString::to_string)
        .collect())
}

/// What one selection costs (computed from public parameters on a dummy score vector). For
/// "top-k" and "top-k-gumbel", ``epsilon`` is the total over the k rounds (each runs at
/// epsilon/k rounded down), and the cost is at most epsilon.
#[pyfunction]
#[pyo3(signature = (epsilon, *, mechanism="exponential", neighbours="add_remove", delta=None,
    k=None))]
pub(crate) fn selection_cost(
    epsilon: f64,
    mechanism: &str,
    neighbours: &str,
    delta: Option<f64>,
    k: Option<&Bound<'_, PyAny>>,
) -> R<PyGuarantee> {
    let k = k.map_or(Ok(1), |k| limits::size_arg("k", k))?;
    limits::check_size("k", k, 8)?;
    let k = usize::try_from(k).map_err(|_| invalid("k", k, "too large for this platform"))?;
    let dummy = vec![0.0; k.max(1) + 1];
    if mechanism == "top-k" || mechanism == "top-k-gumbel" {
        let m = if mechanism == "top-k" {
            TopKMethod::PermuteAndFlip
        } else {
            TopKMethod::Gumbel
        };
        let allowance = Mechanism::TopK
            .allowance(epsilon, delta, self::neighbours(neighbours)?)
            .py()?;
        let scores = Scores::new(&dummy, Goal::Maximize, Sensitivity::general(1.0).py()?).py()?;
        let t = NoisyTopK::new(&scores, &allowance, k, m).py()?;
        return Ok(g(t.guarantee().clone()));
    }
    let a = SelArgs {
        mechanism: mechanism.into(),
        neighbours: neighbours.into(),
        delta,
        ..SelArgs::new(epsilon)
    };
    Ok(g(build(&dummy, &a)?.guarantee().clone()))
}

/// Noisy top-k: (indices as int64 array, guarantee), a ``dptune.TopKSelection`` tuple whose
/// ``seeded`` says whether ``seed`` was given (NOT PRIVATE then, and its repr says so).
/// ``epsilon`` is the total over the k rounds (each runs at epsilon/k rounded down); the
/// returned guarantee is at most epsilon.
#[pyfunction]
#[pyo3(signature = (scores, epsilon, k, *, method="permute-and-flip", sensitivity=1.0,
    monotonic=false, goal="maximize", neighbours="add_remove", seed=None, budget=None, store=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn top_k<'py>(
    py: Python<'py>,
    scores: &Bound<'py, PyAny>,
    epsilon: f64,
    k: usize,
    method: &str,
    sensitivity: f64,
    monotonic: bool,
    goal: &str,
    neighbours: &str,
    seed: Option<Seed<'_>>,
    budget: Option<&str>,
    store: Option<PathBuf>,
) -> R<Bound<'py, PyAny>> {
    let scores = vec_f64("scores", scores)?;
    no_nan_scores(&scores)?;
    let m = match method {
        "permute-and-flip" => TopKMethod::PermuteAndFlip,
        "gumbel" => TopKMethod::Gumbel,
        _ => {
            return Err(invalid(
                "method",
                method,
                "expected \"permute-and-flip\" or \"gumbel\"",
            ))
        }
    };
    let goal = self::goal(goal)?;
    let sens = Sensitivity::new(sensitivity, monotonic).py()?;
    let allowance = Mechanism::TopK
        .allowance(epsilon, None, self::neighbours(neighbours)?)
        .py()?;
    let t = NoisyTopK::new(&Scores::new(&scores, goal, sens).py()?, &allowance, k, m).py()?;
    let seeded = seed.is_some();
    let mut rng = rng_from(seed)?;
    budget::charge(budget, store.as_deref(), t.guarantee(), "top_k")?;
    let r = t.select(&mut rng);
    let idx: Vec<i64> = r.value.iter().map(|&i| i as i64).collect();
    let names = ["TopKSelection", "_SeededTopKSelection"];
    result(
        py,
        &TOP_K,
        names,
        seeded,
        PyArray1::from_vec(py, idx),
        r.spent,
    )
}

/// Adds this file's classes and functions to the module `dptune._core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(select_index, m)?)?;
    m.add_function(wrap_pyfunction!(_selection_probabilities, m)?)?;
    m.add_function(wrap_pyfunction!(selection_cost, m)?)?;
    m.add_function(wrap_pyfunction!(_release_violations, m)?)?;
    m.add_function(wrap_pyfunction!(top_k, m)?)?;
    m.add("MECHANISMS", Mechanism::single_index_names())?;
    Ok(())
}
