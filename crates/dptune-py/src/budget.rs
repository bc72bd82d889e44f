//! `budget=` in Python: the persistent budget store of `dptune::budget` (the same SQLite file
//! and rules as the CLI's `--budget`), bound rather than reimplemented.
//!
//! Every entry point that takes `budget=` computes its whole cost from public inputs, validates
//! its inputs, then calls [`charge`], and draws noise only after the charge is committed. A
//! cost that does not fit raises `BudgetExceeded` and nothing is released; a cost under another
//! neighbour relation than the budget's raises `InvalidParameter` (as the CLI exits 2); in both
//! cases the store is unchanged.

use std::path::{Path, PathBuf};

use pyo3::prelude::*;
use pyo3::types::PyDict;

use dptune::budget::{neighbours_name, store_path, Status, Store};
use dptune::privacy::Guarantee;

use crate::errors::{err, invalid, IntoPy, R};
use crate::guarantee::{g, PyGuarantee};

/// Charges `cost` to the budget `name` (if given) in the store `store` (else `$DPTUNE_STORE`,
/// else the user's default store) and returns once the charge is committed. `command` names
/// the entry point (`tune`, `select`, ...), as the CLI's subcommand does.
pub(crate) fn charge(
    name: Option<&str>,
    store: Option<&Path>,
    cost: &Guarantee,
    command: &str,
) -> R<()> {
    let Some(name) = name else {
        if let Some(p) = store {
            return Err(invalid(
                "store",
                p.display(),
                "names a budget store, but no `budget` was given",
            ));
        }
        return Ok(());
    };
    let path = store_path(store).py()?;
    let label = format!("python dptune.{command}");
    Store::open(&path)
        .and_then(|mut s| s.charge(name, cost, &label, command))
        .map_err(|e| {
            let exceeded = matches!(e, dptune::Error::BudgetExceeded { .. });
            let mut msg = e.to_string();
            if exceeded {
                msg.push_str("; nothing was released");
                return crate::errors::BudgetExceeded::new_err(msg);
            }
            err(e)
        })?;
    Ok(())
}

fn status_dict<'py>(py: Python<'py>, st: &Status, path: &Path) -> R<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let (b, s) = (&st.budget, &st.spent);
    d.set_item("name", &b.name)?;
    d.set_item("store", path.display().to_string())?;
    d.set_item("epsilon", b.epsilon)?;
    d.set_item("delta", b.delta)?;
    d.set_item("neighbours", neighbours_name(b.neighbours))?;
    d.set_item("spent_epsilon", s.epsilon)?;
    d.set_item("charges", s.charges)?;
    d.set_item("route", &s.route)?;
    Ok(d)
}

/// Creates the budget `name` of (ε, δ) under `neighbours` ("add_remove" or "replace_one") in
/// the store (created if missing), like `dptune budget create`. Returns its status.
#[pyfunction]
#[pyo3(signature = (name, epsilon, delta, neighbours, *, store=None))]
fn budget_create<'py>(
    py: Python<'py>,
    name: &str,
    epsilon: f64,
    delta: f64,
    neighbours: &str,
    store: Option<PathBuf>,
) -> R<Bound<'py, PyDict>> {
    let nb = crate::input::neighbours(neighbours)?;
    let path = store_path(store.as_deref()).py()?;
    let st = Store::open_or_create(&path)
        .and_then(|mut s| s.create(name, epsilon, delta, nb))
        .py()?;
    status_dict(py, &st, &path)
}

/// The budget `name`: its allowance and what it has spent (the `Ledger`'s composition of every
/// charge at the budget's δ, with the route), like `dptune budget show`.
#[pyfunction]
#[pyo3(signature = (name, *, store=None))]
fn budget_status<'py>(
    py: Python<'py>,
    name: &str,
    store: Option<PathBuf>,
) -> R<Bound<'py, PyDict>> {
    let path = store_path(store.as_deref()).py()?;
    let st = Store::open(&path).and_then(|s| s.status(name)).py()?;
    status_dict(py, &st, &path)
}

/// Charges a guarantee computed in Python (the tuner's whole cost) before anything runs.
#[pyfunction]
#[pyo3(signature = (name, cost, command, *, store=None))]
fn _budget_charge(
    name: &str,
    cost: &PyGuarantee,
    command: &str,
    store: Option<PathBuf>,
) -> R<PyGuarantee> {
    charge(Some(name), store.as_deref(), &cost.inner, command)?;
    Ok(g(cost.inner.clone()))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(budget_create, m)?)?;
    m.add_function(wrap_pyfunction!(budget_status, m)?)?;
    m.add_function(wrap_pyfunction!(_budget_charge, m)?)?;
    Ok(())
}
