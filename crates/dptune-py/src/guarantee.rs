//! Guarantees and seeded research runs as Python objects (printing, pickling, comparison).

use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use dptune::privacy::{Bound as Bnd, Guarantee};
use dptune::tune::{self};

use crate::errors::{IntoPy, R};
use crate::input::{neighbours, vec_f64};

/// The pickling recipe of a guarantee: constructor and its argument (the exact byte encoding).
type Reduced<'py> = (Bound<'py, PyAny>, (Bound<'py, PyBytes>,));
/// The δ at which a guarantee without a pure or (ε, δ) bound shows its ε when printed.
const SHOWN_DELTA: f64 = 1e-5;

/// What a mechanism promises and what a release spent (immutable).
#[pyclass(module = "dptune._core", name = "Guarantee", frozen)]
#[derive(Clone)]
pub(crate) struct PyGuarantee {
    pub(crate) inner: Guarantee,
}

pub(crate) fn g(inner: Guarantee) -> PyGuarantee {
    PyGuarantee { inner }
}

#[pymethods]
impl PyGuarantee {
    /// Pure ε-DP.
    #[staticmethod]
    #[pyo3(signature = (epsilon, neighbours="add_remove"))]
    fn pure(epsilon: f64, neighbours: &str) -> R<Self> {
        Ok(g(
            Guarantee::pure(epsilon, self::neighbours(neighbours)?).py()?
        ))
    }
    /// Approximate (ε, δ)-DP.
    #[staticmethod]
    #[pyo3(signature = (epsilon, delta, neighbours="add_remove"))]
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
    #[pyo3(signature = (rho, neighbours="add_remove"))]
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
    /// "add_remove" or "replace_one".
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

/// Adds this file's classes and functions to the module `dptune._core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyGuarantee>()?;
    Ok(())
}
