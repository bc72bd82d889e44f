//! `dptune.accounting` in Python: the accountant of `dptune account compose` and
//! `dptune account dpsgd`, bound rather than reimplemented.
//!
//! A composition is parsed by the library's one parser ([`ComposeSpec`], serde, the form of the
//! golden cases' `inputs`) from JSON text, and composed by [`ComposeSpec::guarantee`]: every
//! part's closed-form bound together with its privacy loss distribution, so ε is the minimum
//! over the valid routes and the winner is named, exactly as the CLI reports it. The reports
//! are the library's report types ([`dptune::privacy::report`]) that the CLI prints with
//! `--json`, built by the same functions, so a number printed by `dptune account ... --json`
//! and the one returned here are the same f64.

use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;

use dptune::privacy::pld::{ComposeSpec, Pld};
use dptune::privacy::report::{pld_config, CompositionAccount, DpsgdAccount};
use dptune::privacy::Guarantee;

use crate::errors::{invalid, IntoPy, R};
use crate::guarantee::{g, PyGuarantee};
use crate::input::vec_f64;

/// A library report's JSON (`serde_json::to_value` of it: the CLI's `--json` object) as a
/// Python dict, through `json.loads`, which reads the shortest round-trip decimals serde_json
/// writes back to the same f64.
fn to_dict<'py>(py: Python<'py>, report: serde_json::Result<Value>) -> R<Bound<'py, PyDict>> {
    let text = report
        .map_err(|e| invalid("report", "the library's", &e.to_string()))?
        .to_string();
    let obj = py.import("json")?.call_method1("loads", (text,))?;
    Ok(obj.cast_into::<PyDict>()?)
}

/// A composition of mechanisms (immutable): its guarantee with every route, and queries.
#[pyclass(module = "dptune._core", name = "Composition", frozen)]
struct PyComposition {
    spec: ComposeSpec,
    guarantee: Guarantee,
    interval: f64,
}

impl PyComposition {
    fn pld(&self) -> &Pld {
        // `ComposeSpec::guarantee` attaches every part's PLD, so the composition has one.
        self.guarantee
            .pld()
            .expect("a composed specification carries its privacy loss distribution")
    }

    fn at(&self, delta: Option<f64>) -> f64 {
        delta.unwrap_or(self.spec.delta)
    }
}

#[pymethods]
impl PyComposition {
    /// ε at `delta` (default: the specification's `delta`): the minimum over the valid routes
    /// (PLD, RDP, zCDP, pure, approx), rounded up.
    #[pyo3(signature = (delta=None))]
    fn epsilon(&self, py: Python<'_>, delta: Option<f64>) -> R<f64> {
        let d = self.at(delta);
        py.detach(|| self.guarantee.epsilon_route(d))
            .py()
            .map(|r| r.0)
    }
    /// The route that gives `epsilon` at `delta`: "pld", "rdp", "zcdp", "pure" or "approx".
    #[pyo3(signature = (delta=None))]
    fn route(&self, py: Python<'_>, delta: Option<f64>) -> R<String> {
        let d = self.at(delta);
        let (_, route) = py.detach(|| self.guarantee.epsilon_route(d)).py()?;
        Ok(route.to_string())
    }
    /// ε at `delta` by the privacy loss distribution alone. A δ below what the PLD can certify
    /// (its infinite-loss mass plus the charged numerical error) is an `InvalidParameter`
    /// naming `delta`: the PLD alone gives no finite ε there (`epsilon` may, by another
    /// route).
    #[pyo3(signature = (delta=None))]
    fn epsilon_pld(&self, py: Python<'_>, delta: Option<f64>) -> R<f64> {
        let d = self.at(delta);
        py.detach(|| self.pld().epsilon(d)).map_err(|e| match e {
            dptune::Error::Conversion { .. } => invalid(
                "delta",
                d,
                &format!("below what the privacy loss distribution certifies: {e}"),
            ),
            e => crate::errors::err(e),
        })
    }
    /// δ at `epsilon` > 0: the minimum over the valid routes.
    fn delta(&self, py: Python<'_>, epsilon: f64) -> R<f64> {
        py.detach(|| self.guarantee.delta(epsilon)).py()
    }
    /// The privacy profile δ(ε) by the PLD at each ε ≥ 0 of `epsilons` (numpy in, numpy out;
    /// the `delta_pld` column of `dptune account profile`).
    fn profile<'py>(
        &self,
        py: Python<'py>,
        epsilons: &Bound<'py, PyAny>,
    ) -> R<Bound<'py, PyArray1<f64>>> {
        let eps = vec_f64("epsilons", epsilons)?;
        let points = py.detach(|| self.pld().profile(&eps)).py()?;
        Ok(PyArray1::from_vec(
            py,
            points.into_iter().map(|p| p.delta).collect(),
        ))
    }
    /// The composed guarantee (every route's bound and the PLD).
    #[getter]
    fn guarantee(&self) -> PyGuarantee {
        g(self.guarantee.clone())
    }
    /// The specification's `delta` (the default of the queries).
    #[getter]
    fn target_delta(&self) -> f64 {
        self.spec.delta
    }
    /// The width of the PLD's loss grid.
    #[getter]
    fn interval(&self) -> f64 {
        self.interval
    }
    /// Grid points the PLD holds (both directions): its memory, however many parts it composes.
    #[getter]
    fn grid_points(&self) -> usize {
        self.pld().grid_points()
    }
    /// The object `dptune account compose FILE --json` prints, at `delta` (default: the
    /// specification's).
    #[pyo3(signature = (delta=None))]
    fn report<'py>(&self, py: Python<'py>, delta: Option<f64>) -> R<Bound<'py, PyDict>> {
        let d = self.at(delta);
        let report = py
            .detach(|| CompositionAccount::new(&self.spec, &self.guarantee, d, self.interval))
            .py()?;
        to_dict(py, serde_json::to_value(&report))
    }
    fn __repr__(&self) -> String {
        format!(
            "Composition({} part(s), {}, delta {})",
            self.spec.parts.len(),
            self.guarantee.neighbours(),
            self.spec.delta
        )
    }
}

/// Parses a composition from JSON text (the form of `dptune account compose FILE`) and composes
/// it on a loss grid of width `interval`.
#[pyfunction]
#[pyo3(signature = (text, interval=1e-4))]
fn _compose_json(py: Python<'_>, text: &str, interval: f64) -> R<PyComposition> {
    let spec: ComposeSpec = serde_json::from_str(text)
        .map_err(|e| invalid("spec", "the given JSON", &format!("not a composition: {e}")))?;
    let guarantee = py.detach(|| spec.guarantee(pld_config(interval))).py()?;
    Ok(PyComposition {
        spec,
        guarantee,
        interval,
    })
}

/// The object `dptune account dpsgd --json` prints: ε of `steps` DP-SGD steps (Poisson rate
/// `sampling_rate`, noise multiplier `noise_multiplier`, add_remove) by PLD, with the RDP
/// ε on continuous orders and on dp_accounting's default order grid beside it.
#[pyfunction]
#[pyo3(signature = (sampling_rate, noise_multiplier, steps, delta, *, interval=1e-4))]
fn dpsgd_account<'py>(
    py: Python<'py>,
    sampling_rate: f64,
    noise_multiplier: f64,
    steps: u64,
    delta: f64,
    interval: f64,
) -> R<Bound<'py, PyDict>> {
    let report = py
        .detach(|| DpsgdAccount::new(sampling_rate, noise_multiplier, steps, delta, interval))
        .py()?;
    to_dict(py, serde_json::to_value(&report))
}

/// Adds the accounting classes and functions to `_core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyComposition>()?;
    m.add_function(wrap_pyfunction!(_compose_json, m)?)?;
    m.add_function(wrap_pyfunction!(dpsgd_account, m)?)?;
    Ok(())
}
