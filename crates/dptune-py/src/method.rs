//! Tuning methods as Python objects: the distribution of the number of runs (`Repeats`), the
//! method (`Method`: Papernot–Steinke, Liu–Talwar, exhaustive) and the older keyword spelling,
//! all converted to the library's `dptune::tune::Method`.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use dptune::privacy::repeat;
use dptune::tune::{self, Method, SearchSpace};

use crate::errors::{invalid, IntoPy, R};
use crate::input::{read_options, type_name};

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
    /// `stop_probability` (E\[K\] = 1/stop_probability), or give `mean` instead. `gamma` is the
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
    /// Papernot–Steinke's truncated negative binomial with E\[K\] = `mean` and shape `eta`
    /// (default 0: logarithmic, the command-line tool's default; 1 is geometric).
    #[staticmethod]
    #[pyo3(signature = (mean, eta=0.0))]
    fn with_mean(mean: f64, eta: f64) -> R<Self> {
        Self::tnb_with_mean(eta, mean)
    }
    /// E\[K\] (public: a property of the distribution, not of a draw).
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

/// How a tuning selects among its runs, as `dptune::tune::Method`: Papernot–Steinke
/// repeat-and-select over a random number of runs, Liu–Talwar's threshold rule, or exhaustive
/// search over every grid point, composed. Built by its static methods; accepted as `method=`
/// by `dptune.tune`, `tuning_cost` and `calibrate` (in place of the name and loose keywords).
#[pyclass(module = "dptune._core", name = "Method", frozen)]
#[derive(Clone, Copy, PartialEq)]
pub(crate) struct PyMethod {
    kind: MethodKind,
}

#[derive(Clone, Copy, PartialEq)]
enum MethodKind {
    Repeat(repeat::Repeats),
    Threshold {
        threshold: f64,
        gamma: f64,
    },
    /// `runs` may be left to the tuner, which takes the grid size of its space.
    Exhaustive {
        runs: Option<usize>,
    },
}

#[pymethods]
impl PyMethod {
    /// Papernot–Steinke repeat-and-select: run K ~ `repeats` candidates, release the best.
    #[staticmethod]
    fn papernot_steinke(repeats: &PyRepeats) -> Self {
        Self {
            kind: MethodKind::Repeat(repeats.inner),
        }
    }
    /// Liu–Talwar: after each run, release it if its score reaches `threshold`, else stop with
    /// probability `stop_probability` (and release nothing).
    #[staticmethod]
    fn liu_talwar(threshold: f64, stop_probability: f64) -> R<Self> {
        let m = Self {
            kind: MethodKind::Threshold {
                threshold,
                gamma: stop_probability,
            },
        };
        // The library's checks: a finite threshold, and a stop probability its geometric
        // number of runs accepts.
        m.method(None)?.check().py()?;
        repeat::Repeats::geometric(stop_probability).py()?;
        Ok(m)
    }
    /// Every grid point of the space, composed; `runs` (the grid size) is needed only where no
    /// space gives it (`tuning_cost`, `calibrate`).
    #[staticmethod]
    #[pyo3(signature = (runs=None))]
    fn exhaustive(runs: Option<usize>) -> R<Self> {
        let m = Self {
            kind: MethodKind::Exhaustive { runs },
        };
        if runs.is_some() {
            m.method(None)?.check().py()?;
        }
        Ok(m)
    }
    /// "repeat", "threshold" or "exhaustive" (the names of the older `method=` spelling).
    #[getter]
    fn name(&self) -> &'static str {
        match self.kind {
            MethodKind::Repeat(_) => "repeat",
            MethodKind::Threshold { .. } => "threshold",
            MethodKind::Exhaustive { .. } => "exhaustive",
        }
    }
    /// The distribution of the number of runs, for repeat-and-select (else None).
    #[getter]
    fn repeats(&self) -> Option<PyRepeats> {
        match self.kind {
            MethodKind::Repeat(r) => Some(PyRepeats { inner: r }),
            _ => None,
        }
    }
    /// Liu–Talwar's threshold (else None).
    #[getter]
    fn threshold(&self) -> Option<f64> {
        match self.kind {
            MethodKind::Threshold { threshold, .. } => Some(threshold),
            _ => None,
        }
    }
    /// Liu–Talwar's stop probability (else None).
    #[getter]
    fn stop_probability(&self) -> Option<f64> {
        match self.kind {
            MethodKind::Threshold { gamma, .. } => Some(gamma),
            _ => None,
        }
    }
    /// The grid size of an exhaustive search, where given (else None).
    #[getter]
    fn runs(&self) -> Option<usize> {
        match self.kind {
            MethodKind::Exhaustive { runs } => runs,
            _ => None,
        }
    }
    fn __repr__(&self) -> String {
        let n = dptune::privacy::fmt_number;
        match self.kind {
            MethodKind::Repeat(r) => {
                format!(
                    "Method.papernot_steinke({})",
                    PyRepeats { inner: r }.__repr__()
                )
            }
            MethodKind::Threshold { threshold, gamma } => format!(
                "Method.liu_talwar({}, stop_probability={})",
                n(threshold),
                n(gamma)
            ),
            MethodKind::Exhaustive { runs: None } => "Method.exhaustive()".into(),
            MethodKind::Exhaustive { runs: Some(r) } => format!("Method.exhaustive({r})"),
        }
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyMethod>()
            .map(|o| *o.get() == *self)
            .unwrap_or(false)
    }
}

impl PyMethod {
    /// The library's method; `grid` is the grid size of the tuned space, where there is one.
    fn method(&self, grid: Option<usize>) -> R<Method> {
        Ok(match self.kind {
            MethodKind::Repeat(r) => Method::RepeatAndSelect(r),
            MethodKind::Threshold { threshold, gamma } => Method::Threshold { threshold, gamma },
            MethodKind::Exhaustive { runs } => Method::Exhaustive {
                runs: exhaustive_runs(runs.or(grid))?,
            },
        })
    }
}

/// The `method` argument: a [`PyMethod`], or the older name with loose keywords.
pub(crate) enum MethodArg<'py> {
    Name(String),
    Method(Bound<'py, PyMethod>),
}

impl<'py> FromPyObject<'_, 'py> for MethodArg<'py> {
    type Error = PyErr;
    fn extract(obj: pyo3::Borrowed<'_, 'py, PyAny>) -> R<Self> {
        if let Ok(m) = obj.cast::<PyMethod>() {
            return Ok(MethodArg::Method(m.to_owned()));
        }
        obj.extract::<String>().map(MethodArg::Name).map_err(|_| {
            invalid(
                "method",
                type_name(&obj),
                "expected a dptune.Method or \"repeat\", \"threshold\" or \"exhaustive\"",
            )
        })
    }
}

impl MethodArg<'_> {
    fn is_exhaustive(&self) -> bool {
        match self {
            MethodArg::Name(n) => n == "exhaustive",
            MethodArg::Method(m) => matches!(m.get().kind, MethodKind::Exhaustive { .. }),
        }
    }
}

/// The grid size of an exhaustive search, within what the tuner can dispatch.
fn exhaustive_runs(runs: Option<usize>) -> R<usize> {
    let runs =
        runs.ok_or_else(|| invalid("runs", "None", "exhaustive search needs the grid size"))?;
    // The composition takes time linear in the runs; the tuner dispatches no more.
    if runs > MAX_RUNS {
        return Err(invalid(
            "runs",
            runs,
            "at most 10000000 grid points (the composition takes time linear in runs)",
        ));
    }
    Ok(runs)
}

/// The loose keywords of the older spelling of a tuning's method (`repeats=`, `gamma=`,
/// `threshold=` beside a method name), deprecated in favour of a `dptune.Method`. Every function
/// that still accepts them takes them as `**loose` and reads them here, so they are declared
/// once and will be removed in one place.
#[derive(Default)]
pub(crate) struct LooseMethod {
    repeats: Option<repeat::Repeats>,
    gamma: Option<f64>,
    threshold: Option<f64>,
}

impl LooseMethod {
    /// The loose keywords given to `function` (its `**loose`); any other keyword is a
    /// `TypeError` ([`read_options`]).
    pub(crate) fn from_options(function: &str, loose: Option<&Bound<'_, PyDict>>) -> R<Self> {
        let mut l = Self::default();
        read_options(function, loose, |name, v| {
            match name {
                "repeats" => {
                    l.repeats = v
                        .extract::<Option<PyRef<'_, PyRepeats>>>()?
                        .map(|r| r.inner)
                }
                "gamma" => l.gamma = v.extract()?,
                "threshold" => l.threshold = v.extract()?,
                _ => return Ok(false),
            }
            Ok(true)
        })?;
        Ok(l)
    }

    /// The names of the keywords given.
    fn given(&self) -> impl Iterator<Item = &'static str> {
        [
            ("repeats", self.repeats.is_some()),
            ("gamma", self.gamma.is_some()),
            ("threshold", self.threshold.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, given)| given.then_some(name))
    }
}

/// The method of a tuning: a `dptune.Method` (then no loose keyword may be given), or the
/// older spelling, a name with its `loose` keywords (default "repeat"). `runs` is the grid size
/// of the tuned space, or the `runs` keyword.
pub(crate) fn method_from(
    method: Option<&MethodArg<'_>>,
    loose: &LooseMethod,
    runs: Option<usize>,
) -> R<Method> {
    let name = match method {
        Some(MethodArg::Method(m)) => {
            if let Some(name) = loose.given().next() {
                return Err(invalid(
                    name,
                    "a value",
                    "is part of the dptune.Method given as method=: give it there only",
                ));
            }
            return m.get().method(runs);
        }
        Some(MethodArg::Name(n)) => n.as_str(),
        None => "repeat",
    };
    if method.is_some() || loose.given().next().is_some() {
        deprecated(name)?;
    }
    match name {
        "repeat" => Ok(Method::RepeatAndSelect(loose.repeats.ok_or_else(|| {
            invalid("repeats", "None", "repeat-and-select needs a Repeats")
        })?)),
        "threshold" => Ok(Method::Threshold {
            threshold: loose
                .threshold
                .ok_or_else(|| invalid("threshold", "None", "the threshold method needs one"))?,
            gamma: loose
                .gamma
                .ok_or_else(|| invalid("gamma", "None", "the threshold method needs one"))?,
        }),
        "exhaustive" => Ok(Method::Exhaustive {
            runs: exhaustive_runs(runs)?,
        }),
        _ => Err(invalid(
            "method",
            name,
            "expected \"repeat\", \"threshold\" or \"exhaustive\"",
        )),
    }
}

/// Warns (`DeprecationWarning`) that the older spelling of method `name`, a name with loose
/// `repeats`/`gamma`/`threshold` keywords, is deprecated, saying what replaces it.
fn deprecated(name: &str) -> R<()> {
    let instead = match name {
        "threshold" => "method=dptune.Method.liu_talwar(threshold, stop_probability)",
        "exhaustive" => "method=dptune.Method.exhaustive()",
        _ => "method=dptune.Method.papernot_steinke(repeats)",
    };
    let message = format!(
        "method={name:?} with loose keywords (repeats=, gamma=, threshold=) is deprecated and \
         will be removed: give {instead}"
    );
    Python::attach(|py| {
        let category = py.get_type::<pyo3::exceptions::PyDeprecationWarning>();
        let text =
            std::ffi::CString::new(message).map_err(|e| invalid("method", name, &e.to_string()))?;
        PyErr::warn(py, &category, &text, 1)
    })
}

/// The method of a tuning over `space`, from the Python spelling: an exhaustive search runs
/// every grid point of the space.
pub(crate) fn method_over(
    space: &SearchSpace,
    method: Option<&MethodArg<'_>>,
    loose: &LooseMethod,
) -> R<Method> {
    let runs = if method.is_some_and(MethodArg::is_exhaustive) {
        Some(space.grid().py()?.len())
    } else {
        None
    };
    method_from(method, loose, runs)
}

/// Adds this file's classes to the module `dptune._core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRepeats>()?;
    m.add_class::<PyMethod>()?;
    Ok(())
}
