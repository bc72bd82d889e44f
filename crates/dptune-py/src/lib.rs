//! Python bindings of dptune: `dptune._core`, wrapped by the pure-Python package `dptune`
//! (crates/dptune-py/python/dptune). Numpy in, numpy out; every library error becomes a Python
//! exception of a specific class carrying the library's message; nothing here panics on bad
//! input and nothing prints.

#![forbid(unsafe_code)]

use pyo3::prelude::*;

mod accounting;
#[cfg(feature = "bench-hooks")]
mod bench_hooks;
mod budget;
mod errors;
mod federated;
mod guarantee;
mod input;
mod learner;
mod limits;
mod method;
mod privacy;
mod select;
mod space;
mod target;
mod tuning;

/// The extension module: each topic file registers its own classes and functions.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    input::register(m)?;
    guarantee::register(m)?;
    select::register(m)?;
    privacy::register(m)?;
    method::register(m)?;
    tuning::register(m)?;
    learner::register(m)?;
    federated::register(m)?;
    budget::register(m)?;
    accounting::register(m)?;
    target::register(m)?;
    #[cfg(feature = "bench-hooks")]
    bench_hooks::register(m)?;
    Ok(())
}
