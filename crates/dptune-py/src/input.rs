//! Input conversion: numpy arrays and Python values to the library's types, seeds to generators.

use numpy::{PyArray1, PyArrayDescrMethods, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};

use dptune::noise::SecureRng;
use dptune::privacy::Neighbours;
use dptune::select::Goal;

use crate::errors::{invalid, IntoPy, R};

/// A 1-D float vector from a numpy array (any real dtype, any strides) or a sequence of numbers.
/// NaN is passed through (the library refuses it with a named error).
pub(crate) fn vec_f64(name: &str, obj: &Bound<'_, PyAny>) -> R<Vec<f64>> {
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
pub(crate) fn vec_i64(name: &str, obj: &Bound<'_, PyAny>) -> R<Vec<i64>> {
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

pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

pub(crate) fn neighbours(s: &str) -> R<Neighbours> {
    match s {
        "add_remove" | "add-remove" | "add/remove-one" => Ok(Neighbours::AddRemove),
        "replace_one" | "replace" | "replace-one" => Ok(Neighbours::Replace),
        _ => Err(invalid(
            "neighbours",
            s,
            "expected \"add_remove\" or \"replace_one\"",
        )),
    }
}

pub(crate) fn goal(s: &str) -> R<Goal> {
    match s {
        "maximize" | "max" => Ok(Goal::Maximize),
        "minimize" | "min" => Ok(Goal::Minimize),
        _ => Err(invalid("goal", s, "expected \"maximize\" or \"minimize\"")),
    }
}

/// Reads the `**options` of a function whose keywords form one struct (declared once, so the
/// functions that share it cannot drift apart): `set(name, value)` stores a known option and
/// returns `Ok(false)` for any other name, which is then the `TypeError` Python raises for an
/// unexpected keyword, so a misspelt option is refused, never ignored. A value that does not
/// convert carries the note "while processing 'name'", as PyO3 adds it for a declared keyword.
///
/// The error does not depend on the order of the caller's keywords: an unknown keyword is
/// reported before any badly typed one (as PyO3 checks the names before converting), and among
/// several of a kind the alphabetically first is reported.
pub(crate) fn read_options(
    function: &str,
    options: Option<&Bound<'_, PyDict>>,
    mut set: impl FnMut(&str, &Bound<'_, PyAny>) -> R<bool>,
) -> R<()> {
    let mut unknown: Option<String> = None;
    let mut bad: Option<(String, PyErr)> = None;
    for (key, value) in options.into_iter().flat_map(|o| o.iter()) {
        let key = key.cast_into::<PyString>()?;
        let name = key.to_str()?;
        match set(name, &value) {
            Ok(true) => {}
            Ok(false) => {
                if unknown.as_deref().is_none_or(|u| name < u) {
                    unknown = Some(name.to_owned());
                }
            }
            Err(e) => {
                // The note is context only: where Python cannot add one (before 3.11), the
                // error stands as it is.
                let _ = e
                    .value(value.py())
                    .call_method1("add_note", (format!("while processing '{name}'"),));
                if bad.as_ref().is_none_or(|(b, _)| name < b.as_str()) {
                    bad = Some((name.to_owned(), e));
                }
            }
        }
    }
    if let Some(name) = unknown {
        return Err(PyTypeError::new_err(format!(
            "{function}() got an unexpected keyword argument '{name}'"
        )));
    }
    bad.map_or(Ok(()), |(_, e)| Err(e))
}

/// The `seed` argument of a randomised function: an integer keys that one release; a
/// [`PySeededRun`] hands each release its own substream.
pub(crate) enum Seed<'py> {
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
pub(crate) fn rng_from(seed: Option<Seed<'_>>) -> R<SecureRng> {
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
pub(crate) struct PySeededRun {
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

/// Refuses a Python value that is not a callable (used by the tuner's argument checks).
#[pyfunction]
pub(crate) fn _check_callable(obj: &Bound<'_, PyAny>) -> R<()> {
    if obj.is_callable() {
        Ok(())
    } else {
        Err(PyTypeError::new_err(format!(
            "{} is not callable",
            type_name(obj)
        )))
    }
}

/// Adds this file's classes and functions to the module `dptune._core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySeededRun>()?;
    m.add_function(wrap_pyfunction!(_check_callable, m)?)?;
    Ok(())
}
