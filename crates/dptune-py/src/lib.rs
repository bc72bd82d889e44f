//! Python bindings of dptune: `dptune._core`, wrapped by the pure-Python package `dptune`
//! (crates/dptune-py/python/dptune). Numpy in, numpy out; every library error becomes a Python
//! exception of a specific class carrying the library's message; nothing here panics on bad
//! input and nothing prints.

#![forbid(unsafe_code)]

use std::path::PathBuf;

use numpy::{PyArray1, PyArrayDescrMethods, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use dptune::data::Records;
use dptune::federated::accounting::NoisePlan as RsNoisePlan;
use dptune::federated::secagg::{
    decode_signed, encode_signed, Client as RsClient, SecAggParams, Server as RsServer,
};
use dptune::federated::vote;
use dptune::noise::SecureRng;
use dptune::privacy::{
    convert, dpsgd, gaussian as pgauss, repeat, Bound as Bnd, Guarantee, Neighbours,
};
use dptune::select::{
    Goal, Mechanism, NoisyTopK, Prepared, Selection, Selector, Sensitivity, Spec, TopKMethod,
};
use dptune::tune::{self, Config, Domain, Method, SearchSpace, TuneOptions, Tuner, Value};
use dptune::Error;

mod accounting;
mod budget;
mod limits;
mod target;

create_exception!(
    _core,
    DptuneError,
    PyException,
    "Base class of every dptune error."
);
create_exception!(
    _core,
    InvalidParameter,
    DptuneError,
    "A caller-supplied value is outside what the mechanism or formula accepts."
);
create_exception!(
    _core,
    BudgetExceeded,
    DptuneError,
    "A charge would exceed the allowance; nothing was released."
);
create_exception!(
    _core,
    DataError,
    DptuneError,
    "The private data are malformed (non-finite values, undeclared labels, wrong shape). Raised \
     by validation before any mechanism runs, so nothing was released; inside a tuning it aborts \
     the whole tuning (it is never turned into a score)."
);
create_exception!(
    _core,
    NoRelease,
    DptuneError,
    "The mechanism cannot release anything under the given public inputs."
);

/// Maps a library error to its Python class, keeping the message.
fn err(e: Error) -> PyErr {
    let msg = e.to_string();
    match e {
        Error::InvalidParameter { .. } | Error::NeighboursMismatch { .. } => {
            InvalidParameter::new_err(msg)
        }
        Error::BudgetExceeded { .. } => BudgetExceeded::new_err(msg),
        Error::NoRelease { .. } => NoRelease::new_err(msg),
        Error::Data { .. } => DataError::new_err(msg),
        _ => DptuneError::new_err(msg),
    }
}

fn invalid(name: &str, value: impl std::fmt::Display, reason: &str) -> PyErr {
    InvalidParameter::new_err(format!("invalid parameter `{name}` = {value}: {reason}"))
}

type R<T> = PyResult<T>;
/// The most candidate runs a tuning may dispatch (and an exhaustive cost may compose).
const MAX_RUNS: usize = tune::MAX_CAP as usize;
/// Inputs at least this long are copied and selected with the GIL released.
const DETACH_AT: usize = 4096;
/// The pickling recipe of a guarantee: constructor and its argument (the exact byte encoding).
type Reduced<'py> = (Bound<'py, PyAny>, (Bound<'py, PyBytes>,));
/// The δ at which a guarantee without a pure or (ε, δ) bound shows its ε when printed.
const SHOWN_DELTA: f64 = 1e-5;
/// A 1-D int64 numpy array.
type I64Array<'py> = Bound<'py, PyArray1<i64>>;

trait IntoPy<T> {
    fn py(self) -> R<T>;
}
impl<T> IntoPy<T> for dptune::Result<T> {
    fn py(self) -> R<T> {
        self.map_err(err)
    }
}

// ------------------------------------------------------------------------------------------------
// Input conversion

/// A 1-D float vector from a numpy array (any real dtype, any strides) or a sequence of numbers.
/// NaN is passed through (the library refuses it with a named error).
fn vec_f64(name: &str, obj: &Bound<'_, PyAny>) -> R<Vec<f64>> {
    if let Ok(a) = obj.cast::<PyArray1<f64>>() {
        if let Ok(ro) = a.try_readonly() {
            return Ok(match ro.as_slice() {
                Ok(s) => s.to_vec(),
                Err(_) => ro.as_array().iter().copied().collect(),
            });
        }
    }
    if let Ok(a) = obj.cast::<numpy::PyUntypedArray>() {
        if a.ndim() != 1 {
            return Err(invalid(
                name,
                format!("an array with shape {:?}", a.shape()),
                "must be one-dimensional",
            ));
        }
        let kind = a.dtype().kind();
        if !matches!(kind, b'f' | b'i' | b'u' | b'b') {
            return Err(invalid(
                name,
                format!("an array of dtype {}", a.dtype()),
                "must hold real numbers",
            ));
        }
        let conv = a.call_method1("astype", ("float64",))?;
        let f = conv
            .cast::<PyArray1<f64>>()
            .map_err(|_| invalid(name, "array", "cannot be converted to float64"))?;
        let ro = f
            .try_readonly()
            .map_err(|_| invalid(name, "array", "is being written to elsewhere"))?;
        return Ok(ro.as_array().iter().copied().collect());
    }
    if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyBytes>() {
        return Err(invalid(name, "a string", "must be a sequence of numbers"));
    }
    let seq: Vec<Bound<'_, PyAny>> = obj
        .try_iter()
        .map_err(|_| {
            invalid(
                name,
                type_name(obj),
                "must be a 1-D array or a sequence of numbers",
            )
        })?
        .collect::<R<_>>()?;
    seq.iter()
        .enumerate()
        .map(|(i, x)| {
            x.extract::<f64>().map_err(|_| {
                invalid(
                    name,
                    format!("element {i} of type {}", type_name(x)),
                    "must be a real number",
                )
            })
        })
        .collect()
}

/// A 1-D integer vector (int64), refusing non-integral values.
fn vec_i64(name: &str, obj: &Bound<'_, PyAny>) -> R<Vec<i64>> {
    if let Ok(a) = obj.cast::<PyArray1<i64>>() {
        if let Ok(ro) = a.try_readonly() {
            return Ok(ro.as_array().iter().copied().collect());
        }
    }
    let v = vec_f64(name, obj)?;
    v.iter()
        .map(|&x| {
            if x.is_finite() && x.fract() == 0.0 && x.abs() < 9.0e15 {
                Ok(x as i64)
            } else {
                Err(invalid(name, x, "must hold integers"))
            }
        })
        .collect()
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

fn neighbours(s: &str) -> R<Neighbours> {
    match s {
        "add-remove" | "add_remove" | "add/remove-one" => Ok(Neighbours::AddRemove),
        "replace" | "replace-one" => Ok(Neighbours::Replace),
        _ => Err(invalid(
            "neighbours",
            s,
            "expected \"add-remove\" or \"replace\"",
        )),
    }
}

fn goal(s: &str) -> R<Goal> {
    match s {
        "maximize" | "max" => Ok(Goal::Maximize),
        "minimize" | "min" => Ok(Goal::Minimize),
        _ => Err(invalid("goal", s, "expected \"maximize\" or \"minimize\"")),
    }
}

/// The `seed` argument of a randomised function: an integer keys that one release; a
/// [`PySeededRun`] hands each release its own substream.
enum Seed<'py> {
    Int(u64),
    Run(Bound<'py, PySeededRun>),
}

impl<'py> FromPyObject<'_, 'py> for Seed<'py> {
    type Error = PyErr;
    fn extract(obj: pyo3::Borrowed<'_, 'py, PyAny>) -> R<Self> {
        if let Ok(run) = obj.cast::<PySeededRun>() {
            return Ok(Seed::Run(run.to_owned()));
        }
        // Any integer (numpy's too); negative or too large: Python's own OverflowError.
        match obj.extract::<u64>() {
            Ok(s) => Ok(Seed::Int(s)),
            Err(e) if e.is_instance_of::<PyTypeError>(obj.py()) => {
                Err(PyTypeError::new_err(format!(
                    "seed must be None, an int or a dptune.SeededRun, not {}",
                    type_name(&obj)
                )))
            }
            Err(e) => Err(e),
        }
    }
}

/// The generator of one release: the operating system (private), or a research key.
fn rng_from(seed: Option<Seed<'_>>) -> R<SecureRng> {
    match seed {
        None => SecureRng::from_os().py(),
        Some(Seed::Int(s)) => Ok(SecureRng::seeded(s)),
        Some(Seed::Run(run)) => Ok(run.get().next_release()),
    }
}

/// A seeded research run (NOT PRIVATE, whoever holds the seed): a reproducible source of one
/// independent noise stream per release. Release i of the run (counted in call order) draws from
/// stream i of `SecureRng::seeded(seed)`, so two releases of one run never share noise, as they
/// do when the same integer seed is passed twice (the noise then cancels in their difference).
/// Even with a secret seed this is not private: the same seed on two neighbouring datasets gives
/// the same noise on both, so the difference of the two outputs is exact.
#[pyclass(module = "dptune._core", name = "SeededRun", frozen)]
struct PySeededRun {
    seed: u64,
    streams: dptune::noise::Streams,
    next: std::sync::atomic::AtomicU64,
}

impl PySeededRun {
    fn next_release(&self) -> SecureRng {
        let i = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.streams.get(i)
    }
}

#[pymethods]
impl PySeededRun {
    #[new]
    fn new(seed: u64) -> Self {
        Self {
            seed,
            streams: SecureRng::seeded(seed).streams(),
            next: std::sync::atomic::AtomicU64::new(0),
        }
    }
    /// The seed (a research run's key is not secret: it is how the run is reproduced).
    #[getter]
    fn seed(&self) -> u64 {
        self.seed
    }
    /// How many releases have drawn from this run so far.
    #[getter]
    fn releases(&self) -> u64 {
        self.next.load(std::sync::atomic::Ordering::Relaxed)
    }
    fn __repr__(&self) -> String {
        format!(
            "SeededRun(seed={}, releases={}) [NOT PRIVATE: research run]",
            self.seed,
            self.releases()
        )
    }
}

// ------------------------------------------------------------------------------------------------
// Guarantees

/// What a mechanism promises and what a release spent (immutable).
#[pyclass(module = "dptune._core", name = "Guarantee", frozen)]
#[derive(Clone)]
struct PyGuarantee {
    inner: Guarantee,
}

fn g(inner: Guarantee) -> PyGuarantee {
    PyGuarantee { inner }
}

#[pymethods]
impl PyGuarantee {
    /// Pure ε-DP.
    #[staticmethod]
    #[pyo3(signature = (epsilon, neighbours="add-remove"))]
    fn pure(epsilon: f64, neighbours: &str) -> R<Self> {
        Ok(g(
            Guarantee::pure(epsilon, self::neighbours(neighbours)?).py()?
        ))
    }
    /// Approximate (ε, δ)-DP.
    #[staticmethod]
    #[pyo3(signature = (epsilon, delta, neighbours="add-remove"))]
    fn approx(epsilon: f64, delta: f64, neighbours: &str) -> R<Self> {
        Ok(g(Guarantee::approx(
            epsilon,
            delta,
            self::neighbours(neighbours)?,
        )
        .py()?))
    }
    /// ρ-zCDP.
    #[staticmethod]
    #[pyo3(signature = (rho, neighbours="add-remove"))]
    fn zcdp(rho: f64, neighbours: &str) -> R<Self> {
        Ok(g(Guarantee::zcdp(rho, self::neighbours(neighbours)?).py()?))
    }
    /// ε at `delta` (tightest of the bounds; rounded up).
    fn epsilon(&self, delta: f64) -> R<f64> {
        self.inner.epsilon(delta).py()
    }
    /// δ at `epsilon`.
    fn delta(&self, epsilon: f64) -> R<f64> {
        self.inner.delta(epsilon).py()
    }
    /// True when this guarantee fits within `allowance`, checked as the Ledger checks a charge
    /// (in the allowance's currency; an RDP curve pointwise at the default orders).
    fn fits_within(&self, allowance: &PyGuarantee) -> R<bool> {
        tune::cost::fits(&allowance.inner, &self.inner).py()
    }
    /// Sequential composition.
    fn compose(&self, other: &PyGuarantee) -> R<Self> {
        Ok(g(self.inner.compose(&other.inner).py()?))
    }
    /// The same guarantee under replace-one neighbours.
    fn to_replace(&self) -> R<Self> {
        Ok(g(self.inner.to_replace().py()?))
    }
    /// ε if the guarantee includes a pure bound.
    #[getter]
    fn pure_epsilon(&self) -> Option<f64> {
        self.inner.pure_eps()
    }
    /// (ε, δ) if the guarantee states an (ε, δ) bound (the one with the smallest ε).
    #[getter]
    fn approx_bound(&self) -> Option<(f64, f64)> {
        self.inner
            .bounds()
            .iter()
            .filter_map(|b| match b {
                Bnd::Approx { eps, delta } => Some((*eps, *delta)),
                _ => None,
            })
            .min_by(|a, b| a.0.total_cmp(&b.0))
    }
    /// ρ if the guarantee includes a zCDP bound.
    #[getter]
    fn rho(&self) -> Option<f64> {
        self.inner.zcdp_rho()
    }
    /// "add-remove" or "replace".
    #[getter]
    fn neighbours(&self) -> String {
        self.inner.neighbours().to_string()
    }
    /// The RDP curve at `orders` (numpy in, numpy out), if the guarantee implies one.
    fn rdp<'py>(
        &self,
        py: Python<'py>,
        orders: &Bound<'py, PyAny>,
    ) -> R<Option<Bound<'py, PyArray1<f64>>>> {
        let orders = vec_f64("orders", orders)?;
        Ok(self
            .inner
            .rdp_curve()
            .map(|c| PyArray1::from_vec(py, orders.iter().map(|&a| c.eval(a)).collect())))
    }
    /// Rebuilds a guarantee from [`dptune::privacy::Guarantee::to_bytes`] (for pickling).
    #[staticmethod]
    fn _from_bytes(data: &[u8]) -> R<Self> {
        Ok(g(Guarantee::from_bytes(data).py()?))
    }
    /// Pickled exactly (every bound, RDP curve and privacy loss distribution, bit for bit).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> R<Reduced<'py>> {
        let bytes = PyBytes::new(slf.py(), &slf.get().inner.to_bytes());
        Ok((slf.get_type().getattr("_from_bytes")?, (bytes,)))
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyGuarantee>()
            .map(|o| o.get().inner == self.inner)
            .unwrap_or(false)
    }
    fn __repr__(&self) -> String {
        format!("Guarantee({})", self.__str__())
    }
    /// The bounds with their numbers; a guarantee stated only as zCDP, an RDP curve or a PLD
    /// also shows its ε at δ = 1e-5 (`epsilon(delta)` gives it at any other δ).
    fn __str__(&self) -> String {
        let direct = self
            .inner
            .bounds()
            .iter()
            .any(|b| matches!(b, Bnd::Pure { .. } | Bnd::Approx { .. }));
        match self.inner.epsilon(SHOWN_DELTA) {
            Ok(e) if !direct => format!(
                "{}: eps = {} at delta = {}",
                self.inner,
                dptune::privacy::fmt_number(e),
                dptune::privacy::fmt_number(SHOWN_DELTA)
            ),
            _ => self.inner.to_string(),
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Selection

struct SelArgs<'a> {
    mechanism: &'a str,
    epsilon: f64,
    sensitivity: f64,
    monotonic: bool,
    goal: &'a str,
    neighbours: &'a str,
    delta: Option<f64>,
    sensitivities: Option<Vec<f64>>,
    beta: f64,
}

/// Scores are computed from the private data: a NaN among them is a `DataError` (which aborts
/// a tuning), not an `InvalidParameter` (which a tuner counts as an unusable configuration).
fn no_nan_scores(scores: &[f64]) -> R<()> {
    match scores.iter().position(|x| x.is_nan()) {
        Some(i) => Err(DataError::new_err(format!(
            "data error in `scores`: element {i} is NaN; scores must be numbers"
        ))),
        None => Ok(()),
    }
}

/// The library's one dispatch ([`Mechanism::build`]) on the Python arguments; top-k has its
/// own function (`dptune.top_k`).
fn build(scores: &[f64], a: &SelArgs<'_>) -> R<Prepared> {
    no_nan_scores(scores)?;
    let mech: Mechanism = a.mechanism.parse().py()?;
    let mech = mech.as_selection().py()?;
    if mech == Mechanism::TopK {
        return Err(invalid(
            "mechanism",
            a.mechanism,
            "use dptune.top_k for noisy top-k; the sparse vector technique is not a selection",
        ));
    }
    let mut spec = Spec::new(a.epsilon, a.sensitivity);
    spec.goal = goal(a.goal)?;
    spec.neighbours = neighbours(a.neighbours)?;
    spec.monotonic = a.monotonic;
    spec.delta = a.delta;
    spec.sensitivities = a.sensitivities.clone();
    spec.beta = a.beta;
    mech.build(scores, &spec).py()
}

/// One draw of a single-index mechanism and what it spent.
fn select_one(m: &Prepared, rng: &mut SecureRng) -> R<(usize, Guarantee)> {
    match m.draw(rng) {
        Selection::One(i) => Ok((i, m.guarantee().clone())),
        Selection::Many(_) => Err(invalid("mechanism", "top-k", "use dptune.top_k")),
    }
}

/// One private selection: returns `(index, guarantee)`.
///
/// `mechanism`: "exponential" (ε pure and ε²/8 zCDP), "gumbel" (same law), "laplace"
/// (report-noisy-max, ε pure), "permute-and-flip" (ε pure), "gaussian" (needs `delta`;
/// calibrated to the L2 sensitivity Δ·√m of the whole vector), "gem" (generalized EM with
/// per-candidate `sensitivities` and failure probability `beta`). `sensitivity` Δ bounds how far
/// one neighbour moves each score; the range paid is Δ if `monotonic` else 2Δ. `goal`:
/// "maximize" or "minimize". Scores must be finite; -inf (+inf when minimising) marks a
/// candidate that can never win (the exclusion must not depend on private data). Sampling is
/// exact. `seed=None` draws from the operating system; an integer seed is for reproducible
/// research runs and is not private against anyone who knows it.
#[pyfunction]
#[pyo3(signature = (scores, epsilon, *, mechanism="exponential", sensitivity=1.0, monotonic=false,
    goal="maximize", neighbours="add-remove", delta=None, sensitivities=None, beta=0.1, seed=None,
    budget=None, store=None))]
#[allow(clippy::too_many_arguments)]
fn select_index(
    py: Python<'_>,
    scores: &Bound<'_, PyAny>,
    epsilon: f64,
    mechanism: &str,
    sensitivity: f64,
    monotonic: bool,
    goal: &str,
    neighbours: &str,
    delta: Option<f64>,
    sensitivities: Option<&Bound<'_, PyAny>>,
    beta: f64,
    seed: Option<Seed<'_>>,
    budget: Option<&str>,
    store: Option<PathBuf>,
) -> R<(usize, PyGuarantee)> {
    let sensitivities = sensitivities
        .map(|s| vec_f64("sensitivities", s))
        .transpose()?;
    let a = SelArgs {
        mechanism,
        epsilon,
        sensitivity,
        monotonic,
        goal,
        neighbours,
        delta,
        sensitivities,
        beta,
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
                    let (i, spent) = select_one(&m, &mut rng)?;
                    return Ok((i, g(spent)));
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
    let (i, spent) = if scores.len() >= DETACH_AT {
        py.detach(|| select_one(&m, &mut rng))?
    } else {
        select_one(&m, &mut rng)?
    };
    Ok((i, g(spent)))
}

/// NOT PRIVATE: the exact selection probabilities of the implemented mechanism on the raw
/// scores (no noise, no guarantee). Wrapped by `dptune.nonprivate_selection_probabilities`,
/// which labels the result.
#[pyfunction]
#[pyo3(signature = (scores, epsilon, *, mechanism="exponential", sensitivity=1.0, monotonic=false,
    goal="maximize", neighbours="add-remove", delta=None, sensitivities=None, beta=0.1))]
#[allow(clippy::too_many_arguments)]
fn _selection_probabilities<'py>(
    py: Python<'py>,
    scores: &Bound<'py, PyAny>,
    epsilon: f64,
    mechanism: &str,
    sensitivity: f64,
    monotonic: bool,
    goal: &str,
    neighbours: &str,
    delta: Option<f64>,
    sensitivities: Option<&Bound<'py, PyAny>>,
    beta: f64,
) -> R<Bound<'py, PyArray1<f64>>> {
    let scores = vec_f64("scores", scores)?;
    let sensitivities = sensitivities
        .map(|s| vec_f64("sensitivities", s))
        .transpose()?;
    let a = SelArgs {
        mechanism,
        epsilon,
        sensitivity,
        monotonic,
        goal,
        neighbours,
        delta,
        sensitivities,
        beta,
    };
    let p = build(&scores, &a)?.probabilities().py()?;
    Ok(PyArray1::from_vec(py, p))
}

/// The release-schema violations of a Python result: `paths` are the released attribute paths
/// of `command`'s result (`"python tune"`, `"python PrivateLogisticRegression"`), checked
/// against the one declaration in `dptune::release_schema`; an empty list means every field
/// is declared.
#[pyfunction]
fn _release_violations(command: &str, paths: Vec<String>) -> R<Vec<String>> {
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

/// What one selection costs (computed from public parameters on a dummy score vector).
#[pyfunction]
#[pyo3(signature = (epsilon, *, mechanism="exponential", neighbours="add-remove", delta=None,
    k=None))]
fn selection_cost(
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
        let nb = self::neighbours(neighbours)?;
        let t = NoisyTopK::new(
            &dummy,
            Goal::Maximize,
            Sensitivity::general(1.0).py()?,
            epsilon,
            k,
            m,
            nb,
        )
        .py()?;
        return Ok(g(t.guarantee().clone()));
    }
    let a = SelArgs {
        mechanism,
        epsilon,
        sensitivity: 1.0,
        monotonic: false,
        goal: "maximize",
        neighbours,
        delta,
        sensitivities: None,
        beta: 0.1,
    };
    Ok(g(build(&dummy, &a)?.guarantee().clone()))
}

/// Noisy top-k: (indices as int64 array, guarantee).
#[pyfunction]
#[pyo3(signature = (scores, epsilon, k, *, method="permute-and-flip", sensitivity=1.0,
    monotonic=false, goal="maximize", neighbours="add-remove", seed=None, budget=None, store=None))]
#[allow(clippy::too_many_arguments)]
fn top_k<'py>(
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
) -> R<(Bound<'py, PyArray1<i64>>, PyGuarantee)> {
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
    let t = NoisyTopK::new(
        &scores,
        self::goal(goal)?,
        Sensitivity::new(sensitivity, monotonic).py()?,
        epsilon,
        k,
        m,
        self::neighbours(neighbours)?,
    )
    .py()?;
    let mut rng = rng_from(seed)?;
    budget::charge(budget, store.as_deref(), t.guarantee(), "top_k")?;
    let r = t.select(&mut rng);
    let idx: Vec<i64> = r.value.iter().map(|&i| i as i64).collect();
    Ok((PyArray1::from_vec(py, idx), g(r.spent)))
}

/// Times `repeats` selections in Rust alone (construct + select each time), for the overhead
/// benchmark: returns nanoseconds per call.
#[pyfunction]
#[pyo3(signature = (scores, epsilon, repeats, *, mechanism="exponential", sensitivity=1.0, seed=0))]
fn _time_select_rust(
    py: Python<'_>,
    scores: &Bound<'_, PyAny>,
    epsilon: f64,
    repeats: u32,
    mechanism: &str,
    sensitivity: f64,
    seed: u64,
) -> R<f64> {
    let scores = vec_f64("scores", scores)?;
    let a = SelArgs {
        mechanism,
        epsilon,
        sensitivity,
        monotonic: false,
        goal: "maximize",
        neighbours: "add-remove",
        delta: Some(1e-6),
        sensitivities: None,
        beta: 0.1,
    };
    let n = repeats.max(1);
    py.detach(|| -> R<f64> {
        let start = std::time::Instant::now();
        let mut acc = 0usize;
        for i in 0..n {
            let mut rng = SecureRng::seeded(seed.wrapping_add(i as u64));
            acc ^= select_one(&build(&scores, &a)?, &mut rng)?.0;
        }
        std::hint::black_box(acc);
        Ok(start.elapsed().as_nanos() as f64 / n as f64)
    })
}

// ------------------------------------------------------------------------------------------------
// Accounting

/// ε of the Gaussian mechanism (exact Balle–Wang) for one release.
#[pyfunction]
#[pyo3(signature = (sigma, delta, sensitivity=1.0))]
fn gaussian_epsilon(sigma: f64, delta: f64, sensitivity: f64) -> R<f64> {
    pgauss::gaussian_epsilon(sigma, sensitivity, delta).py()
}

/// The smallest σ with (ε, δ) for the Gaussian mechanism (exact calibration).
#[pyfunction]
#[pyo3(signature = (epsilon, delta, sensitivity=1.0))]
fn gaussian_sigma(epsilon: f64, delta: f64, sensitivity: f64) -> R<f64> {
    pgauss::gaussian_sigma(epsilon, delta, sensitivity).py()
}

/// ρ = Δ²/(2σ²) of the Gaussian mechanism.
#[pyfunction]
#[pyo3(signature = (sigma, sensitivity=1.0))]
fn gaussian_rho(sigma: f64, sensitivity: f64) -> R<f64> {
    pgauss::gaussian_rho(sigma, sensitivity).py()
}

/// DP-SGD (Poisson-subsampled Gaussian, `steps` steps): the RDP guarantee.
#[pyfunction]
#[pyo3(signature = (sampling_rate, noise_multiplier, steps))]
fn dpsgd_guarantee(sampling_rate: f64, noise_multiplier: f64, steps: u64) -> R<PyGuarantee> {
    Ok(g(dpsgd::dpsgd_guarantee(
        sampling_rate,
        noise_multiplier,
        steps,
    )
    .py()?))
}

/// The smallest noise multiplier (relative 1e-3, rounded up) for which `steps` steps of DP-SGD
/// with continuous Gaussian noise at the public Poisson rate `sampling_rate` fit `allowance`.
#[pyfunction]
#[pyo3(signature = (allowance, sampling_rate, steps))]
fn dpsgd_noise_multiplier(allowance: &PyGuarantee, sampling_rate: f64, steps: u64) -> R<f64> {
    tune::cost::dpsgd_noise_multiplier(&allowance.inner, sampling_rate, steps).py()
}

/// The largest ε whose ε-DP release fits `allowance` (rounded down).
#[pyfunction]
fn largest_pure_within(allowance: &PyGuarantee) -> R<f64> {
    tune::cost::largest_pure_within(&allowance.inner).py()
}

/// DP-SGD ε at δ: `dpsgd_guarantee(...).epsilon(delta)`, the one conversion of the RDP curve
/// (optimised over continuous orders; dp_accounting's fixed grid gives a slightly larger ε).
#[pyfunction]
#[pyo3(signature = (sampling_rate, noise_multiplier, steps, delta))]
fn dpsgd_epsilon(sampling_rate: f64, noise_multiplier: f64, steps: u64, delta: f64) -> R<f64> {
    dpsgd::dpsgd_guarantee(sampling_rate, noise_multiplier, steps)
        .py()?
        .epsilon(delta)
        .py()
}

/// An exact noisy count: `count` + discrete Laplace noise of scale 1/ε rounded up (Canonne,
/// Kamath & Steinke, arXiv 2004.00010, Alg. 2). A count changes by at most 1 when one record is
/// added or removed, and by at most 1 when one is replaced, so this is ε-DP under either
/// relation (Dwork–Roth Thm 3.6); the guarantee carries the `neighbours` the caller names.
/// Returns (noisy count, guarantee).
#[pyfunction]
#[pyo3(signature = (count, epsilon, *, neighbours="add-remove", seed=None, budget=None,
    store=None))]
fn noisy_count(
    count: i64,
    epsilon: f64,
    neighbours: &str,
    seed: Option<Seed<'_>>,
    budget: Option<&str>,
    store: Option<PathBuf>,
) -> R<(i64, PyGuarantee)> {
    dptune::error::check_positive("epsilon", epsilon).py()?;
    let spent = Guarantee::pure(epsilon, self::neighbours(neighbours)?).py()?;
    let noise = dptune::noise::DiscreteLaplace::from_scale_f64((1.0 / epsilon).next_up()).py()?;
    let mut rng = rng_from(seed)?;
    budget::charge(budget, store.as_deref(), &spent, "noisy_count")?;
    Ok((count.saturating_add(noise.sample(&mut rng)), g(spent)))
}

/// A numpy array of record indices.
type Indices<'py> = Bound<'py, PyArray1<i64>>;

/// Splits records `0..n` by one exact Bernoulli(`fraction`) coin per record (`tune::split_by_coin`):
/// the sides are disjoint functions of the records, so mechanisms on them compose in parallel
/// under add/remove neighbours, which a fixed-size cut does not. Returns (first, second) index
/// arrays; either side may be empty. A size whose index arrays (about 24 bytes per record at
/// the peak: two growing vectors, then the arrays) cannot fit in memory is refused up front.
#[pyfunction]
#[pyo3(signature = (n, fraction, *, seed=None))]
fn split_by_coin<'py>(
    py: Python<'py>,
    n: &Bound<'py, PyAny>,
    fraction: f64,
    seed: Option<Seed<'_>>,
) -> R<(Indices<'py>, Indices<'py>)> {
    let n = limits::size_arg("n", n)?;
    limits::check_size("n", n, 24)?;
    let n = usize::try_from(n).map_err(|_| invalid("n", n, "too large for this platform"))?;
    let mut rng = rng_from(seed)?;
    let s = tune::split_by_coin(n, fraction, &mut rng).py()?;
    let idx = |v: Vec<usize>| PyArray1::from_iter(py, v.into_iter().map(|i| i as i64));
    Ok((idx(s.first), idx(s.second)))
}

/// Gaussian noise on a vector of L2 sensitivity `sensitivity` (under the caller's
/// `neighbours` relation, which the guarantee carries), calibrated to a ρ-zCDP allowance: exact
/// discrete Gaussian noise on a power-of-two grid with the rounding charged
/// (`noise::GridGaussian::within_rho`); returns (noisy values, guarantee with ρ' ≤ ρ). The
/// values are the private data: a non-finite one is a `DataError`, checked before any noise is
/// drawn.
#[pyfunction]
#[pyo3(signature = (values, sensitivity, rho, *, neighbours="add-remove", seed=None, budget=None,
    store=None))]
#[allow(clippy::too_many_arguments)]
fn gaussian_release<'py>(
    py: Python<'py>,
    values: &Bound<'py, PyAny>,
    sensitivity: f64,
    rho: f64,
    neighbours: &str,
    seed: Option<Seed<'_>>,
    budget: Option<&str>,
    store: Option<PathBuf>,
) -> R<(Bound<'py, PyArray1<f64>>, PyGuarantee)> {
    let v = vec_f64("values", values)?;
    let nb = self::neighbours(neighbours)?;
    let mech = dptune::noise::GridGaussian::within_rho(sensitivity, rho, v.len().max(1)).py()?;
    if let Some(i) = v.iter().position(|x| !x.is_finite()) {
        return Err(DataError::new_err(format!(
            "data error in `values`: element {i} is {}; the released values must be finite",
            v[i]
        )));
    }
    let mut rng = rng_from(seed)?;
    let spent = Guarantee::zcdp(mech.rho(), nb).py()?;
    budget::charge(budget, store.as_deref(), &spent, "gaussian_release")?;
    let out = mech.release_vec(&mut rng, &v).py()?;
    Ok((PyArray1::from_vec(py, out), g(spent)))
}

/// ε of ρ-zCDP at δ.
#[pyfunction]
fn zcdp_epsilon(rho: f64, delta: f64) -> R<f64> {
    convert::zcdp_epsilon(rho, delta).py()
}

/// δ of ρ-zCDP at ε.
#[pyfunction]
fn zcdp_delta(rho: f64, epsilon: f64) -> R<f64> {
    convert::zcdp_delta(rho, epsilon).py()
}

/// The largest ρ whose zCDP implies (ε, δ).
#[pyfunction]
fn zcdp_rho_for(epsilon: f64, delta: f64) -> R<f64> {
    convert::zcdp_rho_for(epsilon, delta).py()
}

/// ε-DP ⇒ ε²/2-zCDP.
#[pyfunction]
fn pure_to_zcdp(epsilon: f64) -> R<f64> {
    convert::pure_to_zcdp(epsilon).py()
}

/// The distribution of the number of runs K of repeat-and-select.
#[pyclass(module = "dptune._core", name = "Repeats", frozen)]
#[derive(Clone, Copy)]
struct PyRepeats {
    inner: repeat::Repeats,
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
fn method_from(
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
fn tuning_cost(
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
fn calibrate(
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

fn value_to_py<'py>(py: Python<'py>, v: &Value) -> R<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Float(x) => PyFloat::new(py, *x).into_any(),
        Value::Int(i) => PyInt::new(py, *i).into_any(),
        Value::Text(s) => PyString::new(py, s).into_any(),
    })
}

fn value_from_py(name: &str, v: &Bound<'_, PyAny>) -> R<Value> {
    if v.is_instance_of::<pyo3::types::PyBool>() {
        return Err(invalid(name, "a bool", "choices must be int, float or str"));
    }
    if v.is_instance_of::<PyInt>() {
        return Ok(Value::Int(v.extract()?));
    }
    if v.is_instance_of::<PyFloat>() {
        return Ok(Value::Float(v.extract()?));
    }
    if v.is_instance_of::<PyString>() {
        return Ok(Value::Text(v.extract()?));
    }
    if let Ok(x) = v.extract::<i64>() {
        return Ok(Value::Int(x));
    }
    if let Ok(x) = v.extract::<f64>() {
        return Ok(Value::Float(x));
    }
    Err(invalid(
        name,
        type_name(v),
        "choices must be int, float or str",
    ))
}

/// A search space from a dict: name → list of choices, or ("uniform"|"log-uniform", low, high),
/// or ("int", low, high).
fn space_from(obj: &Bound<'_, PyAny>) -> R<SearchSpace> {
    let d = obj
        .cast::<PyDict>()
        .map_err(|_| invalid("space", type_name(obj), "must be a dict name -> domain"))?;
    let mut params = Vec::new();
    for (k, v) in d.iter() {
        let name: String = k
            .extract()
            .map_err(|_| invalid("space", type_name(&k), "names must be strings"))?;
        let dom = if let Ok(t) = v.cast::<PyTuple>() {
            let kind: String = t
                .get_item(0)
                .and_then(|x| x.extract())
                .map_err(|_| invalid("space", &name, "a range is (kind, low, high)"))?;
            if t.len() != 3 {
                return Err(invalid("space", &name, "a range is (kind, low, high)"));
            }
            match kind.as_str() {
                "uniform" => Domain::Uniform {
                    low: t.get_item(1)?.extract()?,
                    high: t.get_item(2)?.extract()?,
                },
                "log-uniform" | "log_uniform" | "loguniform" => Domain::LogUniform {
                    low: t.get_item(1)?.extract()?,
                    high: t.get_item(2)?.extract()?,
                },
                "int" => Domain::Int {
                    low: t.get_item(1)?.extract()?,
                    high: t.get_item(2)?.extract()?,
                },
                _ => {
                    return Err(invalid(
                        "space",
                        &name,
                        "kind must be \"uniform\", \"log-uniform\" or \"int\"",
                    ))
                }
            }
        } else if let Ok(l) = v.cast::<PyList>() {
            let values = l
                .iter()
                .map(|x| value_from_py("space", &x))
                .collect::<R<Vec<_>>>()?;
            Domain::Choice { values }
        } else {
            return Err(invalid(
                "space",
                &name,
                "a domain is a list of choices or a (kind, low, high) tuple",
            ));
        };
        params.push((name, dom));
    }
    SearchSpace::new(params).py()
}

fn config_to_py<'py>(py: Python<'py>, c: &Config) -> R<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in c {
        d.set_item(k, value_to_py(py, v)?)?;
    }
    Ok(d)
}

/// The data-independent part of one tuning. Holds the number of runs privately: Python sees
/// only the tasks to dispatch (their count equals K, or the cap T in capped mode).
#[pyclass(module = "dptune._core", name = "_TuningPlan")]
struct TuningPlan {
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
fn _plan_tuning(
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
struct Nothing(usize);
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
struct ReferenceLearner;
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
fn reference_score(c: &Config, seed: u64) -> f64 {
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
fn _reference_tune<'py>(
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
fn _reference_score(config: &Bound<'_, PyAny>, seed: u64) -> R<f64> {
    let d = config
        .cast::<PyDict>()
        .map_err(|_| invalid("config", type_name(config), "must be a dict"))?;
    let mut c = Config::new();
    for (k, v) in d.iter() {
        c.insert(k.extract()?, value_from_py("config", &v)?);
    }
    Ok(reference_score(&c, seed))
}

// ------------------------------------------------------------------------------------------------
// Federated (DP-HYPE)

/// The distributed Skellam noise of one DP-HYPE round and its client-level accounting.
#[pyclass(module = "dptune._core", name = "NoisePlan", frozen)]
#[derive(Clone)]
struct PyNoisePlan {
    inner: RsNoisePlan,
    k: usize,
}

#[pymethods]
impl PyNoisePlan {
    /// Smallest total variance whose guarantee is at most (ε, δ) with `min_survivors` clients,
    /// `colluders` of whom may collude (each share is sized for `min_survivors − colluders`).
    #[staticmethod]
    #[pyo3(signature = (k, epsilon, delta, min_survivors, neighbours="replace", colluders=0))]
    fn calibrate(
        k: usize,
        epsilon: f64,
        delta: f64,
        min_survivors: usize,
        neighbours: &str,
        colluders: usize,
    ) -> R<Self> {
        let nb = self::neighbours(neighbours)?;
        Ok(Self {
            inner: RsNoisePlan::calibrate(k, nb, min_survivors, colluders, epsilon, delta).py()?,
            k,
        })
    }
    /// A plan with total variance `variance` reached by any `min_survivors` clients of whom at
    /// most `colluders` collude.
    #[staticmethod]
    #[pyo3(signature = (k, variance, min_survivors, neighbours="replace", colluders=0))]
    fn with_variance(
        k: usize,
        variance: f64,
        min_survivors: usize,
        neighbours: &str,
        colluders: usize,
    ) -> R<Self> {
        let nb = self::neighbours(neighbours)?;
        Ok(Self {
            inner: RsNoisePlan::with_variance(k, nb, min_survivors, colluders, variance).py()?,
            k,
        })
    }
    /// The colluding survivors c the guarantee holds against (an assumption).
    #[getter]
    fn colluders(&self) -> usize {
        self.inner.colluders()
    }
    /// Votes per client.
    #[getter]
    fn k(&self) -> usize {
        self.k
    }
    /// Total variance μ for exactly t survivors.
    #[getter]
    fn total_variance(&self) -> f64 {
        self.inner.total_variance()
    }
    /// t.
    #[getter]
    fn min_survivors(&self) -> usize {
        self.inner.min_survivors()
    }
    /// (guarantee, ε at δ) of a release with `survivors` contributions; NoRelease below t.
    fn guarantee(&self, survivors: usize, delta: f64) -> R<(PyGuarantee, f64)> {
        let (gu, e) = self.inner.guarantee(survivors, delta).py()?;
        Ok((g(gu), e))
    }
    fn __repr__(&self) -> String {
        format!(
            "NoisePlan(k={}, total_variance={}, min_survivors={}, colluders={}, neighbours={})",
            self.k,
            self.inner.total_variance(),
            self.inner.min_survivors(),
            self.inner.colluders(),
            self.inner.neighbours()
        )
    }
}

/// Ones at the k best scores (ties to the lower index), as uint8.
#[pyfunction]
fn top_k_vote<'py>(
    py: Python<'py>,
    scores: &Bound<'py, PyAny>,
    k: usize,
) -> R<Bound<'py, PyArray1<u8>>> {
    let s = vec_f64("scores", scores)?;
    Ok(PyArray1::from_vec(py, vote::top_k_vote(&s, k).py()?))
}

fn client_rng(seed: Option<u64>, stream: u64) -> R<SecureRng> {
    match seed {
        Some(s) => Ok(SecureRng::seeded(s).streams().get(stream)),
        None => SecureRng::from_os().py(),
    }
}

/// A client's noisy submission: its top-k vote of `scores` plus its Skellam share, int64.
/// With `seed` (research runs only), the noise comes from stream `stream` of that seed.
#[pyfunction]
#[pyo3(signature = (scores, plan, *, seed=None, stream=0))]
fn noisy_vote<'py>(
    py: Python<'py>,
    scores: &Bound<'py, PyAny>,
    plan: &PyNoisePlan,
    seed: Option<u64>,
    stream: u64,
) -> R<Bound<'py, PyArray1<i64>>> {
    let s = vec_f64("scores", scores)?;
    let v = vote::top_k_vote(&s, plan.k).py()?;
    let share = plan.inner.share().py()?;
    let mut rng = client_rng(seed, stream)?;
    let out = vote::noisy_vote(&v, s.len(), plan.k, &share, &mut rng).py()?;
    Ok(PyArray1::from_vec(py, out))
}

/// The index of the largest count, ties broken uniformly at random.
#[pyfunction]
#[pyo3(signature = (counts, *, seed=None))]
fn select_argmax(counts: &Bound<'_, PyAny>, seed: Option<Seed<'_>>) -> R<usize> {
    let c = vec_i64("counts", counts)?;
    let mut rng = rng_from(seed)?;
    vote::select_argmax(&c, &mut rng).py()
}

/// int64 values → uint32 in ℤ_{2^32} (two's complement).
#[pyfunction]
fn encode_signed_u32<'py>(
    py: Python<'py>,
    values: &Bound<'py, PyAny>,
) -> R<Bound<'py, PyArray1<u32>>> {
    let v = vec_i64("values", values)?;
    Ok(PyArray1::from_vec(py, encode_signed("values", &v).py()?))
}

/// uint32 in ℤ_{2^32} → centred int64.
#[pyfunction]
fn decode_signed_u32<'py>(
    py: Python<'py>,
    values: &Bound<'py, PyAny>,
) -> R<Bound<'py, PyArray1<i64>>> {
    let v = vec_i64("values", values)?;
    let u: Vec<u32> = v
        .iter()
        .map(|&x| u32::try_from(x).map_err(|_| invalid("values", x, "must lie in [0, 2^32)")))
        .collect::<R<_>>()?;
    Ok(PyArray1::from_vec(py, decode_signed(&u)))
}

/// Complete-graph parameters (Shamir threshold max(t, ⌊n/2⌋ + 1)), refused if they cannot
/// resist a server colluding with `colluders` clients.
fn params(
    round: u64,
    clients: usize,
    dim: usize,
    min_survivors: usize,
    colluders: usize,
) -> R<SecAggParams> {
    let p = SecAggParams::complete(round, clients, dim, min_survivors).py()?;
    p.check_colluders(colluders).py()?;
    Ok(p)
}

/// A secure-aggregation client (complete graph, Shamir threshold max(t, ⌊n/2⌋ + 1)). Its keys
/// come from `key` (32 secret bytes); the same key and the same messages rebuild the same state
/// in a later process.
#[pyclass(module = "dptune._core", name = "SecAggClient")]
struct PySecAggClient {
    inner: RsClient,
}

#[pymethods]
impl PySecAggClient {
    #[new]
    #[pyo3(signature = (id, clients, min_survivors, input, key, round=0, colluders=0))]
    fn new(
        id: usize,
        clients: usize,
        min_survivors: usize,
        input: &Bound<'_, PyAny>,
        key: &[u8],
        round: u64,
        colluders: usize,
    ) -> R<Self> {
        let v = vec_i64("input", input)?;
        let enc = encode_signed("input", &v).py()?;
        let key: [u8; 32] = key
            .try_into()
            .map_err(|_| invalid("key", key.len(), "must be 32 bytes"))?;
        let p = params(round, clients, enc.len(), min_survivors, colluders)?;
        Ok(Self {
            inner: RsClient::new(id, p, enc, SecureRng::from_key(key)).py()?,
        })
    }
    /// Stage 0: this client's public keys.
    fn advertise_keys<'py>(&mut self, py: Python<'py>) -> R<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.advertise_keys().py()?))
    }
    /// Stage 1: given the server's key message, the encrypted shares.
    fn share_keys<'py>(&mut self, py: Python<'py>, msg: &[u8]) -> R<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.share_keys(msg).py()?))
    }
    /// Stage 2: given the forwarded shares, the masked input.
    fn masked_input<'py>(&mut self, py: Python<'py>, msg: &[u8]) -> R<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.masked_input(msg).py()?))
    }
    /// Stage 3: given the survivor set, this client's attestations of it.
    fn attest<'py>(&mut self, py: Python<'py>, msg: &[u8]) -> R<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.attest(msg).py()?))
    }
    /// Stage 4: given the forwarded attestations, the shares the server may see.
    fn unmask<'py>(&mut self, py: Python<'py>, msg: &[u8]) -> R<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.unmask(msg).py()?))
    }
}

/// A secure-aggregation server (complete graph, Shamir threshold max(t, ⌊n/2⌋ + 1)).
#[pyclass(module = "dptune._core", name = "SecAggServer")]
struct PySecAggServer {
    inner: RsServer,
}

#[pymethods]
impl PySecAggServer {
    #[new]
    #[pyo3(signature = (clients, dim, min_survivors, round=0, colluders=0))]
    fn new(
        clients: usize,
        dim: usize,
        min_survivors: usize,
        round: u64,
        colluders: usize,
    ) -> R<Self> {
        Ok(Self {
            inner: RsServer::new(params(round, clients, dim, min_survivors, colluders)?),
        })
    }
    /// Accepts one client message (refused messages raise; the sender counts as dropped).
    fn receive(&mut self, msg: &[u8]) -> R<()> {
        self.inner.receive(msg).py()
    }
    /// Closes the stage: a dict recipient id → bytes to deliver.
    fn advance<'py>(&mut self, py: Python<'py>) -> R<Bound<'py, PyDict>> {
        let out = self.inner.advance().py()?;
        let d = PyDict::new(py);
        for (id, b) in out {
            d.set_item(id, PyBytes::new(py, &b))?;
        }
        Ok(d)
    }
    /// After the unmask stage: (sum as centred int64, survivor ids as int64).
    fn finish<'py>(&mut self, py: Python<'py>) -> R<(I64Array<'py>, I64Array<'py>)> {
        let a = self.inner.finish().py()?;
        let surv: Vec<i64> = a.survivors.iter().map(|&x| x as i64).collect();
        Ok((
            PyArray1::from_vec(py, decode_signed(&a.sum)),
            PyArray1::from_vec(py, surv),
        ))
    }
}

/// Refuses a Python value that is not a callable (used by the tuner's argument checks).
#[pyfunction]
fn _check_callable(obj: &Bound<'_, PyAny>) -> R<()> {
    if obj.is_callable() {
        Ok(())
    } else {
        Err(PyTypeError::new_err(format!(
            "{} is not callable",
            type_name(obj)
        )))
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("DptuneError", py.get_type::<DptuneError>())?;
    m.add("InvalidParameter", py.get_type::<InvalidParameter>())?;
    m.add("BudgetExceeded", py.get_type::<BudgetExceeded>())?;
    m.add("NoRelease", py.get_type::<NoRelease>())?;
    m.add("DataError", py.get_type::<DataError>())?;
    m.add_class::<PySeededRun>()?;
    m.add_class::<PyGuarantee>()?;
    m.add_class::<PyRepeats>()?;
    m.add_class::<TuningPlan>()?;
    m.add_class::<PyNoisePlan>()?;
    m.add_class::<PySecAggClient>()?;
    m.add_class::<PySecAggServer>()?;
    for f in [
        wrap_pyfunction!(select_index, m)?,
        wrap_pyfunction!(_selection_probabilities, m)?,
        wrap_pyfunction!(selection_cost, m)?,
        wrap_pyfunction!(_release_violations, m)?,
        wrap_pyfunction!(top_k, m)?,
        wrap_pyfunction!(_time_select_rust, m)?,
        wrap_pyfunction!(gaussian_epsilon, m)?,
        wrap_pyfunction!(gaussian_sigma, m)?,
        wrap_pyfunction!(gaussian_rho, m)?,
        wrap_pyfunction!(dpsgd_guarantee, m)?,
        wrap_pyfunction!(dpsgd_noise_multiplier, m)?,
        wrap_pyfunction!(largest_pure_within, m)?,
        wrap_pyfunction!(dpsgd_epsilon, m)?,
        wrap_pyfunction!(zcdp_epsilon, m)?,
        wrap_pyfunction!(noisy_count, m)?,
        wrap_pyfunction!(gaussian_release, m)?,
        wrap_pyfunction!(split_by_coin, m)?,
        wrap_pyfunction!(zcdp_delta, m)?,
        wrap_pyfunction!(zcdp_rho_for, m)?,
        wrap_pyfunction!(pure_to_zcdp, m)?,
        wrap_pyfunction!(tuning_cost, m)?,
        wrap_pyfunction!(calibrate, m)?,
        wrap_pyfunction!(_plan_tuning, m)?,
        wrap_pyfunction!(_reference_tune, m)?,
        wrap_pyfunction!(_reference_score, m)?,
        wrap_pyfunction!(top_k_vote, m)?,
        wrap_pyfunction!(noisy_vote, m)?,
        wrap_pyfunction!(select_argmax, m)?,
        wrap_pyfunction!(encode_signed_u32, m)?,
        wrap_pyfunction!(decode_signed_u32, m)?,
        wrap_pyfunction!(_check_callable, m)?,
    ] {
        m.add_function(f)?;
    }
    budget::register(m)?;
    accounting::register(m)?;
    target::register(m)?;
    Ok(())
}
