//! Tuning: run distributions, costs, calibration and tuning plans (Rust draws the
//! data-independent part; Python dispatches the candidate calls).

use pyo3::prelude::*;
use pyo3::types::PyDict;

use dptune::data::Records;
use dptune::noise::SecureRng;
use dptune::privacy::{repeat, Guarantee};
use dptune::tune::{self, Config, Method, TuneOptions, Tuner, Value};

use crate::errors::{invalid, BudgetExceeded, IntoPy, NoRelease, R};
use crate::guarantee::{g, PyGuarantee};
use crate::input::{rng_from, type_name, vec_f64, Seed};
use crate::space::{config_to_py, space_from, value_from_py};
use crate::target;

/// The most candidate runs a tuning may dispatch (and an exhaustive cost may compose).
pub(crate) const MAX_RUNS: usize = tune::MAX_CAP as usize;

/// The distribution of the number of runs K of repeat-and-select.
#[pyclass(module = "dptune._core", name = "Repeats", frozen)]
#[derive(Clone, Copy)]
pub(crate) struct PyRepeats {
    pub(crate) inner: repeat::Repeats,
}

#[pymethods]
impl PyRepeats {
    /// K ~ Poisson(mean).
    #[staticmethod]
    fn poisson(mean: f64) -> R<Self> {
        Ok(Self {
            inner: repeat::Repeats::poisson(mean).py()?,
        })
    }
    /// K geometric on {1, 2, ...} (Liu–Talwar): after each run, stop with probability
    /// `stop_probability` (E[K] = 1/stop_probability), or give `mean` instead. `gamma` is the
    /// older keyword name of the stop probability (the same meaning).
    #[staticmethod]
    #[pyo3(signature = (stop_probability=None, *, mean=None, gamma=None))]
    fn geometric(stop_probability: Option<f64>, mean: Option<f64>, gamma: Option<f64>) -> R<Self> {
        let inner = match (stop_probability, gamma, mean) {
            (Some(p), None, None) | (None, Some(p), None) => repeat::Repeats::geometric(p),
            (None, None, Some(m)) => repeat::Repeats::tnb_with_mean(1.0, m),
            _ => {
                return Err(invalid(
                    "stop_probability",
                    "several or none",
                    "give exactly one of stop_probability (or its old name gamma) and mean",
                ))
            }
        };
        Ok(Self { inner: inner.py()? })
    }
    /// K ~ truncated negative binomial D_{eta, gamma} (Papernot–Steinke Definition 1).
    #[staticmethod]
    fn tnb(eta: f64, gamma: f64) -> R<Self> {
        Ok(Self {
            inner: repeat::Repeats::tnb(eta, gamma).py()?,
        })
    }
    /// Truncated negative binomial with the given mean.
    #[staticmethod]
    fn tnb_with_mean(eta: f64, mean: f64) -> R<Self> {
        Ok(Self {
            inner: repeat::Repeats::tnb_with_mean(eta, mean).py()?,
        })
    }
    /// Papernot–Steinke's truncated negative binomial with E[K] = `mean` and shape `eta`
    /// (default 0: logarithmic, the command-line tool's default; 1 is geometric).
    #[staticmethod]
    #[pyo3(signature = (mean, eta=0.0))]
    fn with_mean(mean: f64, eta: f64) -> R<Self> {
        Self::tnb_with_mean(eta, mean)
    }
    /// E[K] (public: a property of the distribution, not of a draw).
    #[getter]
    fn mean(&self) -> f64 {
        self.inner.mean()
    }
    /// "poisson", "geometric", "logarithmic" or "truncated negative binomial".
    #[getter]
    fn kind(&self) -> &'static str {
        match self.inner {
            repeat::Repeats::Poisson { .. } => "poisson",
            repeat::Repeats::TruncatedNegativeBinomial { eta: 1.0, .. } => "geometric",
            repeat::Repeats::TruncatedNegativeBinomial { eta: 0.0, .. } => "logarithmic",
            repeat::Repeats::TruncatedNegativeBinomial { .. } => "truncated negative binomial",
        }
    }
    /// The probability of stopping after each run, for geometric K (else None).
    #[getter]
    fn stop_probability(&self) -> Option<f64> {
        match self.inner {
            repeat::Repeats::TruncatedNegativeBinomial { eta: 1.0, gamma } => Some(gamma),
            _ => None,
        }
    }
    /// The shape η of a truncated negative binomial (else None).
    #[getter]
    fn eta(&self) -> Option<f64> {
        match self.inner {
            repeat::Repeats::TruncatedNegativeBinomial { eta, .. } => Some(eta),
            repeat::Repeats::Poisson { .. } => None,
        }
    }
    /// The parameter γ of a truncated negative binomial (else None).
    #[getter]
    fn gamma(&self) -> Option<f64> {
        match self.inner {
            repeat::Repeats::TruncatedNegativeBinomial { gamma, .. } => Some(gamma),
            repeat::Repeats::Poisson { .. } => None,
        }
    }
    fn __repr__(&self) -> String {
        let n = dptune::privacy::fmt_number;
        let mean = n(self.inner.mean());
        match self.inner {
            repeat::Repeats::Poisson { mean } => format!("Repeats(poisson, mean={})", n(mean)),
            repeat::Repeats::TruncatedNegativeBinomial { eta: 1.0, gamma } => format!(
                "Repeats(geometric, stop_probability={}, mean={mean})",
                n(gamma)
            ),
            repeat::Repeats::TruncatedNegativeBinomial { eta, gamma } => format!(
                "Repeats({}, eta={}, gamma={}, mean={mean})",
                self.kind(),
                n(eta),
                n(gamma)
            ),
        }
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyRepeats>()
            .map(|o| o.get().inner == self.inner)
            .unwrap_or(false)
    }
}

/// The method of a tuning, from the Python spelling.
pub(crate) fn method_from(
    method: &str,
    repeats: Option<&PyRepeats>,
    gamma: Option<f64>,
    threshold: Option<f64>,
    runs: Option<usize>,
) -> R<Method> {
    match method {
        "repeat" => Ok(Method::RepeatAndSelect(
            repeats
                .ok_or_else(|| invalid("repeats", "None", "repeat-and-select needs a Repeats"))?
                .inner,
        )),
        "threshold" => Ok(Method::Threshold {
            threshold: threshold
                .ok_or_else(|| invalid("threshold", "None", "the threshold method needs one"))?,
            gamma: gamma
                .ok_or_else(|| invalid("gamma", "None", "the threshold method needs one"))?,
        }),
        "exhaustive" => {
            let runs = runs
                .ok_or_else(|| invalid("runs", "None", "exhaustive search needs the grid size"))?;
            // The composition takes time linear in the runs; the tuner dispatches no more.
            if runs > MAX_RUNS {
                return Err(invalid(
                    "runs",
                    runs,
                    "at most 10000000 grid points (the composition takes time linear in runs)",
                ));
            }
            Ok(Method::Exhaustive { runs })
        }
        _ => Err(invalid(
            "method",
            method,
            "expected \"repeat\", \"threshold\" or \"exhaustive\"",
        )),
    }
}

/// The guarantee of a whole tuning whose runs each spend at most `per_run`.
#[pyfunction]
#[pyo3(signature = (per_run, *, method="repeat", repeats=None, gamma=None, threshold=None,
    runs=None))]
pub(crate) fn tuning_cost(
    per_run: &PyGuarantee,
    method: &str,
    repeats: Option<PyRef<'_, PyRepeats>>,
    gamma: Option<f64>,
    threshold: Option<f64>,
    runs: Option<usize>,
) -> R<PyGuarantee> {
    let m = method_from(method, repeats.as_deref(), gamma, threshold, runs)?;
    Ok(g(tune::tuning_cost(&m, &per_run.inner).py()?))
}

/// Largest per-run allowance whose whole tuning fits `outer`: ρ (zCDP), ε (pure), or for
/// "dpsgd" the RDP curve of `steps` DP-SGD steps at rate `sampling_rate` with the smallest
/// noise multiplier that fits (`dpsgd_noise_multiplier(allowance, ...)` gives it back).
#[pyfunction]
#[pyo3(signature = (outer, *, method="repeat", repeats=None, gamma=None, threshold=None,
    runs=None, per_run="zcdp", sampling_rate=None, steps=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn calibrate(
    outer: &PyGuarantee,
    method: &str,
    repeats: Option<PyRef<'_, PyRepeats>>,
    gamma: Option<f64>,
    threshold: Option<f64>,
    runs: Option<usize>,
    per_run: &str,
    sampling_rate: Option<f64>,
    steps: Option<u64>,
) -> R<PyGuarantee> {
    let m = method_from(method, repeats.as_deref(), gamma, threshold, runs)?;
    let kind = target::PerRun::parse(per_run, sampling_rate, steps)?;
    Ok(g(target::calibrate_per_run(&outer.inner, &m, kind)?.0))
}

// ------------------------------------------------------------------------------------------------
// Tuning plans: Rust draws the data-independent part (K, configurations, seeds, cost); Python
// dispatches the candidate calls; Rust keeps the best.

/// The data-independent part of one tuning. Holds the number of runs privately: Python sees
/// only the tasks to dispatch (their count equals K, or the cap T in capped mode).
#[pyclass(module = "dptune._core", name = "_TuningPlan")]
pub(crate) struct TuningPlan {
    tasks: Vec<(Config, u64)>,
    kept: u64,
    threshold: Option<f64>,
    cost: Guarantee,
    per_run: Guarantee,
    /// With a cap: the δ the truncation adds, and the advice on choosing a cap when that is
    /// more than `cap_delta` (public: computed from the method, the cap and the cost).
    truncation: Option<(f64, String)>,
}

/// Draws a tuning plan exactly as `dptune::tune::Tuner::run` does: the tuner's generator yields
/// the streams and then K; run i samples its configuration from stream i and then its seed (the
/// next 64-bit word of stream i).
#[pyfunction]
#[pyo3(signature = (space, per_run, *, method="repeat", repeats=None, gamma=None,
    threshold=None, cap=None, cap_delta=0.0, seed=None, target=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn _plan_tuning(
    space: &Bound<'_, PyAny>,
    per_run: &PyGuarantee,
    method: &str,
    repeats: Option<PyRef<'_, PyRepeats>>,
    gamma: Option<f64>,
    threshold: Option<f64>,
    cap: Option<u64>,
    cap_delta: f64,
    seed: Option<Seed<'_>>,
    target: Option<PyRef<'_, PyGuarantee>>,
) -> R<TuningPlan> {
    let space = space_from(space)?;
    let runs = if method == "exhaustive" {
        Some(space.grid().py()?.len())
    } else {
        None
    };
    let m = method_from(method, repeats.as_deref(), gamma, threshold, runs)?;
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
    let streams = rng.streams();
    let (k, grid) = match m {
        Method::RepeatAndSelect(r) => (tune::runs::draw_runs(&r, &mut rng).py()?, None),
        Method::Threshold { gamma, .. } => (
            tune::runs::draw_runs(&repeat::Repeats::geometric(gamma).py()?, &mut rng).py()?,
            None,
        ),
        Method::Exhaustive { runs } => (runs as u64, Some(space.grid().py()?)),
    };
    let executed = cap.unwrap_or(k);
    if executed > MAX_RUNS as u64 {
        return Err(NoRelease::new_err(
            "no release: the drawn number of runs is beyond what can be dispatched; use cap",
        ));
    }
    let tasks = (0..executed)
        .map(|i| {
            let mut r = streams.get(i);
            let config = match &grid {
                Some(gr) => gr[i as usize].clone(),
                None => space.sample(&mut r),
            };
            (config, r.next_u64())
        })
        .collect();
    Ok(TuningPlan {
        tasks,
        kept: k.min(executed),
        threshold: match m {
            Method::Threshold { threshold, .. } => Some(threshold),
            _ => None,
        },
        cost,
        per_run: per_run.inner.clone(),
        truncation,
    })
}

#[pymethods]
impl TuningPlan {
    /// The whole tuning's guarantee (public).
    #[getter]
    fn cost(&self) -> PyGuarantee {
        g(self.cost.clone())
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
    /// released candidate or None (⊥): among the first min(K, T) runs, the best score (ties to
    /// the lower index), or with a threshold the lowest index whose score reaches it.
    fn best(&self, scores: &Bound<'_, PyAny>) -> R<Option<u64>> {
        let s = vec_f64("scores", scores)?;
        if s.len() != self.tasks.len() {
            return Err(invalid("scores", s.len(), "need one score per task"));
        }
        let mut best: Option<(u64, f64)> = None;
        for (i, &x) in s.iter().enumerate().take(self.kept as usize) {
            if x.is_nan() {
                continue;
            }
            if let Some(t) = self.threshold {
                if x >= t {
                    return Ok(Some(i as u64));
                }
                continue;
            }
            if best.is_none_or(|(_, b)| x > b) {
                best = Some((i as u64, x));
            }
        }
        Ok(best.map(|(i, _)| i))
    }
}

/// A record set with no content (the reference learner ignores data).
pub(crate) struct Nothing(usize);
impl Records for Nothing {
    fn len(&self) -> usize {
        self.0
    }
    fn select(&self, indices: &[usize]) -> Self {
        Nothing(indices.len())
    }
}

/// The reference learner of the equality tests: its score is a public function of the
/// configuration and of the run's seed, spent under the allowance.
pub(crate) struct ReferenceLearner;
impl tune::Learner for ReferenceLearner {
    type Data = Nothing;
    type Model = (Config, u64);
    fn fit(
        &self,
        config: &Config,
        _data: &Nothing,
        allowance: &Guarantee,
        rng: &mut SecureRng,
    ) -> dptune::Result<dptune::privacy::Release<(Config, u64)>> {
        Ok(dptune::privacy::Release {
            value: (config.clone(), rng.next_u64()),
            spent: allowance.clone(),
        })
    }
}
impl tune::Scorer<ReferenceLearner> for ReferenceLearner {
    fn score(
        &self,
        model: &(Config, u64),
        _data: &Nothing,
        allowance: &Guarantee,
        _rng: &mut SecureRng,
    ) -> dptune::Result<dptune::privacy::Release<f64>> {
        Ok(dptune::privacy::Release {
            value: reference_score(&model.0, model.1),
            spent: allowance.clone(),
        })
    }
}

/// −Σ over numeric hyperparameters of (x − 0.3)² plus (seed mod 1000)·1e-6.
pub(crate) fn reference_score(c: &Config, seed: u64) -> f64 {
    let mut s = 0.0;
    for v in c.values() {
        let x = match v {
            Value::Float(x) => *x,
            Value::Int(i) => *i as f64,
            Value::Text(t) => t.len() as f64,
        };
        s -= (x - 0.3) * (x - 0.3);
    }
    s + (seed % 1000) as f64 * 1e-6
}

/// The Rust core's own tuner on the reference learner: (config or None, score or None, cost).
#[pyfunction]
#[pyo3(signature = (space, per_run, *, method="repeat", repeats=None, gamma=None,
    threshold=None, cap=None, cap_delta=0.0, seed=0))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn _reference_tune<'py>(
    py: Python<'py>,
    space: &Bound<'py, PyAny>,
    per_run: &PyGuarantee,
    method: &str,
    repeats: Option<PyRef<'py, PyRepeats>>,
    gamma: Option<f64>,
    threshold: Option<f64>,
    cap: Option<u64>,
    cap_delta: f64,
    seed: u64,
) -> R<(Option<Bound<'py, PyDict>>, Option<f64>, PyGuarantee)> {
    let space = space_from(space)?;
    let runs = if method == "exhaustive" {
        Some(space.grid().py()?.len())
    } else {
        None
    };
    let m = method_from(method, repeats.as_deref(), gamma, threshold, runs)?;
    let tuner = Tuner::new(m, &space, per_run.inner.clone()).py()?;
    let options = TuneOptions {
        cap,
        cap_delta,
        ..Default::default()
    };
    let split = tune::Split {
        first: vec![],
        second: vec![],
    };
    let mut rng = SecureRng::seeded(seed);
    let r = tuner
        .run(
            &ReferenceLearner,
            &ReferenceLearner,
            &Nothing(0),
            &split,
            &options,
            &mut rng,
        )
        .py()?;
    let (c, s) = match r.value {
        Some(c) => (Some(config_to_py(py, &c.config)?), Some(c.score)),
        None => (None, None),
    };
    Ok((c, s, g(r.spent)))
}

/// The reference score (for the equality tests).
#[pyfunction]
pub(crate) fn _reference_score(config: &Bound<'_, PyAny>, seed: u64) -> R<f64> {
    let d = config
        .cast::<PyDict>()
        .map_err(|_| invalid("config", type_name(config), "must be a dict"))?;
    let mut c = Config::new();
    for (k, v) in d.iter() {
        c.insert(k.extract()?, value_from_py("config", &v)?);
    }
    Ok(reference_score(&c, seed))
}

/// Adds this file's classes and functions to the module `dptune._core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRepeats>()?;
    m.add_class::<TuningPlan>()?;
    m.add_function(wrap_pyfunction!(tuning_cost, m)?)?;
    m.add_function(wrap_pyfunction!(calibrate, m)?)?;
    m.add_function(wrap_pyfunction!(_plan_tuning, m)?)?;
    m.add_function(wrap_pyfunction!(_reference_tune, m)?)?;
    m.add_function(wrap_pyfunction!(_reference_score, m)?)?;
    Ok(())
}
