//! Errors: the Python exception classes and the mapping of the library's errors onto them.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

use dptune::Error;

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
pub(crate) fn err(e: Error) -> PyErr {
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

pub(crate) fn invalid(name: &str, value: impl std::fmt::Display, reason: &str) -> PyErr {
    InvalidParameter::new_err(format!("invalid parameter `{name}` = {value}: {reason}"))
}

pub(crate) type R<T> = PyResult<T>;

pub(crate) trait IntoPy<T> {
    fn py(self) -> R<T>;
}
impl<T> IntoPy<T> for dptune::Result<T> {
    fn py(self) -> R<T> {
        self.map_err(err)
    }
}

/// Adds this file's classes and functions to the module `dptune._core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("DptuneError", py.get_type::<DptuneError>())?;
    m.add("InvalidParameter", py.get_type::<InvalidParameter>())?;
    m.add("BudgetExceeded", py.get_type::<BudgetExceeded>())?;
    m.add("NoRelease", py.get_type::<NoRelease>())?;
    m.add("DataError", py.get_type::<DataError>())?;
    Ok(())
}
